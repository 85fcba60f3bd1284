"""Choosing the six trap facts: each must forbid something standard care would give this patient.

A trap option "bites" when it rules out a drug the care plan would otherwise choose (or, for a diet
habit, works against the condition's own advice) while every care step keeps an allowed drug.
"""

from __future__ import annotations

import math
import random
from collections.abc import Collection, Iterator
from dataclasses import replace

from medmemorybench.errors import SimulationError
from medmemorybench.knowledge.base import KnowledgeBase
from medmemorybench.knowledge.models import Condition
from medmemorybench.simulate.care_plan import StepPlan, plan_care
from medmemorybench.simulate.formulas import RELATED
from medmemorybench.simulate.models import (
    TRAP_CATEGORIES,
    AllergyFact,
    DietFact,
    EconomicFact,
    Forbidden,
    HistoryFact,
    MedicationFact,
    PreferenceFact,
    Trap,
    TrapCategory,
)
from medmemorybench.simulate.persona import fitting_occupations, trap_exclusions, trap_requirements
from medmemorybench.simulate.safety import (
    Constraint,
    Patient,
    constraints_of,
    forbidden_by,
    is_long_term,
    verdict,
)

IMPLIED_MARGIN = 0.2
"""A history's implied eGFR is drawn from the middle 60 % of its stage's band (CKD stage 4: 17.8-26.2)."""


def _care_classes(kb: KnowledgeBase, condition: Condition) -> set[str]:
    return {kb.drugs[c].drug_class for step in condition.care_path for c in step.drug_keys}


def _is_eligible(kb: KnowledgeBase, history: str, patient: Patient) -> bool:
    """Whether the patient can have this history condition (age, sex; a kidney function it implies must not
    clash with a condition whose own eGFR course the year follows)."""
    hist = kb.history_conditions[history]
    low, high = hist.age
    # (a condition that follows creatinine follows kidney function too: the eGFR is read from it)
    monitors_egfr = any(m.lab in RELATED for m in kb.conditions[patient.condition].monitored)
    clashes = set(hist.incompatible) & set(patient.conditions) or any(
        history in kb.history_conditions[h].incompatible for h in patient.conditions if h in kb.history_conditions)
    return (hist.sex in ("any", patient.sex) and low <= patient.age <= high and history not in patient.conditions
            and not (hist.egfr is not None and monitors_egfr) and not clashes)


def _job_fits(kb: KnowledgeBase, patient: Patient, category: TrapCategory, option: str,
              encounters: int | None) -> bool:
    """Whether some occupation fits the patient's age, the year's encounters and the traits every text said of them
    so far needs with this option's (a bus driver's water tablets and a remote miner's blood tests cannot both be
    true, nor a remote site's roster beside a hundred visits)."""
    required = set(trap_requirements(kb, category, option))
    excluded = set(trap_exclusions(kb, category, option))
    for constraint in patient.constraints:
        required.update(trap_requirements(kb, constraint.category, constraint.option))
        excluded.update(trap_exclusions(kb, constraint.category, constraint.option))
    return bool(fitting_occupations(kb, patient.age, required, encounters, excluded))


def _with_constraint(kb: KnowledgeBase, patient: Patient, constraint: Constraint, rng: random.Random) -> Patient:
    """The patient with one more trap fact (a history that implies kidney function sets their eGFR)."""
    trial = patient.with_constraint(constraint)
    history = constraint.indication or (constraint.option if constraint.category == "disease_history" else None)
    implied = kb.history_conditions[history].egfr if history else None
    if implied is not None:  # (inside the stage's band, so a measurement's noise does not cross into the next)
        low, high = implied
        trial.egfr = round(rng.uniform(low + (high - low) * IMPLIED_MARGIN, high - (high - low) * IMPLIED_MARGIN))
    return trial


