"""Number-aware containment and the canonical form shared by the rule scorers."""

from medmemorybench.scoring._match import canonical, contains_term


def test_number_glued_to_unit_equals_spaced():
    assert canonical("500mg") == canonical("500 mg")


def test_dose_inside_a_larger_dose_is_not_found():
    # "25 mg" is inside "125 mg" but wrong
    assert not contains_term("take 125 mg daily", "25 mg")


def test_lab_value_inside_a_larger_value_is_not_found():
    # "7.2 %" is inside "17.2 %" but wrong
    assert not contains_term("HbA1c was 17.2 %", "7.2 %")


def test_integer_is_not_the_tail_of_a_decimal():
    # "5" ends "0.5" but 0.5 != 5
    assert not contains_term("0.5 mg", "5 mg")


def test_integer_is_not_the_head_of_a_decimal():
    # "7" starts "7.2" but 7.2 != 7
    assert not contains_term("missed 7.2 days", "7")


def test_bare_number_found_as_a_token():
    assert contains_term("I missed 7 days of metformin", "7")


def test_potassium_sign_is_kept():
    # "K" occurs in "K+" but they are different things; normalizers that drop "+" conflate them
    assert not contains_term("K+ 5.1 mmol/L", "K")
    assert contains_term("K+ 5.1 mmol/L", "K+")


def test_grade_plus_is_not_the_bare_grade():
    # "2" is inside "2+" (a proteinuria grade) but wrong
    assert not contains_term("protein 2+", "protein 2")


def test_word_is_not_found_inside_a_longer_word():
    # "insulin" starts "insulinoma"
    assert not contains_term("a small insulinoma", "insulin")


def test_trailing_decimal_zero_is_the_same_value():
    assert contains_term("HbA1c 10 %", "10.0 %")


def test_thousands_separator_is_ignored():
    assert contains_term("1,000 mg twice daily", "1000 mg")


def test_unit_spelled_out_matches_abbreviation():
    assert contains_term("500 milligrams", "500 mg")


def test_scientific_count_in_other_notation():
    assert contains_term("WBC 7.2 x 10^9/L", "7.2 ×10⁹/L")


def test_times_between_count_and_dose_is_not_scientific_notation():
    assert contains_term("take 2 x 10 mg tablets", "10 mg")


def test_slash_and_percent_survive():
    assert canonical("7.2 %") == "7.2%"
    assert contains_term("eGFR 58 mL/min/1.73m²", "58 mL/min/1.73m²")


def test_chinese_term_found_without_spaces():
    assert contains_term("您在服用二甲双胍500mg", "二甲双胍")


def test_empty_term_is_never_found():
    assert not contains_term("anything", "  ")
