"""`serve` that is fair to its clients: a short request is answered while a long one generates, a client that hangs
up (or outlives its deadline) has its generation stopped or never started, and the server keeps serving. Run with
a scripted backbone that generates one token per tick and can pause like the hf backbone."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Callable, Sequence

import pytest

from medmemorybench.models.base import CANCELLED, Backbone, ChatRequest, Completion, Generation
from medmemorybench.models.batching import FairBatcher, MicroBatcher
from medmemorybench.serve import make_server
from tests.models.test_serve_robust import chat, post

TICK_S = 0.01


class Ticking(Backbone):
    """Unit-test double: one token per `TICK_S`; the reply is the request's content. It pauses when asked and stops
    a cancelled generation, as the hf backbone does, and records the tokens it generated for each content."""

    name = "ticking"

    def __init__(self) -> None:
        self.ticks: dict[str, int] = {}
        self.finished_order: list[str] = []

    @property
    def model_id(self) -> str:
        return "ticking"

    def generate(self, requests: Sequence[ChatRequest]) -> list[Completion]:
        generations = [Generation(r) for r in requests]
        self.generate_slice(generations, lambda _steps: False)
        return [g.completion for g in generations]  # type: ignore[misc]

    def generate_slice(self, generations: Sequence[Generation], should_pause: Callable[[int], bool]) -> None:
        live = [g for g in generations if not g.finish_if_cancelled()]
        steps = 0
        while live:
            time.sleep(TICK_S)
            steps += 1
            for generation in list(live):
                content = generation.request.messages[-1]["content"]
                generation.token_ids.append(0)
                self.ticks[content] = self.ticks.get(content, 0) + 1
                if len(generation.token_ids) >= generation.request.max_tokens:
                    self.finished_order.append(content)
                    generation.finish(Completion(text=content, completion_tokens=len(generation.token_ids)))
                elif not generation.finish_if_cancelled():
                    continue
                live.remove(generation)
            if live and should_pause(steps):
                for generation in live:
                    generation.state = "paused"
                return


@pytest.fixture
def served():
    backbone = Ticking()
    server = make_server(backbone, port=0, batch_window_ms=5, slice_tokens=4)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield backbone, server
    server.shutdown()
    server.server_close()


def send(port: int, body: bytes) -> socket.socket:
    """A raw connection that has sent one chat request (closed by the caller: a client that hangs up)."""
    connection = socket.create_connection(("127.0.0.1", port), timeout=10)
    connection.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                       + f"Content-Length: {len(body)}\r\n\r\n".encode() + body)
    return connection


def wait_for(condition: Callable[[], bool], timeout_s: float = 5.0) -> bool:
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        if condition():
            return True
        time.sleep(0.01)
    return False


def test_a_short_request_is_answered_while_a_long_one_generates(served):
    backbone, server = served
    port = server.server_address[1]
    long_reply: list = []
    worker = threading.Thread(target=lambda: long_reply.append(post(port, chat("long", max_tokens=250))))
    worker.start()
    assert wait_for(lambda: backbone.ticks.get("long", 0) >= 10)
    started = time.monotonic()
    status, body = post(port, chat("short", max_tokens=3))
    waited_s = time.monotonic() - started
    worker.join(20)
    assert status == 200 and body["choices"][0]["message"]["content"] == "short"
    assert backbone.finished_order == ["short", "long"]  # (before: the short one waited for all 250 ticks, 2.5 s)
    assert waited_s < 1.5 and server.batcher.pauses >= 1
    assert long_reply[0][0] == 200 and long_reply[0][1]["usage"]["completion_tokens"] == 250  # paused, not cut


def test_a_client_that_hangs_up_has_its_generation_stopped(served):
    backbone, server = served
    threads_before = threading.active_count()
    connection = send(server.server_address[1], chat("abandoned", max_tokens=1000))
    assert wait_for(lambda: backbone.ticks.get("abandoned", 0) >= 5)
    connection.close()
    hung_up = time.monotonic()
    assert wait_for(lambda: _settled(backbone, "abandoned"))
    assert time.monotonic() - hung_up < 1.0 and _stays_stopped(backbone, "abandoned")
    assert backbone.ticks["abandoned"] < 200  # (it was asked for 1,000)
    assert post(server.server_address[1], chat("next", max_tokens=2))[0] == 200  # the server goes on serving
    assert wait_for(lambda: threading.active_count() <= threads_before)  # (the handler's thread has ended)


def _settled(backbone: Ticking, content: str) -> bool:
    """Whether `content` has stopped generating (no new token over a few ticks)."""
    before = backbone.ticks.get(content, 0)
    time.sleep(5 * TICK_S)
    return backbone.ticks.get(content, 0) == before


def _stays_stopped(backbone: Ticking, content: str) -> bool:
    """Whether `content` generates no token over 30 ticks (it stopped, rather than a thread that was slow)."""
    before = backbone.ticks.get(content, 0)
    time.sleep(30 * TICK_S)
    return backbone.ticks.get(content, 0) == before


def test_a_queued_request_whose_client_hung_up_is_never_generated(served):
    backbone, server = served
    port = server.server_address[1]
    first = send(port, chat("first", max_tokens=60))
    assert wait_for(lambda: backbone.ticks.get("first", 0) >= 1)
    queued = send(port, chat("queued", max_tokens=500))  # (longer than what is left of the first: no pause for it)
    time.sleep(0.15)
    queued.close()
    assert wait_for(lambda: "first" in backbone.finished_order)
    time.sleep(0.2)
    assert "queued" not in backbone.ticks
    first.close()


def test_a_request_past_its_deadline_is_a_504_and_stops():
    backbone = Ticking()
    server = make_server(backbone, port=0, answer_deadline_s=0.3)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        status, body = post(server.server_address[1], chat("slow", max_tokens=1000))
        assert status == 504 and "0.3 s" in body["error"]["message"]
        assert wait_for(lambda: _settled(backbone, "slow")) and _stays_stopped(backbone, "slow")
        assert backbone.ticks["slow"] < 200
    finally:
        server.shutdown()
        server.server_close()


def test_a_bad_request_during_a_long_generation_is_refused_at_once(served):
    backbone, server = served
    port = server.server_address[1]
    connection = send(port, chat("long", max_tokens=1000))
    assert wait_for(lambda: backbone.ticks.get("long", 0) >= 2)
    started = time.monotonic()
    status, body = post(port, json.dumps({"messages": []}).encode())
    assert status == 400 and body["error"]["message"].startswith("bad request:")
    assert time.monotonic() - started < 1.0
    connection.close()


def test_requests_waiting_apart_for_the_same_cohort_start_together():
    class Recording(Ticking):
        def __init__(self) -> None:
            super().__init__()
            self.runs: list[list[str]] = []

        def generate_slice(self, generations: Sequence[Generation], should_pause: Callable[[int], bool]) -> None:
            self.runs.append(sorted(g.request.messages[-1]["content"] for g in generations))
            super().generate_slice(generations, should_pause)

    backbone = Recording()
    batcher = FairBatcher(backbone, max_batch=8, batch_window_ms=5, slice_tokens=4)

    def ask(content: str, max_tokens: int) -> Generation:
        return batcher.enqueue(ChatRequest(messages=[{"role": "user", "content": content}], max_tokens=max_tokens))

    first = ask("first", 80)
    assert wait_for(lambda: backbone.ticks.get("first", 0) >= 10)
    short = ask("short", 10)  # (the first pauses for it)
    assert wait_for(lambda: backbone.ticks.get("short", 0) >= 2)
    early = ask("early", 150)  # (longer than what the first has left: it waits, the first resumes)
    assert wait_for(lambda: backbone.runs[-1] == ["first"] and backbone.ticks["first"] >= 25)
    late = ask("late", 150)  # (arrives while the first generates, apart from the early one)
    assert all(g.finished.wait(10) for g in (first, short, early, late))
    # (before: each waiting request was a cohort of its own; the late one ran after the early one, 150 ticks later)
    assert backbone.runs == [["first"], ["short"], ["first"], ["early", "late"]]


def test_a_backbone_that_cannot_pause_answers_each_batch_whole():
    class Whole(Ticking):  # (the default generate_slice: an API backend, say)
        generate_slice = Backbone.generate_slice

        def generate(self, requests: Sequence[ChatRequest]) -> list[Completion]:
            return [Completion(text=r.messages[-1]["content"]) for r in requests]

    backbone = Whole()
    batcher = FairBatcher(backbone, max_batch=8, batch_window_ms=50)
    results: list[Completion] = []
    workers = [threading.Thread(target=lambda c=c: results.append(batcher.submit(ChatRequest(
        messages=[{"role": "user", "content": c}], max_tokens=5)))) for c in ("a", "b", "c")]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(10)
    assert sorted(r.text for r in results) == ["a", "b", "c"] and batcher.batches == 1


def test_the_runners_micro_batcher_drops_a_cancelled_job_and_answers_the_rest():
    backbone = Ticking()
    batcher = MicroBatcher(backbone, max_batch=4, batch_window_ms=50)
    gone = batcher.enqueue(ChatRequest(messages=[{"role": "user", "content": "gone"}], max_tokens=3), lambda: True)
    kept = batcher.enqueue(ChatRequest(messages=[{"role": "user", "content": "kept"}], max_tokens=3))
    assert gone.finished.wait(5) and kept.finished.wait(5)
    assert gone.completion.error == CANCELLED and kept.completion.text == "kept"
    assert "gone" not in backbone.ticks
