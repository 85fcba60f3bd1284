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

__all__ = ["budget_text", "dose_with_unit", "format_lab_value", "format_number", "full_date", "lab_status",
           "lab_with_unit", "spoken_date", "text_of", "trap_detail", "with_unit"]


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


def lab_status(kb: KnowledgeBase, lab: str, value: float) -> str:
    """'high', 'low' or 'normal' against the lab's reference range."""
    low, high = kb.labs[lab].reference
    return "high" if value > high else "low" if value < low else "normal"


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
