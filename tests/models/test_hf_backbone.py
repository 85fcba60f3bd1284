"""The embedded SmolLM2-135M-Instruct through transformers on CPU: a real model, a real batch."""

from __future__ import annotations

import json

import pytest

from medmemorybench.models import ChatRequest, load_backbone


@pytest.fixture(scope="module")
def smol():
    # a short window keeps the test fast; one thread, as the suite runs two workers on two cores (two threads each
    # made these tests 7x slower at load 5, measured)
    return load_backbone("hf", {"batch_size": 4, "max_length": 384, "threads": 1})


def test_batched_greedy_generation_is_deterministic(smol):
    requests = [ChatRequest(messages=[{"role": "user", "content": f"Say the number {n}."}], max_tokens=8)
                for n in range(3)]
    first, second = smol.generate(requests), smol.generate(requests)
    assert [c.text for c in first] == [c.text for c in second]
    assert all(c.text and c.error is None and 0 < c.completion_tokens <= 8 for c in first)
    assert all(c.prompt_tokens > 5 for c in first)


def test_over_long_prompt_is_cut_and_the_cut_recorded(smol):
    long = "records " * (smol.context_window + 200)
    (out,) = smol.generate([ChatRequest(messages=[{"role": "user", "content": long + " Question: hi?"}],
                                        max_tokens=4)])
    assert out.truncated_tokens > 0 and out.prompt_tokens <= smol.context_window - 4


def test_identity_names_the_embedded_model(smol):
    assert "smollm2" in smol.identity()["model"].lower()


FACTS = {"type": "object", "properties": {"facts": {"type": "array", "maxItems": 4,
                                                    "items": {"type": "string", "maxLength": 80}}},
         "required": ["facts"], "additionalProperties": False}


def test_a_schema_request_is_decoded_as_json_that_fits_the_schema(smol):
    messages = [{"role": "system", "content": "List the patient's medical facts."},
                {"role": "user", "content": "Doctor: I am raising your metformin to 1000 mg twice a day.\n"
                                            "Patient: Fine. I am allergic to penicillin."}]
    constrained, free = smol.generate([ChatRequest(messages=messages, max_tokens=80, response_schema=FACTS),
                                       ChatRequest(messages=messages, max_tokens=24)])
    parsed = json.loads(constrained.text)  # the unconstrained reply of the same model is prose
    assert set(parsed) == {"facts"} and isinstance(parsed["facts"], list) and len(parsed["facts"]) <= 4
    assert all(isinstance(f, str) and len(f) <= 80 for f in parsed["facts"])
    with pytest.raises(json.JSONDecodeError):
        json.loads(free.text)


@pytest.mark.parametrize(("schema", "reason"), [
    ({"type": "nonsense"}, 'Unsupported type "nonsense"'),
    ({"type": "object", "properties": 5}, "properties must be an object"),
    ({"type": "string", "pattern": "("}, "The parenthesis is not closed"),
])
def test_a_schema_that_cannot_be_decoded_under_is_refused_before_generating_with_xgrammars_reason(smol, schema,
                                                                                                  reason):
    request = ChatRequest(messages=[{"role": "user", "content": "hi"}], max_tokens=8, response_schema=schema)
    with pytest.raises(ValueError, match="the JSON schema cannot be decoded under: ") as refused:
        smol.check_request(request)
    assert reason in str(refused.value) and ".cc:" not in str(refused.value)  # (xgrammar's source line left out)
    smol.check_request(request.model_copy(update={"response_schema": FACTS}))  # (a schema it can decode under)


def test_compiled_grammars_are_bounded_keeping_the_most_recently_used(smol, monkeypatch):
    from medmemorybench.models import _json_constraint

    monkeypatch.setattr(_json_constraint, "MAX_GRAMMARS", 3)
    constraint = smol.constraint()
    schemas = [{"type": "object", "properties": {f"f{i}": {"type": "integer"}}} for i in range(5)]
    for schema in [*schemas, schemas[2]]:  # (a hostile client: a new schema with every request)
        constraint.check(schema)
    kept = [json.loads(key) for key in constraint._compiled]
    assert kept == [schemas[3], schemas[4], schemas[2]]


def test_a_tools_request_comes_back_as_a_call_of_a_listed_tool_with_valid_arguments(smol):
    from tests.models.test_tools import SEARCH

    messages = [{"role": "system", "content": "You are a medical assistant with an archive of the patient's notes."},
                {"role": "user", "content": "What was my last HbA1c?"}]
    (completion,) = smol.generate([ChatRequest(messages=messages, max_tokens=40, tools=[SEARCH],
                                               tool_choice="required")])
    (call,) = completion.tool_calls  # the 135M model writes prose unaided; under the call schema it calls the tool
    assert call["name"] == "search_archive" and set(call["arguments"]) == {"query"}
    assert isinstance(call["arguments"]["query"], str) and len(call["arguments"]["query"]) <= 60


def _sliced(smol, generations: list, pause_every: int) -> int:
    """Run `generations` to the end through `generate_slice`, pausing every `pause_every` steps; the calls made."""
    calls = 0
    while live := [g for g in generations if not g.finished.is_set()]:
        smol.generate_slice(live, lambda steps: steps >= pause_every)
        calls += 1
    return calls


def test_generation_paused_and_resumed_is_token_for_token_the_same_as_whole(smol):
    from medmemorybench.models.base import Generation

    requests = [ChatRequest(messages=[{"role": "user", "content": "Name three fruits."}], max_tokens=16),
                ChatRequest(messages=[{"role": "user", "content": "What is the capital of France?"}], max_tokens=6),
                ChatRequest(messages=[{"role": "user", "content": "List the facts: metformin 1000 mg, allergic to "
                                                                  "penicillin."}], max_tokens=40,
                            response_schema=FACTS)]
    whole = [smol.generate([r])[0] for r in requests]  # each alone, never paused
    generations = [Generation(r) for r in requests]
    assert _sliced(smol, generations, pause_every=3) > 3  # (paused, and resumed from its KV cache, several times)
    for alone, sliced in zip(whole, generations, strict=True):
        assert sliced.completion.text == alone.text and sliced.completion.completion_tokens == alone.completion_tokens
    assert json.loads(generations[2].completion.text)["facts"]  # the schema row kept its grammar across pauses


def test_a_cancelled_generation_stops_within_a_step(smol):
    from medmemorybench.models.base import CANCELLED, Generation

    asked = []
    cancelled = Generation(ChatRequest(messages=[{"role": "user", "content": "Write a long story."}], max_tokens=300),
                           lambda: len(asked) >= 4)
    kept = Generation(ChatRequest(messages=[{"role": "user", "content": "Say hi."}], max_tokens=6))

    def count_steps(steps: int) -> bool:  # (never pauses)
        asked.append(steps)
        return False

    smol.generate_slice([cancelled, kept], count_steps)
    assert cancelled.completion.error == CANCELLED and kept.completion.error is None and kept.completion.text
    assert len(asked) <= 6 and cancelled.state is None  # (stopped at once; its cache let go)
