"""Abstention detection and the ABS scorer."""

import pytest

from medmemorybench.scoring import abstained, is_abstention
from tests.scoring.rows import abstain


@pytest.mark.parametrize("prediction", [
    "That is not in my records of your consultations.",
    "It isn't in my records.",
    "I don't know.",
    "I do not have that information.",
    "There is no information about that.",
    "It was never mentioned in our conversations.",
    "I cannot find any record of it.",
    "No record of that test.",
    "Your kidney function was not measured.",
    "I'm not sure.",
    "您的记录中没有这个信息。",
])
def test_abstention_phrases(prediction):
    assert is_abstention(prediction)


@pytest.mark.parametrize("prediction", [
    "You take 500 mg of metformin twice daily.",
    "No, duloxetine is not suitable because of your sumatriptan.",
    "Your last HbA1c was 7.2 %.",
])
def test_confident_answers_are_not_abstentions(prediction):
    assert not is_abstention(prediction)


def test_empty_answer_is_not_an_abstention():
    # an empty answer says nothing; abstaining is saying the records do not hold it
    assert not is_abstention("")
    assert not is_abstention(None)


def test_abs_scorer_rewards_abstaining():
    score = abstained(abstain(), "Sorry, that is not in my records.")
    assert score.value == 1.0
    assert score.extracted == "not in my records"


def test_abs_scorer_penalizes_a_made_up_value():
    assert abstained(abstain(), "Your memory test score was 26 points.").value == 0.0
