"""Mood assessed (`low_mood_assessed`, every physician read from seed 13 to seed 53): low mood voiced at a visit is
scored there, depression and bipolar disorder have a score at every review, and a positive score, wherever it is
taken, is answered that visit with the self-harm question and its safety net (the safety plan recalled where thoughts
of suicide are on record), the referral its score calls for (once an episode, since the last negative score), and a
new score at the first visit two weeks or more on.

A score of the questionnaire's recall period (its `min_interval_days`: two weeks) stands for a visit's own. A visit
where a new score would read as the effect of a drug change it cannot yet show (the step's drug changed at a visit it
follows up within the lab's response time, or missed doses told there fewer than the drug's waning and the lab's
response take) owes none: the score comes at the next visit. A screen the true condition's work-up owns (a diagnostic
questionnaire) is owed only once the work-up, or for one that emerges the turning point, has come.

Read from the events and the knowledge base alone, never from the engine's state."""

from __future__ import annotations

from datetime import date, timedelta

from medmemorybench.knowledge.base import KnowledgeBase
from medmemorybench.knowledge.models import MoodScreen
from medmemorybench.simulate.models import (
    AdherenceFact,
    AdviceFact,
    CareYear,
    ComplicationFact,
    DiagnosisFact,
    Event,
    HistoryFact,
    LabFact,
    MedicationFact,
    SymptomFact,
)
from tests.simulate.clinical import days_between, fail

RULE = "low_mood_assessed"


def score_at(lab: str, event: Event) -> float | None:
    return next((f.value for f in event.facts if isinstance(f, LabFact) and f.lab == lab), None)


def voiced(rule: MoodScreen, event: Event) -> bool:
    """The patient brings up strain or feeling low, or tells a symptom that is low mood or loss of interest."""
    return event.kind in rule.voiced_kinds or any(isinstance(f, SymptomFact) and f.symptom in rule.symptoms
                                                  for f in event.facts)


def on_record(year: CareYear, event: Event) -> set[str]:
    """Conditions the doctor knows of by this visit (it included): the condition once diagnosed, a past illness told,
    the illness a long-term drug told of is taken for."""
    known: set[str] = set()
    for earlier in year.events[:event.index]:
        for fact in earlier.facts:
            if isinstance(fact, DiagnosisFact) and fact.status == "confirmed":
                known.add(year.persona.condition)
            elif isinstance(fact, HistoryFact):
                known.add(fact.history)
            elif isinstance(fact, MedicationFact) and (fact.indication or "").startswith("history:"):
                known.add(fact.indication.partition(":")[2])  # type: ignore[union-attr]
    return known


