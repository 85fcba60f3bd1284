"""Mood assessed (issue 27, every physician read from seed 13 to seed 53): low mood voiced at a visit is scored there
with the questionnaire the base has, depression and bipolar disorder have a score at every review, and a positive
score, wherever it is taken, is acted on that visit: the self-harm question with a safety net, a review with a new
score two weeks on, and a referral by score (patient_rules.yaml `mood_screen`).

A score of the questionnaire's two-week recall stands for a visit's own (it asks about those two weeks: a new one
sooner is no new measure), and one that would read as the effect of a drug change it cannot yet show waits for the next
visit, as any lab does (`reads_as_effect`). Strain a patient voices moves the score of one whose condition does not
follow it (`MoodStrain`), so a visit that tells of feeling low or in tears never scores as one with no complaint.

A mixin of `YearBuilder`: it uses the builder's state."""

from __future__ import annotations

import math

from medmemorybench.knowledge.models import MoodScreen
from medmemorybench.simulate.labs import time_constant
from medmemorybench.simulate.models import AdviceFact, ComplicationFact, Fact, LabFact, SymptomFact

STRAIN_KEY = "strain"
"""Offsets of voiced strain on the score are keyed `strain:<day>`."""


def voices_low_mood(rule: MoodScreen, kind: str, facts: list[Fact]) -> bool:
    """The patient brings up strain or feeling low, or tells a symptom that is low mood or loss of interest."""
    return kind in rule.voiced_kinds or any(isinstance(f, SymptomFact) and f.symptom in rule.symptoms for f in facts)


class MoodCare:
    """The mood screen at the visits that call for it, for `YearBuilder`."""

    def mood_screen_now(self, kind: str, facts: list[Fact], triggers: list[str | None]) -> list[Fact]:
        """The score this visit needs, and what a positive score calls for."""
        rule = self.kb.mood_screen
        if rule is None:
            return []
        lab = rule.lab
        if kind in rule.voiced_kinds:
            self._strain_builds(rule)
        voiced = voices_low_mood(rule, kind, facts)
        reviewed = kind in rule.review_kinds and bool(self.conditions_on_record(facts) & set(rule.review_conditions))
        review_due = self.state.mood_review_on is not None and self.day >= self.state.mood_review_on
        scored = [f for f in facts if isinstance(f, LabFact) and f.lab == lab]
        out: list[Fact] = []
        if not scored and (voiced or reviewed or review_due) and self.allowed_now(lab) \
                and self.labs.can_measure(lab, self.day) and not self.reads_as_effect(lab, facts, triggers):
            scored = out = self.measure([lab])
        if not scored:
            return out
        self.state.mood_review_on = None  # (a new score is the review a positive one booked)
        value = scored[0].value
        if value < self.kb.labs[lab].positive_at:
            self.state.mood_referred.clear()  # (the episode is over: a later positive screen is referred again)
            return out
        return out + self._act_on_positive(rule, value, facts)

    def mood_review_reading(self, lab: str) -> list[Fact]:
        """The score a visit with a mood review due reads anyway, read first where today's decision turns on it
        (`lab` the step's marker): an augmentation queued on a PHQ-9 of 12 is not started at a visit whose own
        PHQ-9 reads 7 (seed 46 P0015 E089, a merge of the seed-61 rules)."""
        rule = self.kb.mood_screen
        due = rule is not None and rule.lab == lab and self.state.mood_review_on is not None \
            and self.day >= self.state.mood_review_on
        return self.measure([lab]) if due and self.allowed_now(lab) and self.labs.can_measure(lab, self.day) else []

    def _act_on_positive(self, rule: MoodScreen, value: float, facts: list[Fact]) -> list[Fact]:
        """The self-harm question with its safety net (the safety plan recalled where thoughts of suicide are on record;
        the day they are told, the complication's own plan stands), the referral the score calls for where this
        episode has not had it yet, and the review booked."""
        out: list[Fact] = []
        told_today = any(isinstance(f, ComplicationFact) and f.complication in rule.risk_complications for f in facts)
        if not told_today:
            at_risk = any(isinstance(f, ComplicationFact) and f.complication in rule.risk_complications
                          for e in self.events for f in e.facts)
            out.append(AdviceFact(advice=rule.crisis_advice if at_risk else rule.safety_net_advice))
        referral = rule.referral(value, self.conditions_on_record(facts))
        if referral is not None and referral.advice not in self.state.mood_referred:
            out.append(AdviceFact(advice=referral.advice))
            self.state.mood_referred.add(referral.advice)
        self.state.mood_review_on = self.day + rule.follow_up_days
        return out

    def _strain_builds(self, rule: MoodScreen) -> None:
        """Strain told moves the score of a patient whose condition does not follow it, or whose condition that does
        is being treated (a dip, not remission: only as far as `MoodStrain.at_least`, the episode's own course
        carrying the rest): built up over the weeks before (never before the last score on
        record), lasting some weeks, and at least enough that a score today reads `MoodStrain.at_least` beyond its
        noise; one strain at a time, and a new one where the one before has faded below that."""
        lab = rule.lab
        if lab in self.labs.courses and not self.state.started_steps:
            return  # (the untreated episode is the course itself: the work-up's screen reads what it is)
        strain = rule.strain
        spec = self.kb.labs[lab]
        assert spec.kinetics is not None
        floor = strain.at_least / (1 - spec.kinetics.spread)
        start = max(self.labs.unchanged_since(lab), self.day - strain.built_days, 0)
        active = any(o.is_active(self.day) for key, o in self.labs.offsets.items() if key.startswith(STRAIN_KEY))
        self.labs.true_value(lab, start)  # (fixed there: the push starts no earlier)
        kept = math.exp(-(self.day - start) / time_constant(spec))  # (of a push from the start: the share not shown)
        # (the score today without a new strain: every change on the way taken, an earlier strain that ends between
        # the start and today included, P0010 seed 43's PHQ-9 4 at E098 as its strain of day 318 ended on day 347)
        today = self.labs.projected(lab, self.day)
        scored = self.labs.can_measure(lab, self.day)
        if active and (not scored or today >= floor):
            return
        # (a treated depression's score is its own course: the low mood voiced is the episode's, already in it, not a
        # strain of its own on top. It only keeps the score from reading under the mild band the visit's words
        # endorse; a push of 3-10 points over a score still at 9-12 read a moderately severe relapse into every
        # psychological visit and held the year off remission)
        # (a strain still active that has not yet brought the score to the floor is only topped up to it: a second
        # draw of 3-10 points on top of the first read a PHQ-9 of 1 as 17 seventeen days on, faster than the score's
        # own kinetics, seed 39 P0004 E062)
        course = lab in self.labs.courses
        delta = 0.0 if course or active else self.mood_rng.uniform(*strain.delta)
        if scored and kept < 1:  # (a score today: the push reaches the floor by today, a half point past it)
            delta = max(delta, (floor - today) / (1 - kept) + 0.5)
        if delta <= 0:
            return
        self.labs.add_offset(f"{STRAIN_KEY}:{self.day}", lab, start, delta,
                             end=start + self.mood_rng.randint(*strain.lasts_days))
