"""The story a care year must tell, phase by phase, and where its parts fall.

Each phase has story items (the misdiagnosis, the diagnosis, the complication, the lapse...) with
precedence constraints. Their order and positions are seeded (`place_items`): a random order that keeps
every precedence, laid on a random sample of the phase's encounters, so items spread over the phase
instead of sitting at fixed session numbers; trap disclosures come in a seeded order, some of them told
in passing at another phase-1 visit. Clinical follow-through (response checks, titrations,
step-ups, monitoring, rescue therapy) is not planned here: the engine schedules it from what happens.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, replace

from medmemorybench.knowledge.models import Condition
from medmemorybench.simulate.models import TRAP_CATEGORIES, AllergyFact, Trap

ATTACH_PROBABILITY = 0.5
"""Chance that a trap fact is told during another phase-1 visit rather than at a visit of its own."""
ATTACH_HOSTS = ("first_symptoms", "baseline_labs", "misdiagnosis", "symptoms_persist")
"""Phase-1 visits at which a trap fact may be told in passing."""
MERGE_FIRST_LINE_PROBABILITY = 0.35
"""Chance that the first prescription is written at the diagnosis visit itself."""
CORRECTION_PROBABILITY = 0.6
"""Chance of each kind of later correction (a misremembered dose, a clarified allergy)."""
FINAL_REVIEW_WINDOW = 10
"""The year's review falls among its last this many encounters."""
SHORT_YEAR_ENCOUNTERS = 50
"""Below this many encounters the story is cut to its spine: every trap told in passing, no optional items."""
ILLNESSES_PER_PHASE = (2, 1, 1, 1, 1)
"""Intercurrent illnesses (`intercurrent.yaml`) caught in each phase: a year of care is more than the one disease,
and each episode (symptoms, then a course chosen against the patient's own facts, then a review) is a story of its
own to remember, spread over the year."""
EARLY_SHARE = 0.5
"""An illness of phase 1 starts in the first half of the phase, so its episode is over before the phase ends."""


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
    last_encounters: int | None = None
    """It falls among the phase's last this many encounters (the year's review)."""
    first_share: float | None = None
    """It falls within this leading share of the phase's encounters (an early illness)."""
    promptly: bool = False
    """It happens at the first encounter it can once what it waits for is done, whatever its drawn slot
    (a reported side effect is dealt with at the next visit, not a month later)."""

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


