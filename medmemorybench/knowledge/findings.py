"""Findings as templates over a visit's values: what a test, a complication's examination or an illness's check
shows is written once in the knowledge base and filled, per patient and visit, with the values simulated there.

A finding holds placeholders:

- `{lab:<key>}`: the value of that lab measured at the same visit with its unit, as every session states a lab
  (`lab_with_unit`: the lab's decimals, the unit as the language says it, `units.yaml`);
- `{value:<key>}`: the same value as a bare number (where the sentence says the unit itself: "PHQ-9 total 17");
- `{grade:<key>}`: the grade of that value (the lab's `grades`: "severe", "moderately increased albuminuria (A2)");
- `{drawn:<name>}`: a quantity no lab follows, drawn once per patient in the range the record declares (`drawn`;
  or an offset drawn once from a lab measured at the visit, `offset_from`);
- `{score:<key>}`: a clinical score of scores.yaml computed from the patient at the visit (CRB-65, FeverPAIN);
- `{days:onset}`: days since an acute illness's symptoms were first told.

So a finding never states a range or a fixed value as if it were the patient's result: the number beside the
lab's name is the number the visit measured, in both languages.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, NamedTuple

from medmemorybench.knowledge.models import DrawnValue, Text

if TYPE_CHECKING:
    from medmemorybench.knowledge.base import KnowledgeBase

LANGUAGES = ("en", "zh")
"""The languages a finding is written and filled in (the fields of `Text`)."""
KINDS = ("lab", "value", "grade", "drawn", "score", "days")
"""What a placeholder may name."""
DAYS = ("onset",)
"""The day counts a `{days:...}` placeholder may name."""
PLACEHOLDER = re.compile(r"\{([a-z_]+):([A-Za-z0-9_]+)\}")


class Placeholder(NamedTuple):
    """One `{kind:name}` of a finding."""

    kind: str
    name: str

    def __str__(self) -> str:
        return f"{{{self.kind}:{self.name}}}"


def placeholders(text: str) -> list[Placeholder]:
    """The placeholders of a finding text, in order."""
    return [Placeholder(kind, name) for kind, name in PLACEHOLDER.findall(text)]


def placeholders_of(text: Text) -> list[Placeholder]:
    """The placeholders of a finding in every language, each once."""
    return list(dict.fromkeys(p for language in LANGUAGES for p in placeholders(getattr(text, language))))


def labs_named(kb: KnowledgeBase, text: Text, drawn: Mapping[str, DrawnValue] | None = None) -> list[str]:
    """Every lab a finding needs measured at its visit: the labs it names, those its scores read and those its drawn
    quantities follow (`drawn`: the record's declarations)."""
    out: list[str] = []
    for holder in placeholders_of(text):
        if holder.kind in ("lab", "value", "grade"):
            out.append(holder.name)
        elif holder.kind == "score" and holder.name in kb.scores:
            out += kb.scores[holder.name].labs
        elif holder.kind == "drawn" and drawn and holder.name in drawn and drawn[holder.name].offset_from:
            out.append(drawn[holder.name].offset_from)  # type: ignore[arg-type]
    return list(dict.fromkeys(out))


def format_lab_value(kb: KnowledgeBase, lab: str, value: float) -> str:
    """A lab value with the lab's reporting decimals (HbA1c 7.0 -> '7.0', creatinine 88.0 -> '88')."""
    return f"{value:.{kb.labs[lab].decimals}f}"


def with_unit(number: str, unit: str) -> str:
    """A number and its unit; a bare number where the unit is not said ("INR 2.6")."""
    return f"{number} {unit}" if unit else number


def lab_with_unit(kb: KnowledgeBase, lab: str, value: float, language: str) -> str:
    """'7.2 %': a lab value as every session of `language` states it."""
    return with_unit(format_lab_value(kb, lab, value), kb.say_unit(kb.labs[lab].unit, language))


def format_drawn(value: float, decimals: int) -> str:
    """A drawn quantity with its decimals."""
    return f"{value:.{decimals}f}"


class MissingValue(KeyError):
    """A finding names a value its visit does not hold (a lab not measured there, a score not computed)."""


def fill(kb: KnowledgeBase, text: Text, labs: Mapping[str, float], drawn: Mapping[str, float] | None = None,
         decimals: Mapping[str, int] | None = None, scores: Mapping[str, int] | None = None,
         days: Mapping[str, int] | None = None) -> Text:
    """The finding with every placeholder replaced by the visit's values, in every language.

    Args:
        labs: lab key -> the value measured at the visit (as recorded: rounded to the lab's decimals).
        drawn: name -> the patient's drawn value; `decimals`: name -> its decimals.
        scores: score key -> its value at the visit.
        days: day count name -> days.

    Raises:
        MissingValue: when a placeholder names a value the visit does not hold.
    """
    drawn, decimals, scores, days = drawn or {}, decimals or {}, scores or {}, days or {}

    def one(language: str, match: re.Match) -> str:
        kind, name = match.group(1), match.group(2)
        try:
            if kind == "lab":
                return lab_with_unit(kb, name, labs[name], language)
            if kind == "value":
                return format_lab_value(kb, name, labs[name])
            if kind == "grade":
                grading = kb.labs[name].grades
                assert grading is not None, f"labs.yaml: {name}: no grades"
                return getattr(grading.text_of(labs[name]), language)
            if kind == "drawn":
                return format_drawn(drawn[name], decimals.get(name, 0))
            if kind == "score":
                return str(scores[name])
            if kind == "days":
                return str(days[name])
        except KeyError:
            raise MissingValue(f"{match.group(0)}: no value at this visit") from None
        raise MissingValue(f"{match.group(0)}: unknown placeholder kind")

    filled = {language: PLACEHOLDER.sub(lambda m, lang=language: one(lang, m), getattr(text, language))
              for language in LANGUAGES}
    return Text(**filled)
