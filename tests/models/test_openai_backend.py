"""The `openai` backbone against real HTTP servers on loopback: our OpenAI-compatible `serve`, and a
scripted server (a unit-test double) that answers 429/500 before succeeding, to test retries."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from medmemorybench.models.base import Backbone, ChatRequest, Completion
from medmemorybench.models.openai_compatible import OpenAIBackbone
from medmemorybench.serve import make_server


class EchoBackbone(Backbone):
    """Unit-test double served by the real server: echoes the last user message."""

    name = "echo"

    def __init__(self) -> None:
        self.batch_sizes: list[int] = []

    @property
    def model_id(self) -> str:
        return "echo"

    def generate(self, requests):  # noqa: ANN001, ANN201
        self.batch_sizes.append(len(requests))
        return [Completion(text="echo: " + r.messages[-1]["content"], prompt_tokens=5, completion_tokens=2)
                for r in requests]


@pytest.fixture
def served():
    backbone = EchoBackbone()
    server = make_server(backbone, port=0, max_batch=8, batch_window_ms=50)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield backbone, f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()


def _requests(n: int) -> list[ChatRequest]:
    return [ChatRequest(messages=[{"role": "user", "content": f"q{i}"}], max_tokens=8) for i in range(n)]


def test_round_trip_through_the_served_api_keeps_order(served):
    _, url = served
    client = OpenAIBackbone(model="echo", base_url=url, concurrency=4)
    out = client.generate(_requests(6))
    assert [c.text for c in out] == [f"echo: q{i}" for i in range(6)]
    assert all(c.error is None and c.prompt_tokens == 5 for c in out)


def test_concurrent_requests_are_micro_batched_by_the_server(served):
    backbone, url = served
    OpenAIBackbone(model="echo", base_url=url, concurrency=8).generate(_requests(8))
    assert max(backbone.batch_sizes) > 1


class Scripted(BaseHTTPRequestHandler):
    """Fails with the scripted statuses first, then succeeds (or, with `garbage`, answers 200 with it)."""

    script: list[int] = []
    calls = 0
    garbage: bytes | None = None

    def log_message(self, *args):  # noqa: ANN002, ANN201
        pass

    def do_POST(self):  # noqa: N802, ANN201
        type(self).calls += 1
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        status = self.script.pop(0) if self.script else 200
        body = {"error": {"message": "nope"}} if status != 200 else {
            "id": "x", "object": "chat.completion", "model": "m", "created": 0,
            "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "ok"}}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}
        data = json.dumps(body).encode() if self.garbage is None else self.garbage
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@pytest.fixture
def scripted():
    Scripted.calls = 0
    Scripted.garbage = None
    server = ThreadingHTTPServer(("127.0.0.1", 0), Scripted)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()


def test_429_and_5xx_are_retried_with_backoff(scripted):
    Scripted.script = [429, 500, 503]
    client = OpenAIBackbone(model="m", base_url=scripted, concurrency=1, max_retries=4, backoff_s=0.01)
    (out,) = client.generate(_requests(1))
    assert out.text == "ok" and out.error is None and Scripted.calls == 4


def test_final_failure_is_an_error_not_an_answer(scripted):
    Scripted.script = [500] * 10
    client = OpenAIBackbone(model="m", base_url=scripted, concurrency=1, max_retries=2, backoff_s=0.01)
    (out,) = client.generate(_requests(1))
    assert out.text == "" and out.error and "failed after 3 attempts" in out.error and Scripted.calls == 3


def test_client_errors_are_not_retried(scripted):
    Scripted.script = [400]
    client = OpenAIBackbone(model="m", base_url=scripted, concurrency=1, max_retries=4, backoff_s=0.01)
    (out,) = client.generate(_requests(1))
    assert out.error and out.error.startswith("HTTP 400") and Scripted.calls == 1


def test_unreachable_server_is_an_error_after_retries():
    client = OpenAIBackbone(model="m", base_url="http://127.0.0.1:9/v1", concurrency=1, max_retries=1,
                            backoff_s=0.01, timeout_s=2)
    (out,) = client.generate(_requests(1))
    assert out.error and "APIConnectionError" in out.error


GARBAGE = {
    "cut-off JSON": (b'{"id": "x", "object": "chat.comp', "malformed response: JSONDecodeError"),
    "HTML page": (b"<html><body>502 Bad Gateway</body></html>", "malformed response: JSONDecodeError"),
    "empty choices": (b'{"id": "x", "object": "chat.completion", "choices": []}', "malformed response: no choices"),
    "error object": (b'{"error": {"message": "model is loading", "code": 503}}', "malformed response: error object"),
    "content null": (b'{"id": "x", "object": "chat.completion", "choices": [{"index": 0, "finish_reason": "stop", '
                     b'"message": {"role": "assistant", "content": null}}]}', "malformed response: no message content"),
}


@pytest.mark.parametrize("kind", sorted(GARBAGE))
def test_a_reply_that_is_not_a_completion_is_retried_then_an_error_with_its_reason(scripted, kind):
    # a 200 that is not a usable completion is never an (empty) answer and never a crash
    Scripted.garbage, reason = GARBAGE[kind]
    client = OpenAIBackbone(model="m", base_url=scripted, concurrency=1, max_retries=2, backoff_s=0.01)
    (out,) = client.generate(_requests(1))
    assert out.text == "" and out.error and Scripted.calls == 3
    assert out.error.startswith(f"failed after 3 attempts: {reason}"), out.error


@pytest.mark.parametrize(("arg", "value"), [("max_retries", -1), ("concurrency", 0), ("timeout_s", 0),
                                            ("base_url", ""), ("base_url", "localhost:8000"), ("model", ""),
                                            ("context_window", "big"), ("backoff_s", -1)])
def test_bad_model_args_are_input_errors_naming_the_arg(arg, value):
    from medmemorybench.errors import InputError

    with pytest.raises(InputError, match=rf"^{arg}="):
        OpenAIBackbone(**{"model": "m", arg: value})


@pytest.mark.parametrize("flag", ["--model", "--judge"])
def test_a_bad_model_arg_names_the_option_it_came_from(flag):
    from medmemorybench.errors import InputError
    from medmemorybench.models import load_backbone

    with pytest.raises(InputError, match=rf"^{flag}_args for 'openai': max_retries=-1 is not valid"):
        load_backbone("openai", {"model": "m", "max_retries": -1}, flag)


def test_each_completion_is_reported_as_it_finishes(scripted):
    client = OpenAIBackbone(model="m", base_url=scripted, concurrency=2, max_retries=0)
    seen: list[int] = []
    out = client.generate_each(_requests(3), lambda index, completion: seen.append(index))
    assert sorted(seen) == [0, 1, 2] and [c.text for c in out] == ["ok"] * 3


class EchoesAuthorization(BaseHTTPRequestHandler):
    """A server whose error pages quote the request's Authorization header (and its base URL's credentials)."""

    status = 401

    def log_message(self, *args):  # noqa: ANN002, ANN201
        pass

    def do_POST(self):  # noqa: N802, ANN201
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        body = json.dumps({"error": {"message": f"bad credentials: Authorization: {self.headers.get('Authorization')}"
                                                f" for {self.headers.get('Host')}"}}).encode()
        self.send_response(self.status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


SECRET_KEY = "a-private-key-0123456789abcdef"  # (no key-like prefix: only the configured value can find it)


@pytest.mark.parametrize("status", [401, 503])
def test_an_echoed_key_never_reaches_a_sample_a_file_or_the_terminal(dataset_dir, tmp_path, status):
    EchoesAuthorization.status = status
    server = ThreadingHTTPServer(("127.0.0.1", 0), EchoesAuthorization)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    out = tmp_path / "run"
    try:
        result = subprocess.run(
            [sys.executable, "-m", "medmemorybench.cli", "run", "--tasks", "medmemorybench_efficient_sua", "--memory",
             "bm25", "--model", "openai", "--model_args", f"model=m,base_url={url},max_retries=1,backoff_s=0.01",
             "--checkpoints", "10", "--limit", "1", "--dataset_path", str(dataset_dir), "--output_path", str(out),
             "--no_cache"], capture_output=True, text=True, env={**os.environ, "OPENAI_API_KEY": SECRET_KEY},
            timeout=300)
    finally:
        server.shutdown()
        server.server_close()
    written = [p.read_text() for p in out.rglob("*") if p.is_file()]
    if status == 401:  # a refused key: one line naming the server and the variable, exit 2, the key scrubbed
        assert result.returncode == 2, result.stderr
        last = result.stderr.strip().splitlines()[-1]  # (after the progress lines, the error's one line)
        assert "refused the API key" in last and "OPENAI_API_KEY" in last and "Bearer <redacted>" in last
        assert "Traceback" not in result.stderr
    else:
        assert result.returncode == 1, result.stderr  # every answer failed: a clear failure, everything kept
        samples = (out / "samples.jsonl").read_text()
        assert "<redacted>" in samples and "Bearer" in samples  # (the error is kept, its credentials are not)
    assert written  # (the run folder's files were scanned, not an empty list)
    for text in (result.stdout, result.stderr, *written):
        assert SECRET_KEY not in text


def test_a_key_refused_mid_run_stops_it_and_resume_keeps_what_was_answered(dataset_dir, tmp_path, scripted):
    # (answers of a checkpoint are written together; the response cache keeps each as it arrives, so a resumed run
    # asks only for the rest)
    Scripted.script = [200] * 3 + [401] * 50  # (the key revoked after three answers)
    out, env = tmp_path / "run", {**os.environ, "MEDMEMORYBENCH_CACHE": str(tmp_path / "cache")}
    args = [sys.executable, "-m", "medmemorybench.cli", "run", "--tasks", "medmemorybench_efficient", "--memory",
            "bm25", "--model", "openai", "--model_args", f"model=m,base_url={scripted},concurrency=1,max_retries=0",
            "--checkpoints", "10", "--limit", "1", "--dataset_path", str(dataset_dir), "--output_path", str(out)]
    first = subprocess.run(args, capture_output=True, text=True, timeout=300, env=env)
    assert first.returncode == 2 and "refused the API key (HTTP 401" in first.stderr.strip().splitlines()[-1]
    Scripted.script, Scripted.calls = [], 0  # (a new key)
    second = subprocess.run([*args, "--resume"], capture_output=True, text=True, timeout=300, env=env)
    assert second.returncode == 0, second.stderr
    samples = [json.loads(line) for line in (out / "samples.jsonl").read_text().splitlines()]
    assert all(s["status"] == "scored" for s in samples)
    assert sum(bool(s.get("cache_hit")) for s in samples) == 3 and Scripted.calls == len(samples) - 3 > 0
