"""GraphRAG as the MedMemoryBench paper ran it (not Microsoft GraphRAG): sessions cut into character-sized chunks,
the memory LLM's key concepts for each chunk, a graph of chunk and concept nodes (a chunk joined to its concepts,
two chunks joined when their embeddings are at least `edges_threshold` similar, weighted 0.7 x similarity + 0.3 x
their shared concepts over the smaller concept count), and retrieval by best-first traversal from the question's
seeds: its most similar chunks and concepts, each edge costing 1 / its weight.

Native: the paper's variant is ~400 lines of LangChain glue with no package (`../shared/research/memory-systems.md`
§4). What differs from it: concepts are graph nodes (two chunks that share one are two hops apart even when their
embeddings are far; the original used shared concepts only to weight similarity edges) and the question's concepts
seed the traversal; the build is incremental (the original rebuilt the whole graph, concept calls included, at every
checkpoint); no spaCy named entities (English only, data not on disk) and no lemmatizer (case and punctuation are
normalized); the traversal returns the first `retrieval_k` chunks it reaches (filled up by dense similarity when the
graph runs out) instead of stopping when an LLM says the context answers, and there is no per-chunk LLM compression:
the harness's backbone answers from the chunks (shared QA); the reply is decoded under a bounded JSON schema.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from medmemorybench.memory._graph import MemoryGraph, Node, NodeVectors, node_name
from medmemorybench.memory._schema import reply_token_bound
from medmemorybench.memory.base import MemoryItem, Retrieval
from medmemorybench.memory.context import LLMBuiltMemory, best_first, fitted_session
from medmemorybench.models.base import ChatRequest, check_arg
from medmemorybench.render.models import ObservedSession, Turn, turn_line

CONCEPT_PROMPT = (
    "You index a patient's medical consultations for later search. List the key concepts and entities of this "
    "part of a consultation: conditions, symptoms, medicines, tests and what they measure, procedures, decisions "
    "and people, each as a short noun phrase."
)
"""After the original's "extract key concepts and entities" structured-output prompt."""

CONCEPT_CHARS = 40
CONCEPT_EDGE_WEIGHT = 1.0
"""A chunk-concept edge costs 1 to cross, about as much as a similarity edge between near-identical chunks."""


def concept_schema(max_concepts: int) -> dict[str, Any]:
    return {"type": "object", "additionalProperties": False, "required": ["concepts"],
            "properties": {"concepts": {"type": "array", "maxItems": max_concepts,
                                        "items": {"type": "string", "maxLength": CONCEPT_CHARS}}}}


@dataclass(frozen=True)
class Chunk:
    text: str
    """The date line ("Date: D"), then the chunk's turns."""
    session_id: str
    concepts: frozenset[str]


@dataclass(frozen=True)
class _Part:
    """A chunk's turns as `fitted_session` reads them."""

    date: str
    turns: list[Turn]


def split_turns(turns: Sequence[Turn], chunk_chars: int, overlap_chars: int) -> list[list[Turn]]:
    """Turns packed into chunks of at most `chunk_chars` characters (a longer turn alone), each starting with the
    previous chunk's last turns that fit in `overlap_chars`: the original's RecursiveCharacterTextSplitter
    (chunk_size, chunk_overlap) on turn boundaries, so no turn is cut in half."""
    chunks: list[list[Turn]] = []
    current: list[Turn] = []
    size = 0
    for turn in turns:
        length = len(turn_line(turn)) + 1
        if current and size + length > chunk_chars:
            chunks.append(current)
            carried: list[Turn] = []
            for previous in reversed(current):
                if sum(len(turn_line(t)) + 1 for t in carried) + len(turn_line(previous)) + 1 > overlap_chars:
                    break
                carried.insert(0, previous)
            current, size = carried, sum(len(turn_line(t)) + 1 for t in carried)
        current.append(turn)
        size += length
    return [*chunks, current] if current else chunks


