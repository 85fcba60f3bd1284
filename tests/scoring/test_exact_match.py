"""EEM: normalized, number-aware containment of the gold answer or an alias."""

from medmemorybench.scoring import exact_match, gold_strings
from tests.scoring.rows import eem


def test_gold_stated_in_a_sentence_scores_one():
    score = exact_match(eem("500 mg"), "You started on 500 mg twice a day.")
    assert score.value == 1.0
    assert score.extracted == "500 mg"


def test_alias_counts():
    score = exact_match(eem("ankle swelling", aliases=["swollen ankles"]), "It gave you swollen ankles.")
    assert score.value == 1.0
    assert score.extracted == "swollen ankles"


def test_glued_unit_counts():
    assert exact_match(eem("500 mg"), "500mg").value == 1.0


def test_larger_dose_is_wrong():
    # "25 mg" is inside "125 mg" but wrong
    assert exact_match(eem("25 mg"), "125 mg").value == 0.0


def test_larger_lab_value_is_wrong():
    # "7.2 %" is inside "17.2 %" but wrong
    assert exact_match(eem("7.2 %"), "Your HbA1c was 17.2 %.").value == 0.0


def test_case_and_spacing_are_ignored():
    assert exact_match(eem("7.6 mmol/L"), "FASTING GLUCOSE  7.6 MMOL/L").value == 1.0


def test_plus_sign_is_significant():
    # "K" is not "K+": the original normalizer erased "+"
    assert exact_match(eem("K+"), "K").value == 0.0


def test_empty_prediction_scores_zero():
    assert exact_match(eem("500 mg"), "").value == 0.0


def test_gold_strings_drop_blanks_and_repeats():
    assert gold_strings(eem("500 mg", aliases=["500 mg", " ", "500mg"])) == ["500 mg", "500mg"]
