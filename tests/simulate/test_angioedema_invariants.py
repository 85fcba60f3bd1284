"""Angioedema on a drug over 1,000 seeded patients (the seed-73 read, P0009 E045: lips and tongue swelling every day
for two weeks on lisinopril, stopped with no examination and no safety net): the airway and breathing examined, the
drug stopped and the 999/A&E safety net said at the visit it is told. The rule also has crafted violations that its
check must catch.

Failure messages start with the rule's name in brackets (the names `docs/simulation.md` lists).
"""

from __future__ import annotations

from medmemorybench.simulate.models import AdverseFact, AdviceFact, LabFact, MedicationFact
from tests.simulate.angioedema_check import AIRWAY_SIGNS, ANGIOEDEMA, EMERGENCY_ADVICE, angioedema_violations
from tests.simulate.clinical import check, first_event, with_event_facts


def _told(years):  # noqa: ANN001, ANN202
    return first_event(years, lambda e: any(isinstance(f, AdverseFact) and f.effect == ANGIOEDEMA for f in e.facts))


def test_angioedema_emergency_advice_at_every_visit_it_is_told(kb, years):
    check([v for year in years for v in angioedema_violations(kb, year)])
    _told(years)  # (exercised)


def test_angioedema_stopped_with_no_examination_and_no_safety_net_is_caught(kb, years):
    # (the seed-73 read: "stop lisinopril", a review nine days later, nothing else)
    year, event = _told(years)
    assert not angioedema_violations(kb, year)
    bare = [
        f
        for f in event.facts
        if not (
            isinstance(f, AdviceFact)
            and f.advice == EMERGENCY_ADVICE
            or isinstance(f, LabFact)
            and f.lab in AIRWAY_SIGNS
        )
    ]
    found = [v for v in angioedema_violations(kb, with_event_facts(year, event, bare)) if event.event_id in v]
    assert any("no respiratory_rate, spo2 that visit" in v for v in found)
    assert any("without the emergency safety net" in v for v in found)


def test_angioedema_with_the_drug_carried_on_is_caught(kb, years):
    year, event = _told(years)
    kept = [
        f.model_copy(update={"action": "continue"}) if isinstance(f, MedicationFact) and f.action == "stop" else f
        for f in event.facts
    ]
    found = [v for v in angioedema_violations(kb, with_event_facts(year, event, kept)) if event.event_id in v]
    assert any("not stopped that visit" in v for v in found)
