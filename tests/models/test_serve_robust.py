"""`serve` that a bad client cannot break: every malformed request gets its own 4xx, well-formed ones sent at
the same time are answered, a backbone failure on one request fails only that one, and 200 simultaneous
requests are all answered."""

from __future__ import annotations

import http.client
import json
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from medmemorybench.models.base import Backbone, Completion
from medmemorybench.serve import make_server


class PickyBackbone(Backbone):
    """Unit-test double: echoes the last message; raises for the whole batch when any message says "explode"."""

    name = "picky"

    @property
    def model_id(self) -> str:
        return "picky"

    @property
    def context_window(self) -> int:
        return 2048

    def generate(self, requests):  # noqa: ANN001, ANN201
        if any(r.messages[-1]["content"] == "explode" for r in requests):
            raise RuntimeError("backbone failed")
        if any(r.response_schema == UNDECODABLE for r in requests):
            raise RuntimeError("asked to decode under a schema it refused")
        return [Completion(text=r.messages[-1]["content"]) for r in requests]

    def check_request(self, request):  # noqa: ANN001, ANN201
        if request.response_schema == UNDECODABLE:
            raise ValueError("the JSON schema cannot be decoded under: Unsupported type \"nonsense\"")


UNDECODABLE = {"type": "nonsense"}


@pytest.fixture
def server():
    served = make_server(PickyBackbone(), port=0, max_batch=16, batch_window_ms=100)
    threading.Thread(target=served.serve_forever, daemon=True).start()
    yield served.server_address[1]
    served.shutdown()
    served.server_close()


def post(port: int, body: bytes, headers: dict | None = None) -> tuple[int, dict]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=20)
    connection.request("POST", "/v1/chat/completions", body=body,
                       headers={"Content-Type": "application/json", **(headers or {})})
    response = connection.getresponse()
    status, data = response.status, response.read()
    connection.close()
    return status, json.loads(data) if data else {}


def chat(content: str, **extra) -> bytes:
    return json.dumps({"messages": [{"role": "user", "content": content}], **extra}).encode()


BAD = {
    "empty messages": json.dumps({"messages": []}).encode(),
    "no messages": b"{}",
    "JSON array": b"[1, 2]",
    "JSON null": b"null",
    "not JSON": b"{nope",
    "content not text": json.dumps({"messages": [{"role": "user", "content": 5}]}).encode(),
    "max_tokens past the context": chat("hi", max_tokens=100000),
    "max_tokens zero": chat("hi", max_tokens=-3),
    "max_tokens text": chat("hi", max_tokens="many"),
    "response_format of an unknown type": chat("hi", response_format={"type": "yaml"}),
    "response_format json_schema without a schema": chat("hi", response_format={"type": "json_schema"}),
    "response_format a string": chat("hi", response_format="json"),
    "a schema the backbone cannot decode under": chat("hi", response_format={
        "type": "json_schema", "json_schema": {"name": "x", "schema": UNDECODABLE}}),
}


@pytest.mark.parametrize("kind", sorted(BAD))
def test_a_bad_request_gets_its_own_400_and_the_batch_goes_on(server, kind):
    with ThreadPoolExecutor(4) as pool:  # sent together, so they share a batch window
        good = [pool.submit(post, server, chat(f"q{i}")) for i in range(3)]
        bad = pool.submit(post, server, BAD[kind])
        assert bad.result()[0] == 400
        assert [f.result() for f in good] == [(200, f.result()[1]) for f in good]
        assert [f.result()[1]["choices"][0]["message"]["content"] for f in good] == ["q0", "q1", "q2"]


def test_a_schema_the_backbone_cannot_decode_under_is_a_400_with_its_reason(server):
    status, body = post(server, BAD["a schema the backbone cannot decode under"])
    assert status == 400  # (before: a 500 from the batch, as if the server had failed)
    assert body["error"]["message"] == ('bad request: the JSON schema cannot be decoded under: Unsupported type '
                                        '"nonsense"')


def test_bad_content_length_and_oversized_bodies_are_refused(server):
    assert post(server, b"{}", {"Content-Length": "-1"})[0] == 400
    assert post(server, chat("x" * 10), {"Content-Length": str(5 * 1024 * 1024)})[0] == 413


def test_a_failing_request_fails_alone(server):
    with ThreadPoolExecutor(4) as pool:
        futures = [pool.submit(post, server, chat(text)) for text in ("a", "explode", "b")]
        statuses = [f.result()[0] for f in futures]
    assert statuses == [200, 500, 200]


def test_200_simultaneous_requests_are_all_answered(server):
    with ThreadPoolExecutor(200) as pool:
        results = list(pool.map(lambda i: post(server, chat(f"m{i}")), range(200)))
    assert [status for status, _ in results] == [200] * 200
    assert [body["choices"][0]["message"]["content"] for _, body in results] == [f"m{i}" for i in range(200)]


