"""Shared helpers for the clinical invariant tests: the cohort, and independent readings of the record.

The checks re-derive what a physician would see from the events and the knowledge base itself (who the
patient is, what they were taking on a day, the latest eGFR on record), not from the engine's state.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import date, timedelta

from medmemorybench.knowledge.base import KnowledgeBase
from medmemorybench.knowledge.models import DOSES_PER_DAY, PatientRule
from medmemorybench.simulate.formulas import RELATED, convert
from medmemorybench.simulate.models import CareYear, Event, LabFact, MedicationFact

N_SEEDS = 50
"""Seeds per roster condition: 50 x 20 conditions = 1,000 patients."""
GIVEN = ("start", "increase", "decrease", "continue", "administer", "correct")
"""Medication actions that mean the drug is being taken (or given) after the fact."""


def fail(rule: str, year: CareYear, event: Event | None, detail: str) -> str:
    """A failure message naming the rule, the patient and the event."""
    where = f"{year.persona.persona_id} (seed {year.seed}, {year.persona.condition})"
    if event is not None:
        where += f" {event.event_id} {event.date}"
    return f"[{rule}] {where}: {detail}"


def with_facts(year: CareYear, *facts: object) -> CareYear:
    """A copy of a year with one more visit at its end holding `facts` (a crafted violation's visit)."""
    last = year.events[-1]
    event = last.model_copy(update={"event_id": last.event_id + "X", "index": last.index + 1, "facts": list(facts)})
    return year.model_copy(update={"events": [*year.events, event]})


def with_event_facts(year: CareYear, event: Event, facts: list) -> CareYear:
    """A copy of a year whose `event` holds `facts` instead of its own (a crafted violation made of a real visit)."""
    return year.model_copy(
        update={"events": [e.model_copy(update={"facts": facts}) if e is event else e for e in year.events]}
    )


def check(failures: list[str]) -> None:
    """Fail with the count and the first fifteen violations (each names its rule, patient and event)."""
    assert not failures, f"{len(failures)} violations, first ones:\n" + "\n".join(failures[:15])


def days_between(a: str, b: str) -> int:
    return (date.fromisoformat(b) - date.fromisoformat(a)).days


def given(year: CareYear) -> Iterator[tuple[Event, MedicationFact]]:
    """Every medication fact that gives a drug (not a stop), with its event."""
    for event in year.events:
        for fact in event.facts:
            if isinstance(fact, MedicationFact) and fact.action in GIVEN:
                yield event, fact


def latest_egfr(year: CareYear, event: Event) -> float | None:
    """The latest eGFR on record up to and including this event."""
    return latest_value(year, event, "egfr")


def latest_value(year: CareYear, event: Event, lab: str) -> float | None:
    """The latest value of a lab on record up to and including this event."""
    value = None
    for other in year.events:
        if other.index > event.index:
            break
        for fact in other.facts:
            if isinstance(fact, LabFact) and fact.lab == lab:
                value = fact.value
    return value


def dose_overrides(kb: KnowledgeBase, drug: str) -> set[float]:
    """Doses off a drug's ladder that are still right: a care step's own dose for it and the steps of its taper
    (prednisolone 40, 35 ... 5 mg), and a start-dose rule's (warfarin 2.5 mg at 80 or over)."""
    candidates = [c for cond in kb.conditions.values() for s in cond.care_path for c in s.candidates
                  if c.drug == drug and c.dose]
    steps = {c.dose for c in candidates} | {c.taper.dose_on(c.dose, day) for c in candidates if c.taper
                                            for day in range(c.course_days or 0)}
    return steps | {r.start_dose for r in kb.patient_rules if r.start_dose and drug in kb.expand(r.drugs)}


def histories(year: CareYear) -> list[str]:
    return year.persona.histories


def response_days(kb: KnowledgeBase, lab: str) -> float:
    kinetics = kb.labs[lab].kinetics
    assert kinetics is not None
    return kinetics.response_days


def target_hull(kb: KnowledgeBase, year: CareYear, lab: str) -> tuple[float, float]:
    """Every value the lab's target can take for this patient, from the knowledge base alone."""
    condition = kb.conditions[year.persona.condition]
    spec = kb.labs[lab]
    lows, highs = [], []
    monitored = next((m for m in condition.monitored if m.lab == lab), None)
    if monitored is not None:
        for low, high in (monitored.onset, monitored.untreated, monitored.treated):
            lows.append(low)
            highs.append(high)
        for step in condition.care_path:
            if lab in step.targets:
                lows.append(step.targets[lab][0])
                highs.append(step.targets[lab][1])
    else:
        lows.append(spec.reference[0])
        highs.append(spec.reference[1])
        for mis in condition.misdiagnoses:
            for finding in mis.findings:
                if finding.lab == lab:
                    lows.append(finding.range[0])
                    highs.append(finding.range[1])
        for drug in kb.drugs.values():  # a drug that holds the lab in a range of its own (warfarin: INR)
            for monitored in drug.monitoring:
                if monitored.lab == lab and monitored.on_treatment:
                    lows.append(monitored.on_treatment[0])
                    highs.append(monitored.on_treatment[1])
        if lab == "egfr":
            bands = [b.egfr for b in kb.renal_baseline] + [h.egfr for h in kb.history_conditions.values() if h.egfr]
            lows += [b[0] for b in bands]
            highs += [b[1] for b in bands]
    deltas = [c.lab_delta for c in condition.complications if c.lab == lab and c.lab_delta is not None]
    deltas += [e.lab_delta for d in kb.drugs.values() for e in d.adverse_effects
               if e.lab == lab and e.lab_delta is not None]
    up = sum(d for d in deltas if d > 0)
    down = sum(d for d in deltas if d < 0)
    return min(lows) + down, max(highs) + up


def _primary_of(kb: KnowledgeBase, year: CareYear, lab: str) -> str | None:
    """For creatinine or eGFR read from the other (CKD-EPI 2021), the one followed; None for any other lab."""
    if lab not in RELATED:
        return None
    monitored = {m.lab for m in kb.conditions[year.persona.condition].monitored}
    first, second = RELATED
    primary = first if first in monitored or second not in monitored else second
    return primary if lab != primary else None


def _with_pair_deltas(kb: KnowledgeBase, year: CareYear, lab: str, low: float, high: float) -> tuple[float, float]:
    """The primary's hull widened by the pushes given on its derived lab (a creatinine rise is an eGFR fall)."""
    other = RELATED[1] if lab == RELATED[0] else RELATED[0]
    condition = kb.conditions[year.persona.condition]
    deltas = [c.lab_delta for c in condition.complications if c.lab == other and c.lab_delta is not None]
    deltas += [e.lab_delta for d in kb.drugs.values() for e in d.adverse_effects if e.lab == other and e.lab_delta]
    female = year.persona.sex == "female"
    for delta in deltas:
        for edge in (low, high):
            shown = convert(lab, edge, year.persona.age, female)
            moved = convert(other, max(shown + delta, 1.0), year.persona.age, female)
            low, high = min(low, moved), max(high, moved)
    return low, high


@dataclass(frozen=True)
class LabEnvelope:
    """What bounds one lab's movement over one patient's year (`lab_envelope`): the same for every pair of its
    measurements, so made once per year and lab (a 1,000-patient cohort has ~120,000 pairs)."""

    span: float
    """How far the lab (or its primary) can be driven: its targets' hull, with related labs' offsets."""
    tau: float
    """Days for the primary to go about two thirds of the way (half its response time)."""
    slope: float
    """Steepest slope of the equation reading the lab from its primary over that hull (1 for a lab measured itself)."""
    carried_noise: float
    """The primary's noise read over through the equation (0 for a lab measured itself)."""
    largest: float
    """Largest magnitude the lab takes over the hull."""
    cv: float
    decimals: int


def lab_envelope(kb: KnowledgeBase, year: CareYear, lab: str) -> LabEnvelope:
    """A lab's `LabEnvelope` in a year. A lab read from another (creatinine from eGFR) moves as its primary does,
    through the equation: its movement is the primary's times the steepest slope of the equation over the primary's
    range."""
    spec = kb.labs[lab]
    assert spec.kinetics is not None
    primary = _primary_of(kb, year, lab)
    source = primary or lab
    low, high = target_hull(kb, year, source)
    if source in RELATED:
        low, high = _with_pair_deltas(kb, year, source, low, high)
    source_spec = kb.labs[source]
    assert source_spec.kinetics is not None
    slope, carried, largest = 1.0, 0.0, max(abs(low), abs(high))
    if primary is not None:
        female = year.persona.sex == "female"
        grid = [low + (high - low) * i / 200 for i in range(201)]
        mapped = [convert(primary, max(g, 0.5), year.persona.age, female) for g in grid]
        slope = max(abs(b - a) / ((high - low) / 200) for a, b in zip(mapped, mapped[1:], strict=False))
        carried = slope * 4 * source_spec.kinetics.cv * largest
        largest = max(abs(min(mapped)), abs(max(mapped)))
    return LabEnvelope(high - low, source_spec.kinetics.response_days / 2, slope, carried, largest, spec.kinetics.cv,
                       spec.decimals)


def kinetic_bound(envelope: LabEnvelope, v1: float, v2: float, gap_days: int) -> float:
    """Largest change first-order kinetics allow between two measurements `gap_days` apart, with noise."""
    movement = envelope.span * (1 - math.exp(-gap_days / envelope.tau)) * envelope.slope + envelope.carried_noise
    noise = 2 * 2 * envelope.cv * max(envelope.largest, abs(v1), abs(v2))
    return movement + noise + 2 * 10 ** -envelope.decimals


def formulations_given(kb: KnowledgeBase, fact: MedicationFact) -> list:
    """The drug's formulations the fact can be of (a one-off is given "once", whatever its label schedule); a kidney
    rule that spaces the drug's doses out (`PatientRule.frequency`: pramipexole once a day below an eGFR of 30) gives
    a more frequent formulation at its frequency, on the same doses. A care step's own ladder for the drug
    (`Candidate.dosing`: sulfasalazine four times a day for colitis) is one more, in the drug's first form."""
    spacings = {r.frequency for r in kb.patient_rules if r.frequency and fact.drug in kb.expand(r.drugs)}
    drug = kb.drugs[fact.drug]
    out = []
    for form, spec in [*drug.formulations(), *((drug.forms[0], s) for s in kb.use_dosings.get(fact.drug, ()))]:
        if form.release != fact.release:
            continue
        if spec.frequency == fact.frequency or fact.frequency == "once":
            out.append((form, spec))
        elif fact.frequency in spacings and DOSES_PER_DAY[spec.frequency] > DOSES_PER_DAY[fact.frequency]:
            out.append((form, spec.model_copy(update={"frequency": fact.frequency})))
    return out


def higher_dose_within_caps(kb: KnowledgeBase, year: CareYear, event: Event, fact: MedicationFact,
                            doses: Iterable[float]) -> bool:
    """Whether one of `doses` is above the prescription's and within every dose cap of a patient rule that binds the
    patient that day (pramipexole at most 1.5 mg a day below an eGFR of 30)."""
    egfr = latest_egfr(year, event)
    conditions = [year.persona.condition, *year.persona.histories]
    caps = [r.max_daily_dose for r in kb.patient_rules if r.level == "max_dose" and r.max_daily_dose is not None
            and fact.drug in kb.expand(r.drugs) and patient_rule_applies(r, year, egfr, conditions, event=event)]
    per_day = DOSES_PER_DAY[fact.frequency]
    return any(d > fact.dose + 1e-9 and all(d * per_day <= cap + 1e-9 for cap in caps) for d in doses)


def patient_rule_applies(rule: PatientRule, year: CareYear, egfr: float | None, conditions: list[str],
                         factors: int = 0, event: Event | None = None) -> bool:
    """Whether a rule binds the patient (`factors`: how many of its risk factors they have, `risk_factors_of`; a rule
    on a lab's result binds from the visit a result below its level is on record, up to and including `event`)."""
    when = rule.when
    persona = year.persona
    labs = {lab: latest_value(year, event, lab) if event is not None else None for lab in when.lab_below}
    return (all(value is not None and value < when.lab_below[lab] for lab, value in labs.items())
            and (when.min_age is None or persona.age >= when.min_age)
            and (when.max_age is None or persona.age <= when.max_age)
            and (when.sex is None or persona.sex == when.sex)
            and (when.egfr_below is None or (egfr is not None and egfr < when.egfr_below))
            and (when.risk_factors is None or factors >= when.risk_factors.at_least)
            and (not when.conditions or any(c in when.conditions for c in conditions)))


def rule_kind(rule: PatientRule) -> str:
    """What a patient rule binds on: a lab result (TPMT), kidney function, a disease, sex, age, or risk factors
    counted."""
    when = rule.when
    return "lab" if when.lab_below else "renal" if when.egfr_below is not None else \
        "risk" if when.risk_factors is not None else \
        "condition" if when.conditions else "sex" if when.sex is not None else "age"


def taken_on(year: CareYear, event: Event) -> set[str]:
    """Drugs being taken at a visit, read from the record: every drug started and not yet stopped or run out by then
    (a start at the visit itself not counted), and the long-term drug the patient came with, told or not."""
    taken: dict[str, str | None] = {}  # drug -> last day of its course (None: open)
    for other in year.events[:event.index - 1]:
        for fact in other.facts:
            if isinstance(fact, MedicationFact) and fact.action in ("start", "correct", "continue", "increase"):
                if fact.action == "start" or fact.drug not in taken:
                    taken[fact.drug] = (date.fromisoformat(other.date) + timedelta(days=fact.course_days)).isoformat() \
                        if fact.course_days else None
            elif isinstance(fact, MedicationFact) and fact.action == "stop":
                taken.pop(fact.drug, None)
    history = {t.option for t in year.persona.traps if t.category == "medication_history"}
    return {drug for drug, end in taken.items() if end is None or event.date <= end} | history


def risk_factors_of(kb: KnowledgeBase, rule: PatientRule, year: CareYear, event: Event) -> int:
    """How many of a rule's risk factors the patient has at a visit: conditions and histories, diet habits, each
    drug named being taken (`taken_on`), and the latest eGFR on record below the factors' own."""
    factors = rule.when.risk_factors
    if factors is None:
        return 0
    conditions = {year.persona.condition, *year.persona.histories}
    habits = {t.option for t in year.persona.traps if t.category == "diet_preference"}
    egfr = latest_egfr(year, event)
    kidneys = factors.egfr_below is not None and egfr is not None and egfr < factors.egfr_below
    return (len(set(factors.conditions) & conditions) + len(set(factors.habits) & habits)
            + len(kb.expand(factors.taking) & taken_on(year, event)) + kidneys)


def patient_rule_violations(kb: KnowledgeBase, year: CareYear, kind: str) -> list[str]:
    """`<kind>_rule`: no drug given that a patient rule of this kind bars, or above its dose cap, on the latest eGFR on
    record. The long-term drug the patient came with is held too: only their own first account of it (`long_term`)
    is theirs; the dose the year continues at each review, or after their correction, is the doctor's (the seed-47
    read: nadolol 160 mg kept for five months at an eGFR of 18)."""
    rules = [r for r in kb.patient_rules if rule_kind(r) == kind and r.level in ("avoid", "max_dose")]
    conditions = [year.persona.condition, *year.persona.histories]
    failures = []
    for event, fact in given(year):
        if fact.reason == "long_term":
            continue
        egfr = latest_egfr(year, event)
        for rule in rules:
            if fact.drug not in kb.expand(rule.drugs) or not patient_rule_applies(
                    rule, year, egfr, conditions, risk_factors_of(kb, rule, year, event), event):
                continue
            if rule.release is not None and fact.release != rule.release:
                continue  # (a rule on one form: the other is given under the cap)
            daily = fact.dose * DOSES_PER_DAY[fact.frequency]
            if rule.level == "avoid" or daily > rule.max_daily_dose + 1e-9:  # type: ignore[operator]
                failures.append(fail(f"{kind}_rule", year, event, f"{fact.drug} {fact.dose} {fact.unit} "
                                     f"{fact.frequency} breaks rule:{rule.key} (eGFR {egfr})"))
    return failures


def first_event(years: list[CareYear], has: Callable[[Event], bool]) -> tuple[CareYear, Event]:
    """The first visit of the cohort that `has` picks, for a crafted violation to start from. None is a failure, not
    a skip: a crafted test with nothing to break could never fail."""
    for year in years:
        for event in year.events:
            if has(event):
                return year, event
    raise AssertionError("no such event among the 1,000 patients: the crafted violation has nothing to start from")
