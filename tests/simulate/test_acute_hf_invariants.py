"""Acute decompensated heart failure with a low oxygen over 1,000 seeded patients (issue 27): admitted the same day with
the in-hospital plan said (ambulance on oxygen, IV loop diuretic), then within two weeks a review that rechecks weight,
potassium and eGFR and reviews the loop diuretic. The rule also has crafted violations that its check must catch.

Failure messages start with the rule's name in brackets (the names `docs/simulation.md` lists).
"""

from __future__ import annotations

from medmemorybench.simulate.models import AdviceFact, LabFact, MedicationFact, SettingFact
from tests.simulate.acute_hf_check import (
    REVIEW_LABS,
    REVIEW_WITHIN_DAYS,
    decompensation_violations,
    hypoxic_decompensation,
    is_heart_failure,
)
from tests.simulate.clinical import check, days_between, first_event


def _admitted(kb, years):  # noqa: ANN001, ANN202
    return first_event([y for y in years if is_heart_failure(kb, y)], lambda e: hypoxic_decompensation(kb, e))


def _without(year, event, drop):  # noqa: ANN001, ANN202
    return year.model_copy(update={"events": [e.model_copy(update={"facts": [f for f in e.facts if not drop(f)]})
                                              if e is event else e for e in year.events]})


def test_decompensation_admitted_hypoxic_heart_failure_is_admitted_and_reviewed(kb, years):
    check([v for year in years for v in decompensation_violations(kb, year)])
    _admitted(kb, years)  # (exercised)


def test_the_knowledge_base_window_is_the_checked_one(kb):
    windows = {c.key: c.after_discharge for cond in kb.conditions.values() for c in cond.complications
               if c.after_discharge is not None}
    after = windows["acute_decompensation"]
    assert after.ward_days + after.within_days == REVIEW_WITHIN_DAYS
    assert set(REVIEW_LABS) <= set(after.labs)


def test_hypoxic_decompensation_sent_home_is_caught(kb, years):
    year, event = _admitted(kb, years)
    assert not decompensation_violations(kb, year)
    broken = _without(year, event, lambda f: isinstance(f, SettingFact | AdviceFact))
    found = [v for v in decompensation_violations(kb, broken) if event.event_id in v]
    assert any("not admitted" in v for v in found) and any("in-hospital plan" in v for v in found)


def test_no_diuretic_review_or_u_and_e_after_the_admission_is_caught(kb, years):
    year, event = _admitted(kb, years)
    after = [e for e in year.events if 0 < days_between(event.date, e.date) <= REVIEW_WITHIN_DAYS]
    broken = year.model_copy(update={"events": [e.model_copy(update={"facts": [
        f for f in e.facts if not (isinstance(f, LabFact) and f.lab == "potassium"
                                   or isinstance(f, MedicationFact) and f.drug in ("furosemide", "torsemide",
                                                                                   "bumetanide"))]})
        if e in after else e for e in year.events]})
    found = [v for v in decompensation_violations(kb, broken) if event.event_id in v]
    assert any(v.startswith("[decompensation_admitted]") and "potassium" in v for v in found)
    assert any("loop diuretic dose not reviewed" in v for v in found)
