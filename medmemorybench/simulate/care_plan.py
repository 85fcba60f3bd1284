"""The expected care plan: for each care step, the drug this patient would get, given every rule that binds them.

The trap search uses it to tell whether a trap option bites (rules out what standard care would give);
the year itself re-checks each prescription on the day it is written, since kidney function,
complications and adverse effects change what is allowed.
"""

from __future__ import annotations

from dataclasses import dataclass

from medmemorybench.errors import SimulationError
from medmemorybench.knowledge.base import KnowledgeBase
from medmemorybench.knowledge.models import CareStep, Condition
from medmemorybench.simulate.safety import Patient, Verdict, verdict


@dataclass(frozen=True)
class StepPlan:
    """What one care step gives this patient."""

    step: CareStep
    chosen: str
    """The drug given."""
    alternatives: tuple[str, ...]
    """Further allowed candidates, in order (a switch after an adverse effect takes the first)."""
    avoided: tuple[tuple[str, Verdict], ...]
    """Candidates preferred over `chosen` that a rule bars, with the verdict that bars them."""


def plan_care(kb: KnowledgeBase, condition: Condition, patient: Patient) -> list[StepPlan]:
    """Choose a drug for every care step.

    Each step takes its first candidate that no rule bars and that does not repeat a drug or a
    drug class already in the plan (or already taken long-term).

    Raises:
        SimulationError: when a step has no candidate left, naming the condition and step.
    """
    used_drugs = set(patient.taking) | {c.option for c in patient.constraints if c.category == "medication_history"}
    used_classes = {kb.drugs[key].drug_class for key in used_drugs}
    plans: list[StepPlan] = []
    for step in condition.care_path:
        allowed: list[str] = []
        avoided: list[tuple[str, Verdict]] = []
        for candidate in step.drug_keys:
            if candidate in used_drugs or kb.drugs[candidate].drug_class in used_classes:
                continue
            result = verdict(kb, candidate, patient)
            if not result.is_allowed:
                if not allowed:
                    avoided.append((candidate, result))
                continue
            allowed.append(candidate)
        if not allowed:
            rules = sorted({b.rule for _, v in avoided for b in v.blocks})
            raise SimulationError(
                f"conditions/{condition.key}.yaml: care_path.{step.key}: no candidate is allowed for this "
                f"patient (age {patient.age}, {patient.sex}; blocked by {', '.join(rules) or 'duplicates'})"
            )
        chosen = allowed[0]
        used_drugs.add(chosen)
        used_classes.add(kb.drugs[chosen].drug_class)
        plans.append(StepPlan(step, chosen, tuple(allowed[1:]), tuple(avoided)))
    return plans