def _options(
    kb: KnowledgeBase, condition: Condition, category: TrapCategory, plan: list[StepPlan], patient: Patient,
    rng: random.Random, encounters: int | None = None,
) -> Iterator[Constraint]:
    if category == "medication_history":
        # A long-term drug always comes with what it is taken for: a history condition the patient can have.
        # (The history may be the one the patient already disclosed: "I have asthma" and "I take salbutamol for
        # it" are two facts; the drug then bites only through its own interactions, see `_bites`.)
        care_classes = _care_classes(kb, condition)
        pairs = sorted({(drug, hist.key) for hist in kb.history_conditions.values()
                        if _is_eligible(kb, hist.key, patient) or hist.key in patient.conditions[1:]
                        for drug in hist.treatments if kb.drugs[drug].drug_class not in care_classes})
        rng.shuffle(pairs)
        for drug, history in pairs:
            yield Constraint(category, drug, indication=history)
        return
    if category == "allergy":
        keys = list(kb.allergy_groups)
    elif category == "disease_history":
        keys = [key for key in sorted({rule.history for rule in kb.contraindications})
                if key in kb.history_conditions and _is_eligible(kb, key, patient)]
    elif category == "medication_preference":
        keys = [k for k, p in kb.preferences.items() if p.age[0] <= patient.age <= p.age[1]]
    elif category == "diet_preference":
        keys = list(kb.habits)
    else:
        keys = [k for k, p in kb.economic_profiles.items() if p.age[0] <= patient.age <= p.age[1]]
    keys = sorted(k for k in keys if _job_fits(kb, patient, category, k, encounters))
    rng.shuffle(keys)
    for key in keys:
        if category != "lifestyle_economic":
            yield Constraint(category, key)
            continue
        # A budget caps what the long-term drugs cost together each month: below what the expected plan
        # costs (so it bites) and at least what its cheapest allowed options cost (so care stays possible).
        profile = kb.economic_profiles[key]
        low, high = profile.monthly_budget_usd
        cost = kb.drugs
        long_term = [p for p in plan if is_long_term(kb, p.chosen)]
        total = sum(cost[p.chosen].monthly_cost_usd for p in long_term)
        floor = sum(min(cost[d].monthly_cost_usd for d in (p.chosen, *p.alternatives)) for p in long_term
                    if p.step.role == "first_line")
        has_time_limit = profile.min_blood_test_interval_days is not None or bool(profile.excludes_forms)
        ceiling = high if has_time_limit else min(high, math.ceil(total) - 1)  # a time limit bites on its own
        # near what the plan costs: it forces a cheaper choice somewhere without leaving later steps unaffordable
        lowest = max(low, math.ceil(floor), math.ceil(BUDGET_SHARE_OF_PLAN * total))
        if lowest <= ceiling:
            yield Constraint(category, key, rng.randint(lowest, ceiling))
        elif max(low, math.ceil(floor)) <= ceiling:
            yield Constraint(category, key, ceiling)


def refuses_needles(kb: KnowledgeBase, constraints: Collection[Constraint]) -> bool:
    """Whether a trap of the patient refuses injections (a needle phobia): nothing they tell took a needle calmly."""
    return any(c.category == "medication_preference" and "injection" in kb.preferences[c.option].excludes_forms
               for c in constraints)


def _tellable(kb: KnowledgeBase, patient: Patient, constraint: Constraint) -> bool:
    """Whether the trap can be told beside the patient's others: an allergy told only through a needle taken calmly
    ("the heparin shots") is not the allergy of one who faints at needles, whichever comes first."""
    trial = [*patient.constraints, constraint]
    if not refuses_needles(kb, trial):
        return True
    for allergy in (c for c in trial if c.category == "allergy"):
        agents, reactions = kb.allergy_groups[allergy.option].told(needle_phobic=True)
        if not agents or not reactions:
            return False
    return True


