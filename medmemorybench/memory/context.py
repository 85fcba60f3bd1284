"""What the runner hands a memory that builds itself: the memory LLM, the shared embedder, a working folder,
a seeded RNG, and the meter that counts what construction cost.

The LLM goes through the run's response cache, so a rerun or a resume never pays twice for the same
construction call; calls are counted whether or not the cache answered them (the cost of building the memory
from scratch, the same in every run), and the cache hits are counted apart.
"""

from __future__ import annotations

import json
import random
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

import numpy as np

from medmemorybench.errors import InputError
from medmemorybench.memory.base import MemorySystem
from medmemorybench.models.base import Backbone, ChatRequest, Completion
from medmemorybench.render.models import turn_line


@dataclass
class MemoryCost:
    """What one patient's memory has cost so far (construction and retrieval)."""

    llm_calls: int = 0
    """Construction calls to the memory LLM (cache hits included: the cost of a fresh build)."""
    cache_hits: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    llm_errors: int = 0
    """Calls that failed after retries (the memory got nothing from them)."""
    parse_failures: int = 0
    """Replies that were not the JSON the memory asked for (the memory stored nothing from them)."""
    embedding_calls: int = 0
    embedded_texts: int = 0
    sessions: int = 0
    """Sessions ingested."""
    ingest_s: float = 0.0
    retrieve_s: float = 0.0
    items: int | None = None
    """Items stored (chunks, facts, notes); None for a memory that does not say."""

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        for name in ("ingest_s", "retrieve_s"):
            out[name] = round(out[name], 4)
        return out

    @classmethod
    def field_names(cls) -> list[str]:
        return [f.name for f in fields(cls)]


class MemoryLLM:
    """The memory LLM as a memory sees it: `generate` through the run's cache, counted in `cost`."""

    def __init__(self, backbone: Backbone, cost: MemoryCost, cache: Any = None) -> None:
        self.backbone, self.cost, self.cache = backbone, cost, cache
        self._lock = threading.Lock()

    @property
    def context_window(self) -> int:
        return self.backbone.context_window

    def count_tokens(self, text: str) -> int:
        return self.backbone.count_tokens(text)

    def generate(self, requests: Sequence[ChatRequest]) -> list[Completion]:
        from medmemorybench.harness.cache import generate_cached

        completions = generate_cached(self.backbone, list(requests), self.cache)
        with self._lock:
            for completion in completions:
                self.cost.llm_calls += 1
                self.cost.cache_hits += int(completion.cache_hit)
                self.cost.prompt_tokens += completion.prompt_tokens
                self.cost.completion_tokens += completion.completion_tokens
                self.cost.llm_errors += int(completion.error is not None)
        return completions

    def generate_json(self, requests: Sequence[ChatRequest],
                      fits: Callable[[Any], bool] | Sequence[Callable[[Any], bool]] = lambda _value: True) -> list[Any]:
        """Each reply parsed as JSON (the requests should carry a `response_schema`); None, counted as a parse
        failure, for a reply that does not parse or does not `fit` the shape asked for (a server that ignores
        the schema; one check for all, or one per request). Failed calls are None too, counted as errors."""
        checks = [fits] * len(requests) if callable(fits) else list(fits)
        out = []
        for completion, fits in zip(self.generate(requests), checks, strict=True):
            if completion.error is not None:
                out.append(None)
                continue
            try:
                value = json.loads(completion.text)
            except json.JSONDecodeError:
                value = None
            if value is None or not fits(value):
                with self._lock:
                    self.cost.parse_failures += 1
                value = None
            out.append(value)
        return out


def best_first(scores: np.ndarray, k: int) -> list[int]:
    """Indices of the `k` highest scores, best first; ties in storing order."""
    return np.argsort(-scores, kind="stable")[:k].tolist()


def fitted_session(session: Any, llm: MemoryLLM, reserve_tokens: int) -> str:
    """A session as a memory LLM reads it, "Consultation date: D" then the turns, its last turns cut when the
    LLM's window (less `reserve_tokens` for the instruction and the reply) cannot hold it all."""
    lines = [turn_line(turn) for turn in session.turns]
    budget = llm.context_window - reserve_tokens
    text = "\n".join(lines)
    while lines and llm.count_tokens(text) > budget:
        lines.pop()
        text = "\n".join(lines)
    return f"Consultation date: {session.date}\n\n{text}"


