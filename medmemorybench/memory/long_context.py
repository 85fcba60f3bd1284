"""LongContext: the whole history in the prompt, newest sessions kept when it does not fit."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from medmemorybench.memory.base import MemoryItem, MemorySystem, Retrieval
from medmemorybench.render.models import ObservedSession, session_text


def approximate_tokens(text: str) -> int:
    """About four characters per token, the usual estimate for English with BPE tokenizers."""
    return len(text) // 4


class LongContext(MemorySystem):
    """Every session ingested, oldest first; with a token budget the oldest sessions are dropped first.

    Args:
        count_tokens: text -> token count, e.g. the backbone tokenizer's length (default: len(text) // 4).
    """

    name = "long_context"

    def __init__(self, count_tokens: Callable[[str], int] | None = None) -> None:
        if count_tokens is not None and not callable(count_tokens):
            raise ValueError(f"count_tokens must be a callable text -> int, not {count_tokens!r}")
        super().__init__()
        self.count_tokens = count_tokens or approximate_tokens
        self._items: list[MemoryItem] = []
        self._tokens: list[int] = []

    def reset(self) -> None:
        """Forget every session."""
        self._items.clear()
        self._tokens.clear()

    def ingest(self, sessions: Sequence[ObservedSession]) -> None:
        """Keep the sessions; each one's token count is computed once, here."""
        for session in sessions:
            text = session_text(session)
            self._items.append(MemoryItem(text=text, session_ids=(session.session_id,)))
            self._tokens.append(int(self.count_tokens(text)))

    def retrieve(self, questions: Sequence[str], k: int, token_budget: int | None = None) -> list[Retrieval]:
        """The same sessions for every question (k is ignored): the newest ones that fit `token_budget`."""
        first = self._first_kept(token_budget)
        kept = self._items[first:]
        return [Retrieval(items=list(kept), truncated_sessions=first) for _ in questions]

    def _first_kept(self, token_budget: int | None) -> int:
        """Index of the oldest session kept: walk back from the newest while the total fits."""
        if token_budget is None:
            return 0
        total = 0
        for index in range(len(self._tokens) - 1, -1, -1):
            total += self._tokens[index]
            if total > token_budget:
                return index + 1
        return 0

    def session_ids(self) -> set[str]:
        """Every session ingested."""
        return {sid for item in self._items for sid in item.session_ids}

    def spec(self) -> dict:
        """Name and options; the token counter is recorded by its qualified name."""
        counter = self.count_tokens
        return {"memory": self.name,
                "count_tokens": f"{getattr(counter, '__module__', '?')}.{getattr(counter, '__qualname__', counter)}"}
