"""Low mood assessed (`low_mood_assessed`, the seed-13 to seed-37 physician reads): mood voiced at a visit is scored
there, depression and bipolar disorder have a score at every review, and a positive screen is answered with the
self-harm question and its safety net (or the crisis team) and a new score within two weeks.

Read from the events and the knowledge base's `mood_screen` rule alone, never from the engine's state."""

from __future__ import annotations

from medmemorybench.knowledge.base import KnowledgeBase
from medmemorybench.knowledge.models import MoodScreen
from medmemorybench.simulate.models import AdviceFact, CareYear, DiagnosisFact, Event, HistoryFact, LabFact
from medmemorybench.simulate.mood import MOOD_REVIEW_EARLIEST, voices_low_mood
from tests.simulate.clinical import days_between, fail

RULE = "low_mood_assessed"


def score_at(rule: MoodScreen, event: Event) -> float | None:
    return next((f.value for f in event.facts if isinstance(f, LabFact) and f.lab == rule.lab), None)


def _reviewed(kb: KnowledgeBase, rule: MoodScreen, year: CareYear, event: Event) -> bool:
    """A review visit of depression (once diagnosed) or of bipolar disorder (once told)."""
    if event.kind not in rule.review_kinds:
        return False
    before = [f for e in year.events[:event.index] for f in e.facts]
    condition = kb.conditions[year.persona.condition]
    diagnosed = condition.key in rule.review_conditions and any(
        isinstance(f, DiagnosisFact) and f.status == "confirmed" and f.icd11 == condition.icd11.code for f in before)
    told = any(isinstance(f, HistoryFact) and f.history in rule.review_conditions for f in before)
    return diagnosed or told


def _seen_again(rule: MoodScreen, year: CareYear, event: Event) -> bool:
    """A new score within `follow_up_days`; where no visit fell in the review's week, at the first visit after it (or
    the year ended first)."""
    if days_between(event.date, year.events[-1].date) <= rule.follow_up_days:
        return True
    after = year.events[event.index:]
    if any(score_at(rule, e) is not None and 0 < days_between(event.date, e.date) <= rule.follow_up_days
           for e in after):
        return True
    later = [e for e in after if days_between(event.date, e.date) >= MOOD_REVIEW_EARLIEST]
    return days_between(event.date, later[0].date) > rule.follow_up_days and score_at(rule, later[0]) is not None


def low_mood_violations(kb: KnowledgeBase, year: CareYear) -> list[str]:
    rule = kb.mood_screen
    assert rule is not None
    out = []
    scored = [(e, v) for e in year.events if (v := score_at(rule, e)) is not None]
    for event in year.events:
        voiced = voices_low_mood(rule, event.kind, event.facts)
        value = score_at(rule, event)
        if voiced and value is None:
            out.append(fail(RULE, year, event, f"low mood voiced ({event.kind}) and no {rule.lab} that visit"))
            continue
        if _reviewed(kb, rule, year, event) and not any(
                0 <= days_between(e.date, event.date) < rule.recall_days for e, _ in scored):
            out.append(fail(RULE, year, event, f"a review of mood with no {rule.lab} in {rule.recall_days} days"))
            continue
        if not voiced and not _reviewed(kb, rule, year, event) or value is None or value < rule.positive_at:
            continue
        advised = {f.advice for f in event.facts if isinstance(f, AdviceFact)}
        if not advised & {rule.safety_net_advice, rule.crisis_advice}:
            out.append(fail(RULE, year, event, f"{rule.lab} {value:g}: no self-harm question or safety net"))
        if not _seen_again(rule, year, event):
            out.append(fail(RULE, year, event, f"{rule.lab} {value:g}: no new score within {rule.follow_up_days} days"))
    return out
