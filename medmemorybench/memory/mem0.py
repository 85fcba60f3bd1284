"""Mem0 with the real `mem0ai` package, pinned to 1.0.11: the extract -> ADD/UPDATE/DELETE/NONE pipeline the paper
ran (2.x changed the algorithm and writes the wall clock into its prompts).

Mem0 talks to an OpenAI-compatible endpoint; each patient's memory starts `medmemorybench serve`'s server on
a free loopback port over the memory LLM (so every call is cached and counted) and the shared embedder
(`/v1/embeddings`, counted). Mem0 asks only for `json_object`; a small model then loops or writes prose, so
the endpoint supplies the schema Mem0 expects for each of its two calls (`{"facts": [...]}` for extraction,
`{"memory": [...]}` for the update decision), bounded. Replies Mem0 could not use are counted as parse
failures (Mem0 itself only logs them). Storage: embedded Qdrant and the SQLite history in the patient's
working folder; telemetry off.

Dates: the extraction prompt is Mem0's `custom_fact_extraction_prompt`, set per session with that session's
date (the default prompt says "Today's date is <wall clock>"); `created_at` is the session date; every fact is
asked to begin with its date, since Mem0's update prompt shows old memories as bare text. Mem0 still stamps
`updated_at` from the clock when it updates a memory: stored, never shown to a model. An updated memory cites
the session that updated it (Mem0 replaces its metadata).
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from typing import Any

os.environ.setdefault("MEM0_TELEMETRY", "False")  # (read when mem0 is imported)

from mem0 import Memory  # noqa: E402

from medmemorybench.memory._endpoint import MODEL_NAME, PackageEndpoint, start_endpoint  # noqa: E402
from medmemorybench.memory.base import MemoryItem, Retrieval  # noqa: E402
from medmemorybench.memory.context import LLMBuiltMemory, MemoryContext, MemoryCost, MemoryLLM  # noqa: E402
from medmemorybench.models.base import ChatRequest, Completion, check_arg  # noqa: E402
from medmemorybench.render.models import ObservedSession  # noqa: E402
from medmemorybench.serve import ANY_OBJECT  # noqa: E402

FACTS_PROMPT = (
    "You are a memory for a patient's personal medical assistant. From the consultation below (user: the "
    "patient, assistant: the doctor), list the facts about this patient worth remembering: diagnoses, medicines "
    "with doses and changes, allergies, test results with values, symptoms, decisions, family history, habits. "
    "The consultation took place on {date}: begin every fact with that date. Answer in JSON as "
    '{{"facts": ["...", "..."]}}; an empty list when there is nothing to remember.'
)
FACT_CHARS = 160


def facts_schema(max_facts: int) -> dict[str, Any]:
    return {"type": "object", "additionalProperties": False, "required": ["facts"],
            "properties": {"facts": {"type": "array", "maxItems": max_facts,
                                     "items": {"type": "string", "maxLength": FACT_CHARS}}}}


def update_schema(max_actions: int) -> dict[str, Any]:
    """Mem0 1.x's update reply: an action per memory, old ones by their integer ids (its optional `old_memory` is
    left out: it only repeats text and doubles the reply)."""
    action = {"type": "object", "additionalProperties": False, "required": ["id", "text", "event"],
              "properties": {"id": {"type": "string", "maxLength": 6},
                             "text": {"type": "string", "maxLength": FACT_CHARS},
                             "event": {"enum": ["ADD", "UPDATE", "DELETE", "NONE"]}}}
    return {"type": "object", "additionalProperties": False, "required": ["memory"],
            "properties": {"memory": {"type": "array", "maxItems": max_actions, "items": action}}}


def update_actions(max_facts: int) -> int:
    """Most actions one update reply may list: one per new fact and a few for old memories it changes."""
    return max_facts + 5


def reply_token_bound(max_facts: int) -> int:
    """Tokens the longer of Mem0's two replies takes at its schema's bounds, at three characters a token, so the
    budget never cuts a reply the schema allows (cut replies are what Mem0 cannot parse)."""
    action_chars = FACT_CHARS + 50  # (id, event, keys, quotes)
    return (update_actions(max_facts) * action_chars + 40) // 3


class _SchemaForMem0(PackageEndpoint):
    """The memory LLM as the endpoint serves it to Mem0: a `json_object` request gets the schema of the Mem0 call it
    is (told apart by the prompt), and a reply that does not fit that schema is counted as a parse failure."""

    name = "mem0-endpoint"

    def __init__(self, llm: MemoryLLM, cost: MemoryCost, max_facts: int) -> None:
        super().__init__(llm, cost)
        self.schemas = {"facts": facts_schema(max_facts), "memory": update_schema(update_actions(max_facts))}

    def kind(self, request: ChatRequest) -> str:
        return "facts" if request.messages[0]["content"].startswith(FACTS_PROMPT[:40]) else "memory"

    def shape(self, request: ChatRequest, kind: str | None) -> ChatRequest:
        if request.response_schema != ANY_OBJECT:
            return request
        return request.model_copy(update={"response_schema": self.schemas[kind]})

    def fits(self, kind: str | None, completion: Completion) -> bool:
        return _fits(completion.text, kind or "memory")


def _fits(text: str, key: str) -> bool:
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        return False
    return isinstance(value, dict) and isinstance(value.get(key), list)


class Mem0Memory(LLMBuiltMemory):
    """Mem0 1.0.11 (real package) against a loopback endpoint over the memory LLM.

    Args:
        max_facts: most facts one extraction may give (a bound on the schemas the endpoint supplies).
        max_tokens: tokens Mem0 lets the LLM write per call (default: what a reply at the bounds needs,
            `reply_token_bound`).
    """

    name = "mem0"

    def __init__(self, max_facts: int = 5, max_tokens: int | None = None) -> None:
        check_arg(max_facts, "max_facts", int, lambda v: 1 <= v <= 30, "an integer from 1 to 30")
        if max_tokens is not None:
            check_arg(max_tokens, "max_tokens", int, lambda v: v >= 64, "an integer >= 64")
        super().__init__(max_facts=max_facts, max_tokens=max_tokens)
        self.max_facts, self.max_tokens = max_facts, max_tokens or reply_token_bound(max_facts)

    def bind(self, context: MemoryContext) -> None:
        super().bind(context)
        url = start_endpoint(self, _SchemaForMem0(self.llm, context.cost, self.max_facts), context.embedder)
        os.environ.setdefault("OPENAI_API_KEY", "local")  # (Mem0's embedder client insists on one; never sent out)
        self.user = context.workdir.name
        self.memory = Memory.from_config({
            "llm": {"provider": "openai", "config": {"model": MODEL_NAME, "openai_base_url": url, "api_key": "local",
                                                     "temperature": 0.0, "max_tokens": self.max_tokens}},
            "embedder": {"provider": "huggingface", "config": {"huggingface_base_url": url, "model": "minilm",
                                                               "embedding_dims": 384}},
            "vector_store": {"provider": "qdrant", "config": {"path": str(context.workdir / "qdrant"),
                                                              "collection_name": "memories",
                                                              "embedding_model_dims": 384, "on_disk": True}},
            "history_db_path": str(context.workdir / "history.sqlite"),
            "custom_fact_extraction_prompt": FACTS_PROMPT.format(date="(unknown)"),
        })

    def reset(self) -> None:
        self.memory.delete_all(user_id=self.user)

    def ingest(self, sessions: Sequence[ObservedSession]) -> None:
        """One `Memory.add` per session, in order (Mem0 adds sequentially: extraction, then the update decision)."""
        for session in sessions:
            self.memory.config.custom_fact_extraction_prompt = FACTS_PROMPT.format(date=session.date)
            messages = [{"role": "user" if turn.role == "patient" else "assistant", "content": turn.text}
                        for turn in session.turns]
            self.memory.add(messages, user_id=self.user,
                            metadata={"session_id": session.session_id, "session_date": session.date,
                                      "created_at": f"{session.date}T09:00:00+00:00"})

    def retrieve(self, questions: Sequence[str], k: int, token_budget: int | None = None) -> list[Retrieval]:
        out = []
        for question in questions:
            found = self.memory.search(question, user_id=self.user, limit=max(k, 1))["results"] if k >= 1 else []
            out.append(Retrieval(items=[MemoryItem(_card(hit), (hit["metadata"]["session_id"],), float(hit["score"]))
                                        for hit in found if hit.get("metadata", {}).get("session_id")]))
        return out

    def _all(self) -> list[dict]:
        return self.memory.get_all(user_id=self.user, limit=10_000)["results"]

    def size(self) -> int:
        return len(self._all())

    def session_ids(self) -> set[str]:
        return {hit["metadata"]["session_id"] for hit in self._all() if hit.get("metadata", {}).get("session_id")}


def _card(hit: dict) -> str:
    date = hit["metadata"].get("session_date", "")
    return f"[{date}] {hit['memory']}" if date and not hit["memory"].startswith(date) else hit["memory"]