@pytest.mark.parametrize(("response_format", "schema"), [
    (None, None), ({"type": "text"}, None), ({"type": "json_object"}, {"type": "object"}),
    ({"type": "json_schema", "json_schema": {"name": "facts", "schema": {"type": "array"}}}, {"type": "array"}),
])
def test_response_format_becomes_the_schema_the_backbone_decodes_under(response_format, schema):
    from medmemorybench.serve import parse_request

    body = {"messages": [{"role": "user", "content": "hi"}], "response_format": response_format}
    assert parse_request(body, 2048).response_schema == schema


def test_a_reply_cut_at_max_tokens_says_length_and_the_model_has_a_name(tmp_path):
    class Counting(PickyBackbone):
        @property
        def model_id(self) -> str:
            return str(tmp_path)  # a local folder: /v1/models names it, not its path

        def generate(self, requests):  # noqa: ANN001, ANN201
            return [Completion(text="x", completion_tokens=len(r.messages[-1]["content"])) for r in requests]

    served = make_server(Counting(), port=0)
    threading.Thread(target=served.serve_forever, daemon=True).start()
    port = served.server_address[1]
    try:
        (_, cut), (_, whole) = post(port, chat("abcdef", max_tokens=4)), post(port, chat("ab", max_tokens=4))
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=20)
        connection.request("GET", "/v1/models")
        models = json.loads(connection.getresponse().read())
    finally:
        served.shutdown()
        served.server_close()
    assert cut["choices"][0]["finish_reason"] == "length" and whole["choices"][0]["finish_reason"] == "stop"
    assert models["data"][0]["id"] == tmp_path.name and cut["model"] == tmp_path.name


def test_embeddings_come_from_the_packaged_minilm(server):
    connection = http.client.HTTPConnection("127.0.0.1", server, timeout=60)
    connection.request("POST", "/v1/embeddings", body=json.dumps({"input": ["metformin 500 mg", "an allergy"]}),
                       headers={"Content-Type": "application/json"})
    body = json.loads(connection.getresponse().read())
    vectors = [item["embedding"] for item in body["data"]]
    assert len(vectors) == 2 and all(len(v) == 384 for v in vectors)  # all-MiniLM-L6-v2's dimension
    assert abs(sum(x * x for x in vectors[0]) - 1.0) < 1e-4  # normalized
    status, error = post_to(server, "/v1/embeddings", json.dumps({"input": []}).encode())
    assert status == 400 and "input" in error["error"]["message"]


def post_to(port: int, path: str, body: bytes) -> tuple[int, dict]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=20)
    connection.request("POST", path, body=body, headers={"Content-Type": "application/json"})
    response = connection.getresponse()
    return response.status, json.loads(response.read())


def test_a_streamed_reply_arrives_as_server_sent_events_the_openai_client_reads(server):
    import openai

    client = openai.OpenAI(base_url=f"http://127.0.0.1:{server}/v1", api_key="local", max_retries=0)
    chunks = list(client.chat.completions.create(model="picky", messages=[{"role": "user", "content": "hello"}],
                                                 stream=True))
    assert "".join(c.choices[0].delta.content or "" for c in chunks) == "hello"
    assert chunks[-1].choices[0].finish_reason == "stop"


def test_tools_reach_the_backbone_and_its_call_comes_back_as_openai_tool_calls():
    """Through the server with the openai client: the tools arrive on the request, the backbone's call is sent as
    `tool_calls` with `finish_reason: tool_calls`, and a conversation carrying the call and its result is
    accepted (flattened to text for chat templates without tool roles)."""
    import openai

    from tests.models.test_tools import SEARCH

    seen = []

    class Caller(PickyBackbone):
        def generate(self, requests):  # noqa: ANN001, ANN201
            seen.extend(requests)
            return [Completion(text="", tool_calls=[{"id": "call_1", "name": "search_archive",
                                                     "arguments": {"query": "hba1c"}}]) for _ in requests]

    served = make_server(Caller(), port=0)
    threading.Thread(target=served.serve_forever, daemon=True).start()
    client = openai.OpenAI(base_url=f"http://127.0.0.1:{served.server_address[1]}/v1", api_key="local",
                           max_retries=0)
    try:
        first = client.chat.completions.create(model="m", messages=[{"role": "user", "content": "my HbA1c?"}],
                                               tools=[SEARCH], tool_choice="required")
        call = first.choices[0].message.tool_calls[0]
        followed = [{"role": "user", "content": "my HbA1c?"},
                    {"role": "assistant", "content": None, "tool_calls": [call.model_dump()]},
                    {"role": "tool", "tool_call_id": call.id, "content": "HbA1c 7.9 % on 2024-03-02"}]
        client.chat.completions.create(model="m", messages=followed, tools=[SEARCH])
    finally:
        served.shutdown()
        served.server_close()
    assert first.choices[0].finish_reason == "tool_calls" and first.choices[0].message.content is None
    assert call.function.name == "search_archive" and json.loads(call.function.arguments) == {"query": "hba1c"}
    assert seen[0].tools == [SEARCH] and seen[0].tool_choice == "required" and seen[1].tool_choice == "auto"
    assert seen[1].messages[1] == {"role": "assistant",
                                   "content": '{"tool": "search_archive", "arguments": {"query": "hba1c"}}'}
    assert seen[1].messages[2] == {"role": "user", "content": "Result of tool call call_1: HbA1c 7.9 % on 2024-03-02"}


