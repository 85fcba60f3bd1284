"""Tool calls through the JSON-schema constraint: the schema a reply must follow, the tools described to the model,
the reply read back as `tool_calls`, and bad tool specs refused."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from medmemorybench.models.base import ChatRequest, Completion
from medmemorybench.models.tools import as_constrained, read_tool_reply, tool_schema

SEARCH = {"type": "function", "function": {
    "name": "search_archive", "description": "Search the patient's archived notes.",
    "parameters": {"type": "object", "required": ["query"], "additionalProperties": False,
                   "properties": {"query": {"type": "string", "maxLength": 60}}}}}
REPLACE = {"type": "function", "function": {
    "name": "core_replace", "description": "Replace text in a core memory block.",
    "parameters": {"type": "object", "required": ["old", "new"],
                   "properties": {"old": {"type": "string"}, "new": {"type": "string"}}}}}


def request(tool_choice: str | dict = "auto") -> ChatRequest:
    return ChatRequest(messages=[{"role": "system", "content": "You are the memory."},
                                 {"role": "user", "content": "What dose of metformin?"}],
                       tools=[SEARCH, REPLACE], tool_choice=tool_choice)


def test_auto_allows_a_call_of_each_tool_or_words_and_required_only_calls():
    auto, required = tool_schema([SEARCH, REPLACE], "auto"), tool_schema([SEARCH, REPLACE], "required")
    assert [o["properties"].get("tool", {}).get("const") for o in auto["anyOf"]] == \
        ["search_archive", "core_replace", None]
    assert [o["properties"]["tool"]["const"] for o in required["anyOf"]] == ["search_archive", "core_replace"]
    named = tool_schema([SEARCH, REPLACE], {"type": "function", "function": {"name": "core_replace"}})
    assert named["properties"]["tool"] == {"const": "core_replace"}
    assert named["properties"]["arguments"] == REPLACE["function"]["parameters"]


def test_the_tools_are_described_in_the_system_message_and_decoded_under_their_schema():
    constrained = as_constrained(request())
    system = constrained.messages[0]["content"]
    assert system.startswith("You are the memory.") and "search_archive: Search the patient's archived notes." in system
    assert '{"content": YOUR ANSWER}' in system
    assert constrained.response_schema == tool_schema([SEARCH, REPLACE], "auto")
    assert len(constrained.messages) == 2 and as_constrained(ChatRequest(messages=[{"role": "user", "content": "x"}])
                                                             ).response_schema is None


@pytest.mark.parametrize(("text", "calls", "words"), [
    ('{"tool": "search_archive", "arguments": {"query": "metformin"}}',
     [{"name": "search_archive", "arguments": {"query": "metformin"}}], ""),
    ('{"content": " 500 mg twice daily "}', [], "500 mg twice daily"),
    ('{"tool": "search_archive", "argu', [], '{"tool": "search_archive", "argu'),  # cut at max_tokens: no call
])
def test_a_reply_is_read_back_as_tool_calls_or_words(text, calls, words):
    read = read_tool_reply(request(), Completion(text=text, completion_tokens=9))
    assert [{k: c[k] for k in ("name", "arguments")} for c in read.tool_calls] == calls and read.text == words
    assert read.completion_tokens == 9
    again = read_tool_reply(request(), Completion(text=text))
    assert [c["id"] for c in again.tool_calls] == [c["id"] for c in read.tool_calls]  # ids are reproducible


@pytest.mark.parametrize(("tools", "choice", "says"), [
    ([], "auto", "non-empty list"),
    ([{"type": "function"}], "auto", "each tool"),
    ([{"type": "function", "function": {"name": "x", "parameters": "query"}}], "auto", "parameters"),
    ([SEARCH], "sometimes", "tool_choice must be"),
    ([SEARCH], {"type": "function", "function": {"name": "delete_all"}}, "not among the tools"),
])
def test_bad_tools_are_refused_saying_what_is_wrong(tools, choice, says):
    with pytest.raises(ValidationError, match=says):
        ChatRequest(messages=[{"role": "user", "content": "x"}], tools=tools, tool_choice=choice)


def test_a_tool_call_survives_the_response_cache_round_trip():
    read = read_tool_reply(request(), Completion(text=json.dumps({"tool": "search_archive",
                                                                  "arguments": {"query": "a1c"}})))
    assert Completion.model_validate_json(read.model_dump_json()).tool_calls == read.tool_calls
