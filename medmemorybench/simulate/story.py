"""The story a care year must tell, phase by phase, and where its parts fall.

Each phase has story items (the misdiagnosis, the diagnosis, the complication, the lapse...) with
precedence constraints. Their order and positions are seeded: at each encounter a pending item of the
phase is due with probability (items left / encounters left), so items spread uniformly over the phase
instead of sitting at fixed session numbers, and trap disclosures come in a seeded order, some of them
told in passing at another phase-1 visit. Clinical follow-through (response checks, titrations,
step-ups, monitoring, rescue therapy) is not planned here: the engine schedules it from what happens.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from medmemorybench.knowledge.models import Condition
from medmemorybench.simulate.models import TRAP_CATEGORIES, AllergyFact, Trap

ATTACH_PROBABILITY = 0.35
"""Chance that a trap fact is told during another phase-1 visit rather than at a visit of its own."""
ATTACH_HOSTS = ("first_symptoms", "baseline_labs", "misdiagnosis", "symptoms_persist")
"""Phase-1 visits at which a trap fact may be told in passing."""
MERGE_FIRST_LINE_PROBABILITY = 0.35
"""Chance that the first prescription is written at the diagnosis visit itself."""
CORRECTION_PROBABILITY = 0.6
"""Chance of each kind of later correction (a misremembered dose, a clarified allergy)."""
FINAL_REVIEW_WINDOW = 4
"""The year's review falls among its last this many encounters."""


@dataclass(frozen=True)
class StoryItem:
    """One planned part of the year."""

    action: str
    """Engine action that tells it."""
    phase: int
    """Phase it belongs to (it may spill into the next when it cannot happen in time)."""
    required: bool
    """Whether the year is incomplete without it."""
    after: tuple[str, ...] = ()
    """Keys of items that must come first."""
    arg: str = ""
    """Action argument (a trap category, a correction kind)."""

    @property
    def key(self) -> str:
        return f"{self.action}:{self.arg}" if self.arg else self.action


@dataclass(frozen=True)
class Story:
    """The planned items and which trap facts are told during which phase-1 visit."""

    items: tuple[StoryItem, ...]
    told_at: dict[str, tuple[str, ...]]
    """Host action -> trap categories told in passing there."""
    first_line_at_diagnosis: bool


def plan_story(condition: Condition, traps: list[Trap], rng: random.Random) -> Story:
    """The year's story items for this patient, with seeded choices."""
    items = [
        StoryItem("first_symptoms", 1, True),
        StoryItem("baseline_labs", 1, True),
        StoryItem("misdiagnosis", 1, True, ("first_symptoms", "baseline_labs")),
        StoryItem("symptoms_persist", 1, False, ("misdiagnosis",)),
    ]
    told_at: dict[str, list[str]] = {}
    categories = [t.category for t in traps]
    rng.shuffle(categories)
    for category in categories:
        if rng.random() < ATTACH_PROBABILITY:
            told_at.setdefault(rng.choice(ATTACH_HOSTS[:3]), []).append(category)
        else:
            items.append(StoryItem("disclose", 1, True, arg=category))
    merged = rng.random() < MERGE_FIRST_LINE_PROBABILITY
    items += [
        StoryItem("turning_point", 2, True, ("misdiagnosis",)),
        StoryItem("diagnostic_test", 2, True, ("turning_point",)),
        StoryItem("diagnosis", 2, True, ("diagnostic_test",)),
    ]
    if not merged:
        items.append(StoryItem("start_first_line", 2, True, ("diagnosis",)))
    first_line = "diagnosis" if merged else "start_first_line"
    items += [StoryItem("complication", 3, True, (first_line,)),
              StoryItem("adverse_onset", 3, False, (first_line,)),
              StoryItem("adverse_confirm", 3, False, ("adverse_onset",)),
              StoryItem("stressor", 4, True, (first_line,)),
              StoryItem("lapse", 4, True, ("stressor",)),
              StoryItem("counselling", 4, True, ("lapse",)),
              StoryItem("final_review", 5, True, (first_line,))]
    has_history_drug = any(t.category == "medication_history" for t in traps)
    allergy = next((t for t in traps if t.category == "allergy"), None)
    corrections = []
    if has_history_drug:
        corrections.append("medication")
    if allergy is not None and isinstance(allergy.fact, AllergyFact):
        corrections.append("allergy")
    for kind in corrections:
        if rng.random() < CORRECTION_PROBABILITY:
            after = ("disclose:" + ("medication_history" if kind == "medication" else "allergy"),)
            items.append(StoryItem("correction", rng.choice([2, 3, 4]), False, after, arg=kind))
    known = {item.key for item in items}
    # a trap told in passing has no item of its own: its host stands in for it
    hosts = {f"disclose:{c}": host for host, cats in told_at.items() for c in cats}
    items = [StoryItem(i.action, i.phase, i.required, tuple(hosts.get(a, a) for a in i.after if hosts.get(a, a) in known),
                       i.arg) for i in items]
    assert set(TRAP_CATEGORIES) >= set(categories)
    return Story(tuple(items), {host: tuple(cats) for host, cats in told_at.items()}, merged)
