"""A-Mem (agentic memory), natively, as the paper's adapter ran it: a Zettelkasten note per session (the raw
session text, as the adapter stored it), which the memory LLM annotates with keywords, a one-sentence context
and tags; then "evolution": the new note's nearest notes are shown to the LLM, which may link the note to them
and rewrite their context and tags. Notes are embedded as content plus annotations and searched by cosine;
optionally a hit's linked notes are added (A-Mem's `search_agentic`; the paper's adapter did not).

Native, not a package: the official library is git-only and the PyPI names belong to other projects
(`../shared/research/memory-systems.md` §8). What differs from the paper's adapter: the note's timestamp is the
session date (the adapter stamped the wall clock), the replies are decoded under bounded JSON schemas (the
adapter parsed free-text section markers with heuristics), and the evolution reply is one call that decides,
links and rewrites together.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from medmemorybench.memory.base import MemoryItem, Retrieval
from medmemorybench.memory.context import LLMBuiltMemory, best_first, fitted_session
from medmemorybench.models.base import ChatRequest, check_arg
from medmemorybench.render.models import ObservedSession, turn_line

ANALYSE_PROMPT = (
    "You organise a patient's medical notes. Read one consultation and describe it for later search: up to six "
    "keywords (medicines, tests, conditions, decisions), one sentence of context saying what the consultation "
    "was about, and up to four tags."
)
EVOLVE_PROMPT = (
    "You maintain a network of a patient's medical notes. A new note has arrived; below it are the most similar "
    "earlier notes, numbered. Decide whether the new note is related to any of them. If it is, list the numbers "
    "of the related notes, and for each earlier note give an updated one-sentence context that takes the new "
    "note into account (an empty text keeps it as it is)."
)
TEXT = {"type": "string", "maxLength": 160}
WORDS = {"type": "array", "maxItems": 6, "items": {"type": "string", "maxLength": 24}}


def analysis_schema() -> dict[str, Any]:
    return {"type": "object", "additionalProperties": False, "required": ["keywords", "context", "tags"],
            "properties": {"keywords": WORDS, "context": TEXT,
                           "tags": {"type": "array", "maxItems": 4, "items": {"type": "string", "maxLength": 16}}}}


def evolution_schema(neighbours: int) -> dict[str, Any]:
    return {"type": "object", "additionalProperties": False,
            "required": ["should_evolve", "connections", "neighbour_contexts"],
            "properties": {"should_evolve": {"type": "boolean"},
                           "connections": {"type": "array", "maxItems": neighbours,
                                           "items": {"type": "integer", "minimum": 0, "maximum": neighbours - 1}},
                           "neighbour_contexts": {"type": "array", "maxItems": neighbours, "items": TEXT}}}


@dataclass
class Note:
    content: str
    session_id: str
    date: str
    keywords: list[str] = field(default_factory=list)
    context: str = ""
    tags: list[str] = field(default_factory=list)
    links: set[int] = field(default_factory=set)
    """Indices of linked notes (both ways)."""

    def search_text(self) -> str:
        """What is embedded: the content and its annotations."""
        return "\n".join([self.content, f"Context: {self.context}", f"Keywords: {', '.join(self.keywords)}",
                          f"Tags: {', '.join(self.tags)}"])

    def card(self) -> str:
        """What the answering model reads."""
        return f"[{self.date}] ({self.context})\n{self.content}" if self.context else f"[{self.date}]\n{self.content}"


class AMemMemory(LLMBuiltMemory):
    """A-Mem: annotated session notes that link and evolve.

    Args:
        neighbours: nearest notes shown to the evolution step (A-Mem: 5).
        expand_links: add a hit's linked notes to the results (A-Mem's search_agentic; the paper's adapter: off).
        max_tokens: tokens the memory LLM may write per call.
    """

    name = "amem"

    def __init__(self, neighbours: int = 5, expand_links: bool = False, max_tokens: int = 256) -> None:
        check_arg(neighbours, "neighbours", int, lambda v: 1 <= v <= 20, "an integer from 1 to 20")
        check_arg(max_tokens, "max_tokens", int, lambda v: v >= 64, "an integer >= 64")
        if not isinstance(expand_links, bool):
            raise ValueError(f"expand_links must be true or false, not {expand_links!r}")
        super().__init__(neighbours=neighbours, expand_links=expand_links, max_tokens=max_tokens)
        self.neighbours, self.expand_links, self.max_tokens = neighbours, expand_links, max_tokens
        self.notes: list[Note] = []
        self._vectors = np.zeros((0, 0), dtype=np.float32)
        self.evolutions = 0


    def reset(self) -> None:
        self.notes.clear()
        self._vectors = np.zeros((0, 0), dtype=np.float32)
        self.evolutions = 0

    def ingest(self, sessions: Sequence[ObservedSession]) -> None:
        """Annotate the checkpoint's sessions in one batch, then add the notes one by one, each evolving the
        network as it stood before it (the order of A-Mem's `add_note` calls)."""
        if not sessions:
            return
        reserve = self.max_tokens + 200  # (the instruction and the reply)
        requests = [ChatRequest(messages=[{"role": "system", "content": ANALYSE_PROMPT},
                                          {"role": "user", "content": fitted_session(s, self.llm, reserve)}],
                                max_tokens=self.max_tokens, response_schema=analysis_schema()) for s in sessions]
        for session, analysis in zip(sessions, self.llm.generate_json(requests, fits=_is_analysis), strict=True):
            note = Note(content="\n".join(turn_line(t) for t in session.turns),
                        session_id=session.session_id, date=session.date)
            if analysis is not None:
                note.keywords, note.context, note.tags = analysis["keywords"], analysis["context"], analysis["tags"]
            self._add(note)

    def _add(self, note: Note) -> None:
        vector = self.embedder.encode([note.search_text()])
        nearest = self._nearest(vector[0], self.neighbours) if self.notes else []
        self.notes.append(note)
        self._vectors = vector if self._vectors.size == 0 else np.vstack([self._vectors, vector])
        if nearest:
            self._evolve(len(self.notes) - 1, nearest)

    def _nearest(self, vector: np.ndarray, count: int) -> list[int]:
        return best_first(self._vectors @ vector, count)

    def _evolve(self, index: int, nearest: list[int]) -> None:
        note = self.notes[index]
        listing = "\n\n".join(f"[{number}] {self.notes[i].date}: {self.notes[i].context or self.notes[i].content[:300]}"
                              for number, i in enumerate(nearest))
        user = (f"New note ({note.date}): {note.context}\nKeywords: {', '.join(note.keywords)}\n\n"
                f"Earlier notes:\n{listing}")
        (decision,) = self.llm.generate_json([ChatRequest(
            messages=[{"role": "system", "content": EVOLVE_PROMPT}, {"role": "user", "content": user}],
            max_tokens=self.max_tokens, response_schema=evolution_schema(len(nearest)))], fits=_is_decision)
        if not decision or not decision["should_evolve"]:
            return
        self.evolutions += 1
        changed = []
        for number in decision["connections"]:
            if 0 <= number < len(nearest):
                neighbour = nearest[number]
                note.links.add(neighbour)
                self.notes[neighbour].links.add(index)
        for number, context in enumerate(decision["neighbour_contexts"][: len(nearest)]):
            if context.strip():
                self.notes[nearest[number]].context = context.strip()
                changed.append(nearest[number])
        if changed:  # a rewritten note is found by what it now says
            self._vectors[changed] = self.embedder.encode([self.notes[i].search_text() for i in changed])

    def retrieve(self, questions: Sequence[str], k: int, token_budget: int | None = None) -> list[Retrieval]:
        """The k notes most similar to each question (and, with `expand_links`, their linked notes after them)."""
        if not questions:
            return []
        if not self.notes or k < 1:
            return [Retrieval() for _ in questions]
        similarities = self.embedder.encode(list(questions)) @ self._vectors.T
        out = []
        for row in similarities:
            hits = best_first(row, k)
            if self.expand_links:
                hits += sorted({j for i in hits for j in self.notes[i].links} - set(hits))
            out.append(Retrieval(items=[MemoryItem(self.notes[i].card(), (self.notes[i].session_id,), float(row[i]))
                                        for i in hits]))
        return out

    def size(self) -> int:
        return len(self.notes)

    def session_ids(self) -> set[str]:
        return {note.session_id for note in self.notes}


def _is_analysis(reply: Any) -> bool:
    return isinstance(reply, dict) and isinstance(reply.get("keywords"), list) and \
        isinstance(reply.get("context"), str) and isinstance(reply.get("tags"), list)


def _is_decision(reply: Any) -> bool:
    return isinstance(reply, dict) and isinstance(reply.get("should_evolve"), bool) and \
        isinstance(reply.get("connections"), list) and isinstance(reply.get("neighbour_contexts"), list) and \
        all(isinstance(c, int) for c in reply["connections"]) and \
        all(isinstance(c, str) for c in reply["neighbour_contexts"])
