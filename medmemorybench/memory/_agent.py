"""The tool-calling loop agent memories (Letta) run on an LLM: every conversation takes a step at a time, all the
active ones in one batch; a step is one call with tools, the tool runs, its result joins the conversation, and
the loop goes on until a tool ends it or the step limit is reached (where the last step must call the ending
tool).

Replies are read as tool calls from `Completion.tool_calls`, or from the constraint's JSON when a backend
returns it as text (`models.tools.read_tool_reply`), so scripted test doubles can write calls as text.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from medmemorybench.memory.context import MemoryLLM
from medmemorybench.models.base import ChatRequest, Completion
from medmemorybench.models.tools import call_message, read_tool_reply, result_message


@dataclass
class Conversation:
    """One loop's state: the turns after the system message, every step's completion, and how it ended."""

    turns: list[dict[str, str]]
    steps: list[Completion] = field(default_factory=list)
    ended: bool = False
    unreadable: int = 0
    """Steps whose reply was no tool call it could make (cut, prose from a backend that ignores tools, or
    another tool than the one the last step must call)."""


ToolRunner = Callable[[int, dict], str | None]
"""(conversation index, call {"name", "arguments"}) -> the tool's result, or None when the call ends the loop."""


def run_loops(llm: MemoryLLM, system: Callable[[int], str], conversations: list[Conversation], tools: list[dict],
              run_tool: ToolRunner, max_steps: int, max_tokens: int, final_tool: str) -> None:
    """Step every conversation until it ends or has taken `max_steps` steps; `system(i)` is conversation i's
    system message, rendered again before each step (an agent's edits to its memory show at once)."""
    for step in range(max_steps):
        active = [i for i, c in enumerate(conversations) if not c.ended]
        if not active:
            return
        last = step == max_steps - 1
        choice: str | dict = {"type": "function", "function": {"name": final_tool}} if last else "required"
        requests = [ChatRequest(messages=[{"role": "system", "content": system(i)}, *conversations[i].turns],
                                tools=tools, tool_choice=choice, max_tokens=max_tokens) for i in active]
        for i, request, completion in zip(active, requests, llm.generate(requests), strict=True):
            conversation = conversations[i]
            conversation.steps.append(completion)
            calls = completion.tool_calls or read_tool_reply(request, completion).tool_calls
            if last:  # (a backend that ignored the forced choice does not get to act past the limit)
                calls = [c for c in calls if c["name"] == final_tool]
            if completion.error is not None or not calls:
                conversation.unreadable += int(completion.error is None)
                conversation.ended = True
                continue
            call = calls[0]  # (one call per step, as the constraint writes it)
            result = run_tool(i, call)
            if result is None:
                conversation.ended = True
                continue
            conversation.turns += [call_message([call]), result_message(call["name"], result)]
        if last:
            for i in active:
                conversations[i].ended = True
