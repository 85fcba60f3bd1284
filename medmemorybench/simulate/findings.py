"""What a test, an examination or a check shows, stated from the values simulated for this patient at this visit.

A knowledge-base finding is a template (`knowledge/findings.py`); the visit that states it measures every lab it
names (so the number beside a lab's name is the visit's own `LabFact`, by construction), draws once per patient the
quantities no lab follows, and computes the scores it states from the patient (CRB-65 from their age and the
vital signs taken), then fills it in every language.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from medmemorybench.knowledge.findings import fill, labs_named, placeholders_of
from medmemorybench.knowledge.models import DrawnValue, LabRange, Score, ScoreCriterion, Text
from medmemorybench.simulate.models import Fact, LabFact


@dataclass(frozen=True)
class Episode:
    """What a score may read of an acute episode besides the visit's labs."""

    symptoms: frozenset[str] = frozenset()
    """Symptom keys told in the episode (the illness's own keys, without its prefix)."""
    onset_days: int | None = None
    """Days since the episode's symptoms were first told."""


def _past(value: float, criterion: ScoreCriterion) -> bool:
    if criterion.at_least is not None:
        return value >= criterion.at_least
    if criterion.above is not None:
        return value > criterion.above
    if criterion.at_most is not None:
        return value <= criterion.at_most
    assert criterion.below is not None
    return value < criterion.below


def criterion_met(criterion: ScoreCriterion, labs: Mapping[str, float], age: int, episode: Episode) -> bool:
    """Whether one item of a score is met by the patient at the visit (a lab with no result, one the year may not
    measure yet, meets nothing: a blood pressure kept for the work-up of hypertension is no low blood pressure)."""
    if criterion.lab is not None:
        return criterion.lab in labs and _past(labs[criterion.lab], criterion)
    if criterion.any:
        return any(criterion_met(c, labs, age, episode) for c in criterion.any)
    if criterion.age_at_least is not None:
        return age >= criterion.age_at_least
    if criterion.symptom is not None:
        return criterion.symptom in episode.symptoms
    if criterion.onset_within_days is not None:
        return episode.onset_days is not None and episode.onset_days <= criterion.onset_within_days
    return criterion.stated is not None


def score_value(score: Score, labs: Mapping[str, float], age: int, episode: Episode) -> int:
    """A score's points for the patient at the visit (one per criterion met)."""
    return sum(criterion_met(c, labs, age, episode) for c in score.criteria)


@dataclass
class DrawnValues:
    """The quantities findings state that no lab follows, drawn once per patient (seeded)."""

    rng: random.Random
    female: bool
    values: dict[str, float] = field(default_factory=dict)

    def get(self, owner: str, name: str, spec: DrawnValue) -> float:
        """The patient's value of `owner`'s quantity `name` (drawn on first use)."""
        key = f"{owner}/{name}"
        if key not in self.values:
            low, high = spec.female if self.female and spec.female is not None else spec.range
            value = self.rng.uniform(low, high)
            self.values[key] = round(value, spec.decimals) if spec.decimals else float(round(value))
        return self.values[key]


class StatedFindings:
    """Findings filled from the visit's values, for `YearBuilder` (it uses the builder's labs, patient, day and
    `drawn` values)."""

    def finding_labs(self, text: Text | None, drawn: Mapping[str, DrawnValue] | None = None) -> list[str]:
        """The labs a finding needs measured at its visit."""
        return labs_named(self.kb, text, drawn) if text is not None else []

    def can_state(self, text: Text | None, facts: Iterable[Fact], drawn: Mapping[str, DrawnValue] | None = None
                  ) -> bool:
        """Whether every lab the finding names is measured at this visit or can be now (its interval has passed);
        otherwise `state_finding` states the result on record, still fresh."""
        measured = {f.lab for f in facts if isinstance(f, LabFact)}
        return all(lab in measured or (self.labs.can_measure(lab, self.day) and self.allowed_now(lab))
                   for lab in self.finding_labs(text, drawn))

    def set_ranges(self, ranges: list[LabRange]) -> None:
        """Labs the condition does not follow that this finding's disease puts in a range: their value is drawn
        there, unless the lab already has a value of its own (measured before, or followed)."""
        for lab_range in ranges:
            lab = lab_range.lab
            if lab not in self.labs.courses and lab not in self.labs.baselines and lab != self.labs.derived:
                self.labs.baselines[lab] = self.rng.uniform(*lab_range.range)

    def ranges_hold(self, ranges: list[LabRange]) -> bool:
        """Whether each lab this finding's disease puts in a range can be stated in it today: it has no value of its
        own yet (`set_ranges` draws it there), or is heading for a value in it (a standing fall of 12 mmHg measured
        at an earlier visit is no fall of 25-35 now)."""
        for lab_range in ranges:
            lab = lab_range.lab
            if lab in self.labs.courses or lab in self.labs.baselines or lab == self.labs.derived:
                low, high = lab_range.range
                if not low <= self.labs.target(lab, self.day) <= high:
                    return False
        return True

    def state_finding(self, text: Text, owner: str, drawn: dict[str, DrawnValue], facts: list[Fact],
                      ranges: list[LabRange] | None = None, episode: Episode | None = None) -> tuple[Text, list[Fact]]:
        """The finding filled with this visit's values, and the lab results measured for it (a lab measured too
        recently to repeat, whose interval has not passed, is stated at its value on record, as `measure` lets a
        fresh result stand for itself).

        Args:
            owner: what the finding belongs to (`test:<key>`, `complication:<key>`, `illness:<key>`), so a drawn
                quantity keeps one value per patient.
            facts: the visit's facts so far (a lab already measured there is not measured again).
        """
        self.set_ranges(ranges or [])
        needed = self.finding_labs(text, drawn)
        values = {f.lab: f.value for f in facts if isinstance(f, LabFact)}
        new = self.measure([lab for lab in needed if lab not in values and self.allowed_now(lab)])
        values |= {f.lab: f.value for f in new if isinstance(f, LabFact)}
        for lab in needed:  # measured too recently to repeat: the result on record still stands for itself
            seen = self.latest_value(lab) if lab not in values else None
            if seen is not None:
                values[lab] = seen[1]
        episode = episode or Episode()
        scores = {h.name: score_value(self.kb.scores[h.name], values, self.patient.age, episode)
                  for h in placeholders_of(text) if h.kind == "score"}
        named = [h.name for h in placeholders_of(text) if h.kind == "drawn"]
        drawn_values = {name: self.drawn.get(owner, name, drawn[name]) for name in named}
        for name in named:  # (a quantity that follows a lab: its reading at this visit plus the patient's offset)
            if (lab := drawn[name].offset_from) is not None:
                drawn_values[name] = round(values[lab] + drawn_values[name], drawn[name].decimals)
        days: dict[str, int] = {"onset": episode.onset_days} if episode.onset_days is not None else {}
        filled = fill(self.kb, text, values, drawn_values, {name: drawn[name].decimals for name in named}, scores, days)
        return filled, new
