"""Independent readings of the texts a year says, as a physician reads them (issue 27, items 3 and 5): a caution is the
rule of the pair it is said for, a reason names the fact that caused it, a CKD stage and a severity word come from the
value measured, and an acute illness gets the first-line course of current guidance.

The checks read what the renderer fills a fact's slots with (`FactSlots`), the sessions it renders, and the year's
facts, and judge them against the knowledge base's rules and guideline tables written here, never against the code that
picks the text. A household is one fact: every session that says who cooks says the persona's.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable

from medmemorybench.knowledge.base import KnowledgeBase
from medmemorybench.knowledge.models import Text
from medmemorybench.render.fact_acts import FactSlots
from medmemorybench.simulate.models import (
    AdverseFact,
    AvoidedFact,
    CareYear,
    CautionFact,
    ComplicationFact,
    DiagnosisFact,
    Event,
    HistoryFact,
    LabFact,
    MedicationFact,
    TestFact,
)
from tests.simulate.clinical import fail, latest_egfr

RNGS = 6
"""Draws of a slot's wording checked per fact (a word table holds a few variants; each must be right)."""


def _wordings(fill: Callable[[random.Random], str]) -> list[str]:
    return list(dict.fromkeys(fill(random.Random(seed)) for seed in range(RNGS)))


# --- caution_text_matches_pair ------------------------------------------------------------------------------------


def texts_of_pair(kb: KnowledgeBase, rule_id: str, drug: str) -> list[Text] | None:
    """Every text a rule id may be said with for `drug`: the rules of that pair alone (None: a rule phrased from a
    trap fact or a word table, not a knowledge-base text)."""
    kind, _, key = rule_id.partition(":")
    if kind == "contraindication":
        return [r.reason for r in kb.contraindications
                if r.history == key and drug in kb.expand([*r.classes, *r.drugs])]
    if kind == "rule":
        return [r.reason for r in kb.patient_rules if r.key == key and drug in kb.expand(r.drugs)]
    if kind == "allergy" and kb.allergy_groups[key].caution is not None and \
            drug in kb.expand(kb.allergy_groups[key].caution.drugs):  # (a bar is phrased from the trap fact)
        return [kb.allergy_groups[key].caution.reason]
    if kind == "interaction":
        taken, _, given_drug = key.partition("+")
        out: list[Text] = []
        for rule in kb.interactions:
            a, b = kb.expand(rule.a), kb.expand(rule.b)
            if not ((taken in a and given_drug in b) or (taken in b and given_drug in a)):
                continue
            named = [e.effect for e in rule.by_partner if {taken, given_drug} & kb.expand(e.partners)]
            out += named or [rule.effect]
        return out
    return None


def caution_text_violations(kb: KnowledgeBase, year: CareYear, slots: FactSlots) -> list[str]:
    """[caution_text_matches_pair] the words said for a caution or a bar are the text of a rule naming that drug
    (and, for an interaction, both drugs), never another rule of the same history or drug."""
    failures = []
    for event in year.events:
        for fact in event.facts:
            if isinstance(fact, CautionFact):
                said = [(fact.rule, slots.rule_phrase(fact.rule, fact.drug, bars=False))]
            elif isinstance(fact, AvoidedFact):
                said = [(rule, slots.rule_phrase(rule, fact.drug, bars=True)) for rule in fact.rules]
            else:
                continue
            for rule_id, phrase in said:
                texts = texts_of_pair(kb, rule_id, fact.drug)
                if texts is None:
                    continue
                if phrase not in {slots.sentence(slots.t(text)) for text in texts}:
                    failures.append(fail("caution_text_matches_pair", year, event,
                                         f"{fact.drug} ({rule_id}) said as {phrase!r}, no rule of that pair"))
    return failures


# --- reason_names_its_cause ---------------------------------------------------------------------------------------


