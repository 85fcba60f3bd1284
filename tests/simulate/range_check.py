"""The ranges and targets a result is judged against, as a physician reads them (issue 27, the seed-53 read): a
diabetic's HbA1c and a high-risk patient's LDL against the goal their condition sets, never the range of people
without it; a weight with no "normal range" (said as the BMI it gives); range words that agree with where a value
sits; no obesity below a BMI of 30; no hypertension without a raised clinic reading that day (the seed-61 note);
"full strength" only at the top of a drug's ladder; a reflux course's "no alarm features" only where none is on
record.

The checks read the year's facts, the words the renderer fills a result's slots with (`FactSlots`) and the result
explanations it says (`explanation`), and judge them against the knowledge base's goals and WHO's BMI bands written
here, never against the code that picks the words.
"""

from __future__ import annotations

import random
from collections.abc import Callable

from medmemorybench.knowledge.base import KnowledgeBase
from medmemorybench.knowledge.models import Text
from medmemorybench.render.acts import LayName, Word
from medmemorybench.render.fact_acts import FactSlots
from medmemorybench.render.templates import Templates
from medmemorybench.simulate.models import CareYear, DiagnosisFact, LabFact, MedicationFact, SymptomFact, TestFact
from medmemorybench.simulate.prescribing import ladder_of
from tests.simulate.clinical import fail, latest_value

RNGS = 6
"""Wordings drawn per act (each seeded 0..RNGS-1)."""
REFERENCE_WORDS = ("normal", "range", "limit", "band", "正常", "范围")
"""Words that judge a value against a population range."""
MIDDLE_WORDS = ("middle of", "正好在中间", "正中间", "离两头都远")
"""Said only of a value from a quarter of the range's width in from either end."""
WELL_INSIDE_WORDS = ("well within", "comfortably inside", "right in the", "稳稳在", "完全在", "没有挨着边")
"""Said only of a value more than a tenth of the width in from either end."""
OBESITY_ICD11 = "5B81"
OBESITY_BMI = 30.0
"""WHO: obesity is a BMI of 30 kg/m² or more (25-29.9 overweight); no ethnicity-specific cut-off is modelled."""

Explain = Callable[[LabFact, random.Random], str]
"""A result's explanation as said in one language (the doctor's answer to "is that good or bad?")."""


def _wordings(fill: Callable[[random.Random], str]) -> list[str]:
    return list(dict.fromkeys(fill(random.Random(seed)) for seed in range(RNGS)))


def known_conditions(kb: KnowledgeBase, year: CareYear) -> list[tuple[set[str], set[str]]]:
    """Per event, the conditions on record before it and after it: the condition once confirmed, a past illness once
    told, the illness a long-term drug told of is taken for."""
    condition = kb.conditions[year.persona.condition]
    told = {}
    for trap in year.persona.traps:
        key = {"disease_history": trap.option, "medication_history": trap.indication}.get(trap.category)
        if key is not None:
            told[key] = trap.fact
    known: set[str] = set()
    out = []
    for event in year.events:
        before = set(known)
        if any(isinstance(f, DiagnosisFact) and f.status == "confirmed" for f in event.facts):
            known.add(condition.key)
        known |= {key for key, fact in told.items() if fact in event.facts}
        out.append((before, set(known)))
    return out


def goal_for(kb: KnowledgeBase, lab: str, conditions: set[str]) -> float | None:
    """The goal the knowledge base's first goal of `lab` naming one of `conditions` sets (`Lab.goals`)."""
    return next((goal.below for goal in kb.labs[lab].goals if conditions & set(goal.conditions)), None)


def goal_violations(kb: KnowledgeBase, year: CareYear, slots: FactSlots) -> list[str]:
    """[judged_against_goal] a result of a lab a condition on record sets a goal for (HbA1c in diabetes, LDL at high
    cardiovascular risk) carries that goal and is said against it, never "normal" or "high" against the reference
    range (the seed-53 read: "7.3 % where we'd like no more than 5.6 %"; LDL 2.99 "right in the normal band" in
    diabetic kidney disease). A visit where the condition is first put on record is left out (either reading holds)."""
    failures = []
    for event, (before, after) in zip(year.events, known_conditions(kb, year), strict=True):
        for fact in event.facts:
            if not isinstance(fact, LabFact) or fact.target is not None:
                continue
            goals = [goal_for(kb, fact.lab, before), goal_for(kb, fact.lab, after)]
            if goals[0] != goals[1] or goals[0] is None:
                continue
            said = getattr(fact, "goal", None)
            status = slots.status_key(fact)
            if said != goals[0] or status not in ("above_goal", "in_goal"):
                failures.append(fail("judged_against_goal", year, event,
                                     f"{fact.lab} {fact.value} said as '{status}' against goal {said}; the condition "
                                     f"on record sets {goals[0]}"))
    return failures


