"""Conflicting candidates: a single-valued gold is not stated by an answer that offers several values."""

import pytest

from medmemorybench.scoring import exact_match, key_fact_rubric, score_answer
from medmemorybench.scoring._candidates import conflicting_candidates, gold_value
from tests.scoring.rows import eem, row, tla


def sua(answer: str) -> dict:
    return row("SUA", answer, answer_aliases=[answer.replace(" ", "")], key_facts=[answer],
               question="What is my current dose of metformin?")


@pytest.mark.parametrize("answer", ["2024-03-05 or 2024-04-10", "Either 5 March 2024 or 10 April 2024.",
                                    "2024-03-05: started metformin. 2024-04-10: dose raised."])
def test_tla_date_with_another_date_is_wrong(answer):
    score = key_fact_rubric(tla("2024-03-05"), answer)
    assert score.value == 0.0
    assert score.metadata["conflicting"] == ["2024-04-10"]


@pytest.mark.parametrize("answer", ["on 5 March 2024", "2024-03-05 (5 March 2024)", "March 5th", "2024-03-05"])
def test_tla_date_in_one_or_several_forms_is_right(answer):
    assert key_fact_rubric(tla("2024-03-05"), answer).value == 1.0


def test_dates_the_question_names_are_not_candidates():
    question = {**tla("2024-03-05"), "question": "After the visit on 2024-02-20, when did I start metformin?"}
    assert key_fact_rubric(question, "After 2024-02-20, you started on 2024-03-05.").value == 1.0


def test_dose_with_another_dose_is_wrong():
    score = score_answer(eem("500 mg"), "500 mg, later 1000 mg")
    assert score["correct"].value == 0.0
    assert score["correct"].metadata["conflicting"] == ["1000 mg"]


def test_sua_dose_with_another_dose_is_wrong():
    score = key_fact_rubric(sua("500 mg"), "You take 500mg; before that it was 250 mg.")
    assert score.value == 0.0
    assert score.metadata["conflicting"] == ["250 mg"]


def test_lab_value_with_another_value_is_wrong():
    assert exact_match(eem("7.2 %"), "Your HbA1c was 7.2% (previously 8.1 %).").value == 0.0


def test_value_in_another_unit_is_not_a_candidate():
    # the same dose restated, a glucose in mg/dL, a blood-pressure pair: one value of the gold's kind
    assert exact_match(eem("500 mg"), "500 milligrams (500 mg) twice daily").value == 1.0
    assert exact_match(eem("500 mg"), "500 mg; your glucose was 180 mg/dL").value == 1.0
    assert exact_match(eem("70 mmHg"), "It was 128/70 mmHg.").value == 1.0


def test_multi_valued_gold_is_not_checked():
    # a TLA event names a dose change: "from 500 to 1000 mg" is the answer, not a conflict
    question = row("TLA", "increase metformin from 500 to 1000 mg twice daily (titration)",
                   key_facts=["metformin", "1000 mg"])
    assert key_fact_rubric(question, "Metformin went up from 500 mg to 1000 mg twice daily.").value == 1.0


def test_gold_value_parses_one_number_with_its_unit():
    assert gold_value("94 mL/min/1.73m²") == (94.0, "ml/min/1.73 m2")
    assert gold_value("start metformin 500 mg") is None
    assert gold_value("$80") is None


def test_conflicts_are_reported_canonically():
    assert conflicting_candidates("7.2 ×10⁹/L vs 6.1 x 10^9/L", ["7.2 ×10⁹/L"]) == ["6.1 x109/l"]
    assert conflicting_candidates("on 10 April", ["2024-03-05"]) == ["????-04-10"]
