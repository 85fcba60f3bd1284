"""The `hipporag` package (2.0.0a4) made to run here, no upstream file edited (the memory system is `hipporag.py`):
its unused heavy imports stubbed for the import, its embedding factory given a class over the run's counted embedder,
its LLM client pointed at a loopback endpoint without its own cache, retries and read timeout, and its incremental
indexing mended (`CumulativeHippoRAG`)."""

from __future__ import annotations

import importlib.util
import inspect
import logging
import os
import sys
import types
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import httpx
import numpy as np
from openai import OpenAI
from tqdm import tqdm

from medmemorybench.memory._endpoint import MODEL_NAME
from medmemorybench.memory.context import Embedder

_UNUSED_IMPORTS: dict[str, tuple[str, ...]] = {
    "vllm": ("LLM", "SamplingParams"),
    "litellm": (),
    "gritlm": ("GritLM",),
    "boto3": (),
    "botocore": (),
    "botocore.exceptions": ("ClientError",),
}
"""What `hipporag/__init__` imports for its offline vLLM, Bedrock, GritLM and Cohere paths (never used here)."""


@contextmanager
def stubbed_unused_imports() -> Iterator[list[str]]:
    """Inert modules for the packages in `_UNUSED_IMPORTS` that are not installed (an installed one is imported as
    it is), for the time of hipporag's import only: left in `sys.modules`, they would tell other libraries'
    availability checks (accelerate's `find_spec("boto3")`) that a package is there. Yields the names stubbed."""
    added: list[str] = []
    for name, attrs in _UNUSED_IMPORTS.items():
        top = name.partition(".")[0]
        if name in sys.modules or (top not in added and (top in sys.modules or importlib.util.find_spec(top))):
            continue  # (installed, or imported already: hipporag gets the real one)
        module = types.ModuleType(name)
        for attr in attrs:
            setattr(module, attr, _unavailable(name, attr))
        sys.modules[name] = module
        added.append(name)
        if "." in name:
            setattr(sys.modules[top], name.partition(".")[2], module)
    try:
        yield added
    finally:
        for name in added:
            sys.modules.pop(name, None)


def _unavailable(module: str, attr: str) -> type:
    """A stand-in class (an exception type, so `except ClientError` still reads) that refuses to be made."""
    def refuse(*_args: object, **_kwargs: object) -> None:
        raise ImportError(f"{module}.{attr} is not installed (hipporag's {module} path is not used by medmemorybench)")
    return type(attr, (Exception,), {"__init__": refuse})


os.environ.setdefault("OPENAI_API_KEY", "local")  # (the package's client insists on one; it only reaches loopback)
with stubbed_unused_imports():
    from hipporag import HippoRAG
    from hipporag.embedding_model.base import BaseEmbeddingModel
    from hipporag.llm.openai_gpt import CacheOpenAI
    from hipporag.prompts.filter_default_prompt import best_dspy_prompt
    from hipporag.prompts.templates.ner import ner_system
    from hipporag.prompts.templates.triple_extraction import ner_conditioned_re_system
    from hipporag.utils.config_utils import BaseConfig
    from hipporag.utils.llm_utils import fix_broken_generated_json  # noqa: F401  (hipporag.py reads replies with it)
    from hipporag.utils.misc_utils import (
        compute_mdhash_id,
        extract_entity_nodes,
        reformat_openie_results,
        text_processing,
    )

logger = logging.getLogger(__name__)

_PACKAGE = sys.modules["hipporag.HippoRAG"]  # (the package's `HippoRAG` class shadows its module of that name)
EMBEDDING_NAME = "Local/all-MiniLM-L6-v2"
"""The embedding model name the package is given: `Local/` selects `_CountedEmbedding` in its factory."""
# The system prompts of the package's NER, triple extraction and recognition filter (how the endpoint tells its
# calls apart).
NER_SYSTEM: str = ner_system
TRIPLES_SYSTEM: str = ner_conditioned_re_system
FILTER_SYSTEM: str = best_dspy_prompt["prog"]["system"]
_RAW_INFER = inspect.unwrap(CacheOpenAI.infer)  # (under its SQLite cache and its tenacity retries)


@dataclass(eq=False)
class Config(BaseConfig):
    """The package's config for a memory here (the factories below know it by its class)."""

    __eq__ = object.__eq__  # (by identity, as a key of `_EMBEDDERS`)
    __hash__ = object.__hash__


_EMBEDDERS: weakref.WeakKeyDictionary[Config, Embedder] = weakref.WeakKeyDictionary()
"""Each config's counted embedder (kept beside it: the package copies and prints the config's attributes)."""


class _CountedEmbedding(BaseEmbeddingModel):
    """The package's embedding interface over the run's shared embedder (normalized vectors, counted, cached on
    disk). MiniLM takes no instruction, so the package's query instructions are dropped."""

    def __init__(self, global_config: Config, embedding_model_name: str | None = None) -> None:
        super().__init__(global_config=global_config)
        self.embedder = _EMBEDDERS[global_config]

    def batch_encode(self, texts: str | list[str], **_kwargs: Any) -> np.ndarray:
        return self.embedder.encode([texts] if isinstance(texts, str) else list(texts))