class GraphRAGMemory(LLMBuiltMemory):
    """The paper's GraphRAG: a chunk-concept graph searched best-first from the question's chunks and concepts.

    Args:
        chunk_chars: most characters of turns per chunk (the original: 10240, which holds a whole consultation here).
        overlap_chars: characters of turns a chunk repeats from the one before (the original: 200).
        max_concepts: most concepts the memory LLM gives a chunk.
        edges_threshold: cosine at which two chunks are joined (the original: 0.8).
        seeds: chunks most similar to the question that start the traversal (the original: top_k 5).
        concept_seeds: concepts most similar to the question that start it too (0: chunks only, as the original).
    """

    name = "graphrag"

    def __init__(self, chunk_chars: int = 10240, overlap_chars: int = 200, max_concepts: int = 8,
                 edges_threshold: float = 0.8, seeds: int = 5, concept_seeds: int = 3) -> None:
        check_arg(chunk_chars, "chunk_chars", int, lambda v: v >= 100, "an integer >= 100")
        check_arg(overlap_chars, "overlap_chars", int, lambda v: 0 <= v <= chunk_chars // 2,
                  f"an integer from 0 to half of chunk_chars ({chunk_chars // 2})")
        check_arg(max_concepts, "max_concepts", int, lambda v: 1 <= v <= 30, "an integer from 1 to 30")
        # (a positive threshold keeps every edge weight, hence every traversal cost, positive)
        check_arg(edges_threshold, "edges_threshold", (int, float), lambda v: 0 < v <= 1, "a cosine above 0, up to 1")
        check_arg(seeds, "seeds", int, lambda v: v >= 1, "an integer >= 1")
        check_arg(concept_seeds, "concept_seeds", int, lambda v: v >= 0, "an integer >= 0")
        super().__init__(chunk_chars=chunk_chars, overlap_chars=overlap_chars, max_concepts=max_concepts,
                         edges_threshold=edges_threshold, seeds=seeds, concept_seeds=concept_seeds)
        self.chunk_chars, self.overlap_chars, self.max_concepts = chunk_chars, overlap_chars, max_concepts
        self.edges_threshold, self.seeds, self.concept_seeds = edges_threshold, seeds, concept_seeds
        self.schema = concept_schema(max_concepts)
        self.max_tokens = reply_token_bound(self.schema)
        self.chunks: list[Chunk] = []
        self.chunk_vectors = NodeVectors()
        self.concept_vectors = NodeVectors()
        self.graph = MemoryGraph()

    def reset(self) -> None:
        self.chunks.clear()
        self.chunk_vectors.clear()
        self.concept_vectors.clear()
        self.graph.clear()

    def ingest(self, sessions: Sequence[ObservedSession]) -> None:
        """Cut the new sessions into chunks, one concept call per chunk (the checkpoint's calls in one batch), one
        embedding call for the new chunks and concepts, then add their nodes and edges to the graph."""
        parts = [(session, _Part(session.date, turns)) for session in sessions
                 for turns in split_turns(session.turns, self.chunk_chars, self.overlap_chars)]
        if not parts:
            return
        reserve = self.max_tokens + 200  # (the instruction and the reply)
        requests = [ChatRequest(messages=[{"role": "system", "content": CONCEPT_PROMPT},
                                          {"role": "user", "content": fitted_session(part, self.llm, reserve)}],
                                max_tokens=self.max_tokens, response_schema=self.schema) for _, part in parts]
        new = []
        for (session, part), reply in zip(parts, self.llm.generate_json(requests, fits=_is_concepts), strict=True):
            concepts = frozenset(filter(None, (node_name(c) for c in (reply or {}).get("concepts", []))))
            text = f"Date: {part.date}\n" + "\n".join(turn_line(t) for t in part.turns)
            new.append(Chunk(text, session.session_id, concepts))
        self._add(new)

    def _add(self, new: list[Chunk]) -> None:
        known = {key for _kind, key in self.concept_vectors.nodes}
        concepts = sorted({c for chunk in new for c in chunk.concepts} - known)
        vectors = self.embedder.encode([chunk.text for chunk in new] + concepts)
        first = len(self.chunks)
        chunk_nodes: list[Node] = [("chunk", first + offset) for offset in range(len(new))]
        self.chunks.extend(new)
        self.chunk_vectors.add(chunk_nodes, vectors[:len(new)])
        self.concept_vectors.add([("concept", c) for c in concepts], vectors[len(new):])
        for node, chunk in zip(chunk_nodes, new, strict=True):
            self.graph.add_node(node)
            for concept in sorted(chunk.concepts):
                self.graph.add_edge(node, ("concept", concept), CONCEPT_EDGE_WEIGHT)
        for a, b, similarity in self.chunk_vectors.new_pairs(len(new), self.edges_threshold):
            self.graph.add_edge(a, b, edge_weight(similarity, self.chunks[a[1]].concepts, self.chunks[b[1]].concepts))

    def retrieve(self, questions: Sequence[str], k: int, token_budget: int | None = None) -> list[Retrieval]:
        """Per question, the first k chunks the best-first traversal reaches from its seeds (score: 1 / cost),
        then, if the graph ran out, the most similar chunks not reached (score: their cosine)."""
        if not questions:
            return []
        if not self.chunks or k < 1:
            return [Retrieval() for _ in questions]
        queries = self.embedder.encode(list(questions))
        chunk_scores = self.chunk_vectors.similarities(queries)
        concept_scores = self.concept_vectors.similarities(queries)
        return [self._retrieve_one(chunk_row, concept_row, k)
                for chunk_row, concept_row in zip(chunk_scores, concept_scores, strict=True)]

    def seed_costs(self, chunk_row: np.ndarray, concept_row: np.ndarray) -> dict[Node, float]:
        """Where the traversal starts: the `seeds` most similar chunks and `concept_seeds` most similar concepts,
        each at cost 1 / cosine (the original's priority); nodes with cosine <= 0 never seed."""
        seeds = [(self.chunk_vectors.nodes[i], float(chunk_row[i])) for i in best_first(chunk_row, self.seeds)]
        seeds += [(self.concept_vectors.nodes[i], float(concept_row[i]))
                  for i in best_first(concept_row, self.concept_seeds)]
        return {node: 1.0 / similarity for node, similarity in seeds if similarity > 0}

    def _retrieve_one(self, chunk_row: np.ndarray, concept_row: np.ndarray, k: int) -> Retrieval:
        reached = self.graph.traverse(self.seed_costs(chunk_row, concept_row), lambda node: node[0] == "chunk",
                                      k, tie=lambda node: -float(chunk_row[node[1]]) if node[0] == "chunk" else 0.0)
        hits = [(node[1], 1.0 / cost) for node, cost in reached]
        taken = {index for index, _ in hits}
        hits += [(i, float(chunk_row[i])) for i in best_first(chunk_row, len(self.chunks)) if i not in taken]
        return Retrieval(items=[MemoryItem(self.chunks[i].text, (self.chunks[i].session_id,), score)
                                for i, score in hits[:k]])

    def size(self) -> int:
        return len(self.chunks)

    def concepts(self) -> int:
        """Concept nodes in the graph."""
        return len(self.concept_vectors)

    def session_ids(self) -> set[str]:
        return {chunk.session_id for chunk in self.chunks}


def edge_weight(similarity: float, a: frozenset[str], b: frozenset[str]) -> float:
    """The original's chunk-chunk weight: 0.7 x cosine + 0.3 x shared concepts over the smaller concept count."""
    smaller = min(len(a), len(b))
    return 0.7 * similarity + 0.3 * (len(a & b) / smaller if smaller else 0.0)


def _is_concepts(reply: Any) -> bool:
    return isinstance(reply, dict) and isinstance(reply.get("concepts"), list) and \
        all(isinstance(c, str) for c in reply["concepts"])
