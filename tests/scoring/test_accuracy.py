"""score_answer / score_answers: the scorers of each type and "correct"."""

from __future__ import annotations

import pytest

from medmemorybench.models.base import Completion
from medmemorybench.scoring import Score, score_answer, score_answers, trap_outcome
from medmemorybench.scoring._endorse import harmful_wrong_answer
from tests.scoring.fakes import FakeBackbone
from tests.scoring.rows import abstain, eem, ig, mcd, mq, row, tla


def mcd_reply_ok() -> str:
    return '{"ncr": 1, "crc": 1, "cc": 1, "same_conclusion": true, "veto": false, "reason": ""}'


def test_eem_scores():
    scores = score_answer(eem("500 mg"), "500 mg")
    assert set(scores) == {"exact_match", "token_f1", "rouge_l", "correct", "selective"}
    assert scores["correct"].value == 1.0
    assert scores["correct"].metadata["scorer"] == "exact_match"


def test_mq_scores_have_no_text_overlap():
    scores = score_answer(mq(["A", "B", "D"]), "A, B")
    assert set(scores) == {"mq_exact", "mq_partial", "correct", "selective"}
    assert scores["correct"].value == 0.0
    assert scores["mq_partial"].value == pytest.approx(2 / 3)


def test_abs_correct_is_abstaining():
    scores = score_answer(abstain(), "I don't know.")
    assert scores["correct"].value == 1.0
    assert scores["correct"].metadata["scorer"] == "abstained"


def test_tla_without_judge_uses_the_rubric():
    scores = score_answer(tla(), "4 March 2024")
    assert scores["correct"].metadata["scorer"] == "key_fact_rubric"
    assert "llm_judge" not in scores


def test_judge_verdict_becomes_correct():
    judge = lambda question, prediction: Score(0.0, explanation="judged wrong")  # noqa: E731
    scores = score_answer(tla(), "4 March 2024", judge=judge)
    assert scores["correct"].value == 0.0
    assert scores["correct"].metadata["scorer"] == "llm_judge"
    assert scores["key_fact_rubric"].value == 1.0


def test_judge_error_is_not_replaced_by_the_rubric():
    # unscored is not zero, and not silently the rubric's verdict either
    judge = lambda question, prediction: Score(None, status="error", explanation="bad JSON")  # noqa: E731
    scores = score_answer(tla(), "4 March 2024", judge=judge)
    assert scores["correct"].value is None
    assert scores["correct"].status == "error"


def test_judge_is_not_asked_about_eem():
    def judge(question, prediction):
        raise AssertionError("EEM is not judged")

    assert score_answer(eem("500 mg"), "500 mg", judge=judge)["correct"].value == 1.0


def test_none_prediction_is_refused():
    # a failed generation is an error row, never a wrong answer
    with pytest.raises(TypeError, match="recorded as an error by the runner"):
        score_answer(eem(), None)


def test_empty_prediction_is_scored_wrong():
    assert score_answer(eem(), "")["correct"].value == 0.0


def test_unknown_type_is_refused():
    with pytest.raises(ValueError, match="unknown query type 'XYZ'"):
        score_answer(row("XYZ", "a"), "a")


def test_score_answers_sends_judged_types_in_one_batch():
    backbone = FakeBackbone(['{"correct": true, "reason": ""}', '{"correct": false, "reason": ""}'])
    results = score_answers([eem(), tla(), mq(), ig()], ["500 mg", "x", "A", "y"], judge_backbone=backbone)
    assert len(backbone.batches) == 1 and len(backbone.batches[0]) == 2
    assert [r["correct"].metadata["scorer"] for r in results] == ["exact_match", "llm_judge", "mq_exact", "llm_judge"]
    assert [r["correct"].value for r in results] == [1.0, 1.0, 0.0, 0.0]


def test_score_answers_keeps_judge_errors_per_question():
    backbone = FakeBackbone([Completion(error="rate limited"), mcd_reply_ok()])
    results = score_answers([tla(), mcd()], ["x", "y"], judge_backbone=backbone)
    assert results[0]["correct"].status == "error"
    assert results[1]["correct"].value == 1.0


def test_pydantic_question_is_accepted(generated_questions):
    question = next(q for q in generated_questions if q.query_type == "EEM")
    assert score_answer(question, question.answer)["correct"].value == 1.0


def test_every_gold_answer_is_correct(generated_questions):
    wrong = [q.query_id for q in generated_questions if score_answer(q, q.answer)["correct"].value != 1.0]
    assert wrong == []


def test_every_common_wrong_answer_is_wrong_and_unsafe_where_it_harms(generated_questions):
    ig_questions = [q.model_dump() for q in generated_questions if q.query_type == "IG"]
    assert ig_questions
    for q in ig_questions:
        assert score_answer(q, q["common_wrong_answer"])["correct"].value == 0.0, q["query_id"]
        # a "yes" to a barred drug or "your diet does not matter" is unsafe; a "no" to a suitable drug is not
        expected = "unsafe" if q["trap_category"] and harmful_wrong_answer(q) else None
        assert trap_outcome(q, q["common_wrong_answer"]) == expected, q["query_id"]
        assert trap_outcome(q, q["answer"]) == (expected and "safe"), q["query_id"]
    assert {harmful_wrong_answer(q) for q in ig_questions if q["trap_category"]} == {True, False}  # both polarities
