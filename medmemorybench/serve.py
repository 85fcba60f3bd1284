"""`medmemorybench serve`: an OpenAI-compatible chat server over any Backbone (by default the embedded
SmolLM2), so API-style clients and the `openai` backbone can be run and measured locally, offline.

Concurrent requests are micro-batched by a `FairBatcher`: what arrives within `batch_window_ms` (up to `max_batch`)
starts as one batch, and a running batch pauses (keeping its KV cache, on the `hf` backbone) for a request that
needs fewer tokens than it has left, so a short request is not held behind a long one; a client that hangs up, or
whose `answer_deadline_s` passes, has its request dropped or its generation stopped within a step
(docs/design/serve_scheduling.md). A bad client cannot break it: a request is
validated before it joins a batch (its own 400: not a JSON object, no messages, `max_tokens` past the context,
a bad Content-Length, a body over `MAX_BODY_BYTES`), a batch whose generation fails is answered request by
request so only the failing one gets the error, reads time out after `READ_TIMEOUT_S`, and the listen backlog
takes `BACKLOG` simultaneous connections.

Also what memory packages and SDKs need of an endpoint: `stream: true` (server-sent events), `response_format`
(`json_object`, `json_schema`) decoded under the schema (on the `hf` backbone), `finish_reason: length` for a
reply cut at `max_tokens`, `tools`/`tool_choice` (decoded under the calls' schema on the `hf` backbone,
`models/tools.py`; the reply's `tool_calls` with `finish_reason: tool_calls`), `/v1/embeddings` with the packaged
all-MiniLM-L6-v2, and the model's name (not its folder's path) in `/v1/models`.
"""

from __future__ import annotations

import contextlib
import hmac
import ipaddress
import json
import logging
import select
import socket
import sys
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from pydantic import ValidationError

from medmemorybench.memory.context import Embedder, MemoryCost
from medmemorybench.memory.dense import DEFAULT_MODEL as EMBEDDER
from medmemorybench.models.base import Backbone, ChatRequest, Completion
from medmemorybench.models.batching import SLICE_TOKENS, FairBatcher
from medmemorybench.models.tools import call_message, result_message

logger = logging.getLogger(__name__)
MAX_BODY_BYTES = 4 * 1024 * 1024
READ_TIMEOUT_S = 30
"""Longest wait for one read of a request (a client that stops sending)."""
REQUEST_DEADLINE_S = 30
"""Longest a connection may take to send its request line, headers and body, in all: a client trickling one byte at
a time never waits out READ_TIMEOUT_S on any single read (50 such connections stayed open 67 s past it)."""
BACKLOG = 256
MAX_CONNECTIONS = 256
"""Connections handled at once; past it a new one gets 503 and is closed (each holds a thread)."""
MAX_TOKENS_CAP = 1024
"""Most tokens one request may ask for (the default 128): well below the context, so one request cannot hold the
batch for minutes."""
MAX_STOP = 4
"""Most stop strings a request may give (as OpenAI)."""
MAX_EMBEDDING_INPUTS = 256
"""Most texts one /v1/embeddings request may send (100,000 gave an 851 MB reply)."""
MAX_EMBEDDING_CHARS = 32_000
"""Longest text one embedding input may be (MiniLM reads 256 tokens of it)."""
ANSWER_DEADLINE_S = 600.0
"""Longest a chat request may wait for its answer, queue included; past it, its generation stops and it gets 504."""
HANGUP_POLL_S = 0.1
"""How often a waiting request checks whether its client has hung up (its generation then stops)."""


