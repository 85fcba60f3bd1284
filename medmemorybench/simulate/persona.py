"""Persona demographics: name, sex, age, body, occupation and lifestyle (people.yaml), and kidney function by age.

A persona is one person: their height is drawn once and their BMI is read from it wherever weight is; their job
fits their age, the year's visits (a remote site's roster leaves room for few) and every trap text that speaks of
their work (drawn after the traps, among the occupations whose traits each text `requires`); their lifestyle phrase
fits their job and age, and says they smoke exactly when they do.
"""

from __future__ import annotations

import random
from collections.abc import Iterable
from dataclasses import dataclass
from typing import NamedTuple

from medmemorybench.errors import SimulationError
from medmemorybench.knowledge.base import KnowledgeBase
from medmemorybench.knowledge.models import Condition, Lifestyle, Occupation, Text

HEIGHT_SPREAD_SD = 2.5
"""Heights are drawn within this many standard deviations of their sex's mean."""


class Demographics(NamedTuple):
    """Who the patient is, before any medicine."""

    name: Text
    sex: str
    age: int
    body: Body


@dataclass(frozen=True)
class Body:
    """What a patient's vitals and lifestyle advice follow: one height for the year, the BMI their weight starts
    at where the condition does not set it, and whether they smoke."""

    height_cm: float
    bmi: float
    smoker: bool

    @property
    def height_m2(self) -> float:
        """Height squared in m² (weight in kg over it is the BMI)."""
        return (self.height_cm / 100) ** 2


def draw_body(kb: KnowledgeBase, sex: str, rng: random.Random) -> Body:
    """Height from the sex's distribution (people.yaml), a BMI from its range, smoking by its prevalence."""
    mean, sd = kb.people.height_cm[sex]  # type: ignore[index]
    spread = HEIGHT_SPREAD_SD * sd
    height = round(max(mean - spread, min(mean + spread, rng.gauss(mean, sd))))
    bmi = round(rng.uniform(*kb.people.bmi), 1)
    return Body(height_cm=float(height), bmi=bmi, smoker=rng.random() < kb.people.smoking_prevalence)


def trap_requirements(kb: KnowledgeBase, category: str, option: str) -> list[str]:
    """The occupation traits a trap's text needs ("I drive all day for work": `drives_all_day`)."""
    if category == "medication_preference":
        return list(kb.preferences[option].requires)
    if category == "lifestyle_economic":
        return list(kb.economic_profiles[option].requires)
    return []


def trap_exclusions(kb: KnowledgeBase, category: str, option: str) -> list[str]:
    """The occupation traits a trap's text rules out ("I faint at the sight of a needle": `clinical`)."""
    return list(kb.preferences[option].excludes) if category == "medication_preference" else []


def occupation_fits(occupation: Occupation, age: int, required: Iterable[str], encounters: int | None = None,
                    excluded: Iterable[str] = ()) -> bool:
    """Whether a patient of `age` can have `occupation` with every trait in `required` and none in `excluded`, in a
    year of `encounters` regular visits (a remote site's roster leaves room for few: `Occupation.max_encounters`;
    None: any number)."""
    low, high = occupation.age
    traits = set(occupation.traits)
    roster_fits = encounters is None or occupation.max_encounters is None or encounters <= occupation.max_encounters
    return low <= age <= high and set(required) <= traits and not set(excluded) & traits and roster_fits


def fitting_occupations(kb: KnowledgeBase, age: int, required: Iterable[str], encounters: int | None = None,
                        excluded: Iterable[str] = ()) -> list[Occupation]:
    """The occupations a patient of `age` whose texts need `required` and rule out `excluded` can have in a year of
    `encounters` visits."""
    required, excluded = set(required), set(excluded)
    return [o for o in kb.people.occupations if occupation_fits(o, age, required, encounters, excluded)]


def lifestyle_fits(lifestyle: Lifestyle, occupation: Occupation, age: int, smoker: bool) -> bool:
    """Whether the phrase fits the patient: their job's traits, their age, and smoking exactly when they smoke."""
    traits = set(occupation.traits)
    low, high = lifestyle.age
    return (set(lifestyle.requires) <= traits and not set(lifestyle.excludes) & traits and low <= age <= high
            and lifestyle.smoker == smoker)


