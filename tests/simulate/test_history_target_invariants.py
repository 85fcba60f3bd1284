"""A past disease's treatment target is held whatever the year is about (issue 27, the seed-53 read: systolic 142-155
at nine visits after a stroke, each answered "we'll keep a close eye on it"). Checked over 1,000 seeded patients, with
crafted violations its check must catch.

Failure messages start with the rule's name in brackets (the names `docs/simulation.md` lists).
"""

from __future__ import annotations

from datetime import date, timedelta

from medmemorybench.simulate import simulate_patient, tasks
from medmemorybench.simulate.models import AdviceFact, CareYear, Event, LabFact, MedicationFact
from tests.simulate.clinical import check
from tests.simulate.history_target_check import history_target_violations, targets_of


def _target_starts(years: list[CareYear]) -> list[tuple[CareYear, Event, MedicationFact]]:
    return [(y, e, f) for y in years for e in y.events for f in e.facts
            if isinstance(f, MedicationFact) and f.reason == "history_target"]


def _without_drug_from(year: CareYear, event: Event, drug: str) -> CareYear:
    """The year with `drug` never given from `event` on, and the advice said with it left out."""
    return year.model_copy(update={"events": [e.model_copy(update={"facts": [
        f for f in e.facts if not (isinstance(f, MedicationFact) and f.drug == drug or isinstance(f, AdviceFact))]})
        if e.index >= event.index else e for e in year.events]})


def test_history_target_treated_a_stroke_with_raised_pressure_gets_a_drug_or_a_reason(kb, years):
    check([v for year in years for v in history_target_violations(kb, year)])
    # (exercised: a blood-pressure drug started after a stroke, which brings the pressure under the target)
    started = _target_starts(years)
    assert {f.indication for _, _, f in started} == {"history:stroke_history"}
    for year, event, fact in started:
        target = next(t for key, t in targets_of(kb, year) if f"history:{key}" == fact.indication)
        assert any(isinstance(f, AdviceFact) and f.advice == target.advice for f in event.facts)


def test_a_drug_left_out_is_caught(kb, years):
    # the seed-53 year: the stroke on record, the pressure above 130 at visit after visit, and nothing started
    caught = [v for year, event, fact in _target_starts(years)
              for v in history_target_violations(kb, _without_drug_from(year, event, fact.drug))]
    assert caught and all(v.startswith("[history_target_treated]") for v in caught)


def test_the_reason_why_not_stands_for_the_drug(kb, years):
    # where the rules allow no candidate, the record says so and refers: the engine says it (every candidate refused
    # here), and the check reads it as the target's care
    year, _, _ = _target_starts(years)[0]
    original = tasks.choose_for_step

    def no_drug_for_targets(kb_, step, patient, exclude=frozenset()):  # noqa: ANN001, ANN202
        return None if step.key.startswith("history:") else original(kb_, step, patient, exclude)

    tasks.choose_for_step = no_drug_for_targets
    try:
        index = int(year.persona.persona_id.removeprefix("P")) - 1
        refused = simulate_patient(kb, year.seed, index)
    finally:
        tasks.choose_for_step = original
    assert refused.persona.persona_id == year.persona.persona_id
    target = targets_of(kb, refused)[0][1]
    said = [e for e in refused.events for f in e.facts
            if isinstance(f, AdviceFact) and f.advice == target.no_drug_advice]
    assert len(said) == 1
    assert not _target_starts([refused]) and not history_target_violations(kb, refused)
    unsaid = refused.model_copy(update={"events": [e.model_copy(update={"facts": [
        f for f in e.facts if not isinstance(f, AdviceFact)]}) for e in refused.events]})
    assert history_target_violations(kb, unsaid)


def test_the_drug_brings_the_pressure_under_the_target(kb, years):
    # the target's treated range is where the started drug takes the lab: readings from a month after the start sit
    # under the target at the median, and far more often than the readings before it (noise of 7 % still carries
    # some single readings past it)
    before, after = [], []
    for year, event, fact in _target_starts(years):
        target = next(t for key, t in targets_of(kb, year) if f"history:{key}" == fact.indication)
        for e in year.events:
            values = [f.value - target.above for f in e.facts if isinstance(f, LabFact) and f.lab == target.lab]
            (before if e.index < event.index else after if e.date >= _days_on(event.date, 28) else []).extend(values)
    assert before and after
    assert sorted(after)[len(after) // 2] < 0
    assert sum(v <= 0 for v in after) / len(after) > sum(v <= 0 for v in before) / len(before) + 0.2


def _days_on(day: str, n: int) -> str:
    return (date.fromisoformat(day) + timedelta(days=n)).isoformat()
