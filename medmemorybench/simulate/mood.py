"""Low mood assessed (the seed-13 to seed-37 physician reads, issue 27): mood voiced at a visit is screened there with
the questionnaire the base has, depression and bipolar disorder have a score at every review, and a positive screen
asks about thoughts of self-harm with a safety net and a review within two weeks (patient_rules.yaml `mood_screen`).
A mixin of `YearBuilder`: it uses the builder's state."""

from __future__ import annotations

from medmemorybench.knowledge.models import MoodScreen
from medmemorybench.simulate.models import AdviceFact, ComplicationFact, Event, Fact, LabFact, SymptomFact
from medmemorybench.simulate.tasks import Task

MOOD_REVIEW_EARLIEST = 7
"""Days before the review's deadline it may already take place (a week on: visits are a few days apart, and a visit
taken by an acute illness must not push it past two weeks)."""


def voices_low_mood(rule: MoodScreen, kind: str, facts: list[Fact]) -> bool:
    """The patient brings up strain or feeling low, or tells a symptom that is low mood or loss of interest."""
    return kind in rule.voiced_kinds or any(isinstance(f, SymptomFact) and f.symptom in rule.symptoms for f in facts)


class MoodCare:
    """The mood screen at the visits that call for it, for `YearBuilder`."""

    def mood_screen_now(self, kind: str, facts: list[Fact]) -> list[Fact]:
        """The score this visit needs, and what a positive one calls for: asked about thoughts of self-harm with a
        safety net, or the crisis team the same day where such thoughts are on record."""
        rule = self.kb.mood_screen
        if rule is None:
            return []
        # (voiced low mood is screened at once, even where the questionnaire is the condition's own work-up: the
        # seed-37 read of a depression labelled burn-out with no PHQ-9)
        voiced = voices_low_mood(rule, kind, facts)
        reviewed = kind in rule.review_kinds and self.allowed_now(rule.lab) and bool(
            self.conditions_on_record(facts) & set(rule.review_conditions))
        # a review booked after a positive screen is taken at whatever visit it falls due ("while you're here")
        booked = [t for t in self.due_tasks() if t.kind == "mood_review"]
        for task in booked:
            self.state.tasks.remove(task)
        if not voiced and not reviewed and not booked:
            return []
        scored = [f for f in facts if isinstance(f, LabFact) and f.lab == rule.lab]
        last = self.labs.last_measured.get(rule.lab)
        recent = last is not None and self.day - last < rule.recall_days
        # (voiced or booked: assessed that visit; a review: a score of the last two weeks stands)
        if not scored and (voiced or booked or not recent):
            scored = self.measure([rule.lab], urgent=True)
        if not any(f.value >= rule.positive_at for f in scored):
            return scored
        at_risk = any(isinstance(f, ComplicationFact) and f.complication in rule.risk_complications
                      for f in [*facts, *(g for e in self.events for g in e.facts)])
        advice = rule.crisis_advice if at_risk else rule.safety_net_advice
        return [*scored, AdviceFact(advice=advice)]

    def book_mood_review(self, event: Event) -> None:
        """A positive screen is seen again with a new score within `follow_up_days` (one review booked at a time)."""
        rule = self.kb.mood_screen
        advised = {f.advice for f in event.facts if isinstance(f, AdviceFact)}
        if rule is None or not advised & {rule.safety_net_advice, rule.crisis_advice} \
                or any(t.kind == "mood_review" for t in self.state.tasks):
            return
        deadline = self.day + rule.follow_up_days
        self.add_task(Task("mood_review", deadline - MOOD_REVIEW_EARLIEST, deadline=deadline, lab=rule.lab,
                           trigger=event.event_id))

    def _task_mood_review(self, task: Task) -> bool:
        assert task.lab
        self.emit("follow_up", self.measure([task.lab], urgent=True), [task.trigger])
        return True
