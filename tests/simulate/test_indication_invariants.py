"""The seed-61 read's unsigned decisions over the 1,000-patient cohort, each with a crafted violation its check must
catch: an antidepressant started with no indication (`antidepressant_indicated`), akathisia left running
(`serious_harm_at_once`), a MoCA fall left alone (`cognitive_decline_acted_on`)."""

from __future__ import annotations

from medmemorybench.simulate.models import (
    AdverseFact,
    AdviceFact,
    CareYear,
    Event,
    LabFact,
    MedicationFact,
    SymptomFact,
)
from tests.simulate.clinical import check, first_event, with_facts
from tests.simulate.indication_check import antidepressant_indicated_violations, cognitive_decline_violations
from tests.simulate.monitoring_check import serious_harm_violations


def _edit(year: CareYear, event: Event, facts: list) -> CareYear:  # noqa: ANN001
    return year.model_copy(
        update={"events": [e.model_copy(update={"facts": facts}) if e is event else e for e in year.events]}
    )


def _flagged(kb, years: list[CareYear]):  # noqa: ANN001, ANN202
    """The years whose condition has a step started only short of goal, and a test for a visit starting its drug."""
    flagged = {c.key: {s.key for s in c.care_path if s.while_short_of_goal} for c in kb.conditions.values()}
    chosen = [y for y in years if flagged[y.persona.condition]]
    steps = set().union(*flagged.values())
    return chosen, lambda e: any(
        isinstance(f, MedicationFact) and f.step in steps and f.action == "start" for f in e.facts
    )


def test_antidepressant_indicated_augmentation_starts_only_short_of_goal(kb, years):
    check([v for year in years for v in antidepressant_indicated_violations(kb, year)])
    chosen, started = _flagged(kb, years)
    first_event(chosen, started)  # (exercised)


def test_antidepressant_indicated_fails_augmentation_for_suicidal_thoughts(kb, years):
    # (the seed-61 read, P0015 E047: aripiprazole 2 mg "to treat the complication")
    year, event = first_event(*_flagged(kb, years))
    assert not antidepressant_indicated_violations(kb, year)
    facts = [
        f.model_copy(update={"reason": "complication:suicidal_ideation"})
        if isinstance(f, MedicationFact) and f.step and f.action == "start"
        else f
        for f in event.facts
    ]
    found = antidepressant_indicated_violations(kb, _edit(year, event, facts))
    assert any(event.event_id in v and "started for suicidal_ideation" in v for v in found), found


def test_antidepressant_indicated_fails_a_replacement_at_a_phq9_in_goal(kb, years):
    # (the seed-61 read, P0015 E053: bupropion "to replace aripiprazole" the day after a PHQ-9 of 4)
    year, event = first_event(*_flagged(kb, years))
    facts = [
        *[
            f.model_copy(update={"reason": "adverse_effect:akathisia"})
            if isinstance(f, MedicationFact) and f.step and f.action == "start"
            else f
            for f in event.facts
            if not (isinstance(f, LabFact) and f.lab == "phq9")
        ],
        LabFact(lab="phq9", value=4.0, unit="points"),
    ]
    found = antidepressant_indicated_violations(kb, _edit(year, event, facts))
    assert any(event.event_id in v and "phq9 4.0 on record: not short of goal" in v for v in found), found


def test_akathisia_acted_on_the_visit_it_is_told(kb, years):
    check([v for year in years for v in serious_harm_violations(kb, year) if "akathisia" in v])


def test_akathisia_acted_on_fails_an_antipsychotic_left_running(kb, years):
    # (the seed-61 read, P0015 E051: "very likely akathisia from aripiprazole", review in 7 days; akathisia is rare in
    # the cohort, so the visit that tells it is appended to a year that starts an augmenting antipsychotic)
    year, event = first_event(
        years,
        lambda e: any(
            isinstance(f, MedicationFact) and f.action == "start" and f.drug in ("aripiprazole", "brexpiprazole")
            for f in e.facts
        ),
    )
    start = next(f for f in event.facts if isinstance(f, MedicationFact) and f.action == "start" and f.step)
    effect = next(e for e in kb.drugs[start.drug].adverse_effects if e.key == "akathisia")
    told = [
        AdverseFact(drug=start.drug, effect=effect.key),
        SymptomFact(symptom=effect.key, name=effect.name, lay=effect.lay),
    ]
    left = with_facts(year, *told, start.model_copy(update={"action": "continue", "reason": "unchanged"}))
    stopped = with_facts(year, *told, start.model_copy(update={"action": "stop", "reason": "adverse_effect:akathisia"}))
    assert not [v for v in serious_harm_violations(kb, stopped) if "akathisia" in v]
    found = serious_harm_violations(kb, left)
    assert any("akathisia" in v and "neither lowered nor stopped" in v for v in found), found


def _decline_said(e: Event) -> bool:
    return any(isinstance(f, AdviceFact) and f.advice == "cognitive_decline_review" for f in e.facts)


def test_cognitive_decline_acted_on_a_moca_fall_of_three_is_reviewed_and_referred(kb, years):
    check([v for year in years for v in cognitive_decline_violations(kb, year)])
    assert any(_decline_said(e) for y in years for e in y.events), "no MoCA decline among 1,000 patients"


def test_cognitive_decline_acted_on_fails_happy_with_that(kb, years):
    # (the seed-61 read, P0007 E091: MoCA 24 from 29, "Happy with that?")
    untreated = [y for y in years if not kb.conditions[y.persona.condition].treats("moca")]
    year, event = first_event(untreated, _decline_said)
    assert not cognitive_decline_violations(kb, year)
    broken = _edit(
        year,
        event,
        [f for f in event.facts if not (isinstance(f, AdviceFact) and f.advice == "cognitive_decline_review")],
    )
    found = cognitive_decline_violations(kb, broken)
    assert any(event.event_id in v and "cognitive_decline_review not said" in v for v in found), found
