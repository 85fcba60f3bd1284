"""HippoRAG 2 with the real `hipporag` package (2.0.0a4): per passage an OpenIE pass (NER, then triples conditioned
on the entities), a graph of phrase and passage nodes with synonymy edges, and retrieval by fact scoring, the LLM
recognition filter and Personalized PageRank (dense passage retrieval when no fact survives the filter).

How it runs here (`../shared/research/memory-packages.md` §2 is the probe this follows; the package's own parts,
adapted without editing it, are in `_hipporag_package.py`):
- Embeddings go through the run's shared, counted embedder (2.0.0a4 has no sentence-transformers class).
- `llm_base_url` is a loopback endpoint over the memory LLM (`_endpoint.py`): every call is cached by the run and
  counted. The package's own SQLite response cache is bypassed (a hit there would hide a call from the count; our
  cache already makes a rerun free), and so are its retries and its 300 s read timeout.
- The package asks for JSON in text with no `response_format`. The endpoint recognizes its NER, triple and
  recognition-filter prompts and supplies a bounded schema for each (the filter's items are the candidate facts
  themselves); a reply the package could not use is counted as a parse failure (the package only logs it).
- Passages: windows of `passage_turns` turns of one session, each beginning "Consultation date: D" (dates survive
  only inside the text), mapped back to their sessions for provenance.
- Cumulative: each `ingest` indexes only the new passages (OpenIE for them alone) into the patient's one graph,
  under its working folder; three slips of the package's incremental indexing are mended so the graph equals one
  built at once, and a seed check that made retrieval raise falls back to dense retrieval (`CumulativeHippoRAG`).
- Answers come from the shared prompt over the retrieved passages, not the package's MuSiQue-style reader.

`size()` counts passages (what `retrieve` returns); `graph_stats()` gives phrase nodes, triples and edges.
"""

from __future__ import annotations

import ast
import json
import logging
import re
import shutil
from collections.abc import Sequence
from typing import Any

import numpy as np

from medmemorybench.memory._chunks import window_starts
from medmemorybench.memory._endpoint import PackageEndpoint, start_endpoint
from medmemorybench.memory._hipporag_package import (
    FILTER_SYSTEM,
    NER_SYSTEM,
    TRIPLES_SYSTEM,
    CumulativeHippoRAG,
    fix_broken_generated_json,
    new_graph,
)
from medmemorybench.memory.base import MemoryItem, Retrieval
from medmemorybench.memory.context import LLMBuiltMemory, MemoryContext, MemoryCost, MemoryLLM
from medmemorybench.models.base import ChatRequest, Completion, check_arg
from medmemorybench.render.models import ObservedSession, turn_line

logger = logging.getLogger(__name__)

ENTITY_CHARS = 40
"""Longest entity, subject or object a reply may write (the package's one-shot example's longest is 25)."""
_FILTER_INPUT = re.compile(r"\[\[ ## fact_before_filter ## \]\]\n(.*?)\n\nRespond", re.DOTALL)


def _string(max_chars: int) -> dict[str, Any]:
    """A plain string the package's regex reads whole: no brackets, braces, quotes or escapes."""
    return {"type": "string", "pattern": f'^[^\\[\\]{{}}"\\\\]{{1,{max_chars}}}$'}


def ner_schema(max_entities: int) -> dict[str, Any]:
    return {"type": "object", "additionalProperties": False, "required": ["named_entities"],
            "properties": {"named_entities": {"type": "array", "maxItems": max_entities,
                                              "items": _string(ENTITY_CHARS)}}}


def _triple() -> dict[str, Any]:
    return {"type": "array", "minItems": 3, "maxItems": 3, "items": _string(ENTITY_CHARS)}


def triples_schema(max_triples: int) -> dict[str, Any]:
    return {"type": "object", "additionalProperties": False, "required": ["triples"],
            "properties": {"triples": {"type": "array", "maxItems": max_triples, "items": _triple()}}}


def filter_schema(candidates: list[list[str]]) -> dict[str, Any]:
    """The recognition filter's reply: some of the candidate facts, as they were given."""
    return {"type": "object", "additionalProperties": False, "required": ["fact"],
            "properties": {"fact": {"type": "array", "maxItems": len(candidates), "items": {"enum": candidates}}}}


def reply_token_bound(max_entities: int, max_triples: int) -> int:
    """Tokens the longer of the OpenIE replies takes at its schema's bounds, at three characters a token, so the
    budget never cuts a reply the schema allows."""
    ner_chars = max_entities * (ENTITY_CHARS + 4) + 24
    triple_chars = max_triples * (3 * (ENTITY_CHARS + 4) + 4) + 16
    return max(ner_chars, triple_chars, 64) // 3 + 8


