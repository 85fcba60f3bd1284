"""Letta (MemGPT), natively: core memory blocks pinned in the system prompt and edited by the agent through tools,
recall memory (every turn of every consultation, searchable by text) and archival memory (passages the agent
chose to save, embedded), driven by a tool-calling loop on the memory LLM with a step limit. It answers natively:
the answering LLM sees the core memory, may search archival and recall memory, and answers with `send_message`.

Why native, not the package (`../shared/research/memory-systems.md` §12): the latest `letta` on PyPI (0.34) is a
terminal app with no Python agent; the last server release (0.16) runs as a separate process with SQLite or
Postgres and needs a model with native tool calling, and the in-process client the authors vendored (0.7) is
gone from current releases. A running Letta server could be wrapped through the same interface (`bind`,
`ingest`, `answer`: create an agent per patient, send each session as a user message, ask each question as one;
`docs/memory_systems.md` says how); it is not built here.

What is faithful: the three stores and their tools (`core_memory_append`, `core_memory_replace`,
`archival_memory_insert`, `archival_memory_search`, `conversation_search`, `send_message`), the agent alone
deciding what to save, the core memory re-rendered into the system prompt after every edit, a block size limit
that refuses an append past it (as Letta does), page size 5 for searches (the authors' patch). What differs:
Letta's own system prompt and heartbeats are replaced by a short medical instruction and a step limit, the FIFO
message buffer with its recursive summary is left out (each consultation is one conversation; the history stays
searchable in recall memory), and every call is decoded under its tools' schema, so a small model's call parses.
Dates: every archival passage starts with its consultation's date; recall turns carry theirs.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from medmemorybench.memory._agent import Conversation, run_loops
from medmemorybench.memory.base import MemoryItem, NativeAnswer, NativeQuestion, Retrieval
from medmemorybench.memory.context import LLMBuiltMemory, best_first, fitted_session, summed_completion
from medmemorybench.models.base import check_arg
from medmemorybench.render.models import ObservedSession, turn_line

PERSONA = ("I am the memory of a patient's personal medical assistant. I keep what matters for this patient's "
           "safety and care, and I never guess.")
MEMORIZE_PROMPT = (
    "You are the memory agent of a patient's personal medical assistant. You read one consultation at a time; "
    "afterwards you will remember only what you saved. Your core memory is always in front of you. Keep the "
    "'human' block the patient's current profile: diagnoses, current medicines with doses, allergies and "
    "intolerances, risks and what must not be given. Append new facts with core_memory_append; when something "
    "changed (a new dose, a stopped medicine) correct it with core_memory_replace. Save other details worth "
    "recalling (test results with values, events, decisions) with archival_memory_insert, each beginning with "
    "the consultation's date. Call finish when nothing more needs saving."
)
ANSWER_PROMPT = (
    "You are a patient's personal medical assistant. Your core memory is below. To recall more, search your "
    "archival memory (saved notes) or the conversation history; then give your answer with send_message."
)
CORE_LABELS = ("persona", "human")
CONTENT_CHARS, QUERY_CHARS, ANSWER_CHARS = 240, 80, 400


def _function(name: str, description: str, **properties: dict) -> dict[str, Any]:
    return {"type": "function", "function": {
        "name": name, "description": description,
        "parameters": {"type": "object", "additionalProperties": False, "required": list(properties),
                       "properties": properties}}}


def _text(chars: int) -> dict[str, Any]:
    return {"type": "string", "maxLength": chars}


LABEL = {"enum": ["human", "persona"]}
MEMORIZE_TOOLS = [
    _function("core_memory_append", "Add a line to a core memory block.", label=LABEL, content=_text(CONTENT_CHARS)),
    _function("core_memory_replace", "Replace text in a core memory block (an empty new text deletes it).",
              label=LABEL, old=_text(CONTENT_CHARS), new=_text(CONTENT_CHARS)),
    _function("archival_memory_insert", "Save a passage to archival memory.", content=_text(CONTENT_CHARS)),
    _function("finish", "End: nothing more needs saving."),
]
ANSWER_TOOLS = [
    _function("archival_memory_search", "Search archival memory (saved passages).", query=_text(QUERY_CHARS)),
    _function("conversation_search", "Search the history of consultations by words.", query=_text(QUERY_CHARS)),
    _function("send_message", "Give your answer to the patient.", message=_text(ANSWER_CHARS)),
]
WORD = re.compile(r"[a-z0-9][a-z0-9.%/-]*")


@dataclass
class _Line:
    """A line of a core block, with the sessions it came from."""

    text: str
    session_ids: set[str] = field(default_factory=set)


@dataclass(frozen=True)
class _Record:
    """An archival passage or a recall turn."""

    text: str
    session_id: str


class LettaMemory(LLMBuiltMemory):
    """Letta's core, recall and archival memory under an agent loop; answers natively by default.

    Args:
        max_steps: tool calls the agent may make per consultation (the last one must be `finish`).
        answer_steps: calls per question when answering (the last one must be `send_message`).
        block_chars: most characters of a core block (Letta's default limit is 5,000; a small window needs less).
        page_size: results per search (the authors' patch: 5).
        step_tokens: tokens one tool call may take (its arguments are bounded by the schema).
    """

    name = "letta"
    answer_modes = ("native", "shared")

    def __init__(self, max_steps: int = 4, answer_steps: int = 3, block_chars: int = 2000, page_size: int = 5,
                 step_tokens: int = 160) -> None:
        check_arg(max_steps, "max_steps", int, lambda v: 1 <= v <= 20, "an integer from 1 to 20")
        check_arg(answer_steps, "answer_steps", int, lambda v: 1 <= v <= 10, "an integer from 1 to 10")
        check_arg(block_chars, "block_chars", int, lambda v: v >= 200, "an integer >= 200")
        check_arg(page_size, "page_size", int, lambda v: 1 <= v <= 50, "an integer from 1 to 50")
        check_arg(step_tokens, "step_tokens", int, lambda v: v >= 48, "an integer >= 48")
        super().__init__(max_steps=max_steps, answer_steps=answer_steps, block_chars=block_chars,
                         page_size=page_size, step_tokens=step_tokens)
        self.max_steps, self.answer_steps, self.block_chars = max_steps, answer_steps, block_chars
        self.page_size, self.step_tokens = page_size, step_tokens
        self.reset()

    def reset(self) -> None:
        self.core: dict[str, list[_Line]] = {"persona": [_Line(PERSONA)], "human": []}
        self.archival: list[_Record] = []
        self._vectors: list[np.ndarray] = []
        self.recall: list[_Record] = []

    # -- core memory ---------------------------------------------------------------------------------------------

    def core_text(self) -> str:
        """The core memory as the system prompt shows it."""
        blocks = []
        for label in CORE_LABELS:
            body = "\n".join(line.text for line in self.core[label]) or "(empty)"
            blocks.append(f"<{label}>\n{body}\n</{label}>")
        return "Core memory:\n" + "\n".join(blocks)

    def _block_chars(self, label: str) -> int:
        return sum(len(line.text) + 1 for line in self.core[label])

    def _append(self, label: str, content: str, session_id: str) -> str:
        content = content.strip()
        if not content:
            return "Nothing to append."
        if self._block_chars(label) + len(content) + 1 > self.block_chars:
            return f"Error: the {label} block is full ({self.block_chars} characters); replace old text instead."
        self.core[label].append(_Line(content, {session_id}))
        return f"Appended to {label}."

    def _replace(self, label: str, old: str, new: str, session_id: str) -> str:
        old, new = old.strip(), new.strip()
        line = next((line for line in self.core[label] if old and old in line.text), None)
        if line is None:
            return f"Error: '{old}' is not in the {label} block."
        line.text = line.text.replace(old, new).strip()
        line.session_ids.add(session_id)  # (the line now says what this consultation changed)
        if not line.text:
            self.core[label].remove(line)
        return f"Replaced in {label}."

    def core_items(self) -> list[MemoryItem]:
        """Each line of the patient's block, pinned: what the agent kept in view, with its sessions."""
        return [MemoryItem(f"Core memory ({label}): {line.text}", tuple(sorted(line.session_ids)), 1.0)
                for label in CORE_LABELS for line in self.core[label] if line.session_ids]

    # -- ingestion -----------------------------------------------------------------------------------------------

    def ingest(self, sessions: Sequence[ObservedSession]) -> None:
        """Each consultation, in order, joins recall memory and is shown to the agent, which edits its core
        memory and saves passages until it calls `finish` (at most `max_steps` calls)."""
        for session in sessions:
            self.recall.extend(_Record(f"[{session.date}] {turn_line(turn)}", session.session_id)
                               for turn in session.turns)
            # (room for the instruction, the core memory as it may grow, and a few steps of calls and results)
            reserve = self.llm.count_tokens(MEMORIZE_PROMPT) + self.block_chars // 2 + self.max_steps * self.step_tokens
            conversation = Conversation([{"role": "user", "content": fitted_session(session, self.llm, reserve)}])
            saved: list[_Record] = []

            def run_tool(_index: int, call: dict, session: ObservedSession = session,
                         saved: list[_Record] = saved) -> str | None:
                name, arguments = call["name"], call["arguments"]
                if name == "finish":
                    return None
                if name == "archival_memory_insert":
                    text = str(arguments.get("content", "")).strip()
                    if not text:
                        return "Nothing to save."
                    if session.date not in text:
                        text = f"[{session.date}] {text}"
                    saved.append(_Record(text, session.session_id))
                    return "Saved to archival memory."
                label = arguments.get("label")
                if label not in CORE_LABELS:
                    return f"Error: unknown block {label!r}."
                if name == "core_memory_append":
                    return self._append(label, str(arguments.get("content", "")), session.session_id)
                if name == "core_memory_replace":
                    return self._replace(label, str(arguments.get("old", "")), str(arguments.get("new", "")),
                                         session.session_id)
                return f"Error: no tool {name}."

            run_loops(self.llm, lambda _i: f"{MEMORIZE_PROMPT}\n\n{self.core_text()}", [conversation],
                      MEMORIZE_TOOLS, run_tool, self.max_steps, self.step_tokens, final_tool="finish")
            self.context.cost.parse_failures += conversation.unreadable
            if saved:
                self._vectors.append(self.embedder.encode([record.text for record in saved]))
                self.archival.extend(saved)

    # -- search --------------------------------------------------------------------------------------------------

    def archival_search(self, queries: Sequence[str]) -> list[list[MemoryItem]]:
        if not self.archival:
            return [[] for _ in queries]
        similarities = self.embedder.encode(list(queries)) @ np.concatenate(self._vectors).T
        return [[MemoryItem(self.archival[i].text, (self.archival[i].session_id,), float(row[i]))
                 for i in best_first(row, self.page_size)] for row in similarities]

    def conversation_search(self, query: str) -> list[MemoryItem]:
        """Turns sharing the most words with the query (Letta's recall search is a text match), newest first
        among equals."""
        words = set(WORD.findall(query.lower()))
        scored = [(len(words & set(WORD.findall(r.text.lower()))), n) for n, r in enumerate(self.recall)]
        best = sorted((s for s in scored if s[0] > 0), key=lambda s: (-s[0], -s[1]))[: self.page_size]
        return [MemoryItem(self.recall[n].text, (self.recall[n].session_id,), float(hits)) for hits, n in best]

    def retrieve(self, questions: Sequence[str], k: int, token_budget: int | None = None) -> list[Retrieval]:
        """Shared mode: the pinned core memory, then the k archival passages nearest each question."""
        if not questions:
            return []
        core = self.core_items()
        return [Retrieval(items=core + found[:k]) for found in self.archival_search(questions)]

    # -- answering -----------------------------------------------------------------------------------------------

    def answer(self, questions: Sequence[NativeQuestion]) -> list[NativeAnswer]:
        """Each question, with the task's instructions, goes to the answering LLM under the core memory; it may
        search (at most `answer_steps` calls, the last `send_message`), and its message is the answer."""
        if not questions:
            return []
        answerer = self.context.answerer
        if answerer is None:
            raise RuntimeError("letta answers natively with the answering model (MemoryContext.answerer)")
        core = self.core_items()
        used: list[list[MemoryItem]] = [list(core) for _ in questions]
        sent: list[str | None] = [None] * len(questions)
        conversations = [Conversation(q.turns) for q in questions]
        task_system = [q.instructions for q in questions]

        def run_tool(index: int, call: dict) -> str | None:
            arguments = call["arguments"]
            if call["name"] == "send_message":
                sent[index] = str(arguments.get("message", "")).strip()
                return None
            query = str(arguments.get("query", ""))
            if call["name"] == "archival_memory_search":
                found = self.archival_search([query])[0]
            elif call["name"] == "conversation_search":
                found = self.conversation_search(query)
            else:
                return f"Error: no tool {call['name']}."
            used[index].extend(item for item in found if item not in used[index])  # (a repeated search adds nothing)
            return "\n".join(item.text for item in found) or "No results."

        tokens = max(self.step_tokens, ANSWER_CHARS // 3 + 40, max(q.request.max_tokens for q in questions))
        run_loops(answerer, lambda i: f"{ANSWER_PROMPT}\n\n{self.core_text()}\n\n{task_system[i]}", conversations,
                  ANSWER_TOOLS, run_tool, self.answer_steps, tokens, final_tool="send_message")
        out = []
        for conversation, message, items in zip(conversations, sent, used, strict=True):
            final = conversation.steps[-1]
            if message is not None:
                final = final.model_copy(update={"text": message})
            out.append(NativeAnswer(summed_completion(final, conversation.steps), items, len(conversation.steps)))
        return out

    def size(self) -> int:
        """Archival passages plus the core lines the agent wrote."""
        return len(self.archival) + len(self.core_items())

    def session_ids(self) -> set[str]:
        held = {r.session_id for r in self.recall} | {r.session_id for r in self.archival}
        return held | {sid for lines in self.core.values() for line in lines for sid in line.session_ids}
