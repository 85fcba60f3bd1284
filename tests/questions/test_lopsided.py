"""Drugs whose asked yes/no answers lean over the cohort further than a fair coin's are evened
(`CohortPrior.lopsided`): in 1,000 patients the other patients' answer for a drug otherwise predicts this one's
(fluticasone nasal spray "no" 401 times in 401); and the yes and no answers of all drugs together, where each
patient's small leads add up one way over the cohort (`CohortPrior.leaning`)."""

from __future__ import annotations

from collections import Counter

from medmemorybench.questions.cohort import COHORT_LEAD, CohortPrior
from medmemorybench.questions.models import GoldFact, Question


def _ig(patient: int, drug: str, side: str, n: int = 1, trap: str | None = None) -> Question:
    return Question(query_id=f"P{patient:04d}-C10-IG{n}-{drug}", persona_id=f"P{patient:04d}", checkpoint=10,
                    query_type="IG", question=f"May I take {drug}?", answer=side, subject=drug,
                    facts=[GoldFact(text=side, kind="polarity")], trap_category=trap, template="ig.take_now")


def _kept(questions: list[Question], dropped: set[str]) -> Counter:
    return Counter((q.subject, q.facts[0].text) for q in questions if q.query_id not in dropped)


def test_a_drug_always_answered_one_way_is_left_out_and_a_fair_one_kept():
    always_no = [_ig(p, "fluticasone", "no") for p in range(12)]
    fair = [_ig(p, "clarithromycin", "yes" if p % 2 else "no") for p in range(30)]
    few = [_ig(p, "naproxen", "no") for p in range(5)]  # (5 of 5 is what a fair coin gives 1 time in 16)
    questions = always_no + fair + few
    kept = _kept(questions, CohortPrior(seed=0).lopsided(questions))
    assert kept[("fluticasone", "no")] == 0
    assert kept[("clarithromycin", "yes")] == kept[("clarithromycin", "no")] == 15
    assert kept[("naproxen", "no")] == 5
    # a drug whose rarer answer is under 15 % loses both answers' questions (its 1 "yes" would lean the other way)
    nearly = [_ig(p, "ibuprofen", "no") for p in range(40)] + [_ig(40, "ibuprofen", "yes")]
    assert not _kept(nearly, CohortPrior(seed=0).lopsided(nearly))


def test_a_leaning_drug_is_evened_by_seeded_coins_per_patient():
    questions = [_ig(p, "omeprazole", "no") for p in range(300)] + \
                [_ig(p, "omeprazole", "yes") for p in range(300, 400)] + \
                [_ig(p, "omeprazole", "no", n=2) for p in range(300)]  # (a patient's second question goes with it)
    dropped = CohortPrior(seed=0).lopsided(questions)
    kept = _kept(questions, dropped)
    assert kept[("omeprazole", "yes")] == 100
    patients_kept = {q.persona_id for q in questions[:300] if q.query_id not in dropped}
    assert 70 <= len(patients_kept) <= 130  # (about 100 of 300, by coin)
    assert {q.persona_id for q in questions[400:] if q.query_id not in dropped} == patients_kept
    assert CohortPrior(seed=0).lopsided(questions) == dropped  # (seeded)
    again = CohortPrior(seed=0)
    again.draw = 1
    assert again.lopsided(questions) != dropped  # (another draw, other coins)


def test_the_coins_follow_the_drug_key_not_its_name_in_one_language():
    english = [_ig(p, "omeprazole", "no") for p in range(60)] + [_ig(p, "omeprazole", "yes") for p in range(60, 80)]
    chinese = [q.model_copy(update={"subject": "奥美拉唑"}) for q in english]
    keys = {"omeprazole": "omeprazole", "奥美拉唑": "omeprazole"}
    assert CohortPrior(seed=0).lopsided(english, keys.__getitem__) == \
        CohortPrior(seed=0).lopsided(chinese, keys.__getitem__)


def test_a_patients_only_question_on_a_trap_category_stays():
    questions = [_ig(p, "ibuprofen", "no", trap="allergy" if p == 0 else None) for p in range(20)]
    dropped = CohortPrior(seed=0).lopsided(questions)
    assert {q.query_id for q in questions} - dropped == {questions[0].query_id}


def _leaning_cohort() -> list[Question]:
    """20 patients who each lead "no" by two (one yes, three no, on drugs no other question names), and one whose
    "yes" leads."""
    questions = [_ig(p, f"drug{p}-{n}", "yes" if n == 0 else "no") for p in range(20) for n in range(4)]
    return questions + [_ig(99, f"drug99-{n}", "no" if n == 0 else "yes") for n in range(4)]


def test_a_cohort_leaning_no_loses_nos_until_within_the_lead():
    questions = _leaning_cohort()  # (23 yes against 61 no)
    dropped = CohortPrior(seed=0).leaning(questions)
    sides = Counter(q.facts[0].text for q in questions if q.query_id not in dropped)
    assert sides["yes"] == 23 and sides["no"] - sides["yes"] <= COHORT_LEAD * (sides["no"] + sides["yes"])
    assert sides["no"] + 1 - sides["yes"] > COHORT_LEAD * (sides["no"] + 1 + sides["yes"])  # (no more than needed)
    # (a patient's stratum loses at most its lead: each keeps a "no"; the patient whose "yes" leads keeps all)
    assert all(any(q.query_id not in dropped and q.answer == "no" for q in questions[4 * p:4 * p + 4])
               for p in range(20))
    assert not dropped & {q.query_id for q in questions[80:]}
    assert CohortPrior(seed=0).leaning(questions) == dropped  # (seeded)
    again = CohortPrior(seed=0)
    again.draw = 1
    assert again.leaning(questions) != dropped


def test_a_cohort_within_the_lead_loses_nothing():
    questions = [_ig(p, f"drug{p}-{n}", "yes" if n < 2 else "no") for p in range(20) for n in range(4)]
    questions += [_ig(20, "drug20-0", "no")]
    assert CohortPrior(seed=0).leaning(questions) == set()


def test_a_leaning_cohort_keeps_a_patients_only_question_on_a_trap_category():
    questions = [_ig(p, f"drug{p}-{n}", "yes" if n == 0 else "no", trap="allergy" if n else None)
                 for p in range(20) for n in range(3)]
    # (two "no" per patient, both on the allergy: one of the two may go, never both)
    dropped = CohortPrior(seed=0).leaning(questions)
    assert dropped and all(sum(q.query_id in dropped for q in questions[3 * p:3 * p + 3]) <= 1 for p in range(20))
