"""MIRIX, natively: six typed stores (core, episodic, semantic, procedural, resource, knowledge vault), a meta
memory manager that decides which stores a consultation updates, one manager per store that writes (and, for the
core profile and semantic concepts, updates) its items, and active retrieval at question time: the LLM names the
question's topic, the top items of every store are retrieved for it and put into the system prompt, and the
answering LLM answers.

Why native (`../shared/research/memory-systems.md` §13): PyPI's `mirix` 0.1.7 is a client only; the server runs
from GitHub with Postgres (or SQLite) and needs a tool-calling model. What is faithful: the six stores and their
fields, routing by a meta manager, per-store managers, semantic concepts merged by name, the core profile
rewritten rather than appended, active retrieval (topic, then per-store top-k, injected into the system prompt),
and coarse items (an episodic event summarizes a stretch of the visit, which the paper found hurts precision).
What differs: the managers are single calls under bounded JSON schemas instead of agent loops with tools,
retrieval is by embedding only (MIRIX also offers BM25 and string match), and every store reaches the prompt -
the authors' adapter passed only the top episodic and resource items (limit 1, then 2 items), so semantic,
procedural, vault and core memory never reached the answer. Dates: an event's `occurred_at` is its
consultation's date and every other item begins with it; no wall clock ("Current Time" is left out).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from medmemorybench.memory._schema import reply_token_bound
from medmemorybench.memory.base import MemoryItem, NativeAnswer, NativeQuestion, Retrieval
from medmemorybench.memory.context import LLMBuiltMemory, best_first, fitted_session, summed_completion
from medmemorybench.models.base import ChatRequest, check_arg
from medmemorybench.render.models import ObservedSession


def _text(chars: int) -> dict[str, Any]:
    return {"type": "string", "maxLength": chars}


def _items(key: str, most: int, **fields: dict) -> dict[str, Any]:
    item = {"type": "object", "additionalProperties": False, "required": list(fields), "properties": fields}
    return {"type": "object", "additionalProperties": False, "required": [key],
            "properties": {key: {"type": "array", "maxItems": most, "items": item}}}


STORES = ("core", "episodic", "semantic", "procedural", "resource", "knowledge_vault")
"""MIRIX's memory types, in the order the meta manager lists them."""

MANAGERS: dict[str, tuple[str, dict[str, Any]]] = {
    "episodic": ("You are the episodic memory manager of a patient's medical assistant. Record what happened in "
                 "this consultation as events: a type (visit, symptom, test, prescription, decision), a one-"
                 "sentence summary and the details.",
                 _items("events", 3, event_type=_text(24), summary=_text(160), details=_text(240))),
    "semantic": ("You are the semantic memory manager. Record the concepts this consultation is about - "
                 "conditions, medicines, tests - each with its name, a summary of what it is for this patient, "
                 "and details.",
                 _items("concepts", 4, name=_text(40), summary=_text(160), details=_text(160))),
    "procedural": ("You are the procedural memory manager. Record instructions the patient was given - how to "
                   "take a medicine, what to do when a symptom appears - as a description and steps.",
                   _items("procedures", 2, entry_type=_text(24), description=_text(120),
                          steps={"type": "array", "maxItems": 4, "items": _text(80)})),
    "resource": ("You are the resource memory manager. Record documents discussed in this consultation - test "
                 "reports, letters, plans - with a title, a type, a summary and their content.",
                 _items("resources", 2, title=_text(60), resource_type=_text(24), summary=_text(160),
                        content=_text(240))),
    "knowledge_vault": ("You are the knowledge vault manager. Record exact values that must be kept verbatim - "
                        "allergies, doses, identifiers, contacts - each with a caption, the value and how "
                        "sensitive it is.",
                        _items("secrets", 2, caption=_text(60), value=_text(120),
                               sensitivity={"enum": ["low", "medium", "high"]})),
}
"""Store -> (its manager's instruction, the schema of its reply)."""

ROUTE_PROMPT = (
    "You are the meta memory manager of a patient's medical assistant. Read the consultation and choose which "
    "memories it should update: core (the patient's profile: diagnoses, current medicines and doses, allergies, "
    "risks), episodic (what happened), semantic (conditions, medicines, tests), procedural (instructions given), "
    "resource (documents and reports), knowledge_vault (exact values to keep verbatim)."
)
ROUTE_SCHEMA = {"type": "object", "additionalProperties": False, "required": ["stores"],
                "properties": {"stores": {"type": "array", "maxItems": len(STORES), "items": {"enum": list(STORES)}}}}
CORE_PROMPT = (
    "You are the core memory manager. Below is the patient's profile as it stands, then a consultation. Write the "
    "profile again, updated: keep what still holds, change what the consultation changed (a new dose, a stopped "
    "medicine, a new allergy), add what is new. Short lines: diagnoses, current medicines with doses, allergies "
    "and intolerances, risks and what must not be given."
)
TOPIC_PROMPT = "Name the topic of the patient's question in a few words, for searching their medical memory."
TOPIC_SCHEMA = {"type": "object", "additionalProperties": False, "required": ["topic"],
                "properties": {"topic": _text(80)}}