def choose_occupation(kb: KnowledgeBase, age: int, required: Iterable[str], rng: random.Random,
                      encounters: int | None = None, excluded: Iterable[str] = ()) -> Occupation:
    """An occupation that fits the patient's age, the year's encounters and every trait their trap texts need or
    rule out.

    Raises:
        SimulationError: when none does (the trap search only keeps texts some occupation fits).
    """
    options = fitting_occupations(kb, age, required, encounters, excluded)
    if not options:
        raise SimulationError(f"people.yaml: no occupation fits age {age} and {encounters} encounters with traits "
                              f"{sorted(set(required))}")
    return rng.choice(options)


def choose_lifestyle(kb: KnowledgeBase, occupation: Occupation, age: int, smoker: bool,
                     rng: random.Random, meals: str | None = None) -> Lifestyle:
    """A lifestyle phrase that fits the patient's job, age and smoking, and the meals a diet habit of theirs is
    (`MealPattern.excludes_lifestyles`: no "eats out almost every lunch" beside one meal in the evening)."""
    denied = kb.meals[meals].excludes_lifestyles if meals is not None else []
    options = [ls for ls in kb.people.lifestyles
               if lifestyle_fits(ls, occupation, age, smoker) and ls.key not in denied]
    if not options:
        raise SimulationError(f"people.yaml: no lifestyle fits a {occupation.key} aged {age} (smoker: {smoker})")
    return rng.choice(options)


def persona_id_for(index: int) -> str:
    """The stable id of the `index`-th persona (0-based): P0001, P0002, ..."""
    return f"P{index + 1:04d}"


def make_demographics(kb: KnowledgeBase, condition: Condition, rng: random.Random) -> Demographics:
    """Draw the demographics of a patient with `condition` (the occupation and lifestyle come after the traps)."""
    people = kb.people
    sex = condition.sex if condition.sex != "any" else rng.choice(["female", "male"])
    given = people.given_names[sex]  # type: ignore[index]
    name = Text(
        en=f"{rng.choice(given.en)} {rng.choice(people.surnames.en)}",
        zh=f"{rng.choice(people.surnames.zh)}{rng.choice(given.zh)}",
    )
    age = rng.randint(*condition.age)
    return Demographics(name=name, sex=sex, age=age, body=draw_body(kb, sex, rng))


def baseline_egfr(kb: KnowledgeBase, condition: Condition, age: int, rng: random.Random) -> float:
    """Kidney function before the year starts: the condition's own onset range where it follows eGFR,
    otherwise drawn from the age band of `patient_rules.yaml: renal_baseline`."""
    monitored = next((m for m in condition.monitored if m.lab == "egfr"), None)
    if monitored is not None:
        return sum(monitored.onset) / 2
    band = next((b for b in sorted(kb.renal_baseline, key=lambda b: b.max_age) if age <= b.max_age),
                max(kb.renal_baseline, key=lambda b: b.max_age))
    return round(rng.uniform(*band.egfr))


def starting_bmi(condition: Condition, body: Body) -> float:
    """The BMI the patient starts the year at, as far as is known before it: the middle of the condition's onset
    range where it follows BMI, otherwise the patient's own."""
    monitored = next((m for m in condition.monitored if m.lab == "bmi"), None)
    return sum(monitored.onset) / 2 if monitored is not None else body.bmi


def advice_applies(kb: KnowledgeBase, advice: str, smoker: bool, bmi: float | None) -> bool:
    """Whether a doctor gives this advice to this patient: stopping smoking to a smoker, weight loss where the BMI
    on record is at least its threshold (`Advice.smokers_only`, `Advice.min_bmi`; no BMI known: not given)."""
    spec = kb.advice[advice]
    if spec.smokers_only and not smoker:
        return False
    return spec.min_bmi is None or (bmi is not None and bmi >= spec.min_bmi)


def applicable_advice(kb: KnowledgeBase, keys: Iterable[str], smoker: bool, bmi: float | None) -> list[str]:
    """Those of `keys` a doctor gives this patient (`advice_applies`), in order."""
    return [key for key in keys if advice_applies(kb, key, smoker, bmi)]