def resolve_embedder(model: str) -> tuple[str, str]:
    """(what to load, identity for cache keys) of an `--embedder` value (see `dense.resolve_model`).

    Raises:
        InputError: naming --embedder when it is not the packaged model or a local folder.
    """
    from medmemorybench.memory.dense import resolve_model

    try:
        return resolve_model(model)
    except ValueError as exc:
        raise InputError(f"--embedder: {exc}") from None


class Embedder:
    """The shared sentence embedder (default the packaged all-MiniLM-L6-v2), normalized vectors, counted.

    Vectors are cached on disk like the `dense` memory's, so a chunk or fact embedded once is read back. One
    model serves every patient's embedder; the lock keeps concurrent patients from using it at once."""

    _lock = threading.Lock()

    def __init__(self, model: str, cost: MemoryCost, cache_dir: Path | None = None) -> None:
        from medmemorybench.memory._embedding_cache import EmbeddingCache, default_cache_dir

        self._path, self.model_id = resolve_embedder(model)
        self.cost = cost
        self.cache = EmbeddingCache(cache_dir or default_cache_dir())
        self._model: Any = None

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """One normalized vector per text (a row each)."""
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        with Embedder._lock:
            return self._encode(list(texts))

    def _encode(self, texts: list[str]) -> np.ndarray:
        self.cost.embedding_calls += 1
        self.cost.embedded_texts += len(texts)
        return self.cache.vectors(self.model_id, texts, self._model_encode)

    def _model_encode(self, texts: list[str]) -> np.ndarray:
        from medmemorybench.memory.dense import shared_model

        if self._model is None:
            self._model = shared_model(self._path)
        vectors = self._model.encode(texts, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False)
        return np.asarray(vectors, dtype=np.float32)


@dataclass
class MemoryContext:
    """Everything a memory may build itself with; one per patient (and task) of a run."""

    llm: MemoryLLM | None
    embedder: Embedder
    workdir: Path
    """An empty folder of this patient's own, for on-disk stores."""
    rng: random.Random
    """Seeded by the patient and the memory's name: the same run gives the same draws."""
    cost: MemoryCost
    answerer: MemoryLLM | None = None
    """The answering LLM (`--model`) through the run's cache, for a memory that answers itself (`native` mode);
    its calls are the answer's cost, not construction's (`answer_cost`)."""

    def require_llm(self, memory: str) -> MemoryLLM:
        if self.llm is None:
            raise InputError(f"--memory {memory}: builds itself with an LLM; give --model (the memory uses the "
                             "answering model) or --memory_model")
        return self.llm


def summed_completion(final: Completion, steps: Sequence[Completion]) -> Completion:
    """The final answer of a multi-step native answer with the tokens and time of all its steps (`final` among
    them), and the first error of any step (an answer built on a failed step is not an answer)."""
    error = next((c.error for c in steps if c.error is not None), None)
    return final.model_copy(update={
        "prompt_tokens": sum(c.prompt_tokens for c in steps),
        "completion_tokens": sum(c.completion_tokens for c in steps),
        "latency_ms": sum(c.latency_ms for c in steps), "cache_hit": all(c.cache_hit for c in steps),
        "error": error, "text": "" if error else final.text})


class Stopwatch:
    """Adds the seconds of a `with` block to a cost field."""

    def __init__(self, cost: MemoryCost, field_name: str) -> None:
        self.cost, self.field_name = cost, field_name

    def __enter__(self) -> None:
        self.started = time.perf_counter()

    def __exit__(self, *_exc: object) -> None:
        setattr(self.cost, self.field_name, getattr(self.cost, self.field_name) + time.perf_counter() - self.started)


class LLMBuiltMemory(MemorySystem):
    """Base of the memories an LLM builds: `bind` keeps the memory LLM (refusing to start without one), the
    embedder and the RNG as `self.llm`, `self.embedder`, `self.rng`."""

    needs_llm = True

    def bind(self, context: MemoryContext) -> None:
        super().bind(context)
        self.llm = context.require_llm(self.name)
        self.embedder = context.embedder
        self.rng = context.rng
