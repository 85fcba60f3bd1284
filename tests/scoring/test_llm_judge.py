"""The LLM judge through a fake Backbone that returns canned replies."""

from __future__ import annotations

import hashlib
import json

import pytest

from medmemorybench.models.base import Completion
from medmemorybench.resources import prompts_dir
from medmemorybench.scoring import LLMJudge, judge_many
from tests.scoring.fakes import FakeBackbone
from tests.scoring.rows import eem, ig, mcd, tla


def mcd_reply(**overrides) -> str:
    verdict = {"ncr": 1.0, "crc": 0.8, "cc": 0.7, "same_conclusion": True, "veto": False, "reason": "complete"}
    return json.dumps({**verdict, **overrides})


def test_correct_verdict_scores_one():
    [score] = judge_many([tla()], ["4 March 2024"], FakeBackbone(['{"correct": true, "reason": "same day"}']))
    assert score.value == 1.0
    assert score.explanation == "same day"


def test_incorrect_verdict_scores_zero():
    [score] = judge_many([tla()], ["5 March"], FakeBackbone(['{"correct": false, "reason": "other day"}']))
    assert score.value == 0.0


def test_batch_is_one_generate_call_at_temperature_zero():
    backbone = FakeBackbone(['{"correct": true, "reason": ""}', mcd_reply(), '{"correct": false, "reason": ""}'])
    judge_many([tla(), mcd(), ig()], ["a", "b", "c"], backbone)
    assert len(backbone.batches) == 1
    assert [r.temperature for r in backbone.batches[0]] == [0.0, 0.0, 0.0]


def test_metadata_records_judge_model_and_template_hash():
    [score] = judge_many([tla()], ["x"], FakeBackbone(['{"correct": true, "reason": ""}']))
    text = (prompts_dir() / "judge" / "rubric.jinja").read_text(encoding="utf-8")
    assert score.metadata["judge_model"] == "fake-judge-1"
    assert score.metadata["judge_template"] == "judge/rubric.jinja"
    assert score.metadata["judge_template_sha256"] == hashlib.sha256(text.encode("utf-8")).hexdigest()


def test_prompt_holds_answer_facts_and_wrong_answer():
    backbone = FakeBackbone(['{"correct": false, "reason": ""}'])
    judge_many([ig()], ["Yes, take it."], backbone)
    prompt = backbone.batches[0][0].messages[0]["content"]
    assert "Yes, take it." in prompt and "sumatriptan" in prompt and ig()["common_wrong_answer"] in prompt


def test_mcd_prompt_lists_the_chain_with_sessions():
    backbone = FakeBackbone([mcd_reply()])
    judge_many([mcd()], ["because"], backbone)
    prompt = backbone.batches[0][0].messages[0]["content"]
    assert "2. missed 7 days of metformin [P0001-S066]" in prompt


def test_mcd_prompt_names_the_drugs_taken_apart_from_what_shows_a_step():
    row = mcd()
    row["reasoning_chain"][-1]["facts"] = [{"text": "HbA1c 8.7 %", "group": ""},
                                           {"text": "sitagliptin", "group": "rival"},
                                           {"text": "HbA1c 7.1 %", "group": "record"},
                                           {"text": "metformin", "group": "taken"},
                                           {"text": "atorvastatin", "group": "taken"}]
    backbone = FakeBackbone([mcd_reply()])
    judge_many([row], ["because"], backbone)
    prompt = backbone.batches[0][0].messages[0]["content"]
    assert "3. HbA1c 8.7 % [P0001-S068] — shown by any of: HbA1c 8.7 % (not given" in prompt  # (no record, no taken)
    assert "Every drug the patient had taken by then: metformin; atorvastatin\n" in prompt
    assert "or that is not among the drugs taken" in prompt
    judge_many([mcd()], ["because"], plain := FakeBackbone([mcd_reply()]))
    assert "taken by then" not in plain.batches[0][0].messages[0]["content"]


def test_fenced_json_with_prose_is_read():
    reply = 'Here is my verdict:\n```json\n{"correct": true, "reason": "ok"}\n```'
    [score] = judge_many([tla()], ["x"], FakeBackbone([reply]))
    assert score.value == 1.0


def test_unparseable_reply_is_an_error_not_a_zero():
    [score] = judge_many([tla()], ["x"], FakeBackbone(["The answer looks right to me."]))
    assert score.value is None
    assert score.status == "error"
    assert score.metadata["judge_reply"] == "The answer looks right to me."


def test_verdict_without_boolean_is_an_error():
    [score] = judge_many([tla()], ["x"], FakeBackbone(['{"correct": "maybe", "reason": ""}']))
    assert score.status == "error"


def test_backbone_error_is_an_error_not_a_zero():
    [score] = judge_many([tla()], ["x"], FakeBackbone([Completion(error="timeout after 3 retries")]))
    assert score.value is None
    assert score.status == "error"
    assert "timeout" in score.explanation


def test_mcd_passing_all_thresholds_is_correct():
    [score] = judge_many([mcd()], ["x"], FakeBackbone([mcd_reply()]))
    assert score.value == 1.0
    assert score.metadata["ncr"] == 1.0 and score.metadata["failed"] == []


@pytest.mark.parametrize(("overrides", "failure"), [
    ({"ncr": 0.7}, "ncr < 0.75"),
    ({"crc": 0.5}, "crc < 0.75"),
    ({"cc": 0.5}, "cc < 0.7"),
    ({"same_conclusion": False}, "different conclusion"),
    ({"veto": True}, "veto"),
    ({"crc": 0.4}, "crc < 0.5"),
])
def test_mcd_any_failed_condition_makes_it_wrong(overrides, failure):
    [score] = judge_many([mcd()], ["x"], FakeBackbone([mcd_reply(**overrides)]))
    assert score.value == 0.0
    assert failure in score.metadata["failed"]


def test_mcd_cc_off_the_scale_is_an_error():
    # CC has five levels; 0.8 is none of them
    [score] = judge_many([mcd()], ["x"], FakeBackbone([mcd_reply(cc=0.8)]))
    assert score.status == "error"


def test_mcd_missing_field_is_an_error():
    reply = json.dumps({"ncr": 1, "crc": 1, "cc": 1, "veto": False})
    [score] = judge_many([mcd()], ["x"], FakeBackbone([reply]))
    assert score.status == "error"
    assert "same_conclusion" in score.explanation


def test_unjudged_type_is_rejected():
    with pytest.raises(ValueError, match="not judged"):
        judge_many([eem()], ["500 mg"], FakeBackbone([]))


def test_mismatched_lengths_are_rejected():
    with pytest.raises(ValueError, match="2 questions but 1 predictions"):
        judge_many([tla(), tla()], ["x"], FakeBackbone([]))


def test_backbone_returning_too_few_completions_is_an_error():
    with pytest.raises(RuntimeError, match="returned 0 completions for 1 requests"):
        judge_many([tla()], ["x"], FakeBackbone([]))


def test_judge_object_is_callable_and_reports_identity():
    judge = LLMJudge(FakeBackbone(['{"correct": true, "reason": ""}']))
    assert judge(tla(), "4 March").value == 1.0
    assert judge.identity()["model"] == "fake-judge-1"
    assert set(judge.identity()["templates"]) == {"judge/rubric.jinja", "judge/mcd.jinja"}