class _EndpointLLM(CacheOpenAI):
    """The package's OpenAI client against the loopback endpoint, without its response cache, its retries and its
    300 s read timeout (the endpoint always answers: the backbone has its own timeouts and retries)."""

    def __init__(self, global_config: Config) -> None:
        super().__init__(cache_dir=global_config.save_dir, global_config=global_config, high_throughput=False)
        self.openai_client = OpenAI(base_url=global_config.llm_base_url, api_key="local", max_retries=0,
                                    timeout=httpx.Timeout(None, connect=10.0))

    def infer(self, messages: list[dict], **kwargs: Any) -> tuple[str, dict, bool]:
        message, metadata = _RAW_INFER(self, messages, **kwargs)
        return message, metadata, False  # (never a hit: every call reaches the endpoint and is counted there)


def _log_debug(*values: object, **_kwargs: object) -> None:
    logger.debug("hipporag: %s", " ".join(str(v) for v in values))


def _register_with_package() -> None:
    """Route the package's two factories to the classes above for configs and names of ours (once)."""
    if getattr(_PACKAGE, "__medmemorybench__", False):
        return
    llm_class, embedding_class = _PACKAGE._get_llm_class, _PACKAGE._get_embedding_model_class

    def llm_for(config: BaseConfig) -> Any:
        return _EndpointLLM(config) if isinstance(config, Config) else llm_class(config)

    def embedding_for(embedding_model_name: str = "nvidia/NV-Embed-v2") -> type:
        return _CountedEmbedding if embedding_model_name.startswith("Local/") else embedding_class(embedding_model_name)

    _PACKAGE._get_llm_class, _PACKAGE._get_embedding_model_class = llm_for, embedding_for
    for module in ("hipporag.HippoRAG", "hipporag.information_extraction.openie_openai", "hipporag.utils.embed_utils"):
        sys.modules[module].tqdm = partial(tqdm, disable=True)  # (progress bars per call would flood the run's log)
    for module in ("hipporag.HippoRAG", "hipporag.rerank"):  # (it prints graph sizes and filter errors to stdout)
        sys.modules[module].print = _log_debug  # type: ignore[attr-defined]
    _PACKAGE.__medmemorybench__ = True


_register_with_package()


class CumulativeHippoRAG(HippoRAG):
    """HippoRAG indexed once per checkpoint with the new passages only, through the package's own incremental path,
    with three of its slips mended so that the graph equals one built from all the passages at once:
    - after a second `index` the retrieval objects were not rebuilt (`ready_to_retrieve` stayed set), so the new
      passages were never retrieved;
    - `add_fact_edges` means to skip the passages already in the graph, but its test (`"name" in graph.vs`) asks
      for a vertex, not the attribute, and never holds, so every old passage's fact edges were added again at each
      checkpoint (the entity -> passages map is then rebuilt over all passages, as one `index` computes it);
    - synonymy edges are found again over all entities at each `index`, so those between old entities were added
      again too (each doubling the edge's weight in PPR)."""

    def index(self, docs: list[str]) -> None:
        self._entities_before = set(self.entity_embedding_store.get_all_ids())
        super().index(docs)
        self.ent_node_to_chunk_ids = self._entity_passages()
        self.ready_to_retrieve = False

    def add_fact_edges(self, chunk_ids: list[str], chunk_triples: list) -> None:
        in_graph = set(self.graph.vs["name"]) if "name" in self.graph.vs.attribute_names() else set()
        new = [i for i, chunk_id in enumerate(chunk_ids) if chunk_id not in in_graph]
        super().add_fact_edges([chunk_ids[i] for i in new], [chunk_triples[i] for i in new])

    def add_synonymy_edges(self) -> None:
        before = set(self.node_to_node_stats)
        super().add_synonymy_edges()
        old = self._entities_before
        for edge in set(self.node_to_node_stats) - before:
            if edge[0] in old and edge[1] in old:  # (added to the graph when the later of the two came in)
                del self.node_to_node_stats[edge]

    def graph_search_with_fact_entities(self, query: str, **kwargs: Any) -> tuple[np.ndarray, np.ndarray]:
        """PPR from the kept facts' phrases; dense passage retrieval, as for a query whose facts the filter all
        dropped, where the package's own checks of the seeds fail (a kept fact of the lowest score has weight 0
        after its min-max normalization, which its assertion on the seed count does not allow)."""
        try:
            return super().graph_search_with_fact_entities(query=query, **kwargs)
        except AssertionError as exc:
            logger.debug("hipporag: seeds refused (%s); dense passage retrieval", str(exc)[:200])
            return self.dense_passage_retrieval(query)

    def _entity_passages(self) -> dict[str, set[str]]:
        """Phrase node -> the passages whose triples name it, over every passage (as `index` computes it at once)."""
        infos, _ = self.load_existing_openie([])
        _, triples = reformat_openie_results(infos)
        out: dict[str, set[str]] = {}
        for chunk_id, result in triples.items():
            (entities,) = extract_entity_nodes([[text_processing(t) for t in result.triples]])[1]
            for entity in entities:
                out.setdefault(compute_mdhash_id(entity, prefix="entity-"), set()).add(chunk_id)
        return out




def new_graph(save_dir: Path, url: str, embedder: Embedder, max_new_tokens: int, **settings: Any) -> CumulativeHippoRAG:
    """A HippoRAG over an empty folder `save_dir`, its LLM at `url`, its embeddings through `embedder`, with the
    package's retrieval `settings` (BaseConfig fields); it indexes only passages it has not seen (cumulative)."""
    config = Config(save_dir=str(save_dir), llm_name=MODEL_NAME, llm_base_url=url, embedding_model_name=EMBEDDING_NAME,
                    temperature=0.0, seed=0, max_new_tokens=max_new_tokens, force_index_from_scratch=False,
                    force_openie_from_scratch=False, **settings)
    _EMBEDDERS[config] = embedder
    return CumulativeHippoRAG(global_config=config)
