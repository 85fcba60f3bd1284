"""The patient's household: who shares their home and who does the cooking, drawn once per persona.

Every visit that speaks of home life reads this one fact (the seed-29 to seed-37 reads found the cook changing from
visit to visit: "my younger sister does most of the cooking", then "I cook for my uncle and me"). A spouse shares the
home; one parent, parent-in-law or adult child may; siblings, aunts and uncles keep their own (`relatives.yaml`
`lives_with`). A patient who says they live alone lives with nobody. The cook is the patient or a member of an age
and health to do it (`people.yaml` `household`: no 98-year-old mother, no father-in-law with dementia at the stove).
"""

from __future__ import annotations

import random

from medmemorybench.knowledge.base import KnowledgeBase
from medmemorybench.simulate.models import Household, Relative


def can_cook(kb: KnowledgeBase, relative: Relative) -> bool:
    """Whether a relative is of an age and health to do most of a household's cooking."""
    rules = kb.people.household
    low, high = rules.cook_age
    return low <= relative.age <= high and not set(relative.conditions) & set(rules.cook_excludes)


def draw_household(kb: KnowledgeBase, family: list[Relative], lives_alone: bool, rng: random.Random) -> Household:
    """Who of `family` lives with the patient, and who cooks (None: the patient).

    Args:
        lives_alone: the patient says they live on their own (a trap text): nobody shares the home.
    """
    if lives_alone:
        return Household()
    rules = kb.people.household
    members = [r for r in family if kb.relatives[r.relation].lives_with == "always"]
    may_join = [r for r in family if kb.relatives[r.relation].lives_with == "may"]
    if may_join and rng.random() < rules.joins_probability:
        members.append(rng.choice(may_join))
    able = [r for r in members if can_cook(kb, r)]
    cook = None if not able or rng.random() < rules.patient_cooks_probability else rng.choice(able).relation
    return Household(members=[r.relation for r in members], cook=cook)