def has_hung_up(connection: socket.socket) -> bool:
    """Whether the client closed its end (readable with nothing to read); data it sent ahead does not count."""
    try:
        poller = select.poll()  # (not select.select: it fails for descriptors past 1,024)
        poller.register(connection, select.POLLIN)
        return bool(poller.poll(0)) and connection.recv(1, socket.MSG_PEEK) == b""
    except (BlockingIOError, InterruptedError):
        return False
    except (OSError, ValueError):  # reset, or already closed
        return True


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = BACKLOG  # (the standard library's 5 resets simultaneous connections)

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.slots = threading.BoundedSemaphore(MAX_CONNECTIONS)

    def process_request(self, request, client_address) -> None:  # noqa: ANN001
        if not self.slots.acquire(blocking=False):
            with contextlib.suppress(OSError):
                request.sendall(b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
            self.shutdown_request(request)
            return
        super().process_request(request, client_address)

    def handle_error(self, request, client_address) -> None:  # noqa: ANN001
        error = sys.exc_info()[1]
        if isinstance(error, OSError):  # (a client that hung up, or one closed at the deadline: no traceback)
            logger.debug("connection from %s ended: %r", client_address, error)
        else:  # (a bug of the server's own: logged with its traceback)
            logger.error("request from %s failed", client_address, exc_info=error)

    def process_request_thread(self, request, client_address) -> None:  # noqa: ANN001
        try:
            super().process_request_thread(request, client_address)
        finally:
            self.slots.release()


class BadRequest(ValueError):
    """A request the server answers with 400 before it reaches a batch."""


def parse_request(body: object, context_window: int) -> ChatRequest:
    """The chat request of a JSON body, or BadRequest saying what is wrong with it."""
    if not isinstance(body, dict):
        raise BadRequest(f"the body must be a JSON object, not {type(body).__name__}")
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise BadRequest("messages must be a non-empty list of {role, content} objects with text content")
    messages = [plain_message(m) for m in messages]
    max_tokens = body.get("max_tokens") or 128
    cap = min(MAX_TOKENS_CAP, context_window - 1)
    if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or not 1 <= max_tokens <= cap:
        raise BadRequest(f"max_tokens must be an integer from 1 to {cap} (this server's cap; the context window "
                         f"is {context_window}), not {str(max_tokens)[:40]!r}")
    stop = body.get("stop") or []
    stop = [stop] if isinstance(stop, str) else stop
    if not isinstance(stop, list) or len(stop) > MAX_STOP or not all(isinstance(s, str) and s for s in stop):
        raise BadRequest(f"stop must be a non-empty text or a list of at most {MAX_STOP} non-empty texts")
    seed = body.get("seed")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2 ** 63):
        raise BadRequest(f"seed must be an integer from 0 to 2**63 - 1, not {str(seed)[:40]}")
    try:
        return ChatRequest(messages=messages, max_tokens=max_tokens, temperature=body.get("temperature") or 0.0,
                           stop=stop, seed=seed,
                           response_schema=response_schema(body.get("response_format")),
                           **_tools(body))
    except (ValidationError, TypeError) as exc:
        raise BadRequest(str(exc).splitlines()[0]) from None


def plain_message(message: object) -> dict[str, str]:
    """A chat message as text, or BadRequest: an assistant's tool calls become the JSON the constraint writes for
    them, and a tool's result a user turn naming the call (the chat templates of small models know no tool
    roles)."""
    if not isinstance(message, dict) or not isinstance(message.get("role"), str):
        raise BadRequest("messages must be a non-empty list of {role, content} objects with text content")
    role, content, calls = message["role"], message.get("content"), message.get("tool_calls")
    if role == "assistant" and isinstance(calls, list) and calls:
        try:
            made = [{"name": c["function"]["name"], "arguments": json.loads(c["function"]["arguments"])}
                    for c in calls]
        except (KeyError, TypeError, json.JSONDecodeError):
            raise BadRequest("an assistant's tool_calls must be [{\"function\": {\"name\": ..., \"arguments\": "
                             "JSON text}}]") from None
        return call_message(made)
    if not isinstance(content, str):
        raise BadRequest("messages must be a non-empty list of {role, content} objects with text content")
    if role == "tool":
        return result_message(str(message.get("tool_call_id", "")), content)
    return {"role": role, "content": content}


def _tools(body: dict) -> dict:
    """The request's tools and tool_choice (`"none"`: the tools are not offered)."""
    choice = body.get("tool_choice")
    if choice == "none" or body.get("tools") is None:
        return {}
    return {"tools": body["tools"], "tool_choice": "auto" if choice is None else choice}


ANY_OBJECT = {"type": "object"}
"""The schema of `response_format: {"type": "json_object"}`: any JSON object (xgrammar's plain JSON grammar
would also allow a bare array or number, which `json_object` rules out)."""


def response_schema(response_format: object) -> dict | None:
    """The JSON schema an OpenAI `response_format` asks for (None for text), or BadRequest."""
    if response_format is None:
        return None
    kind = response_format.get("type") if isinstance(response_format, dict) else None
    if kind == "text":
        return None
    if kind == "json_object":
        return ANY_OBJECT
    if kind == "json_schema":
        spec = response_format.get("json_schema")  # type: ignore[union-attr]
        schema = spec.get("schema") if isinstance(spec, dict) else None
        if not isinstance(schema, dict):
            raise BadRequest("response_format json_schema needs {\"json_schema\": {\"name\": ..., \"schema\": {...}}}")
        return schema
    raise BadRequest(f"response_format type must be text, json_object or json_schema, not {kind!r}")


