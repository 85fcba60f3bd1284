"""A dopamine agonist's start and titration over 1,000 seeded patients (the seed-47 read, P0007 E060-E091: pramipexole
started for a heavy-equipment operator with no word of sudden sleep, then left at 0.125 mg once a day for five months
while the motor score rose to 25): every start says the labels' sleep warning, the starting dose is titrated weekly,
and a motor score above the treated range that reflects the dose is answered with the next step while one is allowed.
Each rule also has crafted violations that its check must catch.

Failure messages start with the rule's name in brackets (the names `docs/simulation.md` lists).
"""

from __future__ import annotations

from medmemorybench.simulate.models import AdviceFact, LabFact, MedicationFact
from tests.simulate.agonist_check import (
    AGONIST_ATC,
    AT_START_DOSE_DAYS,
    SLEEP_WARNING,
    agonist_start_violations,
    agonist_titration_violations,
    higher_dose_allowed,
)
from tests.simulate.clinical import check, days_between


def _agonist(kb, fact) -> bool:  # noqa: ANN001
    return isinstance(fact, MedicationFact) and (kb.drugs[fact.drug].atc or "").startswith(AGONIST_ATC)


def _first(years, has):  # noqa: ANN001, ANN202
    """The first (year, visit) `has(year, index)` picks; none is a failure: a crafted test needs something to break."""
    for year in years:
        for index, event in enumerate(year.events):
            if has(year, index):
                return year, event
    raise AssertionError("no such visit among the 1,000 patients: the crafted violation has nothing to start from")


def _started(kb, years):  # noqa: ANN001, ANN202
    """The first agonist start that is titrated later in the year."""
    def titrated_later(year, index) -> bool:  # noqa: ANN001
        start = next((f for f in year.events[index].facts if _agonist(kb, f) and f.action == "start"), None)
        return start is not None and any(_agonist(kb, f) and f.drug == start.drug and f.action == "increase"
                                         for e in year.events[index:] for f in e.facts)
    return _first(years, titrated_later)


def _edit(year, edits):  # noqa: ANN001, ANN202
    """The year with some visits' facts replaced (event id -> facts)."""
    return year.model_copy(update={"events": [e.model_copy(update={"facts": edits[e.event_id]})
                                              if e.event_id in edits else e for e in year.events]})


def test_agonist_start_warned_every_dopamine_agonist_start_says_the_sleep_warning(kb, years):
    check([v for year in years for v in agonist_start_violations(kb, year)])
    _started(kb, years)  # (exercised)


def test_agonist_titrated_no_starting_dose_kept_and_no_motor_score_out_of_goal_left(kb, years):
    check([v for year in years for v in agonist_titration_violations(kb, year)])
    raised = [f for y in years for e in y.events for f in e.facts if _agonist(kb, f) and f.action == "increase"]
    assert raised, "no dopamine agonist titrated in 1,000 patients"


def test_an_agonist_started_without_the_sleep_warning_is_caught(kb, years):
    year, event = _started(kb, years)
    assert not agonist_start_violations(kb, year)
    silent = [f for f in event.facts if not (isinstance(f, AdviceFact) and f.advice == SLEEP_WARNING)]
    found = agonist_start_violations(kb, _edit(year, {event.event_id: silent}))
    assert any(v.startswith("[agonist_start_warned]") and event.event_id in v for v in found)


def test_an_agonist_left_at_its_starting_dose_is_caught(kb, years):
    # (the seed-47 read: every step up removed, the year continues the starting dose at each review)
    year, event = _started(kb, years)
    start = next(f for f in event.facts if _agonist(kb, f) and f.action == "start")
    assert not agonist_titration_violations(kb, year)
    edits = {}
    for later in year.events[year.events.index(event) + 1:]:
        facts = [f.model_copy(update={"action": "continue", "dose": start.dose, "previous_dose": None,
                                      "reason": "stable"}) if _agonist(kb, f) and f.drug == start.drug
                 and f.action in ("increase", "continue") else f for f in later.facts]
        edits[later.event_id] = facts
    found = agonist_titration_violations(kb, _edit(year, edits))
    late = [e for e in year.events if days_between(event.date, e.date) > AT_START_DOSE_DAYS
            and any(_agonist(kb, f) and f.drug == start.drug for f in edits.get(e.event_id, []))]
    assert late, "no later review of the agonist to break"
    assert any(v.startswith("[agonist_titrated]") and "still at its starting dose" in v for v in found)


def test_a_motor_score_out_of_goal_left_stable_is_caught(kb, years):
    # (the seed-47 read: MDS-UPDRS 25 and pramipexole "stable" at the next reviews)
    def scored_before(year, index):  # noqa: ANN001, ANN202
        """A visit that can hold a motor score reflecting the agonist's dose three weeks before this stable review
        (below the top dose the rules allow), or None."""
        review = year.events[index]
        kept = next((f for f in review.facts if _agonist(kb, f) and f.action == "continue" and f.reason == "stable"
                     and higher_dose_allowed(kb, year, review, f)), None)
        if kept is None:
            return None
        changes = [(e.date, f.action) for e in year.events[:index + 1] for f in e.facts
                   if _agonist(kb, f) and f.drug == kept.drug and f.action in ("start", "increase", "decrease")]
        actions = {action for _, action in changes}
        if "increase" not in actions or "decrease" in actions:  # (titrated, never lowered for a harm)
            return None
        return next((e for e in reversed(year.events[:index]) if days_between(changes[-1][0], e.date) >= 28
                     and days_between(e.date, review.date) > 21), None)

    year, review = _first(years, lambda y, i: scored_before(y, i) is not None)
    scored = scored_before(year, year.events.index(review))
    assert not agonist_titration_violations(kb, year)
    # (a score of 28 at that visit, and none after it up to the review: the last word on the dose is out of goal)
    between = year.events[year.events.index(scored) + 1:year.events.index(review) + 1]
    edits = {e.event_id: [f for f in e.facts if not (isinstance(f, LabFact) and f.lab == "updrs_motor")]
             for e in between}
    edits[scored.event_id] = [*scored.facts, LabFact(lab="updrs_motor", value=28.0, unit="points")]
    found = agonist_titration_violations(kb, _edit(year, edits))
    assert any(v.startswith("[agonist_titrated]") and "motor score of 28" in v and review.event_id in v
               for v in found)