def _trap_fact(kb: KnowledgeBase, constraint: Constraint, patient: Patient, rng: random.Random):  # noqa: ANN202
    key = constraint.option
    if constraint.category == "allergy":
        agents, reactions = kb.allergy_groups[key].told(needle_phobic=refuses_needles(kb, patient.constraints))
        return AllergyFact(group=key, agent=rng.choice(agents), reaction=rng.choice(reactions))
    if constraint.category == "medication_history":
        result = verdict(kb, key, patient)  # the formulation this patient can take (once daily, small...)
        assert result.formulation is not None
        form, spec = result.formulation
        return MedicationFact(drug=key, action="continue", dose=rng.choice(result.doses()[:3]), unit=spec.unit,
                              frequency=spec.frequency, reason="long_term",
                              indication=f"history:{constraint.indication}",
                              release=form.release)
    if constraint.category == "disease_history":
        return HistoryFact(history=key)
    if constraint.category == "medication_preference":
        return PreferenceFact(preference=key)
    if constraint.category == "diet_preference":
        return DietFact(habit=key)
    assert constraint.budget_usd is not None
    return EconomicFact(profile=key, monthly_budget_usd=constraint.budget_usd)


def _preferred(condition: Condition, plan: list[StepPlan]) -> list[tuple[str, str]]:
    """(drug, step) standard care would give or reach for: each step's choice first, then every candidate of
    every step in order of preference (a guideline lists them because a clinician may reach for any)."""
    out = [(p.chosen, p.step.key) for p in plan]
    for step in condition.care_path:
        out.extend((c, step.key) for c in step.drug_keys if c not in {d for d, _ in out})
    return out


def _bites(kb: KnowledgeBase, condition: Condition, constraint: Constraint, plan: list[StepPlan], patient: Patient,
           preferred: list[tuple[str, str]], rng: random.Random) -> list[Forbidden]:
    """What standard care the option rules out: the preferred drugs it bars, and for a budget, the planned drugs
    the patient can no longer afford together."""
    forbidden = forbidden_by(kb, constraint)
    if constraint.indication in patient.conditions:  # already a trap of its own: only the drug's interactions count
        forbidden = {d: r for d, r in forbidden.items() if r.startswith("interaction:")}
    bites = [Forbidden(drug=d, step=step, rule=forbidden[d]) for d, step in preferred if d in forbidden]
    if constraint.category == "lifestyle_economic":
        try:
            trial = {p.chosen for p in plan_care(kb, condition, _with_constraint(kb, patient, constraint, rng))}
        except SimulationError:
            return bites
        rule = f"budget:{constraint.budget_usd}"
        bites += [Forbidden(drug=p.chosen, step=p.step.key, rule=rule) for p in plan
                  if p.chosen not in trial and p.chosen not in {f.drug for f in bites}]
    return bites


BUDGET_SHARE_OF_PLAN = 0.75
"""A budget is drawn at no less than this share of what the expected plan's long-term drugs cost a month."""
MAX_SEARCH_NODES = 3000
"""Bound on the backtracking search over trap options (a few dozen nodes suffice in practice)."""

SEARCH_ORDER: tuple[TrapCategory, ...] = (
    "lifestyle_economic", "medication_preference", "allergy", "disease_history", "medication_history",
    "diet_preference",
)
"""The most constraining categories first: a budget or a dose-form rule can leave no drug for a step
that the others still allow, so they are placed while the search still has room to choose."""


def _scarcest_first(kb: KnowledgeBase, condition: Condition, patient: Patient, rng: random.Random,
                    encounters: int | None = None) -> tuple[TrapCategory, ...]:
    """The categories with the fewest options that bite this patient first (ties: `SEARCH_ORDER`), so the
    search places the hardest ones while it still has room to choose (the classic most-constrained-first
    rule); counted without the feasibility check, which is what the search itself does."""
    plan = plan_care(kb, condition, patient)
    preferred = {d for d, _ in _preferred(condition, plan)}
    counts = {}
    for category in SEARCH_ORDER:
        options = _options(kb, condition, category, plan, patient, random.Random(rng.random()), encounters)
        counts[category] = sum(1 for c in options if preferred & set(forbidden_by(kb, c)))
    return tuple(sorted(SEARCH_ORDER, key=lambda c: (counts[c], SEARCH_ORDER.index(c))))