def _listed(text: str, key: str) -> list | None:
    """The list under `key` in the first `{...}` of a reply holding it, read as the package reads it (its regex, then
    the object as a Python literal; it `eval`s it), or None when the package would get nothing. A reply cut at the
    token budget is read after the package's own repair of it."""
    for candidate in (text, fix_broken_generated_json(text)):
        match = re.search(r'\{[^{}]*"' + key + r'"\s*:\s*\[[^\]]*\][^{}]*\}', candidate, re.DOTALL)
        if match is None:
            continue
        try:
            value = ast.literal_eval(match.group())
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            continue
        if isinstance(value, dict) and isinstance(value.get(key), list):
            return value[key]
    return None


class _SchemaForHippoRAG(PackageEndpoint):
    """The memory LLM as the endpoint serves it to HippoRAG: its NER, triple and filter prompts (told apart by their
    system messages) get bounded schemas; a reply the package could not use counts as a parse failure; the filter's
    JSON is framed in the DSPy field markers the package's parser looks for."""

    name = "hipporag-endpoint"

    def __init__(self, llm: MemoryLLM, cost: MemoryCost, max_entities: int, max_triples: int) -> None:
        super().__init__(llm, cost)
        self.schemas = {"ner": ner_schema(max_entities), "triples": triples_schema(max_triples)}

    def kind(self, request: ChatRequest) -> str | None:
        system = request.messages[0]["content"].strip()
        for kind, prompt in (("ner", NER_SYSTEM), ("triples", TRIPLES_SYSTEM), ("filter", FILTER_SYSTEM)):
            if system == prompt.strip():
                return kind
        return None

    def shape(self, request: ChatRequest, kind: str | None) -> ChatRequest:
        if request.response_schema is not None or kind is None:
            return request
        if kind == "filter":
            candidates = _candidates(request.messages[-1]["content"])
            return request.model_copy(update={"response_schema": filter_schema(candidates)}) if candidates else request
        return request.model_copy(update={"response_schema": self.schemas[kind]})

    def fits(self, kind: str | None, completion: Completion) -> bool:
        if kind is None:
            return True
        text = completion.text
        if kind == "filter":
            try:
                value = json.loads(text)
            except json.JSONDecodeError:
                return text.lstrip().startswith("[[ ## fact_after_filter ## ]]")  # (a capable model's own framing)
            return isinstance(value, dict) and _all_triples(value.get("fact"))
        listed = _listed(text, "named_entities" if kind == "ner" else "triples")
        if kind == "ner":
            return listed is not None and all(isinstance(e, str) for e in listed)
        return listed is not None and _all_triples(listed)  # (the package drops a triple that is not 3 texts)

    def finish(self, kind: str | None, completion: Completion) -> Completion:
        if kind != "filter" or completion.text.lstrip().startswith("[["):
            return completion
        framed = f"[[ ## fact_after_filter ## ]]\n{completion.text}\n\n[[ ## completed ## ]]"
        return completion.model_copy(update={"text": framed})


def _all_triples(value: object) -> bool:
    return isinstance(value, list) and all(isinstance(t, list) and len(t) == 3 for t in value)


def _candidates(prompt: str) -> list[list[str]]:
    """The candidate facts of a filter prompt (`{"fact": [[s, p, o], ...]}` after its field marker)."""
    match = _FILTER_INPUT.search(prompt)
    try:
        facts = json.loads(match.group(1))["fact"] if match else []
    except (json.JSONDecodeError, KeyError, TypeError):
        return []
    return [f for f in facts if isinstance(f, list) and len(f) == 3 and all(isinstance(x, str) for x in f)]


def session_passages(session: ObservedSession, turns: int) -> list[str]:
    """A session as HippoRAG passages: windows of `turns` turns, each beginning with the consultation's date. They do
    not overlap (a turn pays OpenIE once) except the last, moved back to end at the session's last turn."""
    lines = [turn_line(t) for t in session.turns]
    header = f"Consultation date: {session.date}\n"
    return [header + "\n".join(lines[start:start + turns]) for start in window_starts(len(lines), turns, turns)]


