"""Range and target invariants over 1,000 seeded patients (issue 27, the seed-53 read), one test per rule, each with a
crafted violation showing its check catches it. Each failure message starts with the rule's name in brackets."""

from __future__ import annotations

from medmemorybench.knowledge.models import Text
from medmemorybench.render.fact_acts import FactSlots
from medmemorybench.render.templates import load_templates
from medmemorybench.simulate.models import DiagnosisFact, LabFact, MedicationFact, SymptomFact, TestFact
from tests.simulate.clinical import check, first_event, with_facts
from tests.simulate.range_check import (
    alarm_violations,
    explainer,
    full_strength_violations,
    goal_violations,
    obesity_violations,
    place_violations,
    raised_reading_violations,
    weight_violations,
)

LANGUAGES = ("en", "zh")




def _diagnosed(years, condition: str):  # noqa: ANN001
    return next(y for y in years if y.persona.condition == condition and any(
        isinstance(f, DiagnosisFact) and f.status == "confirmed" for e in y.events for f in e.facts))


def test_judged_against_goal(kb, years, slots):
    check([f for lang in LANGUAGES for year, s in zip(years, slots[lang], strict=True)
           for f in goal_violations(kb, year, s)])


def test_judged_against_goal_catches_a_diabetic_hba1c_against_the_reference(kb, years):
    """HbA1c 7.3 % after diabetic kidney disease is diagnosed, said against the non-diabetic range."""
    year = _diagnosed(years, "diabetic_nephropathy_microalbuminuria")
    wrong = with_facts(year, LabFact(lab="hba1c", value=7.3, unit="%"))
    right = with_facts(year, LabFact(lab="hba1c", value=7.3, unit="%", goal=7.0))
    failures = goal_violations(kb, wrong, FactSlots(kb, load_templates("en"), wrong))
    assert failures and failures[-1].startswith("[judged_against_goal]") and "hba1c 7.3" in failures[-1]
    assert not [f for f in goal_violations(kb, right, FactSlots(kb, load_templates("en"), right)) if "7.3" in f]


def test_weight_has_no_range(kb, years, slots):
    check([f for lang in LANGUAGES for year, s in zip(years, slots[lang], strict=True)
           for f in weight_violations(kb, year, s)])


def test_weight_has_no_range_catches_a_weight_in_the_normal_range(kb, years):
    """A weight said "in the normal range" (against 45-90 kg)."""
    year = with_facts(years[0], LabFact(lab="weight", value=89.4, unit="kg"))

    class Ranged(FactSlots):
        def status_key(self, fact):  # noqa: ANN001, ANN201, ARG002
            return "normal"

        def status_words(self, fact, rng):  # noqa: ANN001, ANN201
            return self.templates.word("status", self.status_key(fact), rng)

    failures = weight_violations(kb, year, Ranged(kb, load_templates("en"), year))
    assert failures and failures[-1].startswith("[weight_has_no_range]") and "89.4" in failures[-1]
    assert not [f for f in weight_violations(kb, year, FactSlots(kb, load_templates("en"), year)) if "89.4" in f]


def test_range_words_fit(kb, years, slots):
    for lang in LANGUAGES:
        explain = explainer(kb, load_templates(lang))
        check([f for year, s in zip(years, slots[lang], strict=True) for f in place_violations(kb, year, explain, s)])


def test_range_words_fit_catches_the_middle_at_the_top_end(kb, years):
    """Diastolic 79 mmHg (reference 60-79) said "right in the middle of 60 to 79 mmHg"."""
    year = with_facts(years[0], LabFact(lab="diastolic_bp", value=79, unit="mmHg"))
    slots = FactSlots(kb, load_templates("en"), year)

    def middle(fact, rng):  # noqa: ANN001, ANN202, ARG001
        return f"{fact.value:g} mmHg is right in the middle of 60 to 79 mmHg."

    failures = place_violations(kb, year, middle, slots)
    assert failures and failures[-1].startswith("[range_words_fit]") and "diastolic_bp 79" in failures[-1]
    assert not [f for f in place_violations(kb, year, explainer(kb, load_templates("en")), slots) if "bp 79" in f]