SENTENCE = re.compile(r"\n+|(?<=[.;!?])\s+")
ANSWER_PROMPT = "You are a patient's personal medical assistant. What your memory holds about this question:"


@dataclass
class _Entry:
    """An item of a store, with the sessions it came from."""

    store: str
    text: str
    session_ids: set[str] = field(default_factory=set)
    name: str = ""
    """Semantic concepts are merged by name."""


def _entry_text(store: str, date: str, raw: dict) -> tuple[str, str]:
    """(the item as the prompt shows it, its merge name)."""
    if store == "episodic":
        return f"[{date}] {raw['event_type']}: {raw['summary']} {raw['details']}".strip(), ""
    if store == "semantic":
        return f"[{date}] {raw['name']}: {raw['summary']} {raw['details']}".strip(), raw["name"].strip().lower()
    if store == "procedural":
        return f"[{date}] {raw['description']}: {'; '.join(raw['steps'])}".strip(), ""
    if store == "resource":
        return f"[{date}] {raw['title']} ({raw['resource_type']}): {raw['summary']} {raw['content']}".strip(), ""
    return f"[{date}] {raw['caption']}: {raw['value']} (sensitivity {raw['sensitivity']})", ""


def _fits(store: str) -> Any:
    key = next(iter(MANAGERS[store][1]["properties"]))

    def fits(reply: Any) -> bool:
        return isinstance(reply, dict) and isinstance(reply.get(key), list) and all(
            isinstance(i, dict) and set(MANAGERS[store][1]["properties"][key]["items"]["required"]) <= set(i)
            for i in reply[key])

    return fits


