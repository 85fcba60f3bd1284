"""Surface forms of ground-truth values, shared by the renderer and the question generator.

A question's key facts are built with the same functions that wrote the conversation, so "what the
gold answer says" and "what the session says" cannot drift apart.
"""

from __future__ import annotations

from datetime import date

from medmemorybench.knowledge.base import KnowledgeBase
from medmemorybench.knowledge.findings import format_lab_value, with_unit
from medmemorybench.knowledge.models import Text
from medmemorybench.simulate.describe import format_number
from medmemorybench.simulate.models import (
    AllergyFact,
    DietFact,
    EconomicFact,
    HistoryFact,
    MedicationFact,
    PreferenceFact,
    Trap,
)

__all__ = ["budget_text", "dose_with_unit", "format_lab_value", "format_number", "full_date", "judged_range",
           "lab_status", "lab_with_unit", "range_place", "spoken_date", "text_of", "trap_detail", "with_unit"]


def text_of(text: Text, language: str) -> str:
    """The phrase in `language`."""
    return getattr(text, language)


def lab_with_unit(kb: KnowledgeBase, lab: str, value: float, unit: str | None = None) -> str:
    """'7.2 %' — the exact string every session states and every key fact checks; `unit`: the lab's unit as the
    language says it (`Templates.unit`, from the knowledge base's units.yaml; the unit as written by default). A
    finding the simulator fills says a lab's value the same way (`knowledge.findings.lab_with_unit`)."""
    return with_unit(format_lab_value(kb, lab, value), kb.labs[lab].unit if unit is None else unit)


def dose_with_unit(dose: float, unit: str) -> str:
    """'500 mg' (`unit` as the language says it)."""
    return with_unit(format_number(dose), unit)


def judged_range(kb: KnowledgeBase, lab: str, target: tuple[float, float] | None = None,
                 goal: float | None = None) -> tuple[float, float]:
    """The range a result is compared against: the target a drug sets (`LabFact.target`), else up to the goal a
    condition on record sets (`LabFact.goal`: HbA1c under 7.0 % in diabetes), else the reference."""
    if target is not None:
        return target
    low, high = kb.labs[lab].reference
    return (low, goal) if goal is not None else (low, high)


def lab_status(kb: KnowledgeBase, lab: str, value: float, target: tuple[float, float] | None = None,
               goal: float | None = None) -> str:
    """'high', 'low' or 'normal' against the lab's reference range; 'above_target', 'below_target' or 'in_target'
    against the range a drug the patient takes holds it in (an INR of 2.6 on warfarin is on target, not high);
    'above_goal' or 'in_goal' against the level a condition on record sets (an HbA1c of 7.6 % in diabetes is above
    the 7.0 % aimed for, not "above normal"); 'unjudged' for a lab with no range (body weight)."""
    if not kb.labs[lab].judged:
        return "unjudged"
    if target is None and goal is not None:
        return "above_goal" if value > goal else "in_goal"
    low, high = judged_range(kb, lab, target)
    if target is not None:
        return "above_target" if value > high else "below_target" if value < low else "in_target"
    return "high" if value > high else "low" if value < low else "normal"


EDGE, MIDDLE = 0.10, 0.25
"""Where in its range a value sits, as a share of the range's width from its nearer end: within `EDGE` it is at that
end ("79 is at the top end of 60 to 79", never "right in the middle"); from `MIDDLE` on, in the middle."""


def range_place(value: float, low: float, high: float) -> str:
    """'low_end', 'top_end', 'middle' or 'inside': the words a value inside [low, high] may be placed with."""
    share = (value - low) / (high - low) if high > low else 0.5
    if share < EDGE:
        return "low_end"
    if share > 1 - EDGE:
        return "top_end"
    return "middle" if MIDDLE <= share <= 1 - MIDDLE else "inside"


SLIGHT = 0.10
"""How far past the limit it crosses (a share of that limit) a value may be and still be called "a little" high or
low: HbA1c 6.0 % against 5.6 is a little above, 8.0 % is not."""