def adverse_causes(year: CareYear) -> dict[int, str]:
    """id(medication fact) -> the drug whose adverse effect its `adverse_effect:<key>` reason is (the latest drug on
    record with that effect, up to its visit)."""
    latest: dict[str, str] = {}
    out: dict[int, str] = {}
    for event in year.events:
        for fact in event.facts:
            if isinstance(fact, AdverseFact):
                latest[fact.effect] = fact.drug
        for fact in event.facts:
            if isinstance(fact, MedicationFact) and fact.reason.startswith("adverse_effect:"):
                cause = latest.get(fact.reason.partition(":")[2])
                if cause is not None:
                    out[id(fact)] = cause
    return out


def trap_causes(kb: KnowledgeBase, year: CareYear, rules: list[str], lang: str) -> list[str]:
    """What the reason said for a bar or caution through the patient's long-term drug must name, by the rules that
    bind (its structured record): the disease the drug is taken for where that disease's contraindication is a
    cause, the drug itself where its own interaction is one."""
    trap = next((t for t in year.persona.traps if t.category == "medication_history"), None)
    if trap is None:
        return []
    history = (trap.indication or "").removeprefix("history:")
    out = []
    if f"contraindication:{history}" in rules:
        out.append(getattr(kb.history_conditions[history].name, lang))
    if any(rule.startswith(f"interaction:{trap.option}+") for rule in rules):
        out.append(getattr(kb.drugs[trap.option].name, lang))
    return out


def reason_violations(kb: KnowledgeBase, year: CareYear, slots: FactSlots) -> list[str]:
    """[reason_names_its_cause] a drug started, raised or lowered because of another drug's adverse effect names that
    drug in every wording ("the reaction you've had to enalapril"), never "it" (the new drug); a drug barred or
    cautioned through the patient's long-term drug names what the rule binds through: the disease the drug is taken
    for (NSAIDs refused for the heart failure metoprolol treats, not "with your metoprolol prescription in mind"),
    the drug where its own interaction is the cause."""
    failures = []
    causes = adverse_causes(year)
    for event in year.events:
        for fact in event.facts:
            cause = causes.get(id(fact))
            if cause is None or cause == fact.drug:
                continue
            name = slots.drug(cause)
            for reason in _wordings(lambda rng, f=fact: slots.slots(f"fact.medication.{f.action}", f, rng)["reason"]):
                if name not in reason:
                    failures.append(fail("reason_names_its_cause", year, event,
                                         f"{fact.drug} {fact.action} for {cause}'s adverse effect said {reason!r}"))
        for fact in event.facts:
            if isinstance(fact, AvoidedFact) and "medication_history" in fact.traps:
                key, slot, rules = "fact.avoided", "trap_reason", fact.rules
            elif isinstance(fact, CautionFact) and fact.trap == "medication_history":
                key, slot, rules = "fact.caution_given", "reason", [fact.rule]
            else:
                continue
            for reason in _wordings(lambda rng, f=fact, k=key, s=slot: slots.slots(k, f, rng)[s]):
                for name in trap_causes(kb, year, rules, slots.lang):
                    if name not in reason:
                        failures.append(fail("reason_names_its_cause", year, event,
                                             f"{fact.drug} ({', '.join(rules)}) said {reason!r}, not naming {name}"))
    return failures


# --- interaction_text_names_its_pair ------------------------------------------------------------------------------


def _said_as(kb: KnowledgeBase, ref: str, lang: str) -> set[str]:
    """How a text names a drug or class key: its name without a bracketed gloss, the gloss itself ("ARB"), and for
    an English drug name of several words its first and last words too ("metoprolol", "aspirin"), unless the word
    names a lab as well ("potassium") or a formulation ("extended-release")."""
    text = getattr((kb.drugs[ref] if ref in kb.drugs else kb.classes[ref]).name, lang)
    bare = re.sub(r"\s*[(（].*?[)）]", "", text).strip()
    out = {bare, *(g for g in re.findall(r"[(（]([^()（）]+)[)）]", text) if len(g) <= 6)}
    words = re.split(r"[\s/]", bare)
    lab_words = {w.lower() for lab in kb.labs.values() for w in lab.name.en.split()}
    if lang == "en" and ref in kb.drugs and len(words) > 1:
        out |= {w for w in (words[0], words[-1]) if len(w) >= 5 and w.lower() not in lab_words and "release" not in w}
    return out