class MIRIXMemory(LLMBuiltMemory):
    """MIRIX's six stores under a meta manager; answers natively (active retrieval) by default.

    Args:
        per_store: items retrieved from each store for a question.
        core_chars: most characters of the core profile.
    """

    name = "mirix"
    answer_modes = ("native", "shared")

    def __init__(self, per_store: int = 3, core_chars: int = 800) -> None:
        check_arg(per_store, "per_store", int, lambda v: 1 <= v <= 20, "an integer from 1 to 20")
        check_arg(core_chars, "core_chars", int, lambda v: 100 <= v <= 4000, "an integer from 100 to 4000")
        super().__init__(per_store=per_store, core_chars=core_chars)
        self.per_store, self.core_chars = per_store, core_chars
        self.core_schema = {"type": "object", "additionalProperties": False, "required": ["human"],
                            "properties": {"human": _text(core_chars)}}
        self.reset()

    def reset(self) -> None:
        self.core: list[tuple[str, frozenset[str]]] = []
        """The profile's sentences, each with the sessions that wrote it (a sentence a rewrite keeps word for word
        keeps its sessions; a new or changed one is the rewriting session's)."""
        self.entries: list[_Entry] = []
        self._rows = np.zeros((0, 0), dtype=np.float32)
        """The entries' vectors, a row each."""
        self.routed: dict[str, int] = dict.fromkeys(STORES, 0)
        """Consultations the meta manager sent to each store."""

    def _ask(self, system: str, user: str, schema: dict[str, Any]) -> ChatRequest:
        return ChatRequest(messages=[{"role": "system", "content": system}, {"role": "user", "content": user}],
                           max_tokens=reply_token_bound(schema), response_schema=schema)

    def ingest(self, sessions: Sequence[ObservedSession]) -> None:
        """Each consultation in order: the meta manager routes it (one call), then the chosen stores' managers
        write to them (one call each, in one batch)."""
        bound = max(reply_token_bound(schema) for _prompt, schema in MANAGERS.values())
        for session in sessions:
            text = fitted_session(session, self.llm, bound + self.core_chars // 2 + 300)
            (route,) = self.llm.generate_json([self._ask(ROUTE_PROMPT, text, ROUTE_SCHEMA)],
                                              fits=lambda r: isinstance(r, dict) and isinstance(r.get("stores"), list))
            chosen = [s for s in STORES if route is not None and s in route["stores"]]
            for store in chosen:
                self.routed[store] += 1
            stores = [s for s in chosen if s != "core"]
            requests = [self._ask(MANAGERS[s][0], text, MANAGERS[s][1]) for s in stores]
            checks = [_fits(s) for s in stores]
            if "core" in chosen:
                requests.append(self._ask(CORE_PROMPT, f"Profile:\n{self.core_text() or '(empty)'}\n\n{text}",
                                          self.core_schema))
                checks.append(lambda r: isinstance(r, dict) and isinstance(r.get("human"), str))
            replies = self.llm.generate_json(requests, fits=checks) if requests else []
            new: list[_Entry] = []
            for store, reply in zip(stores, replies, strict=False):
                if reply is not None:
                    new.extend(self._write(store, session, reply))
            if "core" in chosen and replies[-1] is not None and replies[-1]["human"].strip():
                self._rewrite_core(replies[-1]["human"], session.session_id)
            if new:
                self._rows = np.vstack([self._rows, self.embedder.encode([e.text for e in new])]) \
                    if self.entries else self.embedder.encode([e.text for e in new])
                self.entries.extend(new)

    def _write(self, store: str, session: ObservedSession, reply: dict) -> list[_Entry]:
        """The store's new entries; a semantic concept already known by name is updated in place (re-embedded)."""
        key = next(iter(MANAGERS[store][1]["properties"]))
        out = []
        for raw in reply[key]:
            text, name = _entry_text(store, session.date, raw)
            # (a concept known by name is updated; an item written twice word for word is kept once)
            known = next((e for e in [*self.entries, *out]
                          if e.store == store and (e.name == name if name else e.text == text)), None)
            if known is None:
                out.append(_Entry(store, text, {session.session_id}, name))
                continue
            known.text = text
            known.session_ids.add(session.session_id)
            if known in self.entries:
                self._rows[self.entries.index(known)] = self.embedder.encode([text])[0]
        return out

    def _rewrite_core(self, profile: str, session_id: str) -> None:
        """MIRIX's core manager rewrites the block; a sentence written before keeps its sessions."""
        known = dict(self.core)
        sentences = dict.fromkeys(s.strip() for s in SENTENCE.split(profile) if s.strip())  # (repeats once)
        self.core = [(s, known.get(s, frozenset({session_id}))) for s in sentences]

    def core_text(self) -> str:
        return " ".join(sentence for sentence, _ in self.core)

    def core_items(self) -> list[MemoryItem]:
        """The profile, pinned: one item per sentence, with the sessions it came from."""
        return [MemoryItem(f"Core memory (patient profile): {sentence}", tuple(sorted(sessions)), 1.0)
                for sentence, sessions in self.core]

    def search(self, queries: Sequence[str]) -> list[list[MemoryItem]]:
        """The `per_store` items of each store nearest each query, store by store (MIRIX's order of types)."""
        if not self.entries:
            return [[] for _ in queries]
        similarities = self.embedder.encode(list(queries)) @ self._rows.T
        out = []
        for row in similarities:
            found = []
            for store in STORES[1:]:
                members = np.array([i for i, e in enumerate(self.entries) if e.store == store], dtype=int)
                if members.size:
                    best = [self.entries[members[j]] for j in best_first(row[members], self.per_store)]
                    found += [MemoryItem(e.text, tuple(sorted(e.session_ids)), float(row[self.entries.index(e)]))
                              for e in best]
            out.append(found)
        return out

    def retrieve(self, questions: Sequence[str], k: int, token_budget: int | None = None) -> list[Retrieval]:
        """Shared mode: the core profile, then the k best items over all stores."""
        if not questions:
            return []
        core = self.core_items()
        return [Retrieval(items=core + sorted(found, key=lambda item: -item.score)[:k])
                for found in self.search(questions)]

    def answer(self, questions: Sequence[NativeQuestion]) -> list[NativeAnswer]:
        """Active retrieval: one call names each question's topic; every store is searched with it (and the
        question); the items go into the system prompt above the task's instructions; one call answers."""
        if not questions:
            return []
        answerer = self.context.answerer
        if answerer is None:
            raise RuntimeError("mirix answers natively with the answering model (MemoryContext.answerer)")
        topics = answerer.generate([ChatRequest(
            messages=[{"role": "system", "content": TOPIC_PROMPT}, {"role": "user", "content": q.query}],
            max_tokens=reply_token_bound(TOPIC_SCHEMA), response_schema=TOPIC_SCHEMA) for q in questions])
        queries = [f"{_topic(t)} {q.query}".strip() for t, q in zip(topics, questions, strict=True)]
        used = [self.core_items() + found for found in self.search(queries)]
        requests = []
        for question, items in zip(questions, used, strict=True):
            memory = "\n".join(f"- {item.text}" for item in items) or "- (nothing)"
            messages = [{"role": "system", "content": f"{ANSWER_PROMPT}\n{memory}\n\n{question.instructions}"},
                        *question.turns]
            requests.append(question.request.model_copy(update={"messages": messages}))
        finals = answerer.generate(requests)
        return [NativeAnswer(summed_completion(final, [topic, final]), items, 2)
                for topic, final, items in zip(topics, finals, used, strict=True)]

    def size(self) -> int:
        """Items over all stores and the profile's sentences."""
        return len(self.entries) + len(self.core)

    def session_ids(self) -> set[str]:
        core = {sid for _, sessions in self.core for sid in sessions}
        return core | {sid for e in self.entries for sid in e.session_ids}


def _topic(completion: Any) -> str:
    """The topic a reply names ("" for one that failed or does not parse: the question alone is searched)."""
    try:
        reply = json.loads(completion.text) if completion.error is None else {}
    except json.JSONDecodeError:
        reply = {}
    return str(reply.get("topic", "")) if isinstance(reply, dict) else ""
