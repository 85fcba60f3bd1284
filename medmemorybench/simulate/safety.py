"""Which drugs a patient's trap facts rule out, and why: the one safety rule the care plan obeys."""

from __future__ import annotations

from dataclasses import dataclass, field

from medmemorybench.knowledge.base import KnowledgeBase
from medmemorybench.knowledge.models import DOSES_PER_DAY, Drug
from medmemorybench.simulate.models import EconomicFact, Trap, TrapCategory


@dataclass(frozen=True)
class Constraint:
    """One trap option in the form the safety check needs (before or after it becomes a `Trap`)."""

    category: TrapCategory
    option: str
    budget_usd: int | None = None


@dataclass
class SafetyProfile:
    """The drugs a set of trap constraints forbids, computed once per constraint."""

    kb: KnowledgeBase
    constraints: list[Constraint] = field(default_factory=list)

    def with_constraint(self, constraint: Constraint) -> SafetyProfile:
        """A new profile with one more constraint."""
        return SafetyProfile(self.kb, [*self.constraints, constraint])

    def reasons(self, drug_key: str) -> list[TrapCategory]:
        """Trap categories that forbid `drug_key` for this patient (empty: allowed)."""
        return [c.category for c in self.constraints if drug_key in forbidden_by(self.kb, c)]

    def is_allowed(self, drug_key: str) -> bool:
        """Whether no constraint forbids the drug."""
        return not self.reasons(drug_key)


def profile_for(kb: KnowledgeBase, traps: list[Trap]) -> SafetyProfile:
    """The safety profile a persona's trap facts make."""
    constraints = [Constraint(t.category, t.option,
                              t.fact.monthly_budget_usd if isinstance(t.fact, EconomicFact) else None) for t in traps]
    return SafetyProfile(kb, constraints)


def _usable_form(drug: Drug, excluded_forms: set[str], excluded_sizes: set[str]) -> bool:
    return any(
        form.form not in excluded_forms and (form.size is None or form.size not in excluded_sizes)
        for form in drug.forms
    )


def forbidden_by(kb: KnowledgeBase, constraint: Constraint) -> frozenset[str]:
    """Every drug key the constraint rules out (cross-reactive classes and interactions included)."""
    cache_key = (constraint.category, constraint.option, constraint.budget_usd)
    cache = kb.__dict__.setdefault("_forbidden_cache", {})
    if cache_key not in cache:
        cache[cache_key] = _compute_forbidden(kb, constraint)
    return cache[cache_key]


def _compute_forbidden(kb: KnowledgeBase, constraint: Constraint) -> frozenset[str]:
    option = constraint.option
    if constraint.category == "allergy":
        group = kb.allergy_groups[option]
        return kb.expand([*group.classes, *group.drugs])
    if constraint.category == "medication_history":
        out: set[str] = set()
        for rule in kb.interactions:
            side_a, side_b = kb.expand(rule.a), kb.expand(rule.b)
            if option in side_a:
                out |= side_b
            if option in side_b:
                out |= side_a
        out.discard(option)
        return frozenset(out)
    if constraint.category == "disease_history":
        out = set()
        for rule in kb.contraindications:
            if rule.history == option:
                out |= kb.expand([*rule.classes, *rule.drugs])
        return frozenset(out)
    if constraint.category == "medication_preference":
        pref = kb.preferences[option]
        forms, sizes = set(pref.excludes_forms), set(pref.excludes_sizes)
        return frozenset(
            drug.key
            for drug in kb.drugs.values()
            if not _usable_form(drug, forms, sizes)
            or (pref.max_doses_per_day is not None
                and DOSES_PER_DAY[drug.dose.frequency] > pref.max_doses_per_day)
        )
    if constraint.category == "diet_preference":
        return kb.expand(kb.habits[option].conflicts_with)
    if constraint.category == "lifestyle_economic":
        budget = constraint.budget_usd if constraint.budget_usd is not None else 0
        return frozenset(drug.key for drug in kb.drugs.values() if drug.monthly_cost_usd > budget)
    raise ValueError(f"unknown trap category {constraint.category!r}")
