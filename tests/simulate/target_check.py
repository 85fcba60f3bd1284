"""Independent reading of blood pressure treated to its target, and of the revision of a misdiagnosis whose finding
the true condition has too.

Each function returns violation messages (empty: the year passes) and reads only the record and the knowledge base
(the condition's ranges and misdiagnoses, the lab's `to_target` rule, ladders and dose caps), never the engine's
state. The rules (their names as `docs/simulation.md` lists them):

- `stepped_to_target`: a drug judged by a lab treated to a target (`Lab.to_target`: systolic blood pressure; judged:
  its care step moves the lab, or it is kept for it, `lab:<key>` or a misdiagnosis' `kept_for`) is not kept as it is
  ("stable", "unchanged") more than `within_days` after `readings` results above the goal that each show the present
  regimen (the lab's response time after the latest change of the drugs judged by it), while a higher dose of it is
  allowed (NICE NG136 2023; 2024 ESC hypertension; KDIGO 2021 BP in CKD). The seed-61 read: amlodipine 5 mg kept
  "since it's doing its job" at 154, 165, 176 mmHg in HFpEF (P0004), hydrochlorothiazide 12.5 mg "working well" at
  155 mmHg in diabetic kidney disease (P0009).
- `revision_keeps_finding`: a misdiagnosis whose finding the true condition has too (`Misdiagnosis.kept_for`), still
  above the threshold of the step that treats it at the diagnosis, is withdrawn as `revised`, never `ruled_out`, and
  a visit that keeps its drug "because the reading it treats is still above target" never says it was ruled out (the
  seed-61 read: "essential hypertension ruled out" in HFpEF and diabetic kidney disease while the same visit kept
  the antihypertensive for the pressure still too high, P0004 E034, P0009 E032).
"""

from __future__ import annotations

import math

from medmemorybench.knowledge.base import KnowledgeBase
from medmemorybench.simulate.models import WITHDRAWN, CareYear, DiagnosisFact, Event, LabFact, MedicationFact
from medmemorybench.simulate.prescribing import ladder_of
from tests.simulate.clinical import days_between, fail, higher_dose_within_caps
from tests.simulate.said_check import markers

KEPT_AS_IS = ("stable", "unchanged")
"""Continue reasons that keep the dose as it is for no reason of its own."""
CHANGES = ("start", "increase", "decrease")
"""Actions that change what a drug does to the lab (the readings after them show the new regimen)."""


def higher_dose_allowed(kb: KnowledgeBase, year: CareYear, event: Event, fact: MedicationFact) -> bool:
    """Whether the ladder the prescription is on (`ladder_of`: the first formulation of its release and frequency;
    hydrochlorothiazide capsules stop at 25 mg, where a second agent is due instead) has a higher dose within every
    dose cap of a patient rule that binds the patient that day."""
    ladder = ladder_of(kb, fact.drug, fact.release, fact.frequency)
    return higher_dose_within_caps(kb, year, event, fact, ladder.doses())


def _short(kb: KnowledgeBase, year: CareYear, lab: str, value: float, goal: tuple[float, float] | None) -> bool:
    """Whether `value` is on the disease's side of the goal (above it for a lab the disease raises)."""
    monitored = next(m for m in kb.conditions[year.persona.condition].monitored if m.lab == lab)
    low, high = goal or monitored.treated
    return value > high if sum(monitored.untreated) > sum(monitored.treated) else value < low


def _targets(kb: KnowledgeBase, year: CareYear, fact: MedicationFact) -> dict[str, tuple[float, float] | None]:
    """The labs treated to a target that a drug is judged by, with the range each is held to."""
    return {lab: goal for lab, goal in markers(kb, year, fact.step, fact.indication).items()
            if kb.labs[lab].to_target is not None}


