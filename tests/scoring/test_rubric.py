"""The deterministic key-fact rubric for TLA, SUA, IG and MCD."""

from medmemorybench.scoring import is_fact_stated, key_fact_rubric
from tests.scoring.rows import ig, ig_habit, ig_suitable, mcd, row, tla


def test_date_in_another_format_scores_one():
    assert key_fact_rubric(tla("2024-03-04"), "You began on March 4th, 2024.").value == 1.0


def test_wrong_date_scores_zero():
    score = key_fact_rubric(tla("2024-03-04"), "You began on 14 March 2024.")
    assert score.value == 0.0
    assert score.metadata["missing"] == ["2024-03-04"]


def test_every_fact_needed():
    question = row("TLA", "start metformin 500 mg twice daily", key_facts=["metformin", "500 mg"])
    score = key_fact_rubric(question, "You started metformin.")
    assert score.value == 0.0
    assert score.metadata["coverage"] == 0.5
    assert score.metadata["missing"] == ["500 mg"]


def test_all_facts_stated_scores_one():
    question = row("TLA", "start metformin 500 mg twice daily", key_facts=["metformin", "500 mg"])
    assert key_fact_rubric(question, "Metformin was started at 500mg.").value == 1.0


def test_sua_earlier_larger_value_is_not_the_latest():
    # "8.0 %" is not inside "18.0 %"
    question = row("SUA", "8.0 %", answer_aliases=["8.0%"], key_facts=["8.0 %"])
    assert key_fact_rubric(question, "It is 18.0 %.").value == 0.0


def test_ig_refusal_with_the_reason_scores_one():
    score = key_fact_rubric(ig(), "No - it interacts with the sumatriptan you already take.")
    assert score.value == 1.0
    assert score.metadata["endorsed"] is False


def test_ig_endorsement_scores_zero_even_with_the_fact():
    # names the trap detail but still says yes
    score = key_fact_rubric(ig(), "Yes, duloxetine is fine alongside your sumatriptan.")
    assert score.value == 0.0
    assert score.metadata["endorsed"] is True


def test_ig_recommendation_without_yes_is_an_endorsement():
    score = key_fact_rubric(ig(), "Duloxetine would be a reasonable option; keep taking sumatriptan.")
    assert score.metadata["endorsed"] is True


def test_ig_yes_gold_scores_the_gold_one():
    assert key_fact_rubric(ig_suitable(), ig_suitable()["answer"]).value == 1.0


def test_ig_yes_gold_refusal_is_an_endorsement():
    # the wrong answer is "No": a refusal naming the trap detail is still the wrong side
    for answer in ("No, that would not be suitable.",
                   "Amoxicillin would not be a good idea, given your allergy to cefalexin.",
                   "I wouldn't recommend amoxicillin with your allergy to cefalexin."):
        score = key_fact_rubric(ig_suitable(), answer)
        assert score.value == 0.0, answer
        assert score.metadata["endorsed"] is True, answer


def test_ig_yes_gold_without_opening_is_no_refusal():
    # the negation belongs to the allergy, not to the drug
    answer = "Amoxicillin would be suitable for you: your allergy to cefalexin does not rule it out."
    assert key_fact_rubric(ig_suitable(), answer).value == 1.0


def test_ig_restart_wrong_answer_is_about_the_drug():
    # "Yes, you can go back on X": the subject is X, not "you"
    question = row("IG", "No. metformin was stopped: it upset your stomach.", key_facts=["upset your stomach"],
                   common_wrong_answer="Yes, you can go back on metformin.")
    endorsing = "Metformin would be a good option again; it upset your stomach before."
    assert key_fact_rubric(question, endorsing).value == 0.0
    assert key_fact_rubric(question, "You should ask about another option; metformin upset your stomach.").value == 1.0


def test_ig_habit_paraphrase_of_long_fact_counts():
    answer = ("Yes. Your intermittent fasting, skipping breakfast and lunch and eating one meal in the evening, "
              "works against the advice.")
    assert key_fact_rubric(ig_habit(), answer).value == 1.0


def test_ig_habit_generic_advice_scores_zero():
    assert key_fact_rubric(ig_habit(), "Yes, eat three regular meals a day.").value == 0.0


def test_ig_habit_dismissal_is_an_endorsement():
    score = key_fact_rubric(ig_habit(), "Your habits are fine.")
    assert score.metadata["endorsed"] is True


def test_long_fact_needs_its_numbers():
    fact = "I can only spend 25 dollars a month on all my medicines together"
    assert not is_fact_stated("You can only spend 40 dollars a month on all your medicines together", fact)


def test_mcd_coverage_counts_facts_found():
    score = key_fact_rubric(mcd(), "You missed 7 days of metformin, so your HbA1c rose.")
    assert score.value == 0.0
    assert score.metadata["coverage"] == 0.5


def test_without_key_facts_the_answer_is_checked():
    question = row("SUA", "sitagliptin")
    assert key_fact_rubric(question, "You now take sitagliptin.").value == 1.0


def test_question_without_facts_or_answer_is_an_error():
    score = key_fact_rubric(row("SUA", ""), "anything")
    assert score.value is None
    assert score.status == "error"


def test_empty_prediction_scores_zero():
    assert key_fact_rubric(tla(), "").value == 0.0
