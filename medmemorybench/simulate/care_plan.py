"""The expected care plan: for each care step, the drug this patient would get, given every rule that binds them.

The trap search uses it to tell whether a trap option bites (rules out what standard care would give);
the year itself re-checks each prescription on the day it is written, since kidney function,
complications and adverse effects change what is allowed.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from medmemorybench.errors import SimulationError
from medmemorybench.knowledge.base import KnowledgeBase
from medmemorybench.knowledge.models import CareStep, Condition
from medmemorybench.simulate.safety import Patient, Verdict, is_long_term, verdict


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
    """Choose a drug for every care step the diagnosis calls for (and for the others where one is allowed).

    Each step takes its first candidate that no rule bars and that does not repeat a drug already in the
    plan, nor the class of a drug taken long-term alongside it (courses and one-off treatments may share a
    class with a chronic step: IV steroids for a flare, then an oral course).

    Long-term drugs add up against a budget: the plan is what the patient would be taking at once.
    A step that only an event can call for (a complication, a lab crossing a threshold) may have no
    allowed drug: the year then never starts it; so may a later step the budget leaves no money for.

    Raises:
        SimulationError: when a step the diagnosis calls for has no candidate left, naming it.
    """
    used_drugs = set(patient.taking) | {c.option for c in patient.constraints if c.category == "medication_history"}
    used_classes = {kb.therapy_group(key) for key in used_drugs}
    patient = replace(patient, taking=set(used_drugs),
                      spending_usd=sum(kb.drugs[d].monthly_cost_usd for d in used_drugs if is_long_term(kb, d)))
    plans: list[StepPlan] = []
    for step in condition.care_path:
        allowed: list[str] = []
        avoided: list[tuple[str, Verdict]] = []
        for candidate in step.drug_keys:
            if candidate in used_drugs or kb.therapy_group(candidate) in used_classes:
                continue
            result = verdict(kb, candidate, patient, step.candidate(candidate).regimen)
            if not result.is_allowed:
                if not allowed:
                    avoided.append((candidate, result))
                continue
            allowed.append(candidate)
        if not allowed and (step.indication.complication or step.indication.lab):
            continue
        only_budget = avoided and all(b.rule.startswith("budget:") for _, v in avoided for b in v.blocks)
        if not allowed and step.role != "first_line" and only_budget:
            continue  # the patient cannot afford this step on top of the rest: it is not given
        if not allowed:
            rules = sorted({b.rule for _, v in avoided for b in v.blocks})
            raise SimulationError(
                f"conditions/{condition.key}.yaml: care_path.{step.key}: no candidate is allowed for this "
                f"patient (age {patient.age}, {patient.sex}; blocked by {', '.join(rules) or 'duplicates'})"
            )
        chosen = allowed[0]
        used_drugs.add(chosen)
        regimen = step.candidate(chosen).regimen or kb.drugs[chosen].regimen
        if regimen == "chronic":
            used_classes.add(kb.therapy_group(chosen))
            patient = replace(patient, taking=patient.taking | {chosen},
                              spending_usd=patient.spending_usd + kb.drugs[chosen].monthly_cost_usd)
        plans.append(StepPlan(step, chosen, tuple(allowed[1:]), tuple(avoided)))
    return plans
