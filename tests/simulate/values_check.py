"""Values that agree (issue 27, the seed-61 read): weight and BMI read through one height with day-to-day changes a
body can make, a symptom of weight loss beside weights that fall, and a diagnosis whose name states a severity band
beside the score measured for it.

- `body_agrees`: weight and BMI taken the same day are one reading through the persona's height (BMI = weight /
  height², WHO), and two readings (either one, BMI read back to kilograms) at most `SHORT_DAYS` apart differ by
  less than `SHORT_KG` unless something explains it (a complication, a congestion or weight sign or a drug harm on
  weight between them, a care step moving weight started or changed within weight's response time): the seed-61 read
  saw 78.6 kg one day and BMI 23.7 the next (+2.3 kg overnight).
- `weight_loss_measured`: a symptom that tells of weight loss (a symptom with `weight_lost` in the knowledge base)
  has, where weights are on record around it, a fall of at least `LOSS_SEEN` between a reading in the
  `LOSS_BEFORE_DAYS` before it (not its own day) and one from `LOSS_LAG_DAYS` before it to `LOSS_AFTER_DAYS` after it.
- `severity_named`: the confirmed diagnosis of a condition whose name states a band of one of its labs
  (`Monitored.named`: "moderately active" colitis, a total Mayo score of 6-10) has that lab's latest reading in it.

Read from the events and the knowledge base alone, never from the engine's state."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

from medmemorybench.knowledge.base import KnowledgeBase
from medmemorybench.simulate.models import (
    CareYear,
    ComplicationFact,
    DiagnosisFact,
    Event,
    LabFact,
    MedicationFact,
    SymptomFact,
)
from tests.simulate.clinical import fail

SHORT_DAYS = 3
SHORT_KG = 2.0
"""ESC 2021 heart-failure guideline (and AHA/HFSA self-care advice): a gain of more than 2 kg in 3 days is a sign to
act on, not the day-to-day swing of a body (food, fluid, clothes: about 1 kg)."""
LOSS_SEEN = 0.02
"""The least fall (a share of body weight) that shows a told weight loss on the scales: twice a reading's 1 % noise."""
LOSS_BEFORE_DAYS, LOSS_LAG_DAYS, LOSS_AFTER_DAYS = 120, 14, 56


@dataclass(frozen=True)
class Reading:
    day: int
    kg: float
    event: Event


def _day(event: Event) -> int:
    return date.fromisoformat(event.date).toordinal()


def body_readings(year: CareYear) -> list[Reading]:
    """Every weight on record, a BMI read back to kilograms through the persona's height."""
    height2 = (year.persona.height_cm / 100) ** 2
    out = []
    for event in year.events:
        for fact in event.facts:
            if isinstance(fact, LabFact) and fact.lab in ("weight", "bmi"):
                out.append(Reading(_day(event), fact.value if fact.lab == "weight" else fact.value * height2, event))
    return out


def _explains(kb: KnowledgeBase, year: CareYear, fact: object) -> bool:
    """A fact that may move weight within days: a complication, a congestion sign, a symptom of weight loss, a
    drug harm on weight."""
    if isinstance(fact, ComplicationFact):
        return True
    if not isinstance(fact, SymptomFact):
        return False
    condition = kb.conditions[year.persona.condition]
    symptom = next((s for s in condition.symptoms if s.key == fact.symptom), None)
    if symptom is not None:
        return symptom.red_flag_step is not None or symptom.weight_lost is not None
    return any(e.key == fact.symptom and e.lab in ("weight", "bmi") for d in kb.drugs.values()
               for e in d.adverse_effects)


def _treated(kb: KnowledgeBase, year: CareYear, reading: Reading) -> bool:
    """A care step that moves weight (an antithyroid drug, insulin, a diuretic) started or changed within weight's
    response time before the reading: the body is on its way to a new weight."""
    condition = kb.conditions[year.persona.condition]
    moving = {s.key for s in condition.care_path if {"weight", "bmi"} & {*s.moves, *s.targets}}
    response = kb.labs["weight"].kinetics.response_days  # type: ignore[union-attr]
    return any(isinstance(f, MedicationFact) and f.step in moving and 0 <= reading.day - _day(e) <= response
               for e in year.events for f in e.facts)


def body_violations(kb: KnowledgeBase, year: CareYear) -> list[str]:
    rule = "body_agrees"
    height2 = (year.persona.height_cm / 100) ** 2
    out = []
    for event in year.events:
        labs = {f.lab: f.value for f in event.facts if isinstance(f, LabFact)}
        if "weight" in labs and "bmi" in labs:
            # (one of the two computed from the other as reported, then rounded to 0.1)
            slack = 0.05 + 0.05 / height2 + 1e-6
            if abs(labs["weight"] / height2 - labs["bmi"]) > slack:
                out.append(fail(rule, year, event, f"weight {labs['weight']} kg and BMI {labs['bmi']} on one day "
                                                   f"disagree at height {year.persona.height_cm} cm"))
    readings = body_readings(year)
    for first, second in zip(readings, readings[1:], strict=False):
        gap = second.day - first.day
        if gap > SHORT_DAYS or abs(second.kg - first.kg) < SHORT_KG:
            continue
        between = [e for e in year.events if first.event.index <= e.index <= second.event.index]
        if not any(_explains(kb, year, f) for e in between for f in e.facts) and not _treated(kb, year, second):
            out.append(fail(rule, year, second.event, f"{second.kg:.1f} kg against {first.kg:.1f} kg on "
                                                      f"{first.event.date} ({gap} days) with nothing to explain it"))
    return out


def weight_loss_violations(kb: KnowledgeBase, year: CareYear) -> list[str]:
    rule = "weight_loss_measured"
    condition = kb.conditions[year.persona.condition]
    claims = {s.key for s in condition.symptoms if s.weight_lost is not None}
    told = next((e for e in year.events for f in e.facts if isinstance(f, SymptomFact) and f.symptom in claims), None)
    if told is None:
        return []
    day = _day(told)
    readings = body_readings(year)
    before = [r for r in readings if day - LOSS_BEFORE_DAYS <= r.day < day]  # (the telling's own reading shows it)
    pairs = [(a, b) for a in before for b in readings
             if a.day < b.day and day - LOSS_LAG_DAYS <= b.day <= day + LOSS_AFTER_DAYS]
    if not pairs:
        return []
    fall = max((a.kg - b.kg) / a.kg for a, b in pairs)
    if fall >= LOSS_SEEN:
        return []
    return [fail(rule, year, told, f"weight loss told, yet the weights around it fall by {fall:.1%} at most "
                                   f"({', '.join(f'{r.kg:.1f}' for r in readings if r in before or r.day > day)})")]


def severity_violations(kb: KnowledgeBase, year: CareYear) -> list[str]:
    rule = "severity_named"
    condition = kb.conditions[year.persona.condition]
    named = {m.lab: m.named for m in condition.monitored if m.named is not None}
    out = []
    latest: dict[str, float] = {}
    for event in year.events:
        for fact in event.facts:
            if isinstance(fact, LabFact):
                latest[fact.lab] = fact.value
        if not any(isinstance(f, DiagnosisFact) and f.status == "confirmed" and f.icd11 == condition.icd11.code
                   for f in event.facts):
            continue
        for lab, (low, high) in named.items():
            if lab in latest and not low <= latest[lab] <= high:
                out.append(fail(rule, year, event, f"'{condition.name.en}' beside {lab} {latest[lab]:g}, outside "
                                                   f"the band its name states ({low:g}-{high:g})"))
    return out