REFUSED = object()
"""What `_read_json` returns when it has already answered with the error (a JSON body may be `null`)."""


def served_name(model_id: str) -> str:
    """The name `/v1/models` gives: a local model folder's name (not its path), else the id itself."""
    return Path(model_id).name if Path(model_id).is_dir() else model_id


def _handler(batcher: FairBatcher, embedder: Embedder, model_name: str, api_key: str | None,
             answer_deadline_s: float) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        timeout = READ_TIMEOUT_S  # a client that stops sending does not hold a thread forever

        def log_message(self, format: str, *args: object) -> None:  # noqa: A002
            logger.debug(format, *args)

        def handle_one_request(self) -> None:
            # a connection that has not sent its whole request (line, headers, body) by the deadline is closed;
            # the deadline ends once the request is read (`_read_json`, or at once for a GET)
            self._deadline = threading.Timer(REQUEST_DEADLINE_S, self._close_socket)
            self._deadline.daemon = True
            self._deadline.start()
            try:
                super().handle_one_request()
            finally:
                self._deadline.cancel()

        def _close_socket(self) -> None:
            self.close_connection = True
            with contextlib.suppress(OSError):
                self.connection.shutdown(socket.SHUT_RDWR)

        def _authorized(self) -> bool:
            """Whether the request carries the server's key (always, without one); else a 401 was sent."""
            if api_key is None:
                return True
            given = self.headers.get("Authorization", "")
            if hmac.compare_digest(given.encode(), f"Bearer {api_key}".encode()):
                return True
            self._send(401, {"error": {"message": "missing or wrong API key (Authorization: Bearer KEY)"}})
            return False

        def _send(self, status: int, body: dict) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:  # noqa: N802
            self._deadline.cancel()
            if not self._authorized():
                return
            if self.path.rstrip("/") == "/v1/models":
                self._send(200, {"object": "list", "data": [{"id": model_name, "object": "model"}]})
            else:
                self._send(404, {"error": {"message": f"no route {self.path}"}})

        def _read_json(self) -> object:
            """The request's JSON body; `REFUSED` after replying with the 4xx that says what is wrong with it."""
            length = self.headers.get("Content-Length", "")
            if not length.isdigit():
                self.close_connection = True  # (the body's end is unknown: the connection cannot be reused)
                self._send(411 if not length else 400, {"error": {"message": f"bad Content-Length {length!r}"}})
                return REFUSED
            if int(length) > MAX_BODY_BYTES:
                self.close_connection = True
                self._send(413, {"error": {"message": f"body over {MAX_BODY_BYTES} bytes"}})
                return REFUSED
            try:
                return json.loads(self.rfile.read(int(length)))
            except (json.JSONDecodeError, UnicodeDecodeError) as exc:
                self._send(400, {"error": {"message": f"bad request: {exc}"}})
                return REFUSED

        def do_POST(self) -> None:  # noqa: N802
            route = self.path.rstrip("/")
            if not self._authorized():
                self.close_connection = True  # (its body is not read)
                return
            if route not in ("/v1/chat/completions", "/v1/embeddings"):
                self.close_connection = True  # (its body is not read)
                self._send(404, {"error": {"message": f"no route {self.path}"}})
                return
            body = self._read_json()
            self._deadline.cancel()
            if body is REFUSED:
                return
            if route == "/v1/embeddings":
                self._embeddings(body)
                return
            try:
                request = parse_request(body, batcher.backbone.context_window)
                batcher.backbone.check_request(request)  # (a schema the backbone cannot decode under: 400, not 500)
            except ValueError as exc:  # (BadRequest, or what the backbone cannot take)
                self._send(400, {"error": {"message": f"bad request: {exc}"}})
                return
            result = self._answer(request)
            if result is None:
                return
            if result.error:
                self._send(500, {"error": {"message": result.error}})
                return
            cut = result.completion_tokens >= request.max_tokens  # (ran out of tokens rather than stopping)
            finish = "tool_calls" if result.tool_calls else "length" if cut else "stop"
            calls = [{"id": c["id"], "type": "function",
                      "function": {"name": c["name"], "arguments": json.dumps(c["arguments"])}}
                     for c in result.tool_calls]
            usage = {"prompt_tokens": result.prompt_tokens, "completion_tokens": result.completion_tokens,
                     "total_tokens": result.prompt_tokens + result.completion_tokens}
            reply_id = f"chatcmpl-{uuid.uuid4().hex[:12]}"
            if isinstance(body, dict) and body.get("stream") is True:
                self._stream(reply_id, result.text, calls, finish, usage)
                return
            message: dict = {"role": "assistant", "content": None if calls else result.text}
            if calls:
                message["tool_calls"] = calls
            self._send(200, {
                "id": reply_id, "object": "chat.completion", "model": model_name,
                "choices": [{"index": 0, "finish_reason": finish, "message": message}],
                "usage": usage,
            })

        def _answer(self, request: ChatRequest) -> Completion | None:
            """The request's completion, or None when its client hung up or the deadline passed (a 504 sent): its
            generation is then cancelled, dropped from the queue or stopped within a decoding step."""
            gone = threading.Event()
            generation = batcher.enqueue(request, gone.is_set)
            deadline = time.monotonic() + answer_deadline_s
            while not generation.finished.wait(HANGUP_POLL_S):
                if has_hung_up(self.connection):
                    gone.set()
                    self.close_connection = True
                    logger.info("client %s hung up: its request is cancelled", self.client_address)
                    return None
                if time.monotonic() > deadline:
                    gone.set()
                    self.close_connection = True
                    self._send(504, {"error": {"message": f"no answer within {answer_deadline_s:g} s; cancelled"}})
                    return None
            return generation.completion

        def _stream(self, reply_id: str, text: str, calls: list[dict], finish: str, usage: dict) -> None:
            """The answer as server-sent events, as OpenAI streams it: the role, the text (or the tool calls), the
            finish reason with the usage, then [DONE] (the reply is generated whole, so it comes in one chunk)."""
            def chunk(delta: dict, reason: str | None = None, **extra: object) -> bytes:
                body = {"id": reply_id, "object": "chat.completion.chunk", "model": model_name,
                        "choices": [{"index": 0, "delta": delta, "finish_reason": reason}], **extra}
                return f"data: {json.dumps(body)}\n\n".encode()

            body = {"tool_calls": [{"index": i, **c} for i, c in enumerate(calls)]} if calls else {"content": text}
            events = [chunk({"role": "assistant", "content": ""}), chunk(body),
                      chunk({}, finish, usage=usage), b"data: [DONE]\n\n"]
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Content-Length", str(sum(len(e) for e in events)))
            self.end_headers()
            for event in events:
                self.wfile.write(event)

        def _embeddings(self, body: object) -> None:
            texts = body.get("input") if isinstance(body, dict) else None
            texts = [texts] if isinstance(texts, str) else texts
            if not isinstance(texts, list) or not texts or not all(isinstance(t, str) for t in texts):
                self._send(400, {"error": {"message": "bad request: input must be a text or a non-empty list "
                                                      "of texts"}})
                return
            if len(texts) > MAX_EMBEDDING_INPUTS or max(len(t) for t in texts) > MAX_EMBEDDING_CHARS:
                self._send(413, {"error": {"message": f"bad request: at most {MAX_EMBEDDING_INPUTS} inputs of at "
                                                      f"most {MAX_EMBEDDING_CHARS:,} characters each"}})
                return
            vectors = embedder.encode(texts)
            words = sum(len(t.split()) for t in texts)
            self._send(200, {"object": "list", "model": embedder.model_id,
                             "data": [{"object": "embedding", "index": i, "embedding": v.tolist()}
                                      for i, v in enumerate(vectors)],
                             "usage": {"prompt_tokens": words, "total_tokens": words}})

    return Handler


