"""One body: weight and body-mass index are one measurement read two ways, through the patient's fixed height.

BMI = weight (kg) / height (m)² (WHO). The simulator follows one of the two, as it follows one of eGFR and
creatinine (`formulas.py`): BMI where the condition monitors it (its course is the condition's), otherwise weight,
which starts at the patient's own BMI times their height squared; the other is read from it. Measured at one
visit, the second is computed from the first as reported, so the two on a page always agree. Readings a few days
apart are bound to each other too (`Lab.day_to_day` of weight): one strays from the last by the true change and at
most the day-to-day swing (about 1 kg), never 2 kg overnight with nothing to explain it.
"""

from __future__ import annotations

import random
from typing import Any

from medmemorybench.simulate.labs import LabModel
from medmemorybench.simulate.persona import Body

WEIGHT, BMI = "weight", "bmi"
WEIGHT_LOST_KEY = "weight_lost"
"""Offsets of the weight a symptom tells was lost (`Symptom.weight_lost`) are keyed `weight_lost:<day>`; each ends when
a care step starts."""


class BodyLabModel(LabModel):
    """A patient's labs, with weight and BMI tied by their height."""

    def __init__(self, *args: Any, body: Body, **kwargs: Any) -> None:  # noqa: ANN401
        super().__init__(*args, **kwargs)
        self.height_m2 = body.height_m2
        self.body_primary = BMI if BMI in self.courses else WEIGHT
        self.body_derived = WEIGHT if self.body_primary == BMI else BMI
        self.courses.pop(self.body_derived, None)
        if self.body_primary == WEIGHT:
            self.baselines.setdefault(WEIGHT, body.bmi * self.height_m2)
        self._reported: dict[str, tuple[int, float]] = {}
        self._weighed: tuple[int, float, float] | None = None
        """The last weighing: its day, its reading in kilograms and the true weight then."""

    def _read(self, lab: str, value: float) -> float:
        """The derived lab's value for `lab`'s value."""
        return value / self.height_m2 if lab == WEIGHT else value * self.height_m2

    def target(self, lab: str, day: float) -> float:
        if lab == self.body_derived:
            return self._read(self.body_primary, super().target(self.body_primary, day))
        return super().target(lab, day)

    def true_value(self, lab: str, day: int) -> float:
        if lab == self.body_derived:
            return self._read(self.body_primary, super().true_value(self.body_primary, day))
        return super().true_value(lab, day)

    def add_offset(self, key: str, lab: str, day: int, delta: float, end: int | None = None) -> None:
        """A push on the derived lab is the push on the followed one that gives it (2 kg is 2 kg / h² of BMI)."""
        if lab == self.body_derived:
            lab, delta = self.body_primary, self._read(self.body_derived, delta)
        super().add_offset(key, lab, day, delta, end)

    def measure(self, lab: str, day: int, rng: random.Random | None = None,
                within: tuple[float, float] | None = None) -> float:
        """As `LabModel.measure`; weight and BMI taken on one day are one reading (the second computed from the
        first as reported), and a reading within `DayToDay.days` of the last one strays from it by no more than the
        true change and the day-to-day swing (`Lab.day_to_day` of weight)."""
        if lab not in (WEIGHT, BMI):
            return super().measure(lab, day, rng, within)
        other = BMI if lab == WEIGHT else WEIGHT
        seen = self._reported.get(other)
        spec = self.labs[lab]
        if seen is not None and seen[0] == day:
            value = self._read(other, seen[1])
            self.last_measured[lab] = day
        else:
            value = self._swing_bound(lab, day, super().measure(lab, day, rng, within))
        value = round(value, spec.decimals) if spec.decimals else float(round(value))
        self._reported[lab] = (day, value)
        self._weighed = (day, self.kilograms(lab, value), self.true_value(WEIGHT, day))
        return value

    def kilograms(self, lab: str, value: float) -> float:
        return value if lab == WEIGHT else self._read(BMI, value)

    def _swing_bound(self, lab: str, day: int, value: float) -> float:
        """`value` of `lab` moved back within the day-to-day swing of the last weighing, where it is recent."""
        swing = self.labs[WEIGHT].day_to_day
        if swing is None or self._weighed is None or day - self._weighed[0] > swing.days:
            return value
        then, kg_then, true_then = self._weighed
        expected = kg_then + self.true_value(WEIGHT, day) - true_then
        kg = min(max(self.kilograms(lab, value), expected - swing.amount), expected + swing.amount)
        return kg if lab == WEIGHT else self._read(WEIGHT, kg)

    def unchanged_since(self, lab: str) -> int:
        return super().unchanged_since(self.body_primary if lab == self.body_derived else lab)
