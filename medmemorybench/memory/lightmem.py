"""LightMem, natively: sensory memory cuts the turn stream into topic segments (a new topic where adjacent turns'
embeddings part), short-term memory collects segments until a token threshold and then one LLM call extracts
standalone, timestamped facts per batch; long-term memory embeds the facts; a "sleep-time" update after each
checkpoint shows each new fact its most similar earlier facts and lets the LLM update, delete or keep them
(consolidation). Retrieval is a vector top-k rendered as "date weekday: fact".

Native: the `lightmem` package on PyPI is a placeholder and the GitHub project pins torch 2.8 and
transformers 4.57, and needs LLMLingua-2 weights for its segmenter (`../shared/research/memory-systems.md`
§11). What differs from the original: segmentation uses the shared sentence embedder's similarity between
adjacent turns (LightMem combines LLMLingua-2 attention with embedding similarity), there is no token-level
pre-compression, and the speakers come from the structured turns (the paper's adapter looked for `患者:` /
`医生:` prefixes that its own formatter never wrote, so every session became one "user" blob), and the sleep-time
update runs (the adapter configured it and never called it).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date as Date
from typing import Any

import numpy as np

from medmemorybench.memory.base import MemoryItem, Retrieval
from medmemorybench.memory.context import LLMBuiltMemory, best_first
from medmemorybench.models.base import ChatRequest, check_arg
from medmemorybench.render.models import ObservedSession, turn_line

EXTRACT_PROMPT = (
    "You extract a patient's medical facts from parts of their consultations. Each part is numbered and dated. "
    "Write each fact as one standalone sentence that names what it is about (the medicine and dose, the test and "
    "value, the allergy, the diagnosis, the decision), with the number of the part it comes from."
)
UPDATE_PROMPT = (
    "You consolidate a patient's medical memory. A new fact is shown with earlier facts like it, numbered. For "
    "each earlier fact decide: \"update\" it (give the corrected text) when the new fact changes it, \"delete\" "
    "it when the new fact makes it wrong or repeats it, or \"ignore\" it when it still holds."
)
FACT_CHARS = 200


def extraction_schema(segments: int, max_facts: int) -> dict[str, Any]:
    fact = {"type": "object", "additionalProperties": False, "required": ["part", "fact"],
            "properties": {"part": {"type": "integer", "minimum": 0, "maximum": segments - 1},
                           "fact": {"type": "string", "maxLength": FACT_CHARS}}}
    return {"type": "object", "additionalProperties": False, "required": ["facts"],
            "properties": {"facts": {"type": "array", "maxItems": max_facts, "items": fact}}}


def update_schema(earlier: int) -> dict[str, Any]:
    decision = {"type": "object", "additionalProperties": False, "required": ["index", "action", "text"],
                "properties": {"index": {"type": "integer", "minimum": 0, "maximum": earlier - 1},
                               "action": {"enum": ["update", "delete", "ignore"]},
                               "text": {"type": "string", "maxLength": FACT_CHARS}}}
    return {"type": "object", "additionalProperties": False, "required": ["decisions"],
            "properties": {"decisions": {"type": "array", "maxItems": earlier, "items": decision}}}


@dataclass
class Segment:
    lines: list[str]
    session_id: str
    date: str


@dataclass
class Fact:
    text: str
    date: str
    session_ids: tuple[str, ...]

    def line(self) -> str:
        weekday = Date.fromisoformat(self.date).strftime("%A")
        return f"{self.date} {weekday}: {self.text}"


class LightMemMemory(LLMBuiltMemory):
    """LightMem: topic segments -> short-term buffer -> timestamped facts -> sleep-time consolidation.

    Args:
        topic_threshold: cosine similarity of adjacent turns below which a new topic segment starts.
        stm_tokens: tokens of segments the short-term buffer holds before it is extracted (and at each
            checkpoint's end, as LightMem's force_extract).
        max_facts: most facts one extraction call writes.
        consolidate: run the sleep-time update after each checkpoint.
        update_neighbours, update_similarity: the earlier facts shown with a new fact (most similar first, at
            least this similar).
        max_tokens: tokens the memory LLM may write per call.
    """

    name = "lightmem"

    def __init__(self, topic_threshold: float = 0.3, stm_tokens: int = 512, max_facts: int = 8,
                 consolidate: bool = True, update_neighbours: int = 5, update_similarity: float = 0.6,
                 max_tokens: int = 512) -> None:
        check_arg(topic_threshold, "topic_threshold", (int, float), lambda v: -1 <= v <= 1, "a cosine from -1 to 1")
        check_arg(update_similarity, "update_similarity", (int, float), lambda v: -1 <= v <= 1,
                  "a cosine from -1 to 1")
        check_arg(stm_tokens, "stm_tokens", int, lambda v: v >= 32, "an integer >= 32")
        check_arg(max_facts, "max_facts", int, lambda v: 1 <= v <= 30, "an integer from 1 to 30")
        check_arg(update_neighbours, "update_neighbours", int, lambda v: 1 <= v <= 20, "an integer from 1 to 20")
        check_arg(max_tokens, "max_tokens", int, lambda v: v >= 64, "an integer >= 64")
        if not isinstance(consolidate, bool):
            raise ValueError(f"consolidate must be true or false, not {consolidate!r}")
        super().__init__(topic_threshold=topic_threshold, stm_tokens=stm_tokens, max_facts=max_facts,
                         consolidate=consolidate, update_neighbours=update_neighbours,
                         update_similarity=update_similarity, max_tokens=max_tokens)
        self.topic_threshold, self.stm_tokens, self.max_facts = topic_threshold, stm_tokens, max_facts
        self.consolidate, self.update_neighbours = consolidate, update_neighbours
        self.update_similarity, self.max_tokens = update_similarity, max_tokens
        self.facts: list[Fact] = []
        self._vectors = np.zeros((0, 0), dtype=np.float32)
        self.buffer: list[Segment] = []
        self.updates = {"update": 0, "delete": 0, "ignore": 0}


    def reset(self) -> None:
        self.facts.clear()
        self.buffer.clear()
        self._vectors = np.zeros((0, 0), dtype=np.float32)

    # --- sensory and short-term memory -------------------------------------------------------------

    def segments(self, session: ObservedSession) -> list[Segment]:
        """The session's turns cut where adjacent turns' embeddings are less similar than `topic_threshold`."""
        lines = [turn_line(turn) for turn in session.turns]  # (structured speakers)
        vectors = self.embedder.encode([turn.text for turn in session.turns])
        out = [Segment([lines[0]], session.session_id, session.date)]
        for index in range(1, len(lines)):
            if float(vectors[index] @ vectors[index - 1]) < self.topic_threshold:
                out.append(Segment([], session.session_id, session.date))
            out[-1].lines.append(lines[index])
        return out

    def ingest(self, sessions: Sequence[ObservedSession]) -> None:
        """Segment each session into the short-term buffer, extracting whenever it passes `stm_tokens` and at the
        end (all extractions of the checkpoint in one batch); then, with `consolidate`, the sleep-time update."""
        batches: list[list[Segment]] = []
        for session in sessions:
            for segment in self.segments(session):
                self.buffer.append(segment)
                if sum(self.llm.count_tokens("\n".join(s.lines)) for s in self.buffer) >= self.stm_tokens:
                    batches.append(self.buffer)
                    self.buffer = []
        if self.buffer:
            batches.append(self.buffer)
            self.buffer = []
        new = self._extract(batches)
        if new:
            self._store(new)
            if self.consolidate:
                self._sleep(new)

    def _extract(self, batches: list[list[Segment]]) -> list[Fact]:
        requests = []
        for batch in batches:
            parts = "\n\n".join(f"[{n}] ({s.date})\n" + "\n".join(s.lines) for n, s in enumerate(batch))
            requests.append(ChatRequest(messages=[{"role": "system", "content": EXTRACT_PROMPT},
                                                  {"role": "user", "content": parts}],
                                        max_tokens=self.max_tokens,
                                        response_schema=extraction_schema(len(batch), self.max_facts)))
        facts = []
        for batch, reply in zip(batches, self.llm.generate_json(requests, fits=_is_extraction), strict=True):
            for item in (reply or {}).get("facts", []):
                if 0 <= item["part"] < len(batch) and item["fact"].strip():
                    segment = batch[item["part"]]
                    facts.append(Fact(item["fact"].strip(), segment.date, (segment.session_id,)))
        return facts

    # --- long-term memory -------------------------------------------------------------------------

    def _store(self, new: list[Fact]) -> None:
        vectors = self.embedder.encode([f.line() for f in new])
        self._vectors = vectors if self._vectors.size == 0 else np.vstack([self._vectors, vectors])
        self.facts.extend(new)

    def _sleep(self, new: list[Fact]) -> None:
        """Each new fact against the most similar earlier-or-same-day facts stored before it: one call per new fact
        (in one batch); updated facts take the new fact's date and sessions, deleted ones go."""
        first_new = len(self.facts) - len(new)
        jobs = []
        for offset, fact in enumerate(new):
            index = first_new + offset
            scores = self._vectors[:first_new] @ self._vectors[index] if first_new else np.zeros(0)
            earlier = [i for i in best_first(scores, self.update_neighbours)
                       if scores[i] >= self.update_similarity and self.facts[i].date <= fact.date]
            if earlier:
                jobs.append((fact, earlier))
        if not jobs:
            return
        requests = [ChatRequest(messages=[{"role": "system", "content": UPDATE_PROMPT}, {"role": "user", "content": (
            f"New fact: {fact.line()}\n\nEarlier facts:\n" +
            "\n".join(f"[{n}] {self.facts[i].line()}" for n, i in enumerate(earlier)))}],
            max_tokens=self.max_tokens, response_schema=update_schema(len(earlier))) for fact, earlier in jobs]
        deleted: set[int] = set()
        changed: list[int] = []
        for (fact, earlier), reply in zip(jobs, self.llm.generate_json(requests, fits=_is_update), strict=True):
            for decision in (reply or {}).get("decisions", []):
                if not 0 <= decision["index"] < len(earlier):
                    continue
                target = earlier[decision["index"]]
                self.updates[decision["action"]] += 1
                if decision["action"] == "delete":
                    deleted.add(target)
                elif decision["action"] == "update" and decision["text"].strip():
                    old = self.facts[target]
                    self.facts[target] = Fact(decision["text"].strip(), fact.date,
                                              tuple(dict.fromkeys((*old.session_ids, *fact.session_ids))))
                    changed.append(target)
        changed = [i for i in changed if i not in deleted]
        if changed:  # an updated fact is found by what it now says
            self._vectors[changed] = self.embedder.encode([self.facts[i].line() for i in changed])
        if deleted:
            keep = [i for i in range(len(self.facts)) if i not in deleted]
            self.facts = [self.facts[i] for i in keep]
            self._vectors = self._vectors[keep]

    def retrieve(self, questions: Sequence[str], k: int, token_budget: int | None = None) -> list[Retrieval]:
        """The k facts most similar to each question, as "date weekday: fact" lines."""
        if not questions:
            return []
        if not self.facts or k < 1:
            return [Retrieval() for _ in questions]
        similarities = self.embedder.encode(list(questions)) @ self._vectors.T
        return [Retrieval(items=[MemoryItem(self.facts[i].line(), self.facts[i].session_ids, float(row[i]))
                                 for i in best_first(row, k)]) for row in similarities]

    def size(self) -> int:
        return len(self.facts)

    def session_ids(self) -> set[str]:
        return {sid for fact in self.facts for sid in fact.session_ids}


def _is_extraction(reply: Any) -> bool:
    return isinstance(reply, dict) and isinstance(reply.get("facts"), list) and all(
        isinstance(f, dict) and isinstance(f.get("part"), int) and isinstance(f.get("fact"), str)
        for f in reply["facts"])


def _is_update(reply: Any) -> bool:
    return isinstance(reply, dict) and isinstance(reply.get("decisions"), list) and all(
        isinstance(d, dict) and isinstance(d.get("index"), int) and d.get("action") in ("update", "delete", "ignore")
        and isinstance(d.get("text"), str) for d in reply["decisions"])