def choose_traps(
    kb: KnowledgeBase, condition: Condition, patient: Patient, rng: random.Random,
    advice: Collection[str] | None = None, encounters: int | None = None,
) -> tuple[list[Trap], Patient]:
    """Pick one biting option per trap category.

    An option bites when it rules out a drug standard care would give this patient or reach for next
    (options that rule out the drug the plan currently chooses are tried first), or, for a diet habit,
    works against the condition's advice. Categories are filled in order with backtracking, so an
    early choice cannot make a later category impossible.

    Args:
        patient: who the patient is before any trap (age, sex, baseline kidney function).
        advice: the condition's advice this patient can be given (no stopping smoking for a non-smoker); a diet
            habit undermines only these. None: all of it.
        encounters: the year's regular encounters: a text whose job's roster leaves no room for them is not drawn
            (`Occupation.max_encounters`). None: no limit.

    Returns:
        The six traps (in category order) and the patient with their constraints.

    Raises:
        SimulationError: when no combination works (a gap in the data, named in the message).
    """
    visited = 0
    deepest: list[TrapCategory] = []
    order = _scarcest_first(kb, condition, patient, rng, encounters)

    def search(index: int, patient: Patient) -> tuple[list[Trap], Patient] | None:
        """The traps from `order[index]` on, and the patient with them all (a history may set their eGFR)."""
        nonlocal visited, deepest
        if index == len(order):
            return [], patient
        category = order[index]
        if index + 1 > len(deepest):
            deepest = list(order[: index + 1])
        plan = plan_care(kb, condition, patient)
        chosen = {p.chosen for p in plan}
        preferred = _preferred(condition, plan)
        strong, weak = [], []
        for constraint in _options(kb, condition, category, plan, patient, rng, encounters):
            if category == "medication_history" and not verdict(kb, constraint.option, patient).is_allowed:
                continue
            bites = _bites(kb, condition, constraint, plan, patient, preferred, rng)
            undermined = []
            if category == "diet_preference":
                habit = kb.habits[constraint.option]
                undermined = [a for a in condition.lifestyle_advice if a in habit.undermines_advice
                              and (advice is None or a in advice)]
            if not bites and not undermined:
                continue
            is_strong = any(f.drug in chosen for f in bites) or bool(undermined)
            (strong if is_strong else weak).append((constraint, bites, undermined))
        for constraint, bites, undermined in strong + weak:
            if not _tellable(kb, patient, constraint):
                continue
            visited += 1
            if visited > MAX_SEARCH_NODES:
                return None
            trial = _with_constraint(kb, patient, constraint, rng)
            taken = {c.option for c in patient.constraints if c.category == "medication_history"}
            if taken & set(forbidden_by(kb, constraint)):
                continue  # a trap must not forbid the drug the patient already takes
            try:
                plan_care(kb, condition, trial)
            except SimulationError:
                continue
            found = search(index + 1, trial)
            if found is not None:
                # the fact is drawn for the patient with every trap (a long-term drug in the form the
                # preference chosen after it allows: lithium once daily for a once-a-day patient)
                trap = Trap(category=category, option=constraint.option,
                            fact=_trap_fact(kb, constraint, found[1], rng),
                            forbidden=bites, undermined_advice=undermined, indication=constraint.indication)
                return [trap, *found[0]], found[1]
        return None

    found = search(0, patient)
    if found is None:
        raise SimulationError(
            f"conditions/{condition.key}.yaml: no combination of trap options conflicts with this condition's "
            f"care path while leaving every step a safe drug (search reached {deepest[-1] if deepest else '-'}); "
            "add candidates or options to the knowledge base"
        )
    traps, patient = found
    traps.sort(key=lambda trap: TRAP_CATEGORIES.index(trap.category))
    return traps, replace(patient, constraints=constraints_of(traps))
