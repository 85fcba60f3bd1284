"""Lab and vital trajectories with physiological kinetics.

Every lab has a true value that relaxes toward a target with time constant `response_days / 2`
(`Lab.kinetics`), so no value ever moves faster than the lab can. The target is set by the year:
before diagnosis a monitored lab drifts from its onset value to its untreated value (the disease
progressing), or, where it `emerges` (a screening questionnaire), holds its onset value until the
misdiagnosis is made and heads for its untreated value from the next day; each active care step pulls
the labs it `moves` toward their treated value by its share (more with each dose increase, none while
doses are being missed), or drives them to a range of its own (`targets`); complications, adverse
effects and voiced strain add offsets while they last. Labs nothing drives sit at a value drawn once in
the reference range. A measurement adds noise (the lab's CV, truncated at two standard deviations), is
clamped to the plausible range and rounded as the lab is reported.

Effects may start before the day they are recorded (a complication's onset, the first missed dose),
but never before a lab affected by them was last measured: the past is never rewritten.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field

from medmemorybench.knowledge.models import NOISE_TRUNCATION, Condition, Lab, PopulationBand
from medmemorybench.simulate.formulas import RELATED, convert

ROLE_SHARE = {"first_line": 0.6, "step_up": 0.3, "add_on": 0.2, "symptomatic": 0.5}
"""Share of the untreated-to-treated gap a care step closes when started on top of another step moving the lab."""
FIRST_MOVER_SHARE = 0.6
"""Share a step closes for a lab no other active step moves (a statin is what lowers LDL, whatever its role)."""
INCREASE_SHARE = 0.1
"""Further share each dose increase closes."""
DRIFT_STEP_DAYS = 7
"""Granularity of the pre-diagnosis drift (piecewise constant in steps of this many days)."""


def time_constant(lab: Lab) -> float:
    """Days for a lab to close 63 % of the gap to a new target."""
    assert lab.kinetics is not None, f"labs.yaml: {lab.key}: kinetics missing"
    return lab.kinetics.response_days / 2


@dataclass
class StepEffect:
    """A care step's pull on its labs while it is active."""

    step: str
    start: int
    shares: dict[str, float]
    """Per lab it moves: the share of the gap it closes."""
    targets: dict[str, float]
    end: int | None = None
    increases: list[int] = field(default_factory=list)
    """Days of dose increases."""
    decreases: list[int] = field(default_factory=list)
    """Days of dose reductions."""
    lapses: list[tuple[int, int]] = field(default_factory=list)
    """(first, last) day during which the drug has no effect (missed doses)."""

    def is_active(self, day: float) -> bool:
        return self.start <= day and (self.end is None or day < self.end)

    @property
    def moves(self) -> tuple[str, ...]:
        return tuple(self.shares)

    def lapsed_on(self, day: float) -> bool:
        """Whether doses are being missed on `day` (the drug has no effect)."""
        return any(first <= day <= last for first, last in self.lapses)

    def share_on(self, lab: str, day: float) -> float:
        if self.lapsed_on(day):
            return 0.0
        steps = sum(1 for d in self.increases if d <= day) - sum(1 for d in self.decreases if d <= day)
        return max(0.0, self.shares[lab] + INCREASE_SHARE * steps)


@dataclass
class Offset:
    """An event pushing one lab by `delta` from `start` until `end` (exclusive)."""

    lab: str
    start: int
    delta: float
    end: int | None = None

    def is_active(self, day: float) -> bool:
        return self.start <= day and (self.end is None or day < self.end)


@dataclass
class _Course:
    onset: float
    untreated: float
    treated: float


def _in_population(bands: list[PopulationBand], draw: float) -> float:
    """The value a uniform `draw` in [0, 1) gives: the band its share falls in, and its place in that band."""
    for band in bands:
        if draw < band.share or band is bands[-1]:
            low, high = band.range
            return low + (high - low) * min(draw / band.share, 1.0)
        draw -= band.share
    raise AssertionError("no population bands")


