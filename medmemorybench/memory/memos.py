"""MemOS as the paper ran it (`general_text`): the memory LLM reads each session and writes a list of memory
items (key, value, tags), which are embedded and searched by cosine similarity; append-only, as MemOS's
flat textual memory is (no merging, updating or deleting).

Native, not the `MemoryOS` package: its core pins `transformers<5` and `openai<2` and pulls a web stack
(fastapi, ollama, pymysql) this harness does not need, and `general_text` is one extraction prompt, an
append and a top-k search (`../shared/research/memory-systems.md` §9). What differs from the original: the
session date is given as data and written into every item's text (the original saw it only as a header line
of the session text), and the reply is decoded under a bounded JSON schema, so a small model's reply parses.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from medmemorybench.memory.base import MemoryItem, Retrieval
from medmemorybench.memory.context import LLMBuiltMemory, best_first, fitted_session
from medmemorybench.models.base import ChatRequest, check_arg
from medmemorybench.render.models import ObservedSession

EXTRACT_PROMPT = (
    "You are the memory of a patient's personal medical assistant. Read one consultation and write down what "
    "is worth remembering about this patient: diagnoses, medicines with doses and changes, allergies and "
    "intolerances, test results with values, symptoms, decisions and plans, family history, habits and "
    "preferences. Each memory item has a short key, a value stating the fact in a full sentence, and a few "
    "tags. Write only what the consultation says."
)
"""The extraction instruction (after MemOS's SIMPLE_STRUCT_MEM_READER_PROMPT: key, value, tags and a summary)."""


KEY_CHARS, VALUE_CHARS, TAGS, TAG_CHARS, SUMMARY_CHARS = 40, 160, 3, 16, 160
"""Bounds of one reply (a small model that loops inside a string or a list stops at them)."""


def extraction_schema(max_items: int) -> dict[str, Any]:
    """The reply's shape, bounded so that a small model cannot loop to the token limit inside it."""
    item = {"type": "object", "additionalProperties": False, "required": ["key", "value", "tags"],
            "properties": {"key": {"type": "string", "maxLength": KEY_CHARS},
                           "value": {"type": "string", "maxLength": VALUE_CHARS},
                           "tags": {"type": "array", "maxItems": TAGS,
                                    "items": {"type": "string", "maxLength": TAG_CHARS}}}}
    return {"type": "object", "additionalProperties": False, "required": ["memory_list", "summary"],
            "properties": {"memory_list": {"type": "array", "maxItems": max_items, "items": item},
                           "summary": {"type": "string", "maxLength": SUMMARY_CHARS}}}


def reply_token_bound(max_items: int) -> int:
    """Tokens a reply at its schema's bounds takes, at three characters a token (JSON punctuation and short
    words tokenize densely), so the call's budget never cuts a reply the schema allows."""
    item_chars = KEY_CHARS + VALUE_CHARS + TAGS * (TAG_CHARS + 4) + 40  # (keys, quotes, brackets)
    return (max_items * item_chars + SUMMARY_CHARS + 40) // 3


def _fits(reply: Any) -> bool:
    return isinstance(reply, dict) and isinstance(reply.get("memory_list"), list) and all(
        isinstance(i, dict) and isinstance(i.get("value"), str) for i in reply["memory_list"])


@dataclass(frozen=True)
class _Item:
    text: str
    session_id: str


class MemOSMemory(LLMBuiltMemory):
    """MemOS `general_text`: per session one extraction call, items embedded, cosine top-k.

    Args:
        max_items: most memory items one session may give (the original capped them by max_tokens 4096).
        max_tokens: tokens the memory LLM may write per session (default: what a reply at the schema's
            bounds needs, `reply_token_bound`).
    """

    name = "memos"

    def __init__(self, max_items: int = 6, max_tokens: int | None = None) -> None:
        check_arg(max_items, "max_items", int, lambda v: 1 <= v <= 50, "an integer from 1 to 50")
        if max_tokens is not None:
            check_arg(max_tokens, "max_tokens", int, lambda v: v >= 32, "an integer >= 32")
        super().__init__(max_items=max_items, max_tokens=max_tokens)
        self.max_items, self.max_tokens = max_items, max_tokens or reply_token_bound(max_items)
        self.schema = extraction_schema(max_items)
        self.items: list[_Item] = []
        self._vectors: list[np.ndarray] = []


    def reset(self) -> None:
        self.items.clear()
        self._vectors.clear()

    def _request(self, session: ObservedSession) -> ChatRequest:
        # (a session too long for the window loses its end, as the original truncated its input)
        user = fitted_session(session, self.llm, self.max_tokens + 200)
        return ChatRequest(messages=[{"role": "system", "content": EXTRACT_PROMPT}, {"role": "user", "content": user}],
                           max_tokens=self.max_tokens, response_schema=self.schema)

    def ingest(self, sessions: Sequence[ObservedSession]) -> None:
        """One extraction call per session (all of a checkpoint's sessions in one batch), then one embedding call
        for every new item. Each item's text starts with its session's date."""
        if not sessions:
            return
        replies = self.llm.generate_json([self._request(s) for s in sessions], fits=_fits)
        new = [_Item(f"[{session.date}] {_item_text(raw)}", session.session_id)
               for session, reply in zip(sessions, replies, strict=True) if reply is not None
               for raw in reply["memory_list"] if raw["value"].strip()]
        if new:
            self._vectors.append(self.embedder.encode([item.text for item in new]))
            self.items.extend(new)

    def retrieve(self, questions: Sequence[str], k: int, token_budget: int | None = None) -> list[Retrieval]:
        """The k items most similar to each question."""
        if not questions:
            return []
        if not self.items or k < 1:
            return [Retrieval() for _ in questions]
        matrix = np.concatenate(self._vectors)
        similarities = self.embedder.encode(list(questions)) @ matrix.T
        return [Retrieval(items=[MemoryItem(self.items[i].text, (self.items[i].session_id,), float(row[i]))
                                 for i in best_first(row, k)]) for row in similarities]

    def size(self) -> int:
        return len(self.items)

    def session_ids(self) -> set[str]:
        return {item.session_id for item in self.items}


def _item_text(raw: dict) -> str:
    key, value = str(raw.get("key", "")).strip(), raw["value"].strip()
    tags = [str(t).strip() for t in raw.get("tags") or [] if str(t).strip()]
    return (f"{key}: {value}" if key else value) + (f" (tags: {', '.join(tags)})" if tags else "")
