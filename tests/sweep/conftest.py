"""A sweep's test parts: a scripted OpenAI-compatible server (a unit-test double every worker process reaches over
HTTP, answering each prompt with the same text every time), a local Ray cluster shared by a test file, and the
one-process run a sweep's cells are compared with."""

from __future__ import annotations

import hashlib
import json
import logging
import os
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from medmemorybench.harness.config import RunConfig
from medmemorybench.harness.results import SAMPLES, read_samples
from medmemorybench.harness.runner import run_evaluation
from medmemorybench.sweep.shards import machine_independent


class ScriptedAnswers(BaseHTTPRequestHandler):
    """Answers a chat request with a text fixed by its messages (so a rerun, a shard or a retry answers alike),
    after `delay_s` (time to kill a worker or the driver in the middle)."""

    delay_s = 0.0
    calls = 0

    def log_message(self, *args):  # noqa: ANN002, ANN201
        pass

    def do_POST(self):  # noqa: N802, ANN201
        type(self).calls += 1
        request = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
        time.sleep(self.delay_s)
        digest = hashlib.sha256(json.dumps(request["messages"], sort_keys=True).encode()).hexdigest()
        body = {"id": "x", "object": "chat.completion", "model": request.get("model", "m"), "created": 0,
                "choices": [{"index": 0, "finish_reason": "stop",
                             "message": {"role": "assistant", "content": f"The answer is {int(digest[:6], 16)}."}}],
                "usage": {"prompt_tokens": 7, "completion_tokens": 5, "total_tokens": 12}}
        data = json.dumps(body).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@pytest.fixture(scope="module")
def scripted_url():
    """The base URL of a `ScriptedAnswers` server."""
    ScriptedAnswers.delay_s = 0.0
    server = ThreadingHTTPServer(("127.0.0.1", 0), ScriptedAnswers)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def ray_cluster():
    """A local Ray cluster of 2 CPUs for the module's tests (Ray's testing tips: one start, fixed CPUs); the sweep
    uses the connection and leaves it open. Never `ray stop`: it stops every Ray of the user's."""
    ray = pytest.importorskip("ray")
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    ray.init(address="local", num_cpus=2, num_gpus=0, include_dashboard=False, logging_level=logging.ERROR,
             log_to_driver=False, object_store_memory=200 * 1024 * 1024)
    yield ray
    ray.shutdown()


def one_process_run(config: RunConfig) -> list[dict]:
    """The samples of a plain run of one cell's options (the reference a sweep must reproduce)."""
    run_evaluation(config)
    return read_samples(config.output_path / SAMPLES)


def comparable(folder: Path) -> list[dict]:
    """A run folder's samples as a sweep and a run must agree on them (`machine_independent`)."""
    return [machine_independent(s) for s in read_samples(folder / SAMPLES)]