def test_hypertension_on_raised_reading(kb, years):
    check([f for year in years for f in raised_reading_violations(kb, year)])
    made = [f for y in years for e in y.events for f in e.facts
            if isinstance(f, DiagnosisFact) and f.icd11 == "BA00" and f.status == "suspected"]
    assert made, "no essential hypertension suspected among 1,000 patients: the rule is never exercised"


def test_hypertension_on_raised_reading_catches_a_misdiagnosis_at_132_over_84(kb, years):
    def made(e) -> bool:  # noqa: ANN001
        return any(isinstance(f, DiagnosisFact) and f.icd11 == "BA00" and f.status == "suspected" for f in e.facts)

    year, event = first_event(years, made)
    assert not [f for f in raised_reading_violations(kb, year) if event.event_id in f]
    lowered = {"systolic_bp": 132.0, "diastolic_bp": 84.0}
    broken = year.model_copy(update={"events": [e.model_copy(update={"facts": [
        f.model_copy(update={"value": lowered[f.lab]}) if isinstance(f, LabFact) and f.lab in lowered else f
        for f in e.facts]}) if e is event else e for e in year.events]})
    failures = raised_reading_violations(kb, broken)
    assert any(f.startswith("[hypertension_on_raised_reading]") and event.event_id in f and "132" in f
               for f in failures), failures


def test_obesity_from_30(kb, years):
    check([f for year in years for f in obesity_violations(kb, year)])


def test_obesity_from_30_catches_obesity_at_a_bmi_of_28_6(kb, years):
    year = with_facts(years[0], LabFact(lab="bmi", value=28.6, unit="kg/m²"),
                       DiagnosisFact(name=Text(en="obesity", zh="单纯性肥胖"), icd11="5B81", status="suspected"))
    failures = obesity_violations(kb, year)
    assert failures and failures[-1].startswith("[obesity_from_30]") and "28.6" in failures[-1]


def test_full_strength_at_the_top(kb, years, slots):
    check([f for lang in LANGUAGES for year, s in zip(years, slots[lang], strict=True)
           for f in full_strength_violations(kb, year, s)])


def test_full_strength_at_the_top_catches_a_second_step_called_full(kb, years):
    """Pramipexole 0.125 -> 0.25 mg once a day "to bring the dose up to its full strength" (its ladder goes on)."""
    year = with_facts(years[0], MedicationFact(drug="pramipexole", action="increase", dose=0.25, unit="mg",
                                                frequency="once_daily", previous_dose=0.125, reason="titration"))

    class Full(FactSlots):
        def reason(self, fact, rng):  # noqa: ANN001, ANN201, ARG002
            return "to bring the dose up to its full strength"

    failures = full_strength_violations(kb, year, Full(kb, load_templates("en"), year))
    assert failures and failures[-1].startswith("[full_strength_at_the_top]") and "pramipexole 0.25" in failures[-1]
    assert not [f for f in full_strength_violations(kb, year, FactSlots(kb, load_templates("en"), year))
                if "pramipexole 0.25" in f]


def test_alarm_review_true(kb, years):
    check([f for year in years for f in alarm_violations(kb, year)])


def test_alarm_review_true_catches_reflux_after_weight_loss(kb, years):
    """A reflux course's "no alarm features" after weight loss was told."""
    illness = kb.illnesses["gord"]
    year = with_facts(years[0], SymptomFact(symptom="major_depressive_disorder.appetite_weight_loss",
                                             name=Text(en="reduced appetite with weight loss", zh="x"),
                                             lay=Text(en="x", zh="x")))
    year = with_facts(year, TestFact(test="illness:gord", name=illness.test, finding=illness.finding))
    failures = alarm_violations(kb, year)
    assert failures and failures[-1].startswith("[alarm_review_true]") and "appetite_weight_loss" in failures[-1]
