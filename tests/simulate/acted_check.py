"""What a visit says is done is what the year does (issue 27, the seed-73 read).

A result said to need acting on is acted on: "2.26 mmol/L is over the 1.80 mmol/L we aim for with your condition, so we
need to act on it" beside "the ezetimibe carries on as before, because everything is stable on it" and no other change
(P0009 S086); "132 mmHg is above the 119 mmHg limit, and that matters" with every medicine kept as it is (P0004 S037,
S094). A drug taken only as attacks come on is not reviewed as a course finished: "Codeine phosphate isn't a course to
finish: take it only when an attack comes on", then "Finished it, the whole course" (P0004 S017/S020, P0015 S078/S088).
A visit that brings a complaint does not open on having none: "Nothing urgent, I'm just keeping my appointment", then
"it's bad enough that I came in" (P0004 S005, P0014 S050). A drug taken since before the year is not spoken of as new:
"Have you noticed anything since starting the warfarin?", "The warfarin has settled in now" (P0014 S023, S026).

The check reads each visit's rendered text in English or Chinese and the visit's medicine decisions, never the code
that picks the wording.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from medmemorybench.simulate.models import CareYear, Event, MedicationFact, SymptomFact, TestFact
from tests.simulate.clinical import fail

ACTION_PROMISED = {
    "en": re.compile(r"\b(?:act on (?:it|that)|needs attention|and that matters|[Ww]e'll adjust it)\b"),
    "zh": re.compile(r"需要调整|我会处理|得调整一下|需要处理|得想办法降下来|这个要重视|这很重要"),
}
"""Words that say a result must be acted on now."""
ACTIONS = frozenset({"start", "increase", "decrease", "stop", "administer"})
"""Medicine decisions that act on a result (a medicine kept, or a dose corrected to what is taken, does not)."""


def result_acted_on_when_said(year: CareYear, sessions: list[tuple[Event, str]], lang: str) -> list[str]:
    """Every visit whose text says a result must be acted on while it starts, changes and stops no medicine."""
    out = []
    for event, text in sessions:
        found = ACTION_PROMISED[lang].search(text)
        if found is not None and not any(isinstance(f, MedicationFact) and f.action in ACTIONS
                                         for f in event.facts):
            at = found.start()
            out.append(fail("result_acted_on_when_said", year, event,
                            f"{found.group(0)!r} with no medicine changed: {text[max(0, at - 120):at + 30]!r}"))
    return out


COURSE_FINISHED = {
    "en": re.compile(r"whole course|every tablet|[Tt]ook (?:it all|the lot)|[Ff]inished (?:it|the)|All done|course of"
                     r"|is all (?:gone|done|finished)"),
    "zh": re.compile(r"一个疗程|疗程都|吃完了|都吃完|全吃了|一片不落"),
}
"""Words that say a course was taken to its end."""


def as_needed_review_no_course(year: CareYear, sessions: list[tuple[Event, str]], lang: str) -> list[str]:
    """Every review visit after a drug started as needed for an illness (its last such start) whose text speaks of
    the course as finished."""
    out, last = [], None
    for event, text in sessions:
        review = any(isinstance(f, TestFact) and f.test.endswith(":review") for f in event.facts)
        found = COURSE_FINISHED[lang].search(text) if review and last is not None else None
        if found is not None and last.frequency == "as_needed":  # type: ignore[union-attr]
            at = found.start()
            out.append(fail("as_needed_review_no_course", year, event,
                            f"{found.group(0)!r} after {last.drug} as needed: "  # type: ignore[union-attr]
                            f"{text[max(0, at - 100):at + 40]!r}"))
        last = next((f for f in event.facts if isinstance(f, MedicationFact) and f.action == "start"
                     and f.course_days and f.reason.startswith("illness:")), last)
    return out


NO_COMPLAINT = {
    "en": re.compile(r"Nothing urgent, I'm|nothing dramatic|Not much to report|ticking along|Mostly good news"),
    "zh": re.compile(r"没什么急事|，没什么大事|没什么大变化|总体还行"),
}
"""Words a patient opens with that say they bring nothing to complain of."""
COMPLAINT_KINDS = frozenset({"symptom_report", "acute_illness", "adverse_event", "complication"})
"""Visits that bring a complaint whether or not a symptom is told at them."""


def complaint_not_denied(year: CareYear, sessions: list[tuple[Event, str]], lang: str) -> list[str]:
    """Every visit that tells a symptom, or is an acute illness, a side effect or a complication, whose text says the
    patient has nothing to complain of."""
    out = []
    for event, text in sessions:
        complaint = event.kind in COMPLAINT_KINDS or any(isinstance(f, SymptomFact) for f in event.facts)
        found = NO_COMPLAINT[lang].search(text) if complaint else None
        if found is not None:
            at = found.start()
            out.append(fail("complaint_not_denied", year, event,
                            f"{found.group(0)!r} at a {event.kind} visit: {text[max(0, at - 60):at + 120]!r}"))
    return out


NEW_DRUG = {
    "en": "since starting (?:the |your )?{name}|at first on (?:the |your )?{name}|{name} has settled in now",
    "zh": "刚吃{name}",
}
"""Words that speak of a drug as new to the patient (`{name}`: the drug's name as said)."""


def long_held(year: CareYear, upto: Event) -> set[str]:
    """The drugs taken at a visit since before the year: first on record as `long_term`, and not stopped since."""
    held: set[str] = set()
    seen: set[str] = set()
    for event in year.events[:upto.index - 1]:
        for fact in event.facts:
            if isinstance(fact, MedicationFact):
                if fact.drug not in seen and fact.reason == "long_term":
                    held.add(fact.drug)
                seen.add(fact.drug)
                if fact.action == "stop":
                    held.discard(fact.drug)
    return held


def long_held_not_new(year: CareYear, sessions: list[tuple[Event, str]], lang: str,
                      names: Callable[[str], str]) -> list[str]:
    """Every visit whose text speaks of a drug taken since before the year as new to the patient (`names`: a drug
    key's name as said in `lang`)."""
    out = []
    for event, text in sessions:
        for drug in sorted(long_held(year, event)):
            found = re.search(NEW_DRUG[lang].format(name=re.escape(names(drug))), text, re.IGNORECASE)
            if found is not None:
                at = found.start()
                out.append(fail("long_held_not_new", year, event,
                                f"{drug}, taken since before the year: {text[max(0, at - 60):at + 80]!r}"))
    return out
