"""The care plan: for each care step, the drug this patient gets given what their traps forbid."""

from __future__ import annotations

from dataclasses import dataclass

from medmemorybench.errors import SimulationError
from medmemorybench.knowledge.base import KnowledgeBase
from medmemorybench.knowledge.models import CareStep, Condition
from medmemorybench.simulate.models import TrapCategory
from medmemorybench.simulate.safety import SafetyProfile


@dataclass(frozen=True)
class StepPlan:
    """What one care step gives this patient."""

    step: CareStep
    chosen: str
    """The drug given."""
    alternatives: tuple[str, ...]
    """Further allowed candidates, in order (a switch after an adverse effect takes the first)."""
    avoided: tuple[tuple[str, TrapCategory], ...]
    """Candidates preferred over `chosen` that a trap rules out, with the trap's category."""


def plan_care(
    kb: KnowledgeBase,
    condition: Condition,
    profile: SafetyProfile,
    already_taking: tuple[str, ...] = (),
) -> list[StepPlan]:
    """Choose a drug for every care step.

    Each step takes its first candidate that no trap forbids and that does not repeat a drug or a
    drug class already in the plan (or already taken long-term).

    Raises:
        SimulationError: when a step has no candidate left, naming the condition and step.
    """
    used_drugs = set(already_taking)
    used_classes = {kb.drugs[key].drug_class for key in already_taking}
    plans: list[StepPlan] = []
    for step in condition.care_path:
        allowed: list[str] = []
        avoided: list[tuple[str, TrapCategory]] = []
        for candidate in step.candidates:
            if candidate in used_drugs or kb.drugs[candidate].drug_class in used_classes:
                continue
            reasons = profile.reasons(candidate)
            if reasons:
                if not allowed:
                    avoided.append((candidate, reasons[0]))
                continue
            allowed.append(candidate)
        if not allowed:
            raise SimulationError(
                f"conditions/{condition.key}.yaml: care_path.{step.key}: no candidate is allowed for a "
                f"patient with traps {[c.category + ':' + c.option for c in profile.constraints]}"
            )
        chosen = allowed[0]
        used_drugs.add(chosen)
        used_classes.add(kb.drugs[chosen].drug_class)
        plans.append(StepPlan(step, chosen, tuple(allowed[1:]), tuple(avoided)))
    return plans