def plan_story(condition: Condition, traps: list[Trap], rng: random.Random, n_encounters: int = 100,
               illnesses: tuple[str, ...] = ()) -> Story:
    """The year's story items for this patient, with seeded choices (fewer for a short year).

    Args:
        illnesses: intercurrent illness keys the patient will catch, in phase order (`ILLNESSES_PER_PHASE`).
    """
    short = n_encounters < SHORT_YEAR_ENCOUNTERS
    items = [
        StoryItem("first_symptoms", 1, True),
        StoryItem("baseline_labs", 1, True, ("first_symptoms",)),  # (ordered because of the symptoms)
        StoryItem("misdiagnosis", 1, True, ("first_symptoms", "baseline_labs")),
        StoryItem("symptoms_persist", 1, False, ("misdiagnosis",)),
    ]
    told_at: dict[str, list[str]] = {}
    categories = [t.category for t in traps]
    rng.shuffle(categories)
    for category in categories:
        if short or rng.random() < ATTACH_PROBABILITY:
            told_at.setdefault(rng.choice(ATTACH_HOSTS), []).append(category)
        else:
            items.append(StoryItem("disclose", 1, True, arg=category))
    merged = rng.random() < MERGE_FIRST_LINE_PROBABILITY
    # once the turning point is told, the work-up, the diagnosis on its results and the first treatment follow at
    # the next visits: congestion told at the turning point is not left for weeks (the seed-19 read: orthopnoea on
    # 29 Feb, the echo on 27 Apr, furosemide on 9 Jun)
    items += [
        StoryItem("turning_point", 2, True, ("misdiagnosis",)),
        StoryItem("diagnostic_test", 2, True, ("turning_point",), promptly=True),
        StoryItem("diagnosis", 2, True, ("diagnostic_test",), promptly=True),
    ]
    if not merged:
        items.append(StoryItem("start_first_line", 2, True, ("diagnosis",), promptly=True))
    first_line = "diagnosis" if merged else "start_first_line"
    items += [StoryItem("complication", 3, True, (first_line,)),
              StoryItem("adverse_onset", 3, False, (first_line,)),
              StoryItem("adverse_confirm", 3, False, ("adverse_onset",), promptly=True),
              StoryItem("stressor", 4, True, (first_line,)),
              StoryItem("lapse", 4, True, ("stressor",)),
              StoryItem("counselling", 4, True, ("lapse",)),
              StoryItem("final_review", 5, True, (first_line,), last_encounters=FINAL_REVIEW_WINDOW)]
    phases = [phase for phase, count in enumerate(ILLNESSES_PER_PHASE, start=1) for _ in range(count)]
    items += [StoryItem("intercurrent", phase, False, arg=key, first_share=EARLY_SHARE if phase == 1 else None)
              for phase, key in zip(phases, illnesses, strict=False)]
    has_history_drug = any(t.category == "medication_history" for t in traps)
    allergy = next((t for t in traps if t.category == "allergy"), None)
    corrections = []
    if has_history_drug:
        corrections.append("medication")
    if allergy is not None and isinstance(allergy.fact, AllergyFact):
        corrections.append("allergy")
    for kind in corrections:
        if rng.random() < CORRECTION_PROBABILITY and not short:
            after = ("disclose:" + ("medication_history" if kind == "medication" else "allergy"),)
            items.append(StoryItem("correction", rng.choice([2, 3, 4]), False, after, arg=kind))
    known = {item.key for item in items}
    # a trap told in passing has no item of its own: its host stands in for it
    hosts = {f"disclose:{c}": host for host, cats in told_at.items() for c in cats}
    items = [replace(i, after=tuple(hosts.get(a, a) for a in i.after if hosts.get(a, a) in known)) for i in items]
    assert set(TRAP_CATEGORIES) >= set(categories)
    # a visit that a trap fact is told at cannot lapse
    items = [replace(i, required=i.required or i.action in told_at) for i in items]
    if short:
        items = [i for i in items if i.required]
    return Story(tuple(items), {host: tuple(cats) for host, cats in told_at.items()}, merged)


def place_items(items: list[StoryItem], encounters: int, rng: random.Random) -> list[tuple[int, StoryItem]]:
    """(encounter position in the phase, item) for each item, in a random order that keeps precedence.

    The order is a random permutation repaired for precedence (an item moves only as far as it must, after
    what it waits for), so an item with no precedents is as likely to come late as early; the positions
    are a random sorted sample of the phase's encounters (the last one repeats when items outnumber them).
    """
    pending = list(items)
    rng.shuffle(pending)
    keys = {i.key for i in items}
    ordered: list[StoryItem] = []
    while pending:
        placed = {i.key for i in ordered}
        item = next((i for i in pending if all(a in placed or a not in keys for a in i.after)), pending[0])
        ordered.append(item)
        pending.remove(item)
    late = [i for i in ordered if i.last_encounters]
    early = [i for i in ordered if i.first_share and not i.last_encounters]
    ordered = [i for i in ordered if not i.last_encounters and not i.first_share]
    slots = sorted(rng.sample(range(encounters), min(len(ordered), encounters))) if encounters else []
    slots += [max(encounters - 1, 0)] * (len(ordered) - len(slots))
    placed = list(zip(slots, ordered, strict=True))
    for item in late:
        window = min(item.last_encounters or 1, max(encounters, 1))
        placed.append((rng.randint(max(encounters - window, 0), max(encounters - 1, 0)), item))
    for item in early:
        placed.append((rng.randint(0, max(int(encounters * (item.first_share or 1)) - 1, 0)), item))
    return sorted(placed, key=lambda pair: pair[0])
