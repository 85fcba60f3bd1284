"""What a visit's words take for granted is true of the record (issue 27, the seed-61 read's contradictions).

Each check reads a year's facts, or what its visits say (`said_check.said_acts`, or whole sessions), against the year
and the knowledge base, with word tables written here, never against the code that picks the wording. Messages start
with the rule's name in brackets:

- `correction_differs`: a correction says something other than what it corrects (no "It wasn't a blotchy rash ...; it
  was a blotchy rash ...");
- `last_visit_true`: the first visit speaks of no last visit, and "it's been a while" comes at least `A_WHILE_DAYS`
  after the last one;
- `children_plural_true`: "the kids" only from a patient with two children or more;
- `copays_insured`: no co-pays from a patient with no health insurance;
- `medicines_on_record`: "alongside the medicines" only where a medicine is taken or given;
- `recurrent_not_short_lived`: an illness the knowledge base marks recurrent is not called short-lived;
- `self_harm_asked`: where the doctor says the self-harm question was asked, the session holds the question and the
  patient's answer before it.
"""

from __future__ import annotations

import re
from datetime import date

from medmemorybench.knowledge.base import KnowledgeBase
from medmemorybench.render.templates import Templates
from medmemorybench.simulate.models import AllergyFact, CareYear, DiagnosisFact, Event, MedicationFact, StressorFact
from tests.simulate.clinical import fail
from tests.simulate.said_check import Said, could_say

A_WHILE_DAYS = 28
"""Days since the last visit before "it's been a while" is true (four weeks: a gap a patient notices)."""
CHILDREN = ("son", "daughter")
"""Relations that are the patient's children."""

TALK = {
    "last_visit": {"en": r"Last time was|It's been \d+ days? since|your notes from|read back over",
                   "zh": r"离上次|上次是|我刚看了.{1,12}的病历|的记录我刚翻了"},
    "a_while": {"en": r"been a while, so", "zh": r"有段时间没来了"},
    "kids": {"en": r"\b(?:[Kk]ids|[Cc]hildren)\b", "zh": r"孩子们|几个孩子|俩孩子|孩子都"},
    "copays": {"en": r"\bco-?pays?\b", "zh": r"医保报销后自付|共付"},
    "medicines": {"en": r"[Aa]longside the medicines|[Bb]esides the medicines", "zh": r"除了吃药"},
    "short_lived": {"en": r"short-lived|should clear|passing illness", "zh": r"短期的病|治一治就好"},
}
"""What each rule listens for, per language."""
UNINSURED = re.compile(r"no health insurance|uninsured|without insurance")
"""An economic situation's words that say the patient has no insurance."""
ASKED = {"en": r"I (?:also )?asked you(?: again)? about thoughts of harming yourself",
         "zh": r"我也问了您有没有伤害自己|我又问了您现在有没有伤害自己"}
"""The doctor saying the self-harm question was asked."""
QUESTION = {"en": r"(?:harming|hurting) yourself.*\?|better off dead\?", "zh": r"伤害自己.*？|不如死了.*？"}
"""The self-harm question itself."""


def said_keys(templates: dict[str, Templates], topics: tuple[str, ...]) -> set[str]:
    """The acts and intents whose wording can say what one of `topics` listens for, in any language."""
    out = set()
    for lang, t in templates.items():
        pattern = re.compile("|".join(TALK[topic][lang] for topic in topics))
        out |= {key for key in t.parsed if pattern.search(could_say(t, key))}
    return out


def correction_violations(year: CareYear) -> list[str]:
    """[correction_differs] an allergy correction names another reaction (in each language), a dose correction
    another dose."""
    out = []
    for event in year.events:
        for fact in event.facts:
            if isinstance(fact, AllergyFact) and fact.corrected_from is not None:
                same = [lang for lang in ("en", "zh")
                        if getattr(fact.reaction, lang) == getattr(fact.corrected_from, lang)]
                if same:
                    out.append(fail("correction_differs", year, event,
                                    f"the reaction corrected is the one told ({', '.join(same)}: "
                                    f"{fact.reaction.en!r})"))
            if isinstance(fact, MedicationFact) and fact.action == "correct" and fact.dose == fact.previous_dose:
                out.append(fail("correction_differs", year, event, f"{fact.drug}: {fact.dose} corrected to itself"))
    return out


def _gap_days(year: CareYear, event: Event) -> int | None:
    """Days since the visit before (None at the first)."""
    before = [e for e in year.events if e.date < event.date or (e.date == event.date and e.index < event.index)]
    return (date.fromisoformat(event.date) - date.fromisoformat(before[-1].date)).days if before else None


