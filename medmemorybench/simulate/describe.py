"""Plain-English one-line descriptions of facts and events, for `medmemorybench show` and logs.

This is a reader's aid, not the conversation renderer: sessions are rendered by `medmemorybench.render`.
"""

from __future__ import annotations

from medmemorybench.knowledge.base import KnowledgeBase
from medmemorybench.simulate.models import (
    AdherenceFact,
    AdverseFact,
    AdviceFact,
    AllergyFact,
    AvoidedFact,
    CautionFact,
    ComplicationFact,
    DiagnosisFact,
    DietFact,
    EconomicFact,
    Event,
    HistoryFact,
    LabFact,
    MedicationFact,
    PreferenceFact,
    RefillFact,
    SettingFact,
    StressorFact,
    SymptomFact,
    TestFact,
)


def format_number(value: float) -> str:
    """A value without a trailing '.0' (7.0 -> '7', 7.25 -> '7.25')."""
    return f"{value:g}" if abs(value) < 1e6 else f"{value:.0f}"


def drug_name(kb: KnowledgeBase, key: str) -> str:
    """English generic name of a drug key (the key itself when unknown)."""
    drug = kb.drugs.get(key)
    return drug.name.en if drug else key


def describe_fact(kb: KnowledgeBase, fact: object) -> str:
    """One English line for a typed fact."""
    if isinstance(fact, SymptomFact):
        return f"symptom: {fact.name.en}"
    if isinstance(fact, LabFact):
        lab = kb.labs.get(fact.lab)
        return f"{lab.name.en if lab else fact.lab} {format_number(fact.value)} {fact.unit}"
    if isinstance(fact, DiagnosisFact):
        return f"diagnosis {fact.status}: {fact.name.en} ({fact.icd11})"
    if isinstance(fact, TestFact):
        return f"test {fact.name.en}: {fact.finding.en}"
    if isinstance(fact, MedicationFact):
        before = f" from {format_number(fact.previous_dose)}" if fact.previous_dose is not None else ""
        dose = f"{format_number(fact.dose)} {fact.unit} {fact.frequency.replace('_', ' ')}"
        if fact.release == "extended":
            dose += " (extended release)"
        if fact.course_days:
            dose += f" for {fact.course_days} days"
        if fact.reason == "long_term" and fact.indication:
            dose += f" for {fact.indication.partition(':')[2].replace('_', ' ')}"
        if before:
            return f"{fact.action} {drug_name(kb, fact.drug)}{before} to {dose} ({fact.reason})"
        return f"{fact.action} {drug_name(kb, fact.drug)} {dose} ({fact.reason})"
    if isinstance(fact, AvoidedFact):
        return (f"avoided {drug_name(kb, fact.drug)} ({', '.join(fact.rules)}); "
                f"gave {drug_name(kb, fact.instead)}")
    if isinstance(fact, CautionFact):
        return f"caution with {drug_name(kb, fact.drug)}: {fact.rule}"
    if isinstance(fact, SettingFact):
        return f"managed in {fact.setting} ({fact.reason})"
    if isinstance(fact, AllergyFact):
        corrected = f" (corrects: {fact.corrected_from.en})" if fact.corrected_from else ""
        return f"allergy: {fact.agent.en} -> {fact.reaction.en} ({fact.group}){corrected}"
    if isinstance(fact, HistoryFact):
        hist = kb.history_conditions.get(fact.history)
        return f"history: {hist.name.en if hist else fact.history}"
    if isinstance(fact, PreferenceFact):
        pref = kb.preferences.get(fact.preference)
        return f"preference: {pref.text.en if pref else fact.preference}"
    if isinstance(fact, DietFact):
        habit = kb.habits.get(fact.habit)
        return f"diet: {habit.text.en if habit else fact.habit}"
    if isinstance(fact, EconomicFact):
        return f"budget: at most ${fact.monthly_budget_usd}/month ({fact.profile})"
    if isinstance(fact, AdverseFact):
        return f"adverse effect {fact.effect} of {drug_name(kb, fact.drug)}"
    if isinstance(fact, ComplicationFact):
        return f"complication: {fact.complication}" + (f" ({fact.finding.en})" if fact.finding is not None else "")
    if isinstance(fact, AdviceFact):
        advice = kb.advice.get(fact.advice)
        return f"advice: {advice.text.en if advice else fact.advice}"
    if isinstance(fact, StressorFact):
        return f"stressor: {fact.stressor.replace('_', ' ')}"
    if isinstance(fact, AdherenceFact):
        return f"missed {fact.missed_days} days of {drug_name(kb, fact.drug)}"
    if isinstance(fact, RefillFact):
        return f"nearly out of {drug_name(kb, fact.drug)}: asks for more"
    raise TypeError(f"no description for fact {type(fact).__name__}")


def describe_event(kb: KnowledgeBase, event: Event) -> str:
    """All facts of an event on one line."""
    return "; ".join(describe_fact(kb, fact) for fact in event.facts)
