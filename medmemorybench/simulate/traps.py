"""Choosing the six trap facts: each must forbid something standard care would give this patient.

A trap option "bites" when it rules out a drug the care plan would otherwise choose (or, for a diet
habit, works against the condition's own advice) while every care step keeps an allowed drug.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterator

from medmemorybench.errors import SimulationError
from medmemorybench.knowledge.base import KnowledgeBase
from medmemorybench.knowledge.models import Condition
from medmemorybench.simulate.care_plan import StepPlan, plan_care
from medmemorybench.simulate.models import (
    TRAP_CATEGORIES,
    AllergyFact,
    DietFact,
    EconomicFact,
    HistoryFact,
    MedicationFact,
    PreferenceFact,
    Trap,
    TrapCategory,
)
from medmemorybench.simulate.safety import Constraint, SafetyProfile, forbidden_by


def _care_classes(kb: KnowledgeBase, condition: Condition) -> set[str]:
    return {kb.drugs[c].drug_class for step in condition.care_path for c in step.candidates}


def _options(
    kb: KnowledgeBase, condition: Condition, category: TrapCategory, plan: list[StepPlan], rng: random.Random
) -> Iterator[Constraint]:
    if category == "allergy":
        keys = list(kb.allergy_groups)
    elif category == "medication_history":
        care_classes = _care_classes(kb, condition)
        keys = [d.key for d in kb.drugs.values() if d.chronic_use and d.drug_class not in care_classes]
    elif category == "disease_history":
        keys = sorted({rule.history for rule in kb.contraindications})
    elif category == "medication_preference":
        keys = list(kb.preferences)
    elif category == "diet_preference":
        keys = list(kb.habits)
    else:
        keys = list(kb.economic_profiles)
    keys = sorted(keys)
    rng.shuffle(keys)
    for key in keys:
        if category != "lifestyle_economic":
            yield Constraint(category, key)
            continue
        low, high = kb.economic_profiles[key].monthly_budget_usd
        dearest = max(kb.drugs[p.chosen].monthly_cost_usd for p in plan)
        ceiling = min(high, math.ceil(dearest) - 1)
        if ceiling >= low:
            yield Constraint(category, key, rng.randint(low, ceiling))


def _trap_fact(kb: KnowledgeBase, constraint: Constraint, rng: random.Random):  # noqa: ANN202
    key = constraint.option
    if constraint.category == "allergy":
        group = kb.allergy_groups[key]
        return AllergyFact(group=key, agent=rng.choice(group.agents), reaction=rng.choice(group.reactions))
    if constraint.category == "medication_history":
        dose = kb.drugs[key].dose
        return MedicationFact(drug=key, action="continue", dose=dose.start, unit=dose.unit,
                              frequency=dose.frequency, reason="long_term")
    if constraint.category == "disease_history":
        return HistoryFact(history=key)
    if constraint.category == "medication_preference":
        return PreferenceFact(preference=key)
    if constraint.category == "diet_preference":
        return DietFact(habit=key)
    assert constraint.budget_usd is not None
    return EconomicFact(profile=key, monthly_budget_usd=constraint.budget_usd)


def choose_traps(
    kb: KnowledgeBase, condition: Condition, rng: random.Random
) -> tuple[list[Trap], SafetyProfile]:
    """Pick one biting option per trap category.

    Returns:
        The six traps (in category order) and the safety profile they make.

    Raises:
        SimulationError: when the knowledge base has no option of some category that conflicts
            with this condition's care (a gap to fix in the data, named in the message).
    """
    profile = SafetyProfile(kb)
    history_drugs: tuple[str, ...] = ()
    traps: list[Trap] = []
    for category in TRAP_CATEGORIES:
        plan = plan_care(kb, condition, profile, history_drugs)
        picked = None
        for constraint in _options(kb, condition, category, plan, rng):
            if constraint.category == "medication_history" and not profile.is_allowed(constraint.option):
                continue
            forbidden = forbidden_by(kb, constraint)
            bites = [p.chosen for p in plan if p.chosen in forbidden]
            undermined = []
            if category == "diet_preference":
                habit = kb.habits[constraint.option]
                undermined = [a for a in condition.lifestyle_advice if a in habit.undermines_advice]
            if not bites and not undermined:
                continue
            trial = profile.with_constraint(constraint)
            extra = (constraint.option,) if category == "medication_history" else ()
            try:
                plan_care(kb, condition, trial, history_drugs + extra)
            except SimulationError:
                continue
            picked = constraint
            history_drugs += extra
            profile = trial
            traps.append(
                Trap(
                    category=category,
                    option=constraint.option,
                    fact=_trap_fact(kb, constraint, rng),
                    forbidden_drugs=bites,
                    undermined_advice=undermined,
                )
            )
            break
        if picked is None:
            raise SimulationError(
                f"conditions/{condition.key}.yaml: no {category} option in the knowledge base conflicts "
                "with this condition's care path while leaving every step a safe drug"
            )
    return traps, profile