def _on_medicine(year: CareYear, event: Event) -> bool:
    """Whether a medicine is taken by this visit or given at it (the check's own reading of the prescriptions: a drug
    whose last word is not a stop, a course not yet over)."""
    last: dict[str, tuple[str, MedicationFact]] = {}
    for e in year.events[:event.index]:
        for f in e.facts:
            if isinstance(f, MedicationFact):
                last[f.drug] = (e.date, f)
    for started, fact in last.values():
        if fact.action == "stop":
            continue
        if fact.course_days and (date.fromisoformat(event.date) - date.fromisoformat(started)).days > fact.course_days:
            continue
        return True
    return False


def _children(year: CareYear) -> int:
    return sum(r.relation in CHILDREN for r in year.persona.family)


def _uninsured(kb: KnowledgeBase, year: CareYear) -> bool:
    trap = next((t for t in year.persona.traps if t.category == "lifestyle_economic"), None)
    return trap is not None and bool(UNINSURED.search(kb.economic_profiles[trap.option].text.en))


def _recurrent(kb: KnowledgeBase, event: Event) -> str | None:
    """The name of a recurrent illness diagnosed at the visit, if any."""
    return next((f.name.en for f in event.facts if isinstance(f, DiagnosisFact) and f.status == "acute"
                 and any(i.recurrent and i.icd11 == f.icd11 for i in kb.illnesses.values())), None)


def copay_violations(kb: KnowledgeBase, year: CareYear) -> list[str]:
    """[copays_insured] a strain a patient with no health insurance tells does not speak of co-pays (in any language:
    its words are the knowledge base's, said verbatim)."""
    if not _uninsured(kb, year):
        return []
    strains = {s.key: s.text for s in kb.conditions[year.persona.condition].stressors}
    return [fail("copays_insured", year, event, f"co-pays from a patient with no insurance: {text.en!r}")
            for event in year.events for f in event.facts if isinstance(f, StressorFact)
            and (text := strains[f.stressor]) and any(re.search(TALK["copays"][lang], getattr(text, lang))
                                                      for lang in ("en", "zh"))]


def talk_violations(kb: KnowledgeBase, year: CareYear, said: list[Said]) -> list[str]:
    """[last_visit_true] [children_plural_true] [copays_insured] [medicines_on_record] [recurrent_not_short_lived]
    what each act says against the visit and the patient."""
    out = []
    children, uninsured = _children(year), _uninsured(kb, year)
    for item in said:
        event = item.event
        for lang, texts in item.texts.items():
            def says(topic: str) -> str | None:
                return next((t for t in texts if re.search(TALK[topic][lang], t)), None)  # noqa: B023

            gap = _gap_days(year, event)
            if gap is None and (text := says("last_visit") or says("a_while")):
                out.append(fail("last_visit_true", year, event, f"a last visit spoken of at the first: {text!r}"))
            elif gap is not None and gap < A_WHILE_DAYS and (text := says("a_while")):
                out.append(fail("last_visit_true", year, event, f"'a while' {gap} days after the last visit: {text!r}"))
            if children < 2 and (text := says("kids")):
                out.append(fail("children_plural_true", year, event, f"{children} child(ren) in the family: {text!r}"))
            if uninsured and (text := says("copays")):
                out.append(fail("copays_insured", year, event, f"co-pays from a patient with no insurance: {text!r}"))
            if (text := says("medicines")) and not _on_medicine(year, event):
                out.append(fail("medicines_on_record", year, event, f"no medicine on record: {text!r}"))
            if (name := _recurrent(kb, event)) and (text := says("short_lived")):
                out.append(fail("recurrent_not_short_lived", year, event, f"{name} called short-lived: {text!r}"))
    return out


def self_harm_violations(year: CareYear, sessions: list[tuple[Event, str, list[tuple[str, str]]]]) -> list[str]:
    """[self_harm_asked] a session whose doctor says the self-harm question was asked holds, before that, a doctor's
    turn that asks it and a patient's turn after it (their answer). `sessions`: (visit, language, turns as (role,
    text))."""
    out = []
    for event, lang, turns in sessions:
        said_at = next((i for i, (role, text) in enumerate(turns)
                        if role == "doctor" and re.search(ASKED[lang], text)), None)
        if said_at is None:
            continue
        asked_at = next((i for i, (role, text) in enumerate(turns[:said_at])
                         if role == "doctor" and re.search(QUESTION[lang], text)), None)
        if asked_at is None or not any(role == "patient" for role, _ in turns[asked_at + 1:said_at]):
            out.append(fail("self_harm_asked", year, event, f"({lang}) said to be asked, never asked and answered: "
                                                           f"{turns[said_at][1][:120]!r}"))
    return out
