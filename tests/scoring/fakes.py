"""Test doubles for the scoring tests."""

from __future__ import annotations

from collections.abc import Sequence

from medmemorybench.models.base import Backbone, ChatRequest, Completion


class FakeBackbone(Backbone):
    """Returns the canned replies in order and keeps every batch it was sent."""

    name = "fake"

    def __init__(self, replies: Sequence[str | Completion]) -> None:
        self.replies = list(replies)
        self.batches: list[list[ChatRequest]] = []

    @property
    def model_id(self) -> str:
        return "fake-judge-1"

    def generate(self, requests: Sequence[ChatRequest]) -> list[Completion]:
        self.batches.append(list(requests))
        out = self.replies[: len(requests)]
        self.replies = self.replies[len(requests):]
        return [r if isinstance(r, Completion) else Completion(text=r) for r in out]
