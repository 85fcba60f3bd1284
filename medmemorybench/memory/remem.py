"""ReMem-style episodic memory (REMem, Intuit; `extract_method="episodic_gist"`): every session is a verbatim node;
one memory-LLM call per session writes its gist and its facts, each fact with the entities it involves; entity
nodes join facts across sessions, and synonymy edges join similar entities and similar gists. A question seeds a
personalized PageRank at its most similar facts and gists (and those facts' entities), with a small weight on every
verbatim session by its dense similarity, as HippoRAG 2, ReMem's base, does; the verbatim, gist and fact nodes
with the most PageRank mass are the memory returned, each with its session.

Native: ReMem is not on PyPI and its source could not be read here (`../shared/research/memory-systems.md` §6); the
mechanism follows its documentation and HippoRAG 2. What differs from what the paper ran: the memory is cumulative
(the paper's adapter re-indexed from scratch at every checkpoint, so it held only the last ~10 sessions); gist,
facts and entities come from one call per session under a bounded JSON schema (ReMem prompts for them apart, in
prompts not available here); a fact's time qualifier is its session's date, written into its text; there is no
tool-using agent and no recognition filter on the seed facts, and the harness's backbone answers (shared QA).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from medmemorybench.memory._graph import MemoryGraph, Node, NodeVectors, node_name
from medmemorybench.memory._schema import reply_token_bound
from medmemorybench.memory.base import MemoryItem, Retrieval
from medmemorybench.memory.context import LLMBuiltMemory, best_first, fitted_session
from medmemorybench.models.base import ChatRequest, check_arg
from medmemorybench.render.models import ObservedSession, session_text

EPISODE_PROMPT = (
    "You are the episodic memory of a patient's personal medical assistant. Read one consultation and write: a "
    "gist, two or three sentences saying what happened and what was decided; and the facts worth remembering, each "
    "one standalone sentence that names what it is about (the medicine and dose, the test and value, the "
    "diagnosis, the allergy, the plan), with the entities it involves (conditions, medicines, tests, symptoms, "
    "people) as short names. Write only what the consultation says."
)
GIST_CHARS, FACT_CHARS, ENTITIES, ENTITY_CHARS = 240, 160, 3, 32
"""Bounds of one reply (a small model that loops inside a string or a list stops at them)."""
CONTENT_KINDS = ("verbatim", "gist", "fact")
"""The node kinds retrieval can return (entities only carry PageRank between them)."""
RETURNS = {"all": CONTENT_KINDS, "verbatim": ("verbatim",)}
"""`returns` option -> the kinds retrieval returns."""


def episode_schema(max_facts: int) -> dict[str, Any]:
    fact = {"type": "object", "additionalProperties": False, "required": ["fact", "entities"],
            "properties": {"fact": {"type": "string", "maxLength": FACT_CHARS},
                           "entities": {"type": "array", "maxItems": ENTITIES,
                                        "items": {"type": "string", "maxLength": ENTITY_CHARS}}}}
    return {"type": "object", "additionalProperties": False, "required": ["gist", "facts"],
            "properties": {"gist": {"type": "string", "maxLength": GIST_CHARS},
                           "facts": {"type": "array", "maxItems": max_facts, "items": fact}}}


@dataclass(frozen=True)
class Memory:
    """A verbatim session, a gist or a fact: what the backbone reads and the session it came from."""

    text: str
    session_id: str
    entities: tuple[str, ...] = ()
    """A fact's entity names (normalized)."""