def stepped_violations(kb: KnowledgeBase, year: CareYear) -> list[str]:
    """`stepped_to_target`."""
    out = []
    latest: dict[str, MedicationFact] = {}
    changed: dict[str, str] = {}
    held: set[str] = set()
    shown: dict[str, list[tuple[str, float]]] = {}
    for event in year.events:
        for fact in (f for f in event.facts if isinstance(f, MedicationFact)):
            if fact.action == "stop":
                latest.pop(fact.drug, None)
                continue
            latest[fact.drug] = fact
            if fact.action in CHANGES:
                changed[fact.drug] = event.date
                held.discard(fact.drug)
                if fact.action == "decrease":
                    held.add(fact.drug)  # (lowered for a harm or the kidneys: not raised past it again)
            if fact.reason.startswith("adverse_effect:"):
                held.add(fact.drug)
        for lab in {f.lab for f in event.facts if isinstance(f, LabFact) and kb.labs[f.lab].to_target is not None}:
            shown.setdefault(lab, []).extend((event.date, f.value) for f in event.facts
                                             if isinstance(f, LabFact) and f.lab == lab)
        for fact in event.facts:
            if not (isinstance(fact, MedicationFact) and fact.action == "continue" and fact.reason in KEPT_AS_IS) \
                    or fact.drug in held or not higher_dose_allowed(kb, year, event, fact):
                continue
            for lab, goal in _targets(kb, year, fact).items():
                rule = kb.labs[lab].to_target
                response = math.ceil(kb.labs[lab].kinetics.response_days)
                regimen = max(changed.get(d, year.events[0].date) for d, f in latest.items() if lab in _targets(
                    kb, year, f))
                reflecting = [(day, value) for day, value in shown.get(lab, [])
                              if days_between(regimen, day) >= response]
                run: list[tuple[str, float]] = []  # (the readings above the goal since the last one inside it)
                for day, value in reflecting:
                    run = [*run, (day, value)] if _short(kb, year, lab, value, goal) else []
                if len(run) >= rule.readings and days_between(run[rule.readings - 1][0], event.date) > rule.within_days:
                    since = run[rule.readings - 1][0]
                    out.append(fail("stepped_to_target", year, event, f"{fact.drug} {fact.dose:g} {fact.unit} kept "
                                    f"'{fact.reason}' {days_between(since, event.date)} days after {lab} "
                                    f"{[v for _, v in run]} above its goal, a higher dose allowed"))
    return out


def _above_at(kb: KnowledgeBase, year: CareYear, event: Event, lab: str, threshold: float) -> bool:
    """Whether `lab` today, else its latest value before, is above `threshold`."""
    values = [f.value for e in year.events[:event.index] for f in e.facts if isinstance(f, LabFact) and f.lab == lab]
    today = [f.value for f in event.facts if isinstance(f, LabFact) and f.lab == lab]
    value = today[0] if today else values[-1] if values else None
    return value is not None and value > threshold


def revision_violations(kb: KnowledgeBase, year: CareYear) -> list[str]:
    """`revision_keeps_finding`."""
    out = []
    condition = kb.conditions[year.persona.condition]
    for event in year.events:
        for fact in event.facts:
            if not (isinstance(fact, DiagnosisFact) and fact.status in WITHDRAWN):
                continue
            kept = any(isinstance(f, MedicationFact) and f.reason == "still_needed" for f in event.facts)
            mis = next((m for m in condition.misdiagnoses if m.icd11 == fact.icd11), None)
            treating = next((s for s in condition.care_path if mis is not None and mis.kept_for is not None
                             and s.indication.lab == mis.kept_for and s.indication.above is not None), None)
            real = treating is not None and _above_at(kb, year, event, treating.indication.lab,
                                                      treating.indication.above)
            if fact.status == "ruled_out" and (kept or real):
                why = "its drug kept for the reading still above target" if kept else \
                    f"{mis.kept_for} still above {treating.indication.above:g}"
                out.append(fail("revision_keeps_finding", year, event, f"{fact.name.en} ruled out with {why}"))
            elif fact.status == "revised" and not real:
                out.append(fail("revision_keeps_finding", year, event, f"{fact.name.en} revised with no finding of "
                                "it above its threshold (it is ruled out)"))
    return out
