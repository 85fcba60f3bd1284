"""MemOS `general_text`: one extraction call per session under a bounded schema, dated items with their session,
cosine search, every call and parse failure counted, the response cache reused, no wall clock in any prompt."""

from __future__ import annotations

import json
import random
import re
import time

import pytest

from medmemorybench.errors import InputError
from medmemorybench.harness.cache import ResponseCache
from medmemorybench.memory import load_memory
from medmemorybench.memory.context import Embedder, MemoryContext, MemoryCost
from tests.harness.conftest import RecordingBackbone
from tests.memory.conftest import FACT_QUESTION, FACT_SESSION_ID, bound_memory, make_session

GARBLED_SESSION = "P0999-S051"


def scripted_extraction(request) -> str:  # noqa: ANN001
    """What a capable model would extract: the ceruloplasmin result from its session, a visit note elsewhere, and
    prose (not JSON) for one session."""
    text = request.messages[-1]["content"]
    if "ceruloplasmin" in text:
        items = [{"key": "ceruloplasmin", "value": "Serum ceruloplasmin was 0.12 g/L, below the normal range.",
                  "tags": ["lab", "copper"]}]
    elif "garbled" in text:
        return "The patient said many things."
    else:
        items = [{"key": "visit", "value": "A routine consultation about how the patient feels.", "tags": []}]
    return json.dumps({"memory_list": items, "summary": "a consultation"})


def memos(tmp_path, backbone, cache=None):  # noqa: ANN001, ANN201
    return bound_memory("memos", tmp_path, backbone, cache=cache)


def sessions(stream):  # noqa: ANN001, ANN201
    garbled = make_session(GARBLED_SESSION, "garbled words from me", "and from the doctor", date="2024-05-09")
    return [*stream[:3], next(s for s in stream if s.session_id == FACT_SESSION_ID), garbled]


def test_each_session_is_one_constrained_call_and_its_items_are_dated_and_keep_their_session(stream, tmp_path):
    backbone = RecordingBackbone(scripted_extraction)
    memory, cost = memos(tmp_path, backbone)
    memory.ingest(sessions(stream))
    (requests,) = backbone.batches  # a checkpoint's sessions go to the LLM as one batch
    assert len(requests) == 5 and all(r.response_schema == memory.schema for r in requests)
    assert memory.schema["properties"]["memory_list"]["maxItems"] == 6  # bounded: a small model cannot loop in it
    assert all(r.max_tokens == memory.max_tokens >= 600 for r in requests)  # room for a reply at the bounds
    assert cost.llm_calls == 5 and cost.parse_failures == 1 and memory.size() == 4  # prose stored nothing
    (fact,) = [i for i in memory.items if "ceruloplasmin" in i.text]
    assert fact.session_id == FACT_SESSION_ID and fact.text.startswith("[2024-05-02] ceruloplasmin: Serum")
    (top, *_rest), = [r.items for r in memory.retrieve([FACT_QUESTION], k=3)]
    assert top.session_ids == (FACT_SESSION_ID,) and "0.12 g/L" in top.text
    assert cost.embedding_calls == 2 and memory.session_ids() == {i.session_id for i in memory.items}


def test_no_prompt_holds_a_date_but_the_sessions_own_and_a_frozen_clock_changes_nothing(stream, tmp_path,
                                                                                       monkeypatch):
    def prompts() -> list[str]:
        backbone = RecordingBackbone(scripted_extraction)
        memos(tmp_path, backbone)[0].ingest(sessions(stream))
        return ["\n".join(m["content"] for m in r.messages) for batch in backbone.batches for r in batch]

    now = prompts()
    dates = {d for text in now for d in re.findall(r"\d{4}-\d{2}-\d{2}", text)}
    assert dates == {s.date for s in sessions(stream)}  # (the machine's clock says 2026; the sessions 2024)
    monkeypatch.setattr(time, "time", lambda: 4_102_444_800.0)  # 2100-01-01
    assert prompts() == now


def test_a_rebuild_reads_every_construction_call_from_the_cache(stream, tmp_path):
    cache = ResponseCache(tmp_path / "responses.sqlite")
    first = RecordingBackbone(scripted_extraction)
    memos(tmp_path, first, cache)[0].ingest(sessions(stream))
    again = RecordingBackbone(scripted_extraction)
    memory, cost = memos(tmp_path, again, cache)
    memory.ingest(sessions(stream))
    assert again.batches == [] and cost.llm_calls == cost.cache_hits == 5  # (a prose reply is cached too)
    assert memory.size() == 4


def test_memos_needs_an_llm_and_checks_its_options(tmp_path):
    memory = load_memory("memos")
    with pytest.raises(InputError, match="--memory memos: builds itself with an LLM"):
        memory.bind(MemoryContext(llm=None, embedder=Embedder("all-minilm-l6-v2", MemoryCost()), workdir=tmp_path,
                                  rng=random.Random(0), cost=MemoryCost()))
    with pytest.raises(InputError, match=r"--memory_args for 'memos': max_items=0 is not valid"):
        load_memory("memos", {"max_items": 0})
