"""`medmemorybench serve`: an OpenAI-compatible chat server over any Backbone (by default the embedded
SmolLM2), so API-style clients and the `openai` backbone can be run and measured locally, offline.

Concurrent requests are micro-batched: a worker collects what arrives within `batch_window_ms` (up to
`max_batch`) and answers it with one `Backbone.generate` call.
"""

from __future__ import annotations

import json
import logging
import queue
import threading
import time
import uuid
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from pydantic import ValidationError

from medmemorybench.models.base import Backbone, ChatRequest, Completion

logger = logging.getLogger(__name__)


@dataclass
class _Job:
    request: ChatRequest
    done: threading.Event = field(default_factory=threading.Event)
    result: Completion | None = None


class MicroBatcher:
    """Groups concurrent requests into batches for one backbone."""

    def __init__(self, backbone: Backbone, max_batch: int = 16, batch_window_ms: float = 20.0) -> None:
        self.backbone, self.max_batch, self.window_s = backbone, max_batch, batch_window_ms / 1000
        self.jobs: queue.Queue[_Job] = queue.Queue()
        self.batches = 0
        threading.Thread(target=self._loop, daemon=True).start()

    def submit(self, request: ChatRequest) -> Completion:
        """Block until the request's batch is answered."""
        job = _Job(request)
        self.jobs.put(job)
        job.done.wait()
        assert job.result is not None
        return job.result

    def _loop(self) -> None:
        while True:
            batch = [self.jobs.get()]
            deadline = time.monotonic() + self.window_s
            while len(batch) < self.max_batch:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    break
                try:
                    batch.append(self.jobs.get(timeout=remaining))
                except queue.Empty:
                    break
            try:
                results = self.backbone.generate([job.request for job in batch])
            except Exception as exc:  # noqa: BLE001 - a crash becomes an error reply, the server lives on
                results = [Completion(error=f"{exc.__class__.__name__}: {exc}") for _ in batch]
            self.batches += 1
            for job, result in zip(batch, results, strict=True):
                job.result = result
                job.done.set()


def _handler(batcher: MicroBatcher, model_name: str) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:  # noqa: A002
            logger.debug(format, *args)

        def _send(self, status: int, body: dict) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:  # noqa: N802
            if self.path.rstrip("/") == "/v1/models":
                self._send(200, {"object": "list", "data": [{"id": model_name, "object": "model"}]})
            else:
                self._send(404, {"error": {"message": f"no route {self.path}"}})

        def do_POST(self) -> None:  # noqa: N802
            if self.path.rstrip("/") != "/v1/chat/completions":
                self._send(404, {"error": {"message": f"no route {self.path}"}})
                return
            try:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
                stop = body.get("stop") or []
                request = ChatRequest(messages=body["messages"], max_tokens=body.get("max_tokens") or 128,
                                      temperature=body.get("temperature") or 0.0,
                                      stop=[stop] if isinstance(stop, str) else stop, seed=body.get("seed"))
            except (json.JSONDecodeError, KeyError, TypeError, ValidationError) as exc:
                self._send(400, {"error": {"message": f"bad request: {exc}"}})
                return
            result = batcher.submit(request)
            if result.error:
                self._send(500, {"error": {"message": result.error}})
                return
            self._send(200, {
                "id": f"chatcmpl-{uuid.uuid4().hex[:12]}", "object": "chat.completion", "model": model_name,
                "choices": [{"index": 0, "finish_reason": "stop",
                             "message": {"role": "assistant", "content": result.text}}],
                "usage": {"prompt_tokens": result.prompt_tokens, "completion_tokens": result.completion_tokens,
                          "total_tokens": result.prompt_tokens + result.completion_tokens},
            })

    return Handler


def make_server(backbone: Backbone, host: str = "127.0.0.1", port: int = 8000, max_batch: int = 16,
                batch_window_ms: float = 20.0, model_name: str | None = None) -> ThreadingHTTPServer:
    """A server ready for `serve_forever()` (port 0 picks a free port: see `server.server_address`)."""
    batcher = MicroBatcher(backbone, max_batch, batch_window_ms)
    server = ThreadingHTTPServer((host, port), _handler(batcher, model_name or backbone.model_id))
    server.batcher = batcher  # type: ignore[attr-defined]
    return server