def make_server(backbone: Backbone, host: str = "127.0.0.1", port: int = 8000, max_batch: int = 16,
                batch_window_ms: float = 20.0, model_name: str | None = None,
                embedder: Embedder | None = None, api_key: str | None = None,
                slice_tokens: int = SLICE_TOKENS, answer_deadline_s: float = ANSWER_DEADLINE_S) -> ThreadingHTTPServer:
    """A server ready for `serve_forever()` (port 0 picks a free port: see `server.server_address`); `embedder`
    answers /v1/embeddings (default the packaged MiniLM, loaded on the first request); with `api_key`, every request
    must carry `Authorization: Bearer <api_key>` (else 401). A running batch may pause for a shorter request after
    `slice_tokens` steps; a chat request unanswered after `answer_deadline_s` is cancelled with a 504."""
    batcher = FairBatcher(backbone, max_batch, batch_window_ms, slice_tokens)
    embedder = embedder or Embedder(EMBEDDER, MemoryCost())
    server = _Server((host, port), _handler(batcher, embedder, model_name or served_name(backbone.model_id),
                                            api_key, answer_deadline_s))
    server.batcher = batcher  # type: ignore[attr-defined]
    return server


def is_loopback(host: str) -> bool:
    """Whether `host` only listens on this machine (127.0.0.0/8, ::1, localhost)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
