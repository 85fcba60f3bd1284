"""Lab and vital trajectories that move with the year's events.

Before diagnosis a monitored value drifts from its onset value to its untreated value. From the start
of treatment it approaches the treated value (faster and further with each intensification). Events
add offsets: a complication or adverse effect pushes a lab, a lapse in adherence pushes it back
toward untreated; resolving an offset lets it decay.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field

from medmemorybench.knowledge.models import Lab, Monitored

TREATMENT_TAU_DAYS = 35.0
"""Time constant of the approach to the treated value."""
RESOLVE_TAU_DAYS = 25.0
"""Time constant of an offset's decay once its cause is treated."""
START_INTENSITY = 0.7
"""Share of the untreated-to-treated gap the first regimen closes."""


@dataclass
class _Offset:
    lab: str
    start_day: int
    delta: float
    resolved_day: int | None = None


@dataclass
class _Course:
    onset: float
    untreated: float
    treated: float


@dataclass
class LabModel:
    """The patient's lab values as functions of the day of the year (0 = 1 January)."""

    labs: dict[str, Lab]
    rng: random.Random
    diagnosis_day: int
    courses: dict[str, _Course] = field(default_factory=dict)
    treatment_day: int | None = None
    intensity: float = START_INTENSITY
    offsets: dict[str, _Offset] = field(default_factory=dict)

    @classmethod
    def for_condition(
        cls, labs: dict[str, Lab], monitored: list[Monitored], rng: random.Random, diagnosis_day: int
    ) -> LabModel:
        """Draw this patient's onset, untreated and treated values for every monitored lab."""
        model = cls(labs=labs, rng=rng, diagnosis_day=max(diagnosis_day, 1))
        for mon in monitored:
            model.courses[mon.lab] = _Course(
                onset=rng.uniform(*mon.onset),
                untreated=rng.uniform(*mon.untreated),
                treated=rng.uniform(*mon.treated),
            )
        return model

    def start_treatment(self, day: int) -> None:
        """Treatment of the disease begins on `day` (only the first call counts)."""
        if self.treatment_day is None:
            self.treatment_day = day

    def intensify(self, amount: float = 0.1) -> None:
        """A dose increase or added drug closes more of the gap to the treated value."""
        self.intensity = min(1.0, self.intensity + amount)

    def add_offset(self, key: str, lab: str, day: int, delta: float) -> None:
        """An event pushes `lab` by `delta` from `day` on, until resolved."""
        self.offsets[key] = _Offset(lab, day, delta)

    def push_back(self, key: str, day: int, share: float) -> None:
        """A lapse: every monitored lab loses `share` of its treatment effect from `day` on."""
        for lab, course in self.courses.items():
            self.add_offset(f"{key}:{lab}", lab, day, share * (course.untreated - course.treated))

    def resolve(self, key_prefix: str, day: int) -> None:
        """Offsets whose key starts with `key_prefix` decay from `day` on."""
        for key, offset in self.offsets.items():
            if key.startswith(key_prefix) and offset.resolved_day is None:
                offset.resolved_day = day

    def _base(self, lab: str, day: int) -> float:
        course = self.courses.get(lab)
        if course is None:
            low, high = self.labs[lab].reference
            return (low + high) / 2
        if self.treatment_day is None or day < self.treatment_day:
            progress = min(1.0, day / self.diagnosis_day)
            return course.onset + (course.untreated - course.onset) * progress
        reached = self.intensity * (1 - math.exp(-(day - self.treatment_day) / TREATMENT_TAU_DAYS))
        return course.untreated + (course.treated - course.untreated) * reached

    def _offsets(self, lab: str, day: int) -> float:
        total = 0.0
        for offset in self.offsets.values():
            if offset.lab != lab or day < offset.start_day:
                continue
            if offset.resolved_day is not None and day > offset.resolved_day:
                total += offset.delta * math.exp(-(day - offset.resolved_day) / RESOLVE_TAU_DAYS)
            else:
                total += offset.delta
        return total

    def measure(self, lab: str, day: int) -> float:
        """The value measured on `day`: trajectory + offsets + measurement noise, rounded and clamped."""
        spec = self.labs[lab]
        course = self.courses.get(lab)
        spread = abs(course.untreated - course.treated) if course else 0.0
        spread = spread or (spec.reference[1] - spec.reference[0]) / 2
        value = self._base(lab, day) + self._offsets(lab, day) + self.rng.gauss(0, 0.03 * spread)
        value = min(max(value, spec.plausible[0]), spec.plausible[1])
        return round(value, spec.decimals) if spec.decimals else float(round(value))
