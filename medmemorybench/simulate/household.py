"""The patient's household: who shares their home, who does the cooking, how the tablets are kept to and what the
meals are, drawn once per persona.

Every visit that speaks of home life reads this one fact (the seed-29 to seed-37 reads found the cook changing from
visit to visit: "my younger sister does most of the cooking", then "I cook for my uncle and me"; the seed-53 read
found five aids for the tablets in one year, and "Cooking for one, I often just have toast" beside three high-protein
meals a day). A spouse shares the home; one parent, parent-in-law or adult child may; siblings, aunts and uncles keep
their own (`relatives.yaml` `lives_with`). A patient who says they live alone lives with nobody. What a relative does
for the household (cook, sort the tablets) is done by a member of an age and health to do it (`people.yaml`
`household`: no 98-year-old mother at the stove, no mother with dementia reminding anyone of their pills).
"""

from __future__ import annotations

import random
from collections.abc import Iterable

from medmemorybench.knowledge.base import KnowledgeBase
from medmemorybench.knowledge.models import DOSES_PER_DAY
from medmemorybench.simulate.models import DietFact, Household, MedicationFact, Relative, Trap


def is_able(kb: KnowledgeBase, relative: Relative) -> bool:
    """Whether a relative is of an age and health to do things for the patient: a household's cooking, sorting their
    tablets, driving them in (people.yaml `household.able_age`, `able_excludes`)."""
    rules = kb.people.household
    low, high = rules.able_age
    return low <= relative.age <= high and not set(relative.conditions) & set(rules.able_excludes)


def trap_aid(kb: KnowledgeBase, traps: Iterable[Trap]) -> str | None:
    """The adherence aid a trap text of the patient names (the pharmacy's blister pack), if any."""
    return next((kb.preferences[t.option].adherence_aid for t in traps if t.category == "medication_preference"
                 and kb.preferences[t.option].adherence_aid is not None), None)


def aid_holds(kb: KnowledgeBase, traps: Iterable[Trap], medication: MedicationFact) -> bool:
    """Whether the adherence aid a trap text names holds a drug: a pack for long-term drugs holds no course and no
    drug taken as needed, and a once-a-day pack no drug taken more often (preferences.yaml `long_term_only`,
    `max_doses_per_day`; NICE NG5: a course is given beside the pack). The seed-73 read: penicillin V "four times a
    day like clockwork. The pharmacy packs them in a blister pack". True where no trap names an aid."""
    for preference in (kb.preferences[t.option] for t in traps if t.category == "medication_preference"):
        if preference.adherence_aid is None:
            continue
        if preference.long_term_only and (medication.course_days or medication.frequency == "as_needed"):
            return False
        limit = preference.max_doses_per_day
        if limit is not None and DOSES_PER_DAY[medication.frequency] > limit:
            return False
    return True


def draw_household(kb: KnowledgeBase, family: list[Relative], lives_alone: bool, rng: random.Random,
                   aid: str | None = None) -> Household:
    """Who of `family` lives with the patient, who cooks (None: the patient), and how the tablets are kept to.

    Args:
        lives_alone: the patient says they live on their own (a trap text): nobody shares the home.
        aid: the adherence aid a trap text names (`trap_aid`): theirs, in place of one drawn.
    """
    members: list[Relative] = []
    cook = None
    if not lives_alone:
        rules = kb.people.household
        members = [r for r in family if kb.relatives[r.relation].lives_with == "always"]
        may_join = [r for r in family if kb.relatives[r.relation].lives_with == "may"]
        if may_join and rng.random() < rules.joins_probability:
            members.append(rng.choice(may_join))
        able = [r for r in members if is_able(kb, r)]
        cook = None if not able or rng.random() < rules.patient_cooks_probability else rng.choice(able).relation
    helpers = [r for r in members if is_able(kb, r)]
    helper = None
    if aid is None and helpers and rng.random() < kb.people.adherence.helper_probability:
        aid, helper = "household_member", rng.choice(helpers).relation
    elif aid is None:
        aid = rng.choice(kb.people.adherence.own_aids)
    return Household(members=[r.relation for r in members], cook=cook, adherence_aid=aid, adherence_helper=helper)


def habit_meals(kb: KnowledgeBase, traps: Iterable[Trap]) -> str | None:
    """The meals a diet habit on record is (`DietHabit.meals`: intermittent fasting is one evening meal), if any."""
    return next((kb.habits[t.fact.habit].meals for t in traps
                 if isinstance(t.fact, DietFact) and kb.habits[t.fact.habit].meals is not None), None)


def draw_meals(kb: KnowledgeBase, traps: Iterable[Trap], lifestyle: str, rng: random.Random) -> str:
    """How the patient eats day to day: the meals a diet habit on record is, else one drawn among those that do not
    deny the patient's lifestyle (`MealPattern.excludes_lifestyles`; the lifestyle is drawn to fit a habit's)."""
    meals = habit_meals(kb, traps)
    if meals is not None:
        return meals
    return rng.choice(sorted(k for k, m in kb.meals.items() if m.drawn and lifestyle not in m.excludes_lifestyles))
