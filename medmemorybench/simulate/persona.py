"""Persona demographics: name, sex, age, occupation and lifestyle (people.yaml), and kidney function by age."""

from __future__ import annotations

import random
from typing import NamedTuple

from medmemorybench.knowledge.base import KnowledgeBase
from medmemorybench.knowledge.models import Condition, Text


class Demographics(NamedTuple):
    """Who the patient is, before any medicine."""

    name: Text
    sex: str
    age: int
    occupation: Text
    lifestyle: Text


def persona_id_for(index: int) -> str:
    """The stable id of the `index`-th persona (0-based): P0001, P0002, ..."""
    return f"P{index + 1:04d}"


def make_demographics(kb: KnowledgeBase, condition: Condition, rng: random.Random) -> Demographics:
    """Draw the demographics of a patient with `condition`."""
    people = kb.people
    sex = condition.sex if condition.sex != "any" else rng.choice(["female", "male"])
    given = people.given_names[sex]  # type: ignore[index]
    name = Text(
        en=f"{rng.choice(given.en)} {rng.choice(people.surnames.en)}",
        zh=f"{rng.choice(people.surnames.zh)}{rng.choice(given.zh)}",
    )
    return Demographics(
        name=name,
        sex=sex,
        age=rng.randint(*condition.age),
        occupation=rng.choice(people.occupations),
        lifestyle=rng.choice(people.lifestyles),
    )


def baseline_egfr(kb: KnowledgeBase, condition: Condition, age: int, rng: random.Random) -> float:
    """Kidney function before the year starts: the condition's own onset range where it follows eGFR,
    otherwise drawn from the age band of `patient_rules.yaml: renal_baseline`."""
    monitored = next((m for m in condition.monitored if m.lab == "egfr"), None)
    if monitored is not None:
        return sum(monitored.onset) / 2
    band = next((b for b in sorted(kb.renal_baseline, key=lambda b: b.max_age) if age <= b.max_age),
                max(kb.renal_baseline, key=lambda b: b.max_age))
    return round(rng.uniform(*band.egfr))
