"""A fault-injecting OpenAI-compatible server on loopback, for the fault suite (`tests/harness/test_faults.py`)
and `scripts/bench_faults.py`: a seeded share of requests gets one of `FAULTS`, the rest a valid completion."""

from __future__ import annotations

import json
import random
import threading
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

VALID = {"id": "c", "object": "chat.completion", "created": 0, "model": "m",
         "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "ok"}}],
         "usage": {"prompt_tokens": 5, "completion_tokens": 1, "total_tokens": 6}}
FAULTS: dict[str, tuple[int, bytes]] = {
    "http_500": (500, b'{"error": {"message": "internal"}}'),
    "http_429": (429, b'{"error": {"message": "rate limited"}}'),
    "http_400": (400, b'{"error": {"message": "bad request"}}'),
    "empty_choices": (200, json.dumps({**VALID, "choices": []}).encode()),
    "cut_json": (200, json.dumps(VALID).encode()[:40]),
    "html": (200, b"<html><body><h1>502 Bad Gateway</h1></body></html>"),
    "error_object": (200, b'{"error": {"message": "model is loading", "code": 503}}'),
    "content_null": (200, json.dumps({**VALID, "choices": [{"index": 0, "finish_reason": "stop",
                                                            "message": {"role": "assistant", "content": None}}]})
                     .encode()),
    "empty_body": (200, b""),
    "hang": (200, b""),  # sleeps past the client's timeout first
}
"""Fault kind -> (status, body)."""
HANG_S = 1.5


class FaultServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, share: float, seed: int, kinds: Sequence[str] = tuple(FAULTS), hang_s: float = HANG_S) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.share, self.rng, self.lock = share, random.Random(seed), threading.Lock()
        self.kinds, self.hang_s = sorted(kinds), hang_s
        self.served: Counter = Counter()

    def draw(self) -> str | None:
        with self.lock:
            fault = self.rng.choice(self.kinds) if self.rng.random() < self.share else None
            self.served[fault or "valid"] += 1
            return fault


class _Handler(BaseHTTPRequestHandler):
    server: FaultServer

    def do_POST(self) -> None:  # noqa: N802
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        fault = self.server.draw()
        status, body = FAULTS[fault] if fault else (200, json.dumps(VALID).encode())
        if fault == "hang":
            time.sleep(self.server.hang_s)
        try:
            self.send_response(status)
            self.send_header("Content-Type", "text/html" if fault == "html" else "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):  # the client gave up (timeout)
            pass

    def log_message(self, *args) -> None:  # noqa: ANN002
        pass


@contextmanager
def fault_server(share: float, seed: int, kinds: Sequence[str] = tuple(FAULTS),
                 hang_s: float = HANG_S) -> Iterator[tuple[str, FaultServer]]:
    """A running server failing `share` of requests (seeded) with one of `kinds`; yields (base_url, server)."""
    server = FaultServer(share, seed, kinds, hang_s)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1", server
    finally:
        server.shutdown()
        server.server_close()