class HippoRAGMemory(LLMBuiltMemory):
    """HippoRAG 2 (the real `hipporag` 2.0.0a4 package) against a loopback endpoint over the memory LLM.

    Args:
        passage_turns: turns per passage (a passage is one session's window, with its date).
        max_entities: most entities one NER reply may list (a bound on the schema the endpoint supplies).
        max_triples: most triples one extraction reply may list.
        linking_top_k: facts kept after the recognition filter, whose phrases seed PPR (the package's 5).
        damping: PPR damping (the package's 0.5).
        passage_node_weight: weight of the dense passage scores among the PPR seeds (the package's 0.05).
        synonymy_edge_sim_threshold: cosine above which two phrase nodes get a synonymy edge (the package's 0.8).
    """

    name = "hipporag"

    def __init__(self, passage_turns: int = 4, max_entities: int = 10, max_triples: int = 10, linking_top_k: int = 5,
                 damping: float = 0.5, passage_node_weight: float = 0.05,
                 synonymy_edge_sim_threshold: float = 0.8) -> None:
        check_arg(passage_turns, "passage_turns", int, lambda v: 1 <= v <= 50, "an integer from 1 to 50")
        check_arg(max_entities, "max_entities", int, lambda v: 1 <= v <= 50, "an integer from 1 to 50")
        check_arg(max_triples, "max_triples", int, lambda v: 1 <= v <= 50, "an integer from 1 to 50")
        check_arg(linking_top_k, "linking_top_k", int, lambda v: 1 <= v <= 50, "an integer from 1 to 50")
        check_arg(damping, "damping", (int, float), lambda v: 0 < v < 1, "a number between 0 and 1")
        check_arg(passage_node_weight, "passage_node_weight", (int, float), lambda v: v >= 0, "a number >= 0")
        check_arg(synonymy_edge_sim_threshold, "synonymy_edge_sim_threshold", (int, float), lambda v: 0 <= v <= 1,
                  "a number from 0 to 1")
        super().__init__(passage_turns=passage_turns, max_entities=max_entities, max_triples=max_triples,
                         linking_top_k=linking_top_k, damping=damping, passage_node_weight=passage_node_weight,
                         synonymy_edge_sim_threshold=synonymy_edge_sim_threshold)
        self.passage_turns = passage_turns
        self._sessions_of: dict[str, list[str]] = {}  # passage text -> the sessions holding it, in stream order

    def bind(self, context: MemoryContext) -> None:
        super().bind(context)
        endpoint = _SchemaForHippoRAG(self.llm, context.cost, self.options["max_entities"],  # type: ignore[arg-type]
                                      self.options["max_triples"])  # type: ignore[arg-type]
        self.url = start_endpoint(self, endpoint, context.embedder)
        self.save_dir = context.workdir / "hipporag"
        shutil.rmtree(self.save_dir, ignore_errors=True)  # (a graph left on disk would be reloaded, its calls unpaid)
        self.rag = self._new_graph()

    def _new_graph(self) -> CumulativeHippoRAG:
        options = dict(self.options)
        bound = reply_token_bound(options.pop("max_entities"), options.pop("max_triples"))  # type: ignore[arg-type]
        del options["passage_turns"]
        return new_graph(self.save_dir, self.url, self.embedder, max_new_tokens=bound, **options)

    def reset(self) -> None:
        shutil.rmtree(self.save_dir, ignore_errors=True)
        self._sessions_of.clear()
        self.rag = self._new_graph()

    def ingest(self, sessions: Sequence[ObservedSession]) -> None:
        """Index the new sessions' passages into the patient's graph (OpenIE for the passages not seen before)."""
        new: list[str] = []
        for session in sessions:
            for passage in session_passages(session, self.passage_turns):
                holders = self._sessions_of.setdefault(passage, [])
                if not holders:
                    new.append(passage)
                if session.session_id not in holders:
                    holders.append(session.session_id)
        if new:
            self.rag.index(new)
        logger.info("hipporag: %d new passages; graph %s", len(new), self.graph_stats())

    def retrieve(self, questions: Sequence[str], k: int, token_budget: int | None = None) -> list[Retrieval]:
        if k < 1 or not questions or not self._sessions_of:
            return [Retrieval() for _ in questions]
        with np.errstate(invalid="ignore"):  # (the package divides unseeded phrase weights by 0 occurrences, then
            solutions = self.rag.retrieve(list(questions), num_to_retrieve=k)  # keeps only the top seeds' weights)
        return [Retrieval(items=[MemoryItem(text, tuple(self._sessions_of[text]), float(score))
                                 for text, score in zip(solution.docs, solution.doc_scores, strict=False)])
                for solution in solutions]

    def size(self) -> int:
        """Passages stored (the phrase nodes and triples are in `graph_stats`)."""
        return len(self._sessions_of)

    def graph_stats(self) -> dict[str, int]:
        """Passages, phrase nodes, triples (fact nodes) and graph edges of the patient's graph."""
        rag = self.rag
        return {"passages": len(rag.chunk_embedding_store.get_all_ids()),
                "phrase_nodes": len(rag.entity_embedding_store.get_all_ids()),
                "triples": len(rag.fact_embedding_store.get_all_ids()), "edges": rag.graph.ecount()}

    def session_ids(self) -> set[str]:
        return {sid for holders in self._sessions_of.values() for sid in holders}