def _ref_words(kb: KnowledgeBase, ref: str, lang: str) -> set[str]:
    """How a text names a rule's drug or class key: a class by its own name or any of its drugs'."""
    members = () if ref in kb.drugs else sorted(kb.expand([ref]))
    return _said_as(kb, ref, lang).union(*(_said_as(kb, drug, lang) for drug in members))


def _names(text: str, words: set[str], lang: str) -> bool:
    if lang != "en":
        return any(word in text for word in words)
    return any(re.search(rf"(?<![\w-]){re.escape(w)}(?:s|es)?(?![\w-])", text, re.I) for w in words)


def interaction_text_violations(kb: KnowledgeBase, year: CareYear, slots: FactSlots) -> list[str]:
    """[interaction_text_names_its_pair] the words said for an interaction bar or caution speak of the pair it is
    said for: a text that names another drug or class of its rule names the patient's own drug (or its class) on
    that side too (the seed-53 read: spironolactone cautioned with "loops raise them; SGLT2 inhibitors may lower
    them")."""
    failures = []
    for event in year.events:
        for fact in event.facts:
            if isinstance(fact, CautionFact):
                said = [(fact.rule, False)]
            elif isinstance(fact, AvoidedFact):
                said = [(rule, True) for rule in fact.rules]
            else:
                continue
            for rule_id, bars in said:
                kind, _, pair = rule_id.partition(":")
                if kind != "interaction":
                    continue
                taken, _, given = pair.partition("+")
                rules = [r for p, r in kb.interaction_partners.get(taken, []) if p == given]
                rules = [r for r in rules if r.action == ("avoid" if bars else "caution")] or rules
                text = slots.rule_phrase(rule_id, fact.drug, bars=bars)
                for side in (rules[0].a, rules[0].b):
                    own = [d for d in (taken, given) if any(d in kb.expand([ref]) for ref in side)]
                    if not own:
                        continue
                    own_words = set().union(*(_said_as(kb, d, slots.lang) | _said_as(kb, kb.drugs[d].drug_class,
                                                                                         slots.lang) for d in own))
                    others = [ref for ref in side if not set(own) & kb.expand([ref])
                              and _names(text, _ref_words(kb, ref, slots.lang) - own_words, slots.lang)]
                    if others and not _names(text, own_words, slots.lang):
                        failures.append(fail("interaction_text_names_its_pair", year, event,
                                             f"{taken}+{given} said as {text!r}, naming {others}"))
    return failures


# --- stage_from_value ---------------------------------------------------------------------------------------------

KDIGO_G = ((90, "1"), (60, "2"), (45, "3a"), (30, "3b"), (15, "4"), (0, "5"))
"""KDIGO 2024 GFR categories: the lowest eGFR of each (mL/min/1.73m²)."""
_STAGE = re.compile(r"\bG(1|2|3a|3b|4|5)\b|\b(?:CKD|chronic kidney disease)(?: stage)? (1|2|3a|3b|4|5)\b"
                    r"|\bstage (1|2|3a|3b|4|5)\b(?= CKD| chronic kidney)")


def kdigo_stage(egfr: float) -> str:
    return next(stage for low, stage in KDIGO_G if egfr >= low)


def stages_named(text: str) -> list[str]:
    """The CKD G stages an English text states ("CKD G2 A2", "stage G3a", "chronic kidney disease stage 4")."""
    return [next(g for g in match.groups() if g) for match in _STAGE.finditer(text)]


def _visit_texts(kb: KnowledgeBase, year: CareYear, event: Event) -> list[str]:
    out = []
    condition = kb.conditions[year.persona.condition]
    for fact in event.facts:
        if isinstance(fact, DiagnosisFact):
            out.append(fact.name.en)
        elif isinstance(fact, TestFact):
            out.append(fact.finding.en)
        elif isinstance(fact, ComplicationFact):
            comp = next(c for c in condition.complications if c.key == fact.complication)
            out.append(comp.name.en)
            if fact.finding is not None:
                out.append(fact.finding.en)
        elif isinstance(fact, HistoryFact):
            out.append(kb.history_conditions[fact.history].name.en)
    return out


