"""MQ: letter parsing, strict set match and partial credit."""

import pytest

from medmemorybench.scoring import mq_exact, mq_partial, parse_choices
from tests.scoring.rows import MQ_OPTIONS, mq


@pytest.mark.parametrize(("prediction", "letters"), [
    ("A, C", {"A", "C"}),
    ("A and C", {"A", "C"}),
    ("The answer is (B)", {"B"}),
    ("Answer: B, D", {"B", "D"}),
    ("**Answer:** A, B and D", {"A", "B", "D"}),
    ("Correct options: a, d", {"A", "D"}),
    ("答案是B和D", {"B", "D"}),
])
def test_common_answer_forms(prediction, letters):
    assert parse_choices(prediction, MQ_OPTIONS) == letters


def test_letter_with_option_text():
    assert parse_choices("B) pioglitazone", MQ_OPTIONS) == {"B"}


def test_letter_after_i_think():
    # "I" is a capital letter too, but not an option
    assert parse_choices("I think A", MQ_OPTIONS) == {"A"}


def test_letter_inside_a_word_is_ignored():
    # "Avoid" starts with A
    assert parse_choices("Avoid lisinopril.", MQ_OPTIONS) == set()


def test_letters_inside_lab_and_vitamin_names_are_ignored():
    # "HbA1c" holds an A and "B12" a B
    assert parse_choices("Check HbA1c and B12 first; then C.", MQ_OPTIONS) == {"C"}


def test_restated_options_are_ignored():
    # a model that repeats all four options before answering would otherwise choose all four
    prediction = "A. telmisartan\nB. pioglitazone\nC. lisinopril\nD. ezetimibe\nAnswer: B"
    assert parse_choices(prediction, MQ_OPTIONS) == {"B"}


def test_restated_options_then_free_text_choice():
    prediction = "Options:\nA) telmisartan\nB) pioglitazone\nC) lisinopril\nD) ezetimibe\nI would choose A and D."
    assert parse_choices(prediction, MQ_OPTIONS) == {"A", "D"}


def test_article_a_is_not_a_choice():
    # "A good choice" starts with the article A
    assert parse_choices("A good choice would be B.", MQ_OPTIONS) == {"B"}


def test_article_a_after_marker_is_not_a_choice():
    assert parse_choices("The answer is a combination of B and D", MQ_OPTIONS) == {"B", "D"}


def test_option_text_letter_is_not_a_choice():
    # "vitamin D" as an option body must not add D
    options = ["A. vitamin D", "B. calcium", "C. alendronate", "D. raloxifene"]
    assert parse_choices("A) vitamin D", options) == {"A"}


def test_letter_after_avoid_is_excluded():
    assert parse_choices("Avoid C; the safe ones are A, B and D.", MQ_OPTIONS) == {"A", "B", "D"}


def test_empty_prediction_chooses_nothing():
    assert parse_choices("", MQ_OPTIONS) == set()


def test_letters_outside_the_options_are_dropped():
    assert parse_choices("Answer: D", MQ_OPTIONS[:3]) == set()


def test_exact_set_scores_one():
    score = mq_exact(mq(["A", "B", "D"]), "Answer: A, B, D")
    assert score.value == 1.0
    assert score.extracted == "A, B, D"


def test_subset_is_wrong_for_exact_match():
    assert mq_exact(mq(["A", "B", "D"]), "Answer: A, B").value == 0.0


def test_partial_credit_is_jaccard():
    # {A, B, C} vs {A, B, D}: 2 shared of 4 in the union
    assert mq_partial(mq(["A", "B", "D"]), "A, B, C").value == pytest.approx(0.5)


def test_partial_credit_of_empty_answer_is_zero():
    assert mq_partial(mq(["A"]), "").value == 0.0
