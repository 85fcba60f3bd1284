"""What a harm told calls for that day over 1,000 seeded patients (issue 27): a fit in long QT syndrome, or on a drug a
long-QT rule names, gets an ECG and the electrolytes at the visit it is told. The rule also has a crafted violation
that its check must catch.

Failure messages start with the rule's name in brackets (the names `docs/simulation.md` lists).
"""

from __future__ import annotations

from medmemorybench.simulate.models import AdverseFact, LabFact
from tests.simulate.acute_check import harm_workup_violations
from tests.simulate.clinical import check, first_event


def _workup_told(kb):  # noqa: ANN001, ANN202
    effects = {e for h in kb.history_conditions.values() for w in h.harm_workup for e in w.effects}
    return lambda e: any(isinstance(f, AdverseFact) and f.effect in effects for f in e.facts)


def test_harm_workup_same_day_a_fit_in_long_qt_gets_an_ecg_and_electrolytes(kb, years):
    check([v for year in years for v in harm_workup_violations(kb, year)])
    first_event([y for y in years if "long_qt_syndrome" in y.persona.histories], _workup_told(kb))  # (exercised)


def test_a_fit_in_long_qt_with_no_ecg_that_day_is_caught(kb, years):
    year, event = first_event([y for y in years if "long_qt_syndrome" in y.persona.histories], _workup_told(kb))
    assert not harm_workup_violations(kb, year)
    broken = year.model_copy(update={"events": [e.model_copy(update={"facts": [
        f for f in e.facts if not (isinstance(f, LabFact) and f.lab == "qtc")]}) if e is event else e
        for e in year.events]})
    assert any(v.startswith("[harm_workup_same_day]") and event.event_id in v and "qtc" in v
               for v in harm_workup_violations(kb, broken))