def stage_violations(kb: KnowledgeBase, year: CareYear) -> list[str]:
    """[stage_from_value] every CKD stage a visit states is the KDIGO stage of the eGFR measured there (or the latest
    before it): "progression to G3a" at an eGFR of 68 is a stage no value gave."""
    failures = []
    for event in year.events:
        egfr = latest_egfr(year, event)
        if egfr is None:
            continue
        for text in _visit_texts(kb, year, event):
            for stage in stages_named(text):
                if stage != kdigo_stage(egfr):
                    failures.append(fail("stage_from_value", year, event, f"{text!r} states G{stage} at eGFR {egfr} "
                                         f"(G{kdigo_stage(egfr)})"))
    return failures


# --- severity_from_value ------------------------------------------------------------------------------------------

SLIGHT_SHARE = 0.10
"""A value is "a little" high or low only within 10 % of the limit it crosses."""
MILD_WORDS = ("a little", "slightly", "just above", "just below", "a touch", "a bit", "偏高", "偏低", "略高", "略低",
              "稍高", "稍低")


def severity_violations(kb: KnowledgeBase, year: CareYear, slots: FactSlots) -> list[str]:
    """[severity_from_value] a lab result called "a little" above or below its range is within 10 % of the limit it
    crosses, not past a harm level beyond the range (a sodium of 125 is not "slightly lower than normal", the seed-73
    read) and, for a marker the condition treats, inside the range treatment holds it in (HbA1c 8.0 % is not "a
    little above normal"); a value in range is never called high or low."""
    failures = []
    condition = kb.conditions[year.persona.condition]
    treated = {m.lab: m.treated for m in condition.monitored}
    for event in year.events:
        for fact in event.facts:
            if not isinstance(fact, LabFact):
                continue
            low, high = kb.labs[fact.lab].reference
            if low <= fact.value <= high:
                continue
            limit = high if fact.value > high else low
            near = limit != 0 and abs(fact.value - limit) <= SLIGHT_SHARE * abs(limit)
            band = treated.get(fact.lab)
            inside = band is None or band[0] <= fact.value <= band[1]
            harmful = kb.labs[fact.lab].is_past_harm(fact.value)
            for status in _wordings(lambda rng, f=fact: slots.slots("fact.lab", f, rng)["status"]):
                if any(word in status for word in MILD_WORDS) and not (near and inside and not harmful):
                    failures.append(fail("severity_from_value", year, event,
                                         f"{fact.lab} {fact.value} (range {low}-{high}, treated {band}"
                                         f"{', past its harm level' if harmful else ''}) said {status!r}"))
    return failures


# --- acute_first_line ---------------------------------------------------------------------------------------------

FIRST_LINE: dict[str, list[tuple[str, tuple[int, int]]]] = {
    # illness -> (drug, course days allowed) per current guidance, the first-line choice first
    "cystitis": [("nitrofurantoin", (3, 3)), ("trimethoprim_sulfamethoxazole", (3, 3)), ("cefalexin", (3, 7))],
    # NICE NG109 (2018): nitrofurantoin MR 100 mg BD 3 days (eGFR >= 45) or trimethoprim 3 days; IDSA/ESCMID 2010
    "community_pneumonia": [("amoxicillin", (5, 5)), ("doxycycline", (5, 5)), ("clarithromycin", (5, 5))],
    # NICE NG138 (2019)
    "strep_throat": [("penicillin_v", (5, 10)), ("clarithromycin", (5, 5))],  # NICE NG84 (2018); IDSA 2012
    "acute_sinusitis": [("penicillin_v", (5, 5)), ("doxycycline", (5, 5)), ("clarithromycin", (5, 5))],  # NICE NG79
    "low_back_pain": [("ibuprofen", (1, 14)), ("naproxen", (1, 14)), ("codeine", (1, 14))],  # NICE NG59 (2016)
    "migraine": [("sumatriptan", (1, 30)), ("ibuprofen", (1, 30)), ("paracetamol", (1, 30))],  # NICE CG150
    "allergic_rhinitis": [("fluticasone_nasal", (1, 30)), ("cetirizine", (1, 30)), ("loratadine", (1, 30))],  # BSACI
    "gord": [("omeprazole", (28, 28)), ("pantoprazole", (28, 28))],  # NICE CG184: full-dose PPI for 4 weeks
}
EGFR_FLOOR = {"nitrofurantoin": 45.0}
"""Drugs guidance withholds under an eGFR (NICE NG109: nitrofurantoin not below 45)."""


