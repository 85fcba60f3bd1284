"""Simulating patients: one care year per persona, the roster cycling through the conditions."""

from __future__ import annotations

from collections.abc import Iterator

from medmemorybench.errors import InputError, SimulationError
from medmemorybench.knowledge.base import KnowledgeBase
from medmemorybench.knowledge.models import Condition
from medmemorybench.simulate.care_plan import plan_care
from medmemorybench.simulate.engine import YearBuilder
from medmemorybench.simulate.family import make_family
from medmemorybench.simulate.household import draw_household, draw_meals, habit_meals, trap_aid
from medmemorybench.simulate.models import CareYear, Persona
from medmemorybench.simulate.persona import (
    applicable_advice,
    baseline_egfr,
    choose_lifestyle,
    choose_occupation,
    make_demographics,
    persona_id_for,
    starting_bmi,
    trap_exclusions,
    trap_requirements,
)
from medmemorybench.simulate.rng import rng_for
from medmemorybench.simulate.safety import Patient
from medmemorybench.simulate.traps import choose_traps

PERSONA_ATTEMPTS = 10
"""Draws of a persona before the data is blamed for having no trap combination that bites."""
RNG_PURPOSES = ("demographics", "traps", "family", "dates", "labs", "events", "story", "illnesses", "findings", "mood",
                "history_labs")
"""Each purpose draws from its own generator, so changing one part of the year leaves the others' draws alone."""

DEFAULT_ENCOUNTERS = 100


def simulate_patient(
    kb: KnowledgeBase,
    seed: int,
    index: int,
    condition: Condition | None = None,
    n_encounters: int = DEFAULT_ENCOUNTERS,
) -> CareYear:
    """Simulate the `index`-th persona's year (0-based).

    Args:
        kb: the knowledge base.
        seed: global seed; the same (seed, index, condition, n_encounters) gives an identical year.
        index: position in the cohort; fixes the persona id and, by default, the condition
            (the roster cycles through the conditions).
        condition: override the roster's condition.
        n_encounters: regular encounters in the year.
    """
    persona_id = persona_id_for(index)
    condition = condition or kb.roster[index % len(kb.roster)]
    for attempt in range(PERSONA_ATTEMPTS):
        # A patient for whom no six trap facts can all bite (a young patient has few histories that
        # contraindicate anything) is drawn again: the cohort holds only patients the benchmark can test.
        rngs = {purpose: rng_for(seed, persona_id, purpose if attempt == 0 else f"{purpose}/{attempt}")
                for purpose in RNG_PURPOSES}
        who = make_demographics(kb, condition, rngs["demographics"])
        patient = Patient(who.age, who.sex, condition.key,
                          egfr=baseline_egfr(kb, condition, who.age, rngs["demographics"]))
        advice = applicable_advice(kb, condition.lifestyle_advice, who.body.smoker, starting_bmi(condition, who.body))
        try:
            traps, patient = choose_traps(kb, condition, patient, rngs["traps"], advice, n_encounters)
            break
        except SimulationError:
            if attempt == PERSONA_ATTEMPTS - 1:
                raise
    # the job and the lifestyle fit the age, the year's visits and every trap text about work; a patient who lives
    # alone has no spouse, and who shares the home, cooks and helps with the tablets, and the meals, are drawn once
    # (`household.py`)
    required = [trait for trap in traps for trait in trap_requirements(kb, trap.category, trap.option)]
    excluded = [trait for trap in traps for trait in trap_exclusions(kb, trap.category, trap.option)]
    occupation = choose_occupation(kb, who.age, required, rngs["demographics"], n_encounters, excluded)
    lifestyle = choose_lifestyle(kb, occupation, who.age, who.body.smoker, rngs["demographics"],
                                 habit_meals(kb, traps))
    lives_alone = any(kb.preferences[t.option].lives_alone for t in traps if t.category == "medication_preference")
    plan = plan_care(kb, condition, patient)
    family = make_family(kb, condition, who.sex, who.age, [p.chosen for p in plan], rngs["family"],
                         patient_name=who.name, lives_alone=lives_alone)
    household = draw_household(kb, family, lives_alone, rngs["family"], trap_aid(kb, traps))
    meals = draw_meals(kb, traps, lifestyle.key, rngs["family"])
    events = YearBuilder(kb, condition, persona_id, traps, patient, rngs, n_encounters, body=who.body,
                         traits=frozenset(occupation.traits), relations=frozenset(r.relation for r in family),
                         lives_alone=not household.members).build()
    persona = Persona(
        persona_id=persona_id,
        condition=condition.key,
        icd11=condition.icd11.code,
        name=who.name,
        sex=who.sex,  # type: ignore[arg-type]
        age=who.age,
        occupation=occupation.text,
        lifestyle=lifestyle.text,
        occupation_key=occupation.key,
        lifestyle_key=lifestyle.key,
        height_cm=who.body.height_cm,
        smoker=who.body.smoker,
        traps=traps,
        family=family,
        household=household,
        meals=meals,
    )
    return CareYear(seed=seed, persona=persona, events=events)


def iter_cohort(
    kb: KnowledgeBase,
    seed: int,
    n_personas: int,
    n_encounters: int = DEFAULT_ENCOUNTERS,
    conditions: list[str] | None = None,
) -> Iterator[CareYear]:
    """Yield the years of `n_personas` patients in persona order.

    Args:
        conditions: restrict the roster to these condition keys (cycled in the given order).

    Raises:
        InputError: for a non-positive count or an unknown condition (listing the known ones).
    """
    if n_personas < 1:
        raise InputError(f"--personas: must be at least 1, got {n_personas}")
    roster = kb.roster
    if conditions:
        unknown = [key for key in conditions if key not in kb.conditions]
        if unknown:
            raise InputError(
                f"--condition: unknown condition {', '.join(map(repr, unknown))}; "
                f"known: {', '.join(sorted(kb.conditions))}"
            )
        roster = [kb.conditions[key] for key in conditions]
    for index in range(n_personas):
        yield simulate_patient(kb, seed, index, roster[index % len(roster)], n_encounters)