def _response_days(kb: KnowledgeBase, lab: str) -> int:
    kinetics = kb.labs[lab].kinetics
    assert kinetics is not None
    return int(-(-kinetics.response_days // 1))


def reads_as_effect(kb: KnowledgeBase, year: CareYear, event: Event, lab: str) -> bool:
    """Whether a score at this visit would read as the effect of a drug change it cannot yet show."""
    condition = kb.conditions[year.persona.condition]
    moves = {s.key: {*s.moves, *s.targets} for s in condition.care_path}
    by_id = {e.event_id: e for e in year.events}
    for cause in (by_id[t] for t in event.triggered_by):
        changed = any(isinstance(f, MedicationFact) and f.step and lab in moves.get(f.step, ()) for f in cause.facts)
        if changed and days_between(cause.date, event.date) < _response_days(kb, lab):
            return True
    for lapse in (f for f in event.facts if isinstance(f, AdherenceFact)):
        step = next((f.step for e in year.events[:event.index] for f in reversed(e.facts)
                     if isinstance(f, MedicationFact) and f.drug == lapse.drug and f.step), None)
        needed = (kb.drugs[lapse.drug].wanes_days or 0) + _response_days(kb, lab)
        if step is not None and lab in moves.get(step, ()) and lapse.missed_days < needed:
            return True
    return False


def _owned_until(kb: KnowledgeBase, year: CareYear, lab: str) -> int:
    """The index of the first visit a score may be taken at where the true condition's work-up owns the screen (a
    diagnostic questionnaire): the work-up's, or the turning point's for one that emerges (0: any visit)."""
    monitored = next((m for m in kb.conditions[year.persona.condition].monitored if m.lab == lab), None)
    workup = next((e for e in year.events if e.kind == "diagnostic_test"), None)
    if monitored is None or not monitored.diagnostic:
        return 0
    if workup is None:
        return len(year.events) + 1
    by_id = {e.event_id: e for e in year.events}
    turning = min((by_id[t].index for t in workup.triggered_by), default=workup.index)
    return turning if monitored.emerges else workup.index


def low_mood_violations(kb: KnowledgeBase, year: CareYear) -> list[str]:
    rule = kb.mood_screen
    assert rule is not None
    lab, spec = rule.lab, kb.labs[rule.lab]
    assert spec.positive_at is not None and spec.kinetics is not None
    recall = spec.kinetics.min_interval_days  # (the questionnaire's recall period: two weeks)
    owned_until = _owned_until(kb, year, lab)
    out: list[str] = []
    scored: list[Event] = []
    referred: set[str] = set()
    review_from: str | None = None  # (the day a positive score's review takes a new one from)
    risk_told = False
    for event in year.events:
        value = score_at(lab, event)
        if value is not None:
            scored.append(event)
        owes = event.index >= owned_until and not reads_as_effect(kb, year, event, lab)
        recent = any(0 <= days_between(e.date, event.date) < recall for e in scored)
        known = on_record(year, event)
        if owes and not recent and voiced(rule, event):
            out.append(fail(RULE, year, event, f"low mood voiced ({event.kind}) and no {lab} that visit or in the "
                            f"{recall} days before"))
        elif owes and not recent and event.kind in rule.review_kinds and known & set(rule.review_conditions):
            out.append(fail(RULE, year, event, f"a review of {sorted(known & set(rule.review_conditions))} with no "
                            f"{lab} in {recall} days"))
        if review_from is not None and event.date >= review_from and owes and value is None:
            out.append(fail(RULE, year, event, f"no new {lab} at the first visit {rule.follow_up_days} days after a "
                            "positive score"))
            review_from = None
        told_risk = any(isinstance(f, ComplicationFact) and f.complication in rule.risk_complications
                        for f in event.facts)
        advised = {f.advice for f in event.facts if isinstance(f, AdviceFact)}
        if value is not None:
            review_from = None
            if value < spec.positive_at:
                referred.clear()
            else:
                wanted = rule.crisis_advice if risk_told else rule.safety_net_advice
                if not told_risk and wanted not in advised:
                    out.append(fail(RULE, year, event, f"{lab} {value:g}: {wanted} not said (the self-harm question "
                                    "and its safety net)"))
                referred |= advised & {r.advice for r in rule.referrals}
                referral = rule.referral(value, known)
                if referral is not None and referral.advice not in referred:
                    out.append(fail(RULE, year, event, f"{lab} {value:g}: not referred ({referral.advice}) in this "
                                    "episode"))
                review_from = _day_after(event.date, rule.follow_up_days)
        risk_told = risk_told or told_risk
    return out


def voiced_minimal_violations(kb: KnowledgeBase, year: CareYear) -> list[str]:
    """`low_mood_scored` (the seed-61 read: "I've felt flat... I've stopped seeing friends" beside PHQ-9 3, "within the
    normal range"): a visit that voices strain as feeling low (a kind in `voiced_kinds`) and scores it there reads at
    least `MoodStrain.at_least`, except where the condition's own untreated course is the score (before its first care
    step: the work-up reads the episode)."""
    rule = kb.mood_screen
    if rule is None:
        return []
    lab, floor = rule.lab, rule.strain.at_least
    condition = kb.conditions[year.persona.condition]
    followed = any(m.lab == lab for m in condition.monitored)
    steps = {s.key for s in condition.care_path}
    treated = False
    out = []
    for event in year.events:
        treated = treated or any(isinstance(f, MedicationFact) and f.step in steps for f in event.facts)
        value = score_at(lab, event)
        if event.kind in rule.voiced_kinds and value is not None and value < floor and (treated or not followed):
            out.append(fail("low_mood_scored", year, event, f"low mood voiced, {lab} {value:g}: below {floor:g}, "
                                                            "a minimal score beside what the patient says"))
    return out


def _day_after(day: str, days: int) -> str:
    return (date.fromisoformat(day) + timedelta(days=days)).isoformat()