def test_the_openai_backbone_reads_tool_calls_from_a_server():
    from medmemorybench.models.base import ChatRequest
    from medmemorybench.models.openai_compatible import OpenAIBackbone
    from tests.models.test_tools import SEARCH

    class Caller(PickyBackbone):
        def generate(self, requests):  # noqa: ANN001, ANN201
            return [Completion(tool_calls=[{"id": "c", "name": "search_archive",
                                            "arguments": {"query": r.tool_choice}}]) for r in requests]

    served = make_server(Caller(), port=0)
    threading.Thread(target=served.serve_forever, daemon=True).start()
    try:
        backbone = OpenAIBackbone(model="m", base_url=f"http://127.0.0.1:{served.server_address[1]}/v1",
                                  api_key_env="NO_SUCH_KEY_NEEDED", max_retries=0)
        (completion,) = backbone.generate([ChatRequest(messages=[{"role": "user", "content": "x"}], tools=[SEARCH],
                                                       tool_choice="required")])
    finally:
        served.shutdown()
        served.server_close()
    assert completion.error is None and completion.tool_calls == [
        {"id": "c", "name": "search_archive", "arguments": {"query": "required"}}]


CLIENT_MISTAKES = {
    "an empty stop string": chat("hi", stop=[""]),
    "five stop strings": chat("hi", stop=["a", "b", "c", "d", "e"]),
    "a seed of 1e30": chat("hi", seed=1e30),
    "a negative seed": chat("hi", seed=-1),
    "max_tokens past the server's cap": chat("hi", max_tokens=2000),
}


@pytest.mark.parametrize("kind", sorted(CLIENT_MISTAKES))
def test_a_client_mistake_is_a_400_with_its_reason(server, kind):
    status, body = post(server, CLIENT_MISTAKES[kind])
    assert status == 400 and body["error"]["message"].startswith("bad request:")


def test_an_embeddings_flood_is_refused():
    from medmemorybench.serve import MAX_EMBEDDING_INPUTS

    class NoEmbedder:  # (never reached: the request is refused before any text is embedded)
        model_id = "none"

        def encode(self, texts):  # noqa: ANN001, ANN201
            raise AssertionError("the flood reached the embedder")

    served = make_server(PickyBackbone(), port=0, embedder=NoEmbedder())  # type: ignore[arg-type]
    threading.Thread(target=served.serve_forever, daemon=True).start()
    try:
        port = served.server_address[1]
        assert post_to(port, "/v1/embeddings", json.dumps({"input": ["a"] * 100_000}).encode())[0] == 413
        assert post_to(port, "/v1/embeddings", json.dumps({"input": ["a"] * (MAX_EMBEDDING_INPUTS + 1)}).encode())[
            0] == 413
        assert post_to(port, "/v1/embeddings", json.dumps({"input": "x" * 40_000}).encode())[0] == 413
    finally:
        served.shutdown()
        served.server_close()


def test_with_an_api_key_every_route_needs_it():
    served = make_server(PickyBackbone(), port=0, api_key="s3cret")
    threading.Thread(target=served.serve_forever, daemon=True).start()
    try:
        port = served.server_address[1]
        assert post(port, chat("hi"))[0] == 401
        assert post(port, chat("hi"), {"Authorization": "Bearer wrong"})[0] == 401
        status, body = post(port, chat("hi"), {"Authorization": "Bearer s3cret"})
        assert status == 200 and body["choices"][0]["message"]["content"] == "hi"
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=20)
        connection.request("GET", "/v1/models")
        assert connection.getresponse().status == 401
        connection.close()
    finally:
        served.shutdown()
        served.server_close()


@pytest.mark.parametrize("start", [b"POST /v1/chat/completions HTTP/1.1\r\n",
                                   b"POST /v1/chat/completions HTTP/1.1\r\nContent-Length: 1000\r\n\r\n"],
                         ids=["headers", "body"])
def test_a_connection_trickling_its_request_is_closed_at_the_deadline(monkeypatch, start):
    import socket
    import time

    import medmemorybench.serve as serve

    monkeypatch.setattr(serve, "REQUEST_DEADLINE_S", 1.0)
    served = make_server(PickyBackbone(), port=0)
    threading.Thread(target=served.serve_forever, daemon=True).start()
    try:
        slow = socket.create_connection(("127.0.0.1", served.server_address[1]), timeout=10)
        started = time.monotonic()
        slow.sendall(start)
        closed = None
        for _ in range(40):  # one header byte every 0.25 s: never a 30 s wait on one read
            time.sleep(0.25)
            try:
                slow.sendall(b"X")
            except OSError:
                closed = time.monotonic() - started
                break
            slow.settimeout(0.01)
            try:
                if slow.recv(1) == b"":
                    closed = time.monotonic() - started
                    break
            except TimeoutError:
                pass
        slow.close()
        assert closed is not None and closed < 3.0
        assert post(served.server_address[1], chat("still serving"))[0] == 200
    finally:
        served.shutdown()
        served.server_close()
