"""Anaemia read over 1,000 seeded patients (issue 27, the seed-89 read): a haemoglobin-lowering complication or harm
on an anticoagulant gets the pulse, the blood pressure, the INR on warfarin and a bleeding assessment that day, and iron
deficiency anaemia is diagnosed on a low ferritin. Each rule also has a crafted violation that its check must catch.

Failure messages start with the rule's name in brackets (the names `docs/simulation.md` lists).
"""

from __future__ import annotations

from medmemorybench.simulate.models import AdviceFact, ComplicationFact, LabFact
from tests.simulate.bleeding_check import anaemia_on_anticoagulant_violations, iron_deficiency_ferritin_violations
from tests.simulate.clinical import check, with_event_facts


def test_anaemia_on_anticoagulant_assessed(kb, years):
    check([v for year in years for v in anaemia_on_anticoagulant_violations(kb, year)])


def test_iron_deficiency_confirmed_by_ferritin(years):
    check([v for year in years for v in iron_deficiency_ferritin_violations(year)])


def _iron_deficiency_on_warfarin(years):  # noqa: ANN001, ANN202
    """The first cohort visit that finds iron deficiency anaemia in a patient on warfarin, with its year."""
    return next((year, event) for year in years for event in year.events
                if any(isinstance(f, ComplicationFact) and f.complication == "iron_deficiency_anaemia"
                       for f in event.facts)
                and any(isinstance(f, LabFact) and f.lab == "inr" for f in event.facts))


def test_anaemia_on_warfarin_without_an_inr_or_the_bleeding_asked_is_caught(kb, years):
    year, event = _iron_deficiency_on_warfarin(years)
    assert not anaemia_on_anticoagulant_violations(kb, year)
    for dropped in ("inr", "heart_rate", "bleeding assessment"):
        facts = [f for f in event.facts if not (isinstance(f, LabFact) and f.lab == dropped
                                                or isinstance(f, AdviceFact) and dropped == "bleeding assessment")]
        broken = with_event_facts(year, event, facts)
        assert any(v.startswith("[anaemia_on_anticoagulant_assessed]") and event.event_id in v and dropped in v
                   for v in anaemia_on_anticoagulant_violations(kb, broken)), dropped


def test_iron_deficiency_without_a_low_ferritin_is_caught(years):
    year, event = _iron_deficiency_on_warfarin(years)
    assert not iron_deficiency_ferritin_violations(year)
    dropped = with_event_facts(year, event, [f for f in event.facts if not (isinstance(f, LabFact)
                                                                            and f.lab == "ferritin")])
    normal = with_event_facts(year, event, [f.model_copy(update={"value": 85.0}) if isinstance(f, LabFact)
                                            and f.lab == "ferritin" else f for f in event.facts])
    for broken in (dropped, normal):
        assert any(v.startswith("[iron_deficiency_confirmed_by_ferritin]") and event.event_id in v
                   for v in iron_deficiency_ferritin_violations(broken))