class LabModel:
    """One patient's labs as functions of the day of the year (0 = 1 January)."""

    def __init__(self, labs: dict[str, Lab], condition: Condition, rng: random.Random, drift_days: int,
                 baselines: dict[str, float] | None = None, age: int = 50, female: bool = False) -> None:
        """Draw this patient's onset, untreated and treated values.

        Args:
            drift_days: day by which the untreated disease reaches its untreated values.
            baselines: values of labs the condition does not monitor that are known (eGFR from age).
            age, female: for labs derived from others (creatinine and eGFR, `formulas.py`).
        """
        self.labs, self.rng, self.drift_days = labs, rng, max(drift_days, 1)
        self.age, self.female = age, female
        self.courses = {m.lab: _Course(rng.uniform(*m.onset), rng.uniform(*m.untreated), rng.uniform(*m.treated))
                        for m in condition.monitored}
        self.emerging = {m.lab for m in condition.monitored if m.emerges}
        """Labs that hold their onset value until `emerge` (a screen that declares the episode at the turning point)."""
        self.rise_from: dict[str, int] = {}
        # of creatinine and eGFR the simulator follows one and reads the other from it (eGFR when it is monitored)
        first, second = RELATED
        self.primary = first if first in self.courses or second not in self.courses else second
        self.derived = second if self.primary == first else first
        self.courses.pop(self.derived, None)
        self.baselines = dict(baselines or {})
        self.effects: list[StepEffect] = []
        self.offsets: dict[str, Offset] = {}
        self._value: dict[str, float] = {}
        self._day: dict[str, int] = {}
        self.last_measured: dict[str, int] = {}
        self.sample: dict[str, tuple[int, float]] = {}
        """Lab -> (day, value) last reported: the sample a part and its total are squared in (`_in_sample`)."""

    # --- what the year does to the labs ----------------------------------------------------------

    def _check_not_past(self, labs, day: int) -> None:  # noqa: ANN001
        for lab in (self.primary if lab == self.derived else lab for lab in labs):
            assert self._day.get(lab, -1) <= day, f"effect on {lab} from day {day} rewrites a measurement"

    def start_step(self, step: str, day: int, role: str, moves: list[str], targets: dict[str, tuple[float, float]],
                   definitive: bool = False) -> StepEffect:
        """A care step's drug is started on `day` (`definitive`: a one-off treatment that closes the whole gap)."""
        moves = [lab for lab in moves if lab != self.derived]  # it follows its primary
        targets = {lab: bounds for lab, bounds in targets.items() if lab != self.derived}
        self._check_not_past([*moves, *targets], day)
        drawn = {lab: self.rng.uniform(*bounds) for lab, bounds in targets.items()}
        moved = {lab for e in self.effects if e.is_active(day) for lab in e.moves}
        shares = {lab: 1.0 if definitive else ROLE_SHARE[role] if lab in moved
                  else max(ROLE_SHARE[role], FIRST_MOVER_SHARE) for lab in moves}
        effect = StepEffect(step, day, shares, drawn)
        self.effects.append(effect)
        return effect

    def increase(self, effect: StepEffect, day: int) -> None:
        """The step's drug dose is increased on `day`."""
        self._check_not_past(effect.moves, day)
        effect.increases.append(day)

    def decrease(self, effect: StepEffect, day: int) -> None:
        """The step's drug dose is lowered on `day`."""
        self._check_not_past(effect.moves, day)
        effect.decreases.append(day)

    def end_step(self, effect: StepEffect, day: int) -> None:
        """The step's drug is stopped on `day` (its pull ends)."""
        self._check_not_past([*effect.moves, *effect.targets], day)
        effect.end = day

    def lapse(self, effect: StepEffect, first: int, last: int) -> None:
        """Doses are missed so that the drug has no effect from `first` to `last`: the labs it moves lose its pull
        and those it holds in a range of its own drift back to where they were without it (warfarin's INR)."""
        self._check_not_past([*effect.moves, *effect.targets], first)
        effect.lapses.append((first, last))

    def add_offset(self, key: str, lab: str, day: int, delta: float, end: int | None = None) -> None:
        """An event pushes `lab` by `delta` from `day` on, until resolved or `end` (a push on a derived lab is the
        push on its primary that gives it: a creatinine rise of 30 µmol/L is the eGFR fall behind it)."""
        if lab == self.derived:
            primary = self.true_value(self.primary, day)
            shown = convert(self.primary, primary, self.age, self.female)
            lab, delta = self.primary, convert(self.derived, shown + delta, self.age, self.female) - primary
        self._check_not_past([lab], day)
        self.offsets[key] = Offset(lab, day, delta, end)

    def pushed(self, lab: str, day: int, start: int, delta: float) -> float:
        """`lab`'s true value on `day` were it pushed by `delta` from `start` on, nothing fixed and the push not kept
        (how large a push must be to show a value by then)."""
        primary = self.primary if lab == self.derived else lab
        if lab == self.derived:
            before = self.projected(primary, start)
            shown = convert(primary, before, self.age, self.female)
            delta = convert(lab, shown + delta, self.age, self.female) - before
        self.offsets["_pushed"] = Offset(primary, start, delta)
        try:
            value = self.projected(primary, day)
        finally:
            del self.offsets["_pushed"]
        return convert(primary, value, self.age, self.female) if lab == self.derived else value

    def emerge(self, lab: str, day: int) -> None:
        """An emerging lab starts from `day` toward its untreated value (the core symptoms come in)."""
        self._check_not_past([lab], day)
        self.rise_from[lab] = day

    def harm_bound(self, lab: str, delta: float) -> float | None:
        """The true value a harm moving `lab` by `delta` is confirmed at: far enough past the lab's harm level
        (`Lab.harm_below`/`harm_above`) that no measurement's noise (at most NOISE_TRUNCATION cv) shows it short."""
        spec = self.labs[lab]
        level = spec.harm_below if delta < 0 else spec.harm_above
        if level is None or spec.kinetics is None:
            return None
        spread = spec.kinetics.spread
        return level / (1 - spread) if delta > 0 else level / (1 + spread)

    def harm_delta(self, lab: str, day: int, delta: float) -> float:
        """The push a drug harm needs to be one: at least `delta`, and to settle a little past its confirming
        value (the confirming visit comes once the true value is past it, see `is_past`)."""
        bound = self.harm_bound(lab, delta)
        kinetics = self.labs[lab].kinetics
        if bound is None or kinetics is None:
            return delta
        settle = bound * (1 + kinetics.cv) if delta > 0 else bound * (1 - kinetics.cv)
        needed = settle - self.target(lab, day)
        return max(delta, needed) if delta > 0 else min(delta, needed)

    def is_past(self, lab: str, day: int, bound: float, delta: float) -> bool:
        """Whether `lab`'s true value on `day` is past `bound` in the direction of `delta`."""
        value = self.true_value(lab, day)
        return value > bound if delta > 0 else value < bound

    def resolve(self, key: str, day: int) -> None:
        """The offset `key` ends on `day` (the lab relaxes back at its own pace)."""
        offset = self.offsets.get(key)
        if offset is not None and offset.end is None:
            self._check_not_past([offset.lab], day)
            offset.end = day

    # --- the trajectories ------------------------------------------------------------------------

    def _baseline(self, lab: str) -> float:
        if lab not in self.baselines:
            part = self.labs[lab].part_of
            if self.labs[lab].without_drug is not None:  # (a drug level: none of the drug, none in the blood)
                self.baselines[lab] = self.labs[lab].without_drug
            elif part is not None:  # (a part sits at its usual share of its total's value: neutrophils of the WBC)
                self.baselines[lab] = self._baseline(part.total) * self.rng.uniform(*part.share)
            elif self.labs[lab].population:  # (an inherited level: one draw picks the band and the value in it)
                self.baselines[lab] = _in_population(self.labs[lab].population, self.rng.random())
            else:
                low, high = self.labs[lab].reference
                self.baselines[lab] = self.rng.uniform(low + (high - low) * 0.15, high - (high - low) * 0.15)
        return self.baselines[lab]

    def target(self, lab: str, day: float) -> float:
        """Where `lab` is heading on `day`."""
        course = self.courses.get(lab)
        if course is None:
            driven = [e for e in self.effects if e.is_active(day) and lab in e.targets and not e.lapsed_on(day)]
            base = max(driven, key=lambda e: e.start).targets[lab] if driven else self._baseline(lab)
        else:
            if lab in self.emerging:  # (its onset value until it emerges, then its untreated one)
                rise = self.rise_from.get(lab)
                drifted = 1.0 if rise is not None and day >= rise else 0.0
            else:
                drifted = min(1.0, (day // DRIFT_STEP_DAYS) * DRIFT_STEP_DAYS / self.drift_days)
            base = course.onset + (course.untreated - course.onset) * drifted
            active = [e for e in self.effects if e.is_active(day)]
            driven = [e for e in active if lab in e.targets and not e.lapsed_on(day)]
            if driven:
                base = max(driven, key=lambda e: e.start).targets[lab]
            else:
                share = min(1.0, sum(e.share_on(lab, day) for e in active if lab in e.moves))
                base += (course.treated - base) * share
        return base + sum(o.delta for o in self.offsets.values() if o.lab == lab and o.is_active(day))

    def _breakpoints(self, lab: str, start: int, end: int) -> list[int]:
        days = {end}
        for effect in self.effects:
            if lab in effect.moves or lab in effect.targets:
                days.update([effect.start, *effect.increases, *effect.decreases])
                if effect.end is not None:
                    days.add(effect.end)
                for first, last in effect.lapses:
                    days.update((first, last + 1))
        for offset in self.offsets.values():
            if offset.lab == lab:
                days.add(offset.start)
                if offset.end is not None:
                    days.add(offset.end)
        if lab in self.emerging:
            days.update([self.rise_from[lab]] if lab in self.rise_from else [])
        elif lab in self.courses:
            days.update(range(DRIFT_STEP_DAYS, self.drift_days + DRIFT_STEP_DAYS, DRIFT_STEP_DAYS))
        return sorted(d for d in days if start < d <= end)

    def true_value(self, lab: str, day: int) -> float:
        """The lab's true value at the start of `day` (exact first-order relaxation between breakpoints)."""
        if lab == self.derived:
            return convert(self.primary, self.true_value(self.primary, day), self.age, self.female)
        if lab not in self._value:
            self._value[lab], self._day[lab] = self.target(lab, 0), 0
        value = self.projected(lab, day)
        self._value[lab], self._day[lab] = value, day
        return value

    def projected(self, lab: str, day: int) -> float:
        """The true value of a primary lab on `day` as things stand, without fixing it (a push still to be added
        from an earlier day may change it): every breakpoint between the last fixed day and `day` taken, an earlier
        push that ends on the way included."""
        value, at = self._value.get(lab, self.target(lab, 0)), self._day.get(lab, 0)
        assert day >= at, f"{lab}: asked for day {day} after day {at} was fixed"
        tau = time_constant(self.labs[lab])
        for point in self._breakpoints(lab, at, day):
            goal = self.target(lab, at)
            value = goal + (value - goal) * math.exp(-(point - at) / tau)
            at = point
        return value

    def measure(self, lab: str, day: int, rng: random.Random | None = None,
                within: tuple[float, float] | None = None) -> float:
        """The value reported on `day`: the true value with measurement noise, clamped and rounded (`rng`: where the
        noise is drawn from, when not the year's own draws; `within`: the band the reading is drawn in,
        `Monitored.named`)."""
        spec = self.labs[lab]
        assert spec.kinetics is not None
        true = self.true_value(lab, day)
        draw = (rng or self.rng).gauss(0, 1)
        noise = max(-NOISE_TRUNCATION, min(NOISE_TRUNCATION, draw)) * spec.kinetics.cv * abs(true)
        value = min(max(true + noise, spec.plausible[0]), spec.plausible[1])
        if within is not None:
            value = min(max(value, within[0]), within[1])
        value = self._in_sample(lab, day, value)
        self.last_measured[lab] = day
        reported = round(value, spec.decimals) if spec.decimals else float(round(value))
        self.sample[lab] = (day, reported)
        return reported

    def _in_sample(self, lab: str, day: int, value: float) -> float:
        """A value squared with the same day's sample (`PartOf`): a part at most its largest share of the total
        and no more than the total less the other parts, a total at least its parts together (a white cell count
        is never below its neutrophils, whatever each one's noise)."""
        today = {key: value for key, (on, value) in self.sample.items() if on == day}
        spec = self.labs[lab]
        part = spec.part_of
        if part is not None and part.total in today:
            others = sum(v for key, v in today.items() if key != lab and self._total_of(key) == part.total)
            step = 10 ** -spec.decimals
            value = min(value, part.max_share * today[part.total], today[part.total] - others - step)
        parts = [v for key, v in today.items() if self._total_of(key) == lab]
        if parts:
            floor = max([sum(parts) + 10 ** -spec.decimals,
                         *(v / self.labs[key].part_of.max_share for key, v in today.items()  # type: ignore[union-attr]
                           if self._total_of(key) == lab)])
            value = max(value, floor)
        return max(value, 0.0)

    def _total_of(self, lab: str) -> str | None:
        part = self.labs[lab].part_of
        return part.total if part is not None else None

    def can_measure(self, lab: str, day: int) -> bool:
        """Whether `lab`'s measuring interval has passed since it was last measured."""
        spec = self.labs[lab]
        assert spec.kinetics is not None
        last = self.last_measured.get(lab)
        return last is None or day - last >= spec.kinetics.min_interval_days

    def unchanged_since(self, lab: str) -> int:
        """The last day on which `lab` was fixed by a measurement (-1: never)."""
        return self._day.get(self.primary if lab == self.derived else lab, -1)
