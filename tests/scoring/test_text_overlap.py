"""Tokenizer, token F1 and ROUGE-L."""

import pytest

from medmemorybench.scoring import rouge_l, token_f1, tokenize
from medmemorybench.scoring.text_overlap import lcs_length
from tests.scoring.rows import abstain, eem


def test_english_splits_on_words_and_lowercases():
    assert tokenize("Start Metformin, 500 mg!") == ["start", "metformin", "500", "mg"]


def test_decimal_stays_one_token():
    # "7.2" split in two would match "7" and "2" elsewhere
    assert tokenize("HbA1c 7.2 %") == ["hba1c", "7.2"]


def test_chinese_splits_into_characters():
    assert tokenize("二甲双胍500mg") == ["二", "甲", "双", "胍", "500mg"]


def test_empty_text_has_no_tokens():
    assert tokenize("") == []


def test_identical_answer_has_f1_one():
    assert token_f1(eem("500 mg"), "500 mg").value == 1.0


def test_f1_of_longer_answer():
    # precision 2/4, recall 2/2
    assert token_f1(eem("500 mg"), "500 mg twice daily").value == pytest.approx(2 / 3)


def test_f1_of_empty_prediction_is_zero():
    assert token_f1(eem("500 mg"), "").value == 0.0


def test_f1_takes_the_best_alias():
    score = token_f1(abstain(), "I don't know")
    assert score.value == 1.0
    assert score.metadata["gold"] == "I don't know"


def test_rouge_l_uses_the_longest_common_subsequence():
    # LCS "the cat on the mat" = 5 of 6 tokens on each side
    question = eem("the cat is on the mat")
    assert rouge_l(question, "the cat sat on the mat").value == pytest.approx(5 / 6)


def test_rouge_l_is_order_sensitive_where_f1_is_not():
    question = eem("metformin then sitagliptin")
    assert token_f1(question, "sitagliptin then metformin").value == 1.0
    assert rouge_l(question, "sitagliptin then metformin").value < 1.0


def test_rouge_l_of_empty_prediction_is_zero():
    assert rouge_l(eem("500 mg"), "").value == 0.0


def test_lcs_length():
    assert lcs_length(list("ABCBDAB"), list("BDCABA")) == 4


def test_missing_gold_is_an_error():
    score = token_f1(eem(""), "anything")
    assert score.value is None
    assert score.status == "error"