def acute_violations(kb: KnowledgeBase, year: CareYear) -> list[str]:
    """[acute_first_line] every acute illness's course is a drug and length current guidance lists for it (co-amoxiclav
    for 7 days is no course for simple cystitis), never one guidance withholds at the patient's eGFR."""
    failures = []
    for event in year.events:
        for fact in event.facts:
            if not (isinstance(fact, MedicationFact) and fact.action == "start" and fact.indication
                    and fact.indication.startswith("illness:")):
                continue
            illness = fact.indication.partition(":")[2]
            allowed = FIRST_LINE.get(illness)
            if allowed is None:
                failures.append(fail("acute_first_line", year, event, f"{illness}: no guideline table"))
                continue
            days = dict(allowed).get(fact.drug)
            if days is None or not days[0] <= (fact.course_days or 0) <= days[1]:
                failures.append(fail("acute_first_line", year, event, f"{illness}: {fact.drug} for "
                                     f"{fact.course_days} days is not first-line care"))
            egfr = latest_egfr(year, event)
            if fact.drug in EGFR_FLOOR and egfr is not None and egfr < EGFR_FLOOR[fact.drug]:
                failures.append(fail("acute_first_line", year, event, f"{fact.drug} at eGFR {egfr}"))
    return failures


# --- household_talk_true ------------------------------------------------------------------------------------------

_ALONE = re.compile(r"\b(?:I cook for myself|Cooking for one|Living on my own|It's just me at home|I live by myself"
                    r"|I live on my own)\b")
_COOK = re.compile(r"\b([Mm]y [a-z][a-z -]*?) does most of the cooking|\b(?:At home|In our house),? (my [a-z -]+?) "
                   r"(?:does the cooking|is the cook)|\bI eat what (my [a-z -]+?) (?:cooks|puts)")
_COOKS_FOR = re.compile(r"\b(?:I cook for|[Ff]or|Cooking for|Feeding) (my [a-z -]+?) and me\b")
"""(A relative said first in a sentence starts with a capital: "My wife does most of the cooking".)"""


def cooking_claims(text: str) -> list[tuple[str, str]]:
    """What an English session says of the patient's home: ("alone", ""), ("cook", who cooks) or ("for", whom the
    patient cooks for)."""
    claims = [("alone", "")] if _ALONE.search(text) else []
    claims += [("cook", next(g for g in m.groups() if g).lower()) for m in _COOK.finditer(text)]
    claims += [("for", m.group(1)) for m in _COOKS_FOR.finditer(text)]
    return claims


def household_claim(kb: KnowledgeBase, year: CareYear) -> tuple[str, str] | None:
    """What the persona's one household says in those terms (None: a record without one)."""
    household = year.persona.household
    if household is None:
        return None
    if household.cook is not None:
        return "cook", kb.relatives[household.cook].text.en
    if household.members:
        return "for", " and ".join(kb.relatives[m].text.en for m in household.members)
    return "alone", ""


def household_talk_violations(kb: KnowledgeBase, year: CareYear, texts: list[tuple[Event, str]]) -> list[str]:
    """[household_talk_true] every session that says who cooks or who the patient lives with says the one household
    of the persona (where it has none, the year's first such account): no "my younger sister does most of the
    cooking" after "I cook for my uncle and me", no cook beside "I live on my own"."""
    rule, out = "household_talk_true", []
    expected = household_claim(kb, year)
    for event, text in texts:
        for claim in cooking_claims(text):
            expected = expected or claim
            if claim != expected:
                out.append(fail(rule, year, event, f"says {claim} where the household is {expected}"))
    return out
