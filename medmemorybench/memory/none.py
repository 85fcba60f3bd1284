"""NoMemory: remembers nothing, the floor every other memory system must beat."""

from __future__ import annotations

from collections.abc import Sequence

from medmemorybench.memory.base import MemorySystem, Retrieval
from medmemorybench.render.models import ObservedSession


class NoMemory(MemorySystem):
    """Reads the stream and keeps nothing: the backbone answers from the question alone."""

    name = "none"

    def __init__(self) -> None:
        super().__init__()

    def reset(self) -> None:
        """Nothing to forget."""

    def ingest(self, sessions: Sequence[ObservedSession]) -> None:
        """Drop the sessions."""

    def retrieve(self, questions: Sequence[str], k: int, token_budget: int | None = None) -> list[Retrieval]:
        """An empty retrieval per question."""
        return [Retrieval() for _ in questions]