class ReMemMemory(LLMBuiltMemory):
    """ReMem-style: verbatim, gist, fact and entity nodes, searched by personalized PageRank.

    Args:
        max_facts: most facts the memory LLM writes per session.
        linking_top_k: facts and gists most similar to the question that seed the PageRank (the paper: 5).
        damping: probability that the walk follows an edge rather than restarting at the seeds (the paper: 0.5).
        passage_node_weight: seed weight of every verbatim session, times its cosine with the question (the
            paper: 0.05).
        synonymy_threshold: cosine at which two entities, or two gists, are joined (the paper: 0.8).
        synonymy_topk: most synonymy edges a new entity or gist gets, to its most similar (the paper: 10).
        returns: "all" (verbatim sessions, gists and facts, ranked together) or "verbatim" (sessions only, ranked by
            their PageRank mass: ReMem's and HippoRAG's passage ranking).
    """

    name = "remem"

    def __init__(self, max_facts: int = 6, linking_top_k: int = 5, damping: float = 0.5,
                 passage_node_weight: float = 0.05, synonymy_threshold: float = 0.8, synonymy_topk: int = 10,
                 returns: str = "all") -> None:
        check_arg(max_facts, "max_facts", int, lambda v: 1 <= v <= 30, "an integer from 1 to 30")
        check_arg(linking_top_k, "linking_top_k", int, lambda v: v >= 1, "an integer >= 1")
        check_arg(damping, "damping", (int, float), lambda v: 0 < v < 1, "a probability between 0 and 1")
        check_arg(passage_node_weight, "passage_node_weight", (int, float), lambda v: v >= 0, "a number >= 0")
        check_arg(synonymy_threshold, "synonymy_threshold", (int, float), lambda v: 0 < v <= 1,
                  "a cosine above 0, up to 1")
        check_arg(synonymy_topk, "synonymy_topk", int, lambda v: v >= 0, "an integer >= 0")
        check_arg(returns, "returns", str, lambda v: v in RETURNS, " or ".join(map(repr, RETURNS)))
        super().__init__(max_facts=max_facts, linking_top_k=linking_top_k, damping=damping,
                         passage_node_weight=passage_node_weight, synonymy_threshold=synonymy_threshold,
                         synonymy_topk=synonymy_topk, returns=returns)
        self.max_facts, self.linking_top_k, self.damping = max_facts, linking_top_k, damping
        self.passage_node_weight = passage_node_weight
        self.synonymy_threshold, self.synonymy_topk = synonymy_threshold, synonymy_topk
        self.returns = RETURNS[returns]
        self.schema = episode_schema(max_facts)
        self.max_tokens = reply_token_bound(self.schema)
        self.memories: dict[Node, Memory] = {}
        self.vectors = {kind: NodeVectors() for kind in (*CONTENT_KINDS, "entity")}
        self.entity_facts: Counter[str] = Counter()
        """Facts naming each entity (an entity in many facts seeds weakly, as HippoRAG divides by frequency)."""
        self.graph = MemoryGraph()

    def reset(self) -> None:
        self.memories.clear()
        for vectors in self.vectors.values():
            vectors.clear()
        self.entity_facts.clear()
        self.graph.clear()

    def ingest(self, sessions: Sequence[ObservedSession]) -> None:
        """One extraction call per new session (the checkpoint's calls in one batch), one embedding call for every
        new node, then the new nodes' edges; nothing built before is touched but by the edges to it."""
        if not sessions:
            return
        reserve = self.max_tokens + 200  # (the instruction and the reply)
        requests = [ChatRequest(messages=[{"role": "system", "content": EPISODE_PROMPT},
                                          {"role": "user", "content": fitted_session(s, self.llm, reserve)}],
                                max_tokens=self.max_tokens, response_schema=self.schema) for s in sessions]
        new: list[tuple[Node, Memory]] = []
        links: list[tuple[Node, Node]] = []
        for session, reply in zip(sessions, self.llm.generate_json(requests, fits=_is_episode), strict=True):
            episode = self._episode(session, reply or {"gist": "", "facts": []}, len(new))
            new += episode
            verbatim, *rest = [node for node, _memory in episode]
            gist = next((node for node in rest if node[0] == "gist"), verbatim)
            links += [(verbatim, node) if node[0] == "gist" else (gist, node) for node in rest]
        self._add(new, links)

    def _episode(self, session: ObservedSession, reply: dict, offset: int) -> list[tuple[Node, Memory]]:
        """The session's verbatim node, then its gist and facts (none from a reply that did not parse; a fact
        repeated in one reply once, as HippoRAG stores a text once)."""
        count = len(self.memories) + offset
        out: list[tuple[Node, Memory]] = [(("verbatim", count), Memory(session_text(session), session.session_id))]
        if reply["gist"].strip():
            out.append((("gist", count + 1), Memory(f"[{session.date}] Gist: {reply['gist'].strip()}",
                                                    session.session_id)))
        for raw in {raw["fact"].strip(): raw for raw in reply["facts"]}.values():
            if raw["fact"].strip():
                entities = tuple(dict.fromkeys(filter(None, (node_name(e) for e in raw["entities"]))))
                out.append((("fact", count + len(out)), Memory(f"[{session.date}] {raw['fact'].strip()}",
                                                               session.session_id, entities)))
        return out

    def _add(self, new: list[tuple[Node, Memory]], links: list[tuple[Node, Node]]) -> None:
        known = {key for _kind, key in self.vectors["entity"].nodes}
        entities = sorted({e for _node, memory in new for e in memory.entities} - known)
        texts = [memory.text for _node, memory in new] + entities
        vectors = self.embedder.encode(texts)
        for kind in CONTENT_KINDS:
            rows = [i for i, (node, _memory) in enumerate(new) if node[0] == kind]
            self.vectors[kind].add([new[i][0] for i in rows], vectors[rows])
        self.vectors["entity"].add([("entity", e) for e in entities], vectors[len(new):])
        for node, memory in new:
            self.memories[node] = memory
            self.graph.add_node(node)
        for a, b in links:
            self.graph.add_edge(a, b, 1.0)
        verbatim_of = {memory.session_id: node for node, memory in new if node[0] == "verbatim"}
        for node, memory in new:
            self.entity_facts.update(memory.entities)
            for entity in memory.entities:
                self.graph.add_edge(node, ("entity", entity), 1.0)
                verbatim = verbatim_of[memory.session_id]  # (HippoRAG's passage "contains" entity edge)
                if re.search(rf"\b{re.escape(entity)}\b", self.memories[verbatim].text.lower()):
                    self.graph.add_edge(verbatim, ("entity", entity), 1.0)
        for kind, count in (("entity", len(entities)), ("gist", sum(node[0] == "gist" for node, _ in new))):
            if self.synonymy_topk:
                for a, b, similarity in self.vectors[kind].new_pairs(count, self.synonymy_threshold,
                                                                     self.synonymy_topk):
                    self.graph.add_edge(a, b, similarity)

    def seed_weights(self, query: np.ndarray) -> dict[Node, float]:
        """The PageRank's restart weights for one question vector: its `linking_top_k` most similar facts and gists
        at their cosine, each such fact's entities at the cosine over the entity's fact count, and every verbatim
        session at `passage_node_weight` x its cosine (cosines below 0 count as 0)."""
        weights: Counter[Node] = Counter()
        for kind in ("fact", "gist"):
            vectors = self.vectors[kind]
            scores = vectors.similarities(query[None, :])[0]
            for i in best_first(scores, self.linking_top_k):
                if scores[i] > 0:
                    weights[vectors.nodes[i]] += float(scores[i])
                    for entity in self.memories[vectors.nodes[i]].entities:
                        weights[("entity", entity)] += float(scores[i]) / self.entity_facts[entity]
        verbatim = self.vectors["verbatim"]
        for node, score in zip(verbatim.nodes, verbatim.similarities(query[None, :])[0], strict=True):
            weights[node] += self.passage_node_weight * max(float(score), 0.0)
        return dict(weights)

    def retrieve(self, questions: Sequence[str], k: int, token_budget: int | None = None) -> list[Retrieval]:
        """Per question, the k nodes of the `returns` kinds with the most personalized-PageRank mass."""
        if not questions:
            return []
        if not self.memories or k < 1:
            return [Retrieval() for _ in questions]
        out = []
        for query in self.embedder.encode(list(questions)):
            mass = self.graph.personalized_pagerank(self.seed_weights(query), self.damping)
            ranked = sorted(((score, node) for node, score in mass.items() if node[0] in self.returns),
                            key=lambda pair: (-pair[0], pair[1]))
            out.append(Retrieval(items=[MemoryItem(self.memories[node].text, (self.memories[node].session_id,), score)
                                        for score, node in ranked[:k]]))
        return out

    def size(self) -> int:
        return len(self.memories)

    def count(self, kind: str) -> int:
        """Nodes of one kind ("verbatim", "gist", "fact" or "entity")."""
        return len(self.vectors[kind])

    def session_ids(self) -> set[str]:
        return {memory.session_id for memory in self.memories.values()}


def _is_episode(reply: Any) -> bool:
    return isinstance(reply, dict) and isinstance(reply.get("gist"), str) and isinstance(reply.get("facts"), list) \
        and all(isinstance(f, dict) and isinstance(f.get("fact"), str) and isinstance(f.get("entities"), list)
                and all(isinstance(e, str) for e in f["entities"]) for f in reply["facts"])