def weight_violations(kb: KnowledgeBase, year: CareYear, slots: FactSlots) -> list[str]:
    """[weight_has_no_range] a weight is never judged against a population range ("89.4 kg is well within 45.0 to
    90.0 kg", the seed-53 read): it is said with the BMI it gives where the height is known."""
    failures = []
    for event in year.events:
        for fact in event.facts:
            if not isinstance(fact, LabFact) or fact.lab != "weight":
                continue
            for status in _wordings(lambda rng, f=fact: slots.slots("fact.lab", f, rng)["status"]):
                ranged = [w for w in REFERENCE_WORDS if w in status.lower()]
                if ranged or (year.persona.height_cm is not None and "BMI" not in status and "体重指数" not in status
                              and "body-mass" not in status):
                    failures.append(fail("weight_has_no_range", year, event,
                                         f"weight {fact.value} said as '{status}'"))
                    break
    return failures


def judged_range(kb: KnowledgeBase, fact: LabFact) -> tuple[float, float]:
    """The range a result is judged against: a drug's target, else up to a condition's goal, else the reference."""
    if fact.target is not None:
        return fact.target
    low, high = kb.labs[fact.lab].reference
    goal = getattr(fact, "goal", None)
    return (low, goal) if goal is not None else (low, high)


def place_violations(kb: KnowledgeBase, year: CareYear, explain: Explain, slots: FactSlots) -> list[str]:
    """[range_words_fit] "right in the middle of" only from a quarter of the range in, "well within" and "comfortably
    inside" only more than a tenth in (the seed-53 read: "79 mmHg is right in the middle of 60 to 79 mmHg"). Reads the
    explanation of every result inside its range, and the status words said with it."""
    failures = []
    for event in year.events:
        for fact in event.facts:
            if not isinstance(fact, LabFact) or fact.lab == "weight":  # (no range: `weight_violations`)
                continue
            low, high = judged_range(kb, fact)
            if not low <= fact.value <= high or high <= low:
                continue
            share = (fact.value - low) / (high - low)
            edge = min(share, 1 - share)
            if edge >= 0.25:
                continue
            texts = _wordings(lambda rng, f=fact: explain(f, rng)) + _wordings(
                lambda rng, f=fact: slots.slots("fact.lab", f, rng)["status"])
            for text in texts:
                bad = [w for w in MIDDLE_WORDS if w in text] + (
                    [w for w in WELL_INSIDE_WORDS if w in text] if edge <= 0.10 else [])
                if bad:
                    failures.append(fail("range_words_fit", year, event,
                                         f"{fact.lab} {fact.value} in {low}-{high} said '{bad[0]}': {text}"))
                    break
    return failures


def obesity_violations(kb: KnowledgeBase, year: CareYear) -> list[str]:  # noqa: ARG001
    """[obesity_from_30] obesity (ICD-11 5B81) is diagnosed only at a BMI of 30 or more, the one measured at that visit
    or the latest before it (the seed-53 read: "obesity with deconditioning" at a BMI of 28.6)."""
    failures = []
    for event in year.events:
        for fact in event.facts:
            if isinstance(fact, DiagnosisFact) and fact.icd11 == OBESITY_ICD11 and fact.status != "ruled_out":
                bmi = latest_value(year, event, "bmi")
                if bmi is None or bmi < OBESITY_BMI:
                    failures.append(fail("obesity_from_30", year, event,
                                         f"{fact.name.en} ({fact.status}) at a BMI of {bmi}"))
    return failures


HYPERTENSION_ICD11 = "BA00"
CLINIC_BP = {"systolic_bp": 140.0, "diastolic_bp": 90.0}
"""NICE NG136 1.2: hypertension is suspected at a clinic reading of 140/90 mmHg or more (and confirmed by ABPM or HBPM
of 135/85 or more)."""


