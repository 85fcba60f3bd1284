"""Tool calls (OpenAI `tools` / `tool_choice`) through the JSON-schema constraint, for backends that decode under
a schema (hf with xgrammar, vLLM) but have no tool-calling chat template: a small model cannot be trusted to
write a tool call in any free format, and under the grammar it can only write one that parses.

The reply the constraint allows is a JSON object: `{"tool": NAME, "arguments": {...}}` for a call (the
arguments under that tool's own parameter schema), or, when the model may also answer in words
(`tool_choice: "auto"`), `{"content": "..."}`. `read_tool_reply` turns it back into the completion's
`tool_calls` (OpenAI's shape: a list of `{"id", "name", "arguments"}`) or its text.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from medmemorybench.models.base import ChatRequest, Completion

ANSWER_CHARS = 600
"""Longest text reply allowed beside the tools (a small model looping inside a string stops here)."""


def tool_name(tool: dict) -> str:
    """The name of an OpenAI tool spec (`{"type": "function", "function": {"name": ...}}`)."""
    return tool["function"]["name"]


def _call_schema(tool: dict) -> dict[str, Any]:
    parameters = tool["function"].get("parameters") or {"type": "object", "properties": {}}
    return {"type": "object", "additionalProperties": False, "required": ["tool", "arguments"],
            "properties": {"tool": {"const": tool_name(tool)}, "arguments": parameters}}


def tool_schema(tools: list[dict], tool_choice: str | dict = "auto") -> dict[str, Any]:
    """The schema of a reply that calls one of `tools` (`"required"`), the named one (`{"type": "function",
    "function": {"name": ...}}`), or may answer in words instead (`"auto"`)."""
    if isinstance(tool_choice, dict):
        wanted = tool_choice["function"]["name"]
        tools = [t for t in tools if tool_name(t) == wanted]
    options = [_call_schema(t) for t in tools]
    if tool_choice == "auto":
        options.append({"type": "object", "additionalProperties": False, "required": ["content"],
                        "properties": {"content": {"type": "string", "maxLength": ANSWER_CHARS}}})
    return options[0] if len(options) == 1 else {"anyOf": options}


def check_tools(tools: object, tool_choice: object) -> None:
    """Raise ValueError saying what is wrong with a `tools` list or a `tool_choice`."""
    if not isinstance(tools, list) or not tools:
        raise ValueError("tools must be a non-empty list of {\"type\": \"function\", \"function\": {...}} objects")
    names = []
    for tool in tools:
        function = tool.get("function") if isinstance(tool, dict) else None
        if not isinstance(function, dict) or not isinstance(function.get("name"), str) or not function["name"]:
            raise ValueError("each tool must be {\"type\": \"function\", \"function\": {\"name\": ..., "
                             "\"parameters\": {...}}}")
        if not isinstance(function.get("parameters", {}), dict):
            raise ValueError(f"tool {function['name']}: parameters must be a JSON schema object")
        names.append(function["name"])
    if isinstance(tool_choice, dict):
        function = tool_choice.get("function")
        name = function.get("name") if isinstance(function, dict) else None
        if name not in names:
            raise ValueError(f"tool_choice names {name!r}, which is not among the tools ({', '.join(names)})")
    elif tool_choice not in ("auto", "required"):
        raise ValueError(f"tool_choice must be 'auto', 'required' or a named function, not {tool_choice!r}")


def tools_prompt(tools: list[dict], tool_choice: str | dict) -> str:
    """The tools as a chat template with tool support would show them: names, descriptions, parameters, and
    the reply's shape."""
    lines = ["You can call these tools:"]
    for tool in tools:
        function = tool["function"]
        parameters = json.dumps((function.get("parameters") or {}).get("properties", {}), sort_keys=True)
        lines.append(f"- {function['name']}: {function.get('description', '').strip()} Arguments: {parameters}")
    lines.append('To call a tool, reply {"tool": NAME, "arguments": {...}}.')
    if tool_choice == "auto":
        lines.append('To answer without a tool, reply {"content": YOUR ANSWER}.')
    return "\n".join(lines)


def call_message(calls: list[dict]) -> dict[str, str]:
    """An assistant turn that made `calls` (`{"name", "arguments"}`), written as the constraint writes a call, for
    the conversation that continues after it (chat templates of small models know no tool roles)."""
    return {"role": "assistant",
            "content": "\n".join(json.dumps({"tool": c["name"], "arguments": c["arguments"]}) for c in calls)}


def result_message(call_id: str, result: str) -> dict[str, str]:
    """A tool's result as the user turn that follows its call."""
    return {"role": "user", "content": f"Result of tool call {call_id}: {result}"}


def as_constrained(request: ChatRequest) -> ChatRequest:
    """The request a schema-decoding backend generates for: the tools described at the end of the system message
    (one is added when there is none) and their call schema as the response schema."""
    if not request.tools:
        return request
    described = tools_prompt(request.tools, request.tool_choice)
    messages = [dict(m) for m in request.messages]
    if messages[0].get("role") == "system":
        messages[0]["content"] = f"{messages[0]['content']}\n\n{described}"
    else:
        messages.insert(0, {"role": "system", "content": described})
    return request.model_copy(update={"messages": messages,
                                      "response_schema": tool_schema(request.tools, request.tool_choice)})


def read_tool_reply(request: ChatRequest, completion: Completion) -> Completion:
    """The completion of a tools request with its reply read: `tool_calls` for a call, the text for words; a
    reply that is neither (a truncated one) stays as text, with no call."""
    if not request.tools or completion.error is not None:
        return completion
    try:
        reply = json.loads(completion.text)
    except json.JSONDecodeError:
        return completion
    if isinstance(reply, dict) and isinstance(reply.get("tool"), str) and isinstance(reply.get("arguments"), dict):
        call = {"id": "call_" + hashlib.sha256(completion.text.encode()).hexdigest()[:12], "name": reply["tool"],
                "arguments": reply["arguments"]}  # (an id from the reply itself: the same reply, the same id)
        return completion.model_copy(update={"text": "", "tool_calls": [call]})
    if isinstance(reply, dict) and isinstance(reply.get("content"), str):
        return completion.model_copy(update={"text": reply["content"].strip()})
    return completion
