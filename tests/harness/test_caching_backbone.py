"""A backbone behind the response cache: what was answered before a kill is not asked again."""

from __future__ import annotations

from medmemorybench.harness.cache import CachingBackbone, ResponseCache
from medmemorybench.models.base import Backbone, ChatRequest, Completion


class CountingBackbone(Backbone):
    """Unit-test double: answers each request with its own text, counting the requests it was sent."""

    name = "counting"

    def __init__(self) -> None:
        self.sent = 0

    @property
    def model_id(self) -> str:
        return "counting-double"

    def generate(self, requests):  # noqa: ANN001, ANN201
        self.sent += len(requests)
        return [Completion(text=r.messages[-1]["content"].upper()) for r in requests]


def _requests(n: int) -> list[ChatRequest]:
    return [ChatRequest(messages=[{"role": "user", "content": f"turn {i}"}], max_tokens=8) for i in range(n)]


def test_a_rerun_asks_only_what_the_killed_run_had_not_answered(tmp_path):
    first = CountingBackbone()
    CachingBackbone(first, ResponseCache(tmp_path / "c.sqlite")).generate(_requests(3))  # the run "killed" after 3
    again = CountingBackbone()
    out = CachingBackbone(again, ResponseCache(tmp_path / "c.sqlite")).generate(_requests(5))
    assert again.sent == 2 and [c.text for c in out] == [f"TURN {i}" for i in range(5)]
    assert [c.cache_hit for c in out] == [True, True, True, False, False]