def raised_reading_violations(kb: KnowledgeBase, year: CareYear) -> list[str]:  # noqa: ARG001
    """[hypertension_on_raised_reading] essential hypertension (ICD-11 BA00), a wrong diagnosis included, is diagnosed
    only at a visit whose own clinic reading is 140/90 or more (the seed-61 note on h27l: "essential hypertension"
    chosen as the misdiagnosis more often while the day's systolic was under 140)."""
    failures = []
    for event in year.events:
        for fact in event.facts:
            if not (isinstance(fact, DiagnosisFact) and fact.icd11 == HYPERTENSION_ICD11
                    and fact.status in ("suspected", "confirmed")):
                continue
            today = {f.lab: f.value for f in event.facts if isinstance(f, LabFact) and f.lab in CLINIC_BP}
            if not any(today.get(lab, 0.0) >= limit for lab, limit in CLINIC_BP.items()):
                failures.append(fail("hypertension_on_raised_reading", year, event,
                                     f"{fact.name.en} ({fact.status}) at a reading of {today or 'none'} that day"))
    return failures


FULL_WORDS = ("full strength", "full dose", "last step up", "足量", "最大量", "最后一档")
"""Words that say a dose is the drug's maximum."""


def full_strength_violations(kb: KnowledgeBase, year: CareYear, slots: FactSlots) -> list[str]:
    """[full_strength_at_the_top] a dose is called its "full strength" only at the top of the label's ladder for the
    formulation taken (the seed-53 read: pramipexole 0.125 -> 0.25 mg "to bring the dose up to its full strength",
    amlodipine 5 -> 10 mg beside losartan never above 50 mg)."""
    failures = []
    for event in year.events:
        for fact in event.facts:
            if not isinstance(fact, MedicationFact) or fact.action != "increase":
                continue
            top = max(ladder_of(kb, fact.drug, fact.release, fact.frequency).doses())
            for reason in _wordings(lambda rng, f=fact: slots.reason(f, rng)):
                said = [w for w in FULL_WORDS if w in reason]
                if said and fact.dose < top:
                    failures.append(fail("full_strength_at_the_top", year, event,
                                         f"{fact.drug} {fact.dose:g} (top {top:g}) said '{reason}'"))
                    break
    return failures


def alarm_violations(kb: KnowledgeBase, year: CareYear) -> list[str]:
    """[alarm_review_true] an illness whose review finds "no alarm features" (reflux) is found so only where none is on
    record before that visit: weight loss told, a weight 5 % or more under the year's highest, or a haemoglobin below
    its reference (the seed-53 read: 56.2 -> 51 kg, "reduced appetite with weight loss" and Hb 119 g/L, then "no alarm
    features (no weight loss, no trouble swallowing, no anaemia)")."""
    failures = []
    told: set[str] = set()
    weights: list[float] = []
    low: dict[str, bool] = {}
    for event in year.events:
        for fact in event.facts:
            illness = kb.illnesses.get(fact.test.split(":")[1]) if isinstance(fact, TestFact) and fact.test.startswith(
                "illness:") and not fact.test.endswith(":review") else None
            if illness is None or illness.alarm is None:
                continue
            alarm = illness.alarm
            found = sorted(told & set(alarm.symptoms)) + [lab for lab in alarm.labs_low if low.get(lab)] + (
                ["weight fall"] if alarm.weight_fall is not None and weights
                and weights[-1] <= max(weights) * (1 - alarm.weight_fall) else [])
            if found:
                failures.append(fail("alarm_review_true", year, event, f"{illness.key} with {', '.join(found)}"))
        for fact in event.facts:  # (what this visit records counts from the next: the review reads the record)
            if isinstance(fact, SymptomFact):
                told.add(fact.symptom.rpartition(".")[2])
            if isinstance(fact, LabFact):
                weights += [fact.value] if fact.lab == "weight" else []
                low[fact.lab] = fact.value < kb.labs[fact.lab].reference[0]
    return failures


def explainer(kb: KnowledgeBase, templates: Templates) -> Explain:
    """The doctor's explanation of a result as the renderer says it (`conversation.explanation`)."""
    from medmemorybench.render.conversation import explanation  # (imported here: the counts on main pass their own)

    def say(fact: LabFact, rng: random.Random) -> str:
        act = explanation(kb, templates, fact)[1]
        values = {key: _surface(templates, value, rng) for key, value in act.slots.items()}
        return templates.realize(act.key, rng, values)

    return say


def _surface(templates: Templates, value: object, rng: random.Random) -> str:
    if isinstance(value, Word):
        return templates.word(value.table, value.key, rng)
    if isinstance(value, LayName):
        return templates.lay(getattr(value.text, templates.language))
    if isinstance(value, Text):
        return getattr(value, templates.language)
    return str(value)
