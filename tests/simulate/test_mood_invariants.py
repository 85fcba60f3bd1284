"""Low mood assessed over the 1,000-patient cohort (`low_mood_assessed`, the seed-13 to seed-37 physician reads), with
crafted violations its check must catch."""

from __future__ import annotations

from medmemorybench.simulate.models import AdviceFact, CareYear, LabFact
from tests.simulate.clinical import check, first_event
from tests.simulate.mood_check import low_mood_violations


def _without(year: CareYear, event_id: str, drop) -> CareYear:  # noqa: ANN001
    """The year with the facts `drop` picks removed from one visit."""
    return year.model_copy(update={"events": [
        e.model_copy(update={"facts": [f for f in e.facts if not drop(f)]}) if e.event_id == event_id else e
        for e in year.events]})


def test_low_mood_assessed_every_voiced_low_mood_and_review_is_scored_and_acted_on(kb, years):
    check([v for year in years for v in low_mood_violations(kb, year)])
    rule = kb.mood_screen
    advised = {f.advice for y in years for e in y.events for f in e.facts if isinstance(f, AdviceFact)}
    assert rule.safety_net_advice in advised, "no positive mood screen among 1,000 patients: the rule is never met"


def test_low_mood_assessed_fails_a_psychological_visit_with_its_score_removed(kb, years):
    rule = kb.mood_screen
    year, event = first_event(years, lambda e: e.kind in rule.voiced_kinds)
    broken = _without(year, event.event_id, lambda f: isinstance(f, LabFact) and f.lab == rule.lab)
    assert any(event.event_id in v for v in low_mood_violations(kb, broken))


def test_low_mood_assessed_fails_a_positive_screen_with_no_safety_net(kb, years):
    rule = kb.mood_screen
    year, event = first_event(years, lambda e: any(isinstance(f, AdviceFact) and f.advice == rule.safety_net_advice
                                                   for f in e.facts) and e.kind in rule.voiced_kinds)
    broken = _without(year, event.event_id, lambda f: isinstance(f, AdviceFact) and f.advice == rule.safety_net_advice)
    assert any(event.event_id in v and "safety net" in v for v in low_mood_violations(kb, broken))
