"""LightMem: topic segments from adjacent-turn similarity with the structured speakers, a short-term buffer
extracted at its token threshold, timestamped facts, and a sleep-time update that deletes or rewrites a
superseded fact (its provenance joined)."""

from __future__ import annotations

import json

import pytest

from medmemorybench.errors import InputError
from medmemorybench.memory import load_memory
from medmemorybench.memory.lightmem import EXTRACT_PROMPT
from tests.harness.conftest import RecordingBackbone
from tests.memory.conftest import bound_memory, make_session

DOSE_500 = make_session("P0999-S001", "My metformin is 500 mg twice a day.", "Yes, keep metformin at 500 mg.",
                        date="2024-03-04")
DOSE_1000 = make_session("P0999-S002", "The sugar is still high on metformin.", "Let's raise metformin to 1000 mg.",
                         date="2024-04-08")
TWO_TOPICS = make_session("P0999-S003", "My metformin dose makes my stomach upset.",
                          "Take metformin with food to ease it.", "We are going to Spain for a beach holiday in June.",
                          "Enjoy the trip and the sunshine.", date="2024-05-06")


def scripted(action: str):  # noqa: ANN201
    """Extraction: one fact per part, naming the dose said in it; update: `action` on the first earlier fact."""
    def reply(request) -> str:  # noqa: ANN001
        text = request.messages[-1]["content"]
        if request.messages[0]["content"] == EXTRACT_PROMPT:
            parts = text.count("\n[") + 1
            facts = [{"part": n, "fact": "Metformin 1000 mg twice daily." if "1000 mg" in text else
                      "Metformin 500 mg twice daily."} for n in range(min(parts, 1))]
            return json.dumps({"facts": facts})
        return json.dumps({"decisions": [{"index": 0, "action": action,
                                          "text": "Metformin raised from 500 to 1000 mg twice daily."}]})
    return reply


def lightmem(tmp_path, backbone, **options):  # noqa: ANN001, ANN201
    return bound_memory("lightmem", tmp_path, backbone, **options)


def test_a_change_of_topic_starts_a_segment_and_speakers_come_from_the_turns(tmp_path):
    memory, _ = lightmem(tmp_path, RecordingBackbone(scripted("ignore")))
    segments = memory.segments(TWO_TOPICS)
    assert len(segments) == 2 and segments[1].lines[0].startswith("Patient: We are going to Spain")
    assert segments[0].lines == ["Patient: My metformin dose makes my stomach upset.",
                                 "Doctor: Take metformin with food to ease it."]


def test_the_short_term_buffer_is_extracted_at_its_threshold_and_at_the_checkpoint(tmp_path):
    backbone = RecordingBackbone(scripted("ignore"))
    memory, cost = lightmem(tmp_path, backbone, stm_tokens=32, consolidate=False)
    memory.ingest([DOSE_500, TWO_TOPICS])
    assert len(backbone.batches) == 1 and len(backbone.batches[0]) > 1  # several extractions, one batch
    big, big_cost = lightmem(tmp_path, RecordingBackbone(scripted("ignore")), stm_tokens=10_000, consolidate=False)
    big.ingest([DOSE_500, TWO_TOPICS])
    assert big_cost.llm_calls == 1 < cost.llm_calls
    (retrieval,) = big.retrieve(["What dose of metformin?"], k=1)
    assert retrieval.items[0].text == "2024-03-04 Monday: Metformin 500 mg twice daily."


def test_sleep_time_update_deletes_a_superseded_dose(tmp_path):
    memory, cost = lightmem(tmp_path, RecordingBackbone(scripted("delete")))
    memory.ingest([DOSE_500])
    memory.ingest([DOSE_1000])
    assert [f.text for f in memory.facts] == ["Metformin 1000 mg twice daily."]
    assert memory.updates["delete"] == 1 and memory.session_ids() == {"P0999-S002"}


def test_sleep_time_update_rewrites_a_fact_and_joins_its_sessions(tmp_path):
    memory, _ = lightmem(tmp_path, RecordingBackbone(scripted("update")))
    memory.ingest([DOSE_500])
    memory.ingest([DOSE_1000])
    rewritten = memory.facts[0]
    assert rewritten.text == "Metformin raised from 500 to 1000 mg twice daily." and rewritten.date == "2024-04-08"
    assert rewritten.session_ids == ("P0999-S001", "P0999-S002")
    (retrieval,) = memory.retrieve(["How was my metformin changed?"], k=1)
    assert retrieval.items[0].session_ids == ("P0999-S001", "P0999-S002")


def test_unparseable_replies_store_nothing_and_are_counted(tmp_path):
    memory, cost = lightmem(tmp_path, RecordingBackbone("prose"))
    memory.ingest([DOSE_500, DOSE_1000])
    assert memory.size() == 0 and cost.parse_failures == cost.llm_calls == 1


def test_options_are_checked():
    with pytest.raises(InputError, match="stm_tokens=1 is not valid"):
        load_memory("lightmem", {"stm_tokens": 1})
    with pytest.raises(InputError, match="consolidate must be true or false"):
        load_memory("lightmem", {"consolidate": "yes"})
