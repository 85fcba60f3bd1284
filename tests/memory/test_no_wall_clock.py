"""No memory that an LLM builds puts the wall clock into a prompt: every date its construction and answering
prompts hold is a session's own, and with the clock frozen in 2100 the prompts are byte-identical."""

from __future__ import annotations

import re
import time

import pytest

from medmemorybench.memory.base import NativeQuestion
from medmemorybench.memory.context import MemoryCost, MemoryLLM
from medmemorybench.models.base import ChatRequest
from tests.harness.conftest import RecordingBackbone
from tests.memory.conftest import bound_memory
from tests.memory.test_memos import sessions

NATIVE = ("amem", "memrl", "lightmem", "graphrag", "remem", "letta", "mirix")
"""The native LLM-built memories (memos has its own test; mem0 and hipporag are packages, tested apart)."""


def prompts(name: str, stream, tmp_path) -> list[str]:  # noqa: ANN001
    backbone = RecordingBackbone("The patient came for a check-up.")  # (prose: each memory's fallback paths too)
    (tmp_path / name).mkdir(parents=True)
    memory, _cost = bound_memory(name, tmp_path / name, backbone)
    memory.ingest(sessions(stream))
    if "native" in memory.answer_modes:
        memory.context.answerer = MemoryLLM(backbone, MemoryCost())
        memory.answer([NativeQuestion("What dose of metformin do I take?", ChatRequest(messages=[
            {"role": "system", "content": "Answer from the records."},
            {"role": "user", "content": "What dose of metformin do I take?"}]))])
    else:
        memory.retrieve(["What dose of metformin do I take?"], k=3)
    return ["\n".join(m["content"] for m in r.messages) for batch in backbone.batches for r in batch]


@pytest.mark.parametrize("name", NATIVE)
def test_every_date_in_a_prompt_is_a_sessions_and_a_frozen_clock_changes_nothing(name, stream, tmp_path, monkeypatch):
    now = prompts(name, stream, tmp_path)
    assert now  # (it asked its LLM something)
    dates = {d for text in now for d in re.findall(r"\d{4}-\d{2}-\d{2}", text)}
    assert dates <= {s.date for s in sessions(stream)}
    monkeypatch.setattr(time, "time", lambda: 4_102_444_800.0)  # 2100-01-01
    assert prompts(name, stream, tmp_path / "again") == now
