"""Mood assessed over the 1,000-patient cohort (`low_mood_assessed`, every physician read from seed 13 to seed 53: low
mood in bipolar disorder on lithium, in colitis, in kidney disease never assessed), with crafted violations its check
must catch."""

from __future__ import annotations

from medmemorybench.simulate.models import AdviceFact, CareYear, LabFact
from tests.simulate.clinical import check, first_event
from tests.simulate.mood_check import low_mood_violations, score_at, voiced_minimal_violations


def _without(year: CareYear, event_ids: set[str] | None, drop) -> CareYear:  # noqa: ANN001
    """The year with the facts `drop` picks removed from some visits (None: from every visit)."""
    return year.model_copy(update={"events": [
        e.model_copy(update={"facts": [f for f in e.facts if not drop(f)]})
        if event_ids is None or e.event_id in event_ids else e for e in year.events]})


def _advised(key: str):  # noqa: ANN202
    return lambda e: any(isinstance(f, AdviceFact) and f.advice == key for f in e.facts)


def test_low_mood_assessed_every_voiced_low_mood_and_review_is_scored_and_acted_on(kb, years):
    check([v for year in years for v in low_mood_violations(kb, year)])
    rule = kb.mood_screen
    advised = {f.advice for y in years for e in y.events for f in e.facts if isinstance(f, AdviceFact)}
    # (the rule is met in every way it can be: a safety net, the safety plan recalled, each referral)
    expected = {rule.safety_net_advice, rule.crisis_advice, *(r.advice for r in rule.referrals)}
    assert expected <= advised, f"never said among 1,000 patients: {sorted(expected - advised)}"


def test_low_mood_assessed_fails_a_psychological_visit_with_no_score_in_two_weeks(kb, years):
    rule = kb.mood_screen
    year, event = first_event(years, lambda e: e.kind in rule.voiced_kinds)
    assert not low_mood_violations(kb, year)
    # (every score of the year removed: a score of the two weeks before would stand for the visit's own)
    broken = _without(year, None, lambda f: isinstance(f, LabFact) and f.lab == rule.lab)
    assert any(event.event_id in v and "low mood voiced" in v for v in low_mood_violations(kb, broken))


def test_low_mood_assessed_fails_a_bipolar_review_with_no_score(kb, years):
    # (the seed-53 read, P0004: bipolar disorder on lithium, "I've felt flat" from June to December, no PHQ-9)
    rule = kb.mood_screen
    year = next(y for y in years if "bipolar_disorder" in y.persona.histories
                and any(e.kind in rule.review_kinds and score_at(rule.lab, e) is not None for e in y.events))
    broken = _without(year, None, lambda f: isinstance(f, LabFact) and f.lab == rule.lab)
    assert any("a review of ['bipolar_disorder']" in v for v in low_mood_violations(kb, broken))


def test_low_mood_assessed_fails_a_positive_screen_with_no_safety_net(kb, years):
    rule = kb.mood_screen
    year, event = first_event(years, _advised(rule.safety_net_advice))
    assert not low_mood_violations(kb, year)
    net = rule.safety_net_advice
    broken = _without(year, {event.event_id}, lambda f: isinstance(f, AdviceFact) and f.advice == net)
    assert any(event.event_id in v and "safety net" in v for v in low_mood_violations(kb, broken))


def test_low_mood_assessed_fails_a_positive_screen_never_referred(kb, years):
    rule = kb.mood_screen
    referral = rule.referrals[0].advice
    year, event = first_event(years, _advised(referral))
    broken = _without(year, {event.event_id}, lambda f: isinstance(f, AdviceFact) and f.advice == referral)
    assert any(event.event_id in v and f"not referred ({referral})" in v for v in low_mood_violations(kb, broken))


def test_low_mood_assessed_fails_a_positive_screen_with_no_review(kb, years):
    rule = kb.mood_screen
    positive = kb.labs[rule.lab].positive_at
    year, event = first_event(years, lambda e: (score_at(rule.lab, e) or 0) >= positive)
    later = {e.event_id for e in year.events[event.index:]}
    broken = _without(year, later, lambda f: isinstance(f, LabFact) and f.lab == rule.lab)
    assert any("no new phq9 at the first visit 14 days after a positive score" in v
               for v in low_mood_violations(kb, broken))


def test_low_mood_scored_a_visit_voicing_low_mood_never_scores_minimal(kb, years):
    check([v for year in years for v in voiced_minimal_violations(kb, year)])


def test_low_mood_scored_fails_a_minimal_score_beside_low_mood_voiced(kb, years):
    # (the seed-61 read, P0015 S081: "I've felt flat... I've stopped seeing friends" beside PHQ-9 3, "within the normal
    # range")
    rule = kb.mood_screen
    year, event = first_event(years, lambda e: e.kind in rule.voiced_kinds and score_at(rule.lab, e) is not None)
    assert not voiced_minimal_violations(kb, year)
    facts = [f.model_copy(update={"value": 3.0}) if isinstance(f, LabFact) and f.lab == rule.lab else f
             for f in event.facts]
    broken = year.model_copy(update={"events": [e.model_copy(update={"facts": facts}) if e is event else e
                                                for e in year.events]})
    assert any(event.event_id in v and "low mood voiced" in v for v in voiced_minimal_violations(kb, broken))