def status_word_key(kb: KnowledgeBase, lab: str, value: float, status: str,
                    treated: tuple[float, float] | None = None) -> str:
    """The word-table key a status is said with: a value past its lab's harm level where that lies beyond the
    reference range (`Lab.is_past_harm`: a sodium below 130 mmol/L) is said to matter ('high_marked', 'low_marked'); a
    high or low value within `SLIGHT` of the limit it crosses (and, for a marker treatment holds in a range,
    `treated`, inside that range) is said "a little" off ('high_slight', 'low_slight'); every other status as it is.
    Severity comes from the value, never from a drawn word (the seed-73 read: a sodium of 125 "slightly lower than
    normal")."""
    if status not in ("high", "low"):
        return status
    if kb.labs[lab].is_past_harm(value):
        return f"{status}_marked"
    low, high = kb.labs[lab].reference
    limit = high if status == "high" else low
    near = limit != 0 and abs(value - limit) <= SLIGHT * abs(limit)
    inside = treated is None or treated[0] <= value <= treated[1]
    return f"{status}_slight" if near and inside else status


TREND_SLIGHT, TREND_MARKED = 0.25, 1.0
"""A change said "a little" is at most a quarter of the range the result is judged by wide, one said "much" at least
the whole range (PHQ-9 5 -> 17 against a normal 0-4 is a much higher score, never "a little higher": the seed-61
read). A drug's target range is that range where there is one: an INR of 2.4 -> 2.8 on warfarin (target 2.0-3.0) is
not "a lot higher, and that matters" for being a whole off-warfarin range (0.8-1.2) apart (the seed-73 read, P0014)."""


def trend_size(kb: KnowledgeBase, lab: str, then: float, now: float,
               target: tuple[float, float] | None = None) -> str:
    """'_slight', '' or '_marked': how big a change between two shown values is, against the width of the range a
    drug the patient takes holds the lab in (`LabFact.target`), else of the lab's reference range (the word-table key
    suffix of `trend.up` and `trend.down`)."""
    low, high = target if target is not None else kb.labs[lab].reference
    width = high - low
    change = abs(now - then)
    if width <= 0:
        return ""
    return "_slight" if change <= TREND_SLIGHT * width else "_marked" if change >= TREND_MARKED * width else ""


def spoken_date(iso: str) -> str:
    """'2024-03-04' -> '4 March'."""
    day = date.fromisoformat(iso)
    return f"{day.day} {day:%B}"


def full_date(iso: str) -> str:
    """'2024-03-04' -> '4 March 2024' (how a doctor says the day's date)."""
    day = date.fromisoformat(iso)
    return f"{day.day} {day:%B} {day.year}"


def budget_text(budget_usd: float, language: str = "en") -> str:
    """'$40' ('40美元' in Chinese, as the knowledge base's Chinese budget sentences say it)."""
    amount = format_number(budget_usd)
    return f"{amount}美元" if language == "zh" else f"${amount}"


def trap_detail(kb: KnowledgeBase, trap: Trap, language: str) -> str:
    """The short string that identifies a trap fact in the dialogue ("Bactrim", "$40", ...).

    The doctor cites it when a trap rules a drug out, and IG/MQ questions use it as their key fact.
    """
    fact = trap.fact
    if isinstance(fact, AllergyFact):
        return text_of(fact.agent, language)
    if isinstance(fact, MedicationFact):
        return text_of(kb.drugs[fact.drug].name, language)
    if isinstance(fact, HistoryFact):
        return text_of(kb.history_conditions[fact.history].name, language)
    if isinstance(fact, PreferenceFact):
        return text_of(kb.preferences[fact.preference].text, language)
    if isinstance(fact, DietFact):
        return text_of(kb.habits[fact.habit].text, language)
    if isinstance(fact, EconomicFact):
        return budget_text(fact.monthly_budget_usd, language)
    raise TypeError(f"trap fact {type(fact).__name__} has no detail")
