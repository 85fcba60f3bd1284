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
from medmemorybench.simulate.safety import Constraint, SafetyProfile, forbidden_by, profile_for


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
        # The budget must be below the dearest drug care would give (so it bites) and at least the
        # cheapest allowed option of every step (so care stays possible).
        low, high = kb.economic_profiles[key].monthly_budget_usd
        cost = {d: kb.drugs[d].monthly_cost_usd for p in plan for d in (p.chosen, *p.alternatives)}
        floor = max(math.ceil(min(cost[d] for d in (p.chosen, *p.alternatives))) for p in plan)
        ceiling = min(high, math.ceil(max(cost[p.chosen] for p in plan)) - 1)
        if max(low, floor) <= ceiling:
            yield Constraint(category, key, rng.randint(max(low, floor), ceiling))


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


def _preferred(condition: Condition, plan: list[StepPlan]) -> list[str]:
    """Drugs standard care would give or reach for next: each step's choice and its top-2 candidates."""
    out = [p.chosen for p in plan]
    for step in condition.care_path:
        out.extend(c for c in step.candidates[:2] if c not in out)
    return out


MAX_SEARCH_NODES = 3000
"""Bound on the backtracking search over trap options (a few dozen nodes suffice in practice)."""

SEARCH_ORDER: tuple[TrapCategory, ...] = (
    "lifestyle_economic", "medication_preference", "allergy", "disease_history", "medication_history",
    "diet_preference",
)
"""The most constraining categories first: a budget or a dose-form rule can leave no drug for a step
that the others still allow, so they are placed while the search still has room to choose."""


def choose_traps(
    kb: KnowledgeBase, condition: Condition, rng: random.Random
) -> tuple[list[Trap], SafetyProfile]:
    """Pick one biting option per trap category.

    An option bites when it rules out a drug standard care would give this patient or reach for next
    (options that rule out the drug the plan currently chooses are tried first), or, for a diet habit,
    works against the condition's advice. Categories are filled in order with backtracking, so an
    early choice cannot make a later category impossible.

    Returns:
        The six traps (in category order) and the safety profile they make.

    Raises:
        SimulationError: when no combination works (a gap in the data, named in the message).
    """
    visited = 0
    deepest: list[TrapCategory] = []

    def search(index: int, profile: SafetyProfile, history: tuple[str, ...]) -> list[Trap] | None:
        nonlocal visited, deepest
        if index == len(SEARCH_ORDER):
            return []
        category = SEARCH_ORDER[index]
        if index + 1 > len(deepest):
            deepest = list(SEARCH_ORDER[: index + 1])
        plan = plan_care(kb, condition, profile, history)
        chosen = [p.chosen for p in plan]
        preferred = _preferred(condition, plan)
        strong, weak = [], []
        for constraint in _options(kb, condition, category, plan, rng):
            if category == "medication_history" and not profile.is_allowed(constraint.option):
                continue
            forbidden = forbidden_by(kb, constraint)
            bites = [d for d in preferred if d in forbidden]
            undermined = []
            if category == "diet_preference":
                habit = kb.habits[constraint.option]
                undermined = [a for a in condition.lifestyle_advice if a in habit.undermines_advice]
            if not bites and not undermined:
                continue
            is_strong = any(d in forbidden for d in chosen) or bool(undermined)
            (strong if is_strong else weak).append((constraint, bites, undermined))
        for constraint, bites, undermined in strong + weak:
            visited += 1
            if visited > MAX_SEARCH_NODES:
                return None
            trial = profile.with_constraint(constraint)
            extra = (constraint.option,) if category == "medication_history" else ()
            try:
                plan_care(kb, condition, trial, history + extra)
            except SimulationError:
                continue
            rest = search(index + 1, trial, history + extra)
            if rest is not None:
                trap = Trap(category=category, option=constraint.option, fact=_trap_fact(kb, constraint, rng),
                            forbidden_drugs=bites, undermined_advice=undermined)
                return [trap, *rest]
        return None

    traps = search(0, SafetyProfile(kb), ())
    if traps is None:
        raise SimulationError(
            f"conditions/{condition.key}.yaml: no combination of trap options conflicts with this condition's "
            f"care path while leaving every step a safe drug (search reached {deepest[-1] if deepest else '-'}); "
            "add candidates or options to the knowledge base"
        )
    traps.sort(key=lambda trap: TRAP_CATEGORIES.index(trap.category))
    return traps, profile_for(kb, traps)
