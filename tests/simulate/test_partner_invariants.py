"""What is given alongside a drug ends with it (issue 27, the seed-61 read: calcium carbonate and colecalciferol,
started "for with:prednisolone", continued "(stable)" for three months after the steroid course ended). Checked over
1,000 seeded patients, with a crafted violation its check must catch.

Failure messages start with the rule's name in brackets (the names `docs/simulation.md` lists).
"""

from __future__ import annotations

from medmemorybench.simulate.models import CareYear, Event, MedicationFact
from tests.simulate.clinical import check
from tests.simulate.partner_check import partner_violations


def _course_partners(years: list[CareYear]) -> list[tuple[CareYear, Event, MedicationFact]]:
    """(year, event, partner start) for every co-prescription started with a course."""
    return [(y, e, f) for y in years for e in y.events for f in e.facts
            if isinstance(f, MedicationFact) and f.action == "start" and (f.indication or "").startswith("with:")
            and any(isinstance(g, MedicationFact) and g.action == "start" and g.course_days
                    and g.drug == f.indication.removeprefix("with:") for g in e.facts)]


def test_co_prescription_ends_with_drug(kb, years):
    check([v for year in years for v in partner_violations(year)])
    # (exercised: calcium and vitamin D started with steroid courses, and stopped with them where the year goes on)
    started = _course_partners(years)
    assert len(started) >= 20
    stopped = [(y, f) for y, _, f in started if any(
        isinstance(g, MedicationFact) and g.action == "stop" and g.drug == f.drug and g.reason == f.indication
        for e in y.events for g in e.facts)]
    assert len(stopped) >= len(started) // 2


def test_a_partner_kept_after_the_course_is_caught(kb, years):
    # the seed-61 year: the course over, and the calcium still "stable" at the last visit
    year, _, partner = next((y, e, f) for y, e, f in _course_partners(years) if any(
        isinstance(g, MedicationFact) and g.action == "stop" and g.drug == f.drug for e2 in y.events
        for g in e2.facts))
    last = year.events[-1]
    kept = MedicationFact(drug=partner.drug, action="continue", dose=partner.dose, unit=partner.unit,
                          frequency=partner.frequency, reason="stable", indication=partner.indication)
    without_stop = year.model_copy(update={"events": [e.model_copy(update={"facts": [
        f for f in e.facts if not (isinstance(f, MedicationFact) and f.action == "stop" and f.drug == partner.drug)]
        + ([kept] if e is last else [])}) for e in year.events]})
    caught = partner_violations(without_stop)
    assert caught and all(v.startswith("[co_prescription_ends_with_drug]") for v in caught)
