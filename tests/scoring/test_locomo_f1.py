"""LoCoMo's F1 per category, against numbers worked out by hand from snap-research/LoCoMo's
`task_eval/evaluation.py` (normalize_answer, Porter stems, f1_score, f1, eval_question_answering)."""

from __future__ import annotations

import pytest

from medmemorybench.scoring.locomo import category_of, locomo_f1, normalize_answer, not_mentioned_first, stems
from medmemorybench.scoring.text_overlap import token_f1


def question(category: int, answer: str, query_id: str = "P0001-Q0002", wrong: str | None = "pottery") -> dict:
    return {"query_id": query_id, "template": f"locomo.category_{category}.x", "answer": answer,
            "common_wrong_answer": wrong, "query_type": "EEM"}


def test_normalisation_drops_commas_punctuation_articles_and_the_word_and():
    assert normalize_answer("The cat, a dog AND an owl!") == "cat dog owl"


def test_stemming_makes_word_forms_match_where_our_token_f1_does_not():
    # "running dogs" -> run, dog; "dog runs" -> dog, run: every stem shared
    assert locomo_f1(question(4, "dog runs"), "The running dogs").value == 1.0
    assert token_f1(question(4, "dog runs"), "The running dogs").value == 0.0


def test_partial_overlap_is_rounded_to_three_decimals():
    # gold "Likely yes" -> like, ye; reply "yes" -> ye: P = 1, R = 1/2, F1 = 2/3 -> 0.667 (after the ';' cut)
    assert locomo_f1(question(3, "Likely yes; she said she wants to"), "yes").value == 0.667


def test_category_1_is_the_mean_over_gold_parts_of_the_best_reply_part():
    gold = "hiking, painting, swimming"
    # one reply part (no comma): hiking and painting each F1 2/3 (reply stems paint, hike), swimming 0: 4/9
    assert locomo_f1(question(1, gold), "painting and hiking").value == 0.444
    # two reply parts: hiking 1, painting 1, swimming 0: 2/3
    assert locomo_f1(question(1, gold), "painting, hiking").value == 0.667


def test_other_categories_do_not_split_at_commas():
    # category 4: commas dropped, one bag of stems: may, 7, 2023 both sides
    assert locomo_f1(question(2, "7 May 2023"), "May 7, 2023").value == 1.0
    assert locomo_f1(question(4, "hiking, painting, swimming"), "painting and hiking").value == 0.8


def test_category_3_reads_the_gold_up_to_its_first_semicolon():
    assert locomo_f1(question(3, "Sweden; her home country"), "Sweden").value == 1.0


def test_non_ascii_punctuation_is_kept_as_theirs_keeps_it():
    # (string.punctuation is ASCII: the curly apostrophe stays, and Porter strips the final s to 'café’')
    assert stems("café’s") == ["café’"]
    assert locomo_f1(question(4, "café"), "café’s").value == 0.0


def test_nothing_shared_is_zero_even_when_both_sides_are_empty():
    assert locomo_f1(question(4, ""), "").value == 0.0
    assert locomo_f1(question(4, "Paris"), "").value == 0.0


@pytest.mark.parametrize(("reply", "query_id", "value"), [
    ("Not mentioned in the conversation", "P0001-Q0002", 1.0),
    ("No information available.", "P0001-Q0002", 1.0),
    ("She never said", "P0001-Q0002", 0.0),
    ("(a)", "P0001-Q0002", 1.0),   # even id: (a) is "Not mentioned"
    ("b", "P0001-Q0002", 0.0),     # (b) is the adversarial answer
    ("(b)", "P0001-Q0003", 1.0),   # odd id: the options are swapped
    ("pottery", "P0001-Q0002", 0.0),
])
def test_category_5_is_one_when_the_reply_says_it_is_not_mentioned(reply, query_id, value):
    assert locomo_f1(question(5, "Not mentioned in the conversation", query_id), reply).value == value


def test_the_gold_of_category_5_is_not_read():
    assert locomo_f1(question(5, "anything at all"), "not mentioned").value == 1.0


def test_option_order_is_the_rule_the_prompt_uses():
    assert not_mentioned_first({"query_id": "P0001-Q0010"}) and not not_mentioned_first({"query_id": "P0001-Q0011"})


def test_a_question_that_is_not_locomos_is_an_error_not_a_zero():
    score = locomo_f1({"query_id": "P0001-C010-EEM1", "template": "eem.dose", "answer": "5 mg"}, "5 mg")
    assert score.value is None and score.status == "error" and "not a LoCoMo question" in score.explanation
    assert category_of({"template": "locomo.category_4.single_hop"}) == 4
