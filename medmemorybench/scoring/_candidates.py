"""Conflicting candidates: an answer to a single-valued question that also states another value of its kind.

Containment rewards listing: "2024-03-05 or 2024-04-10" contains the gold date, and so does a dump of
every record. When the gold is one date or one value with its unit, the answer's candidates are
every date it states, or every number written with the gold's unit; a candidate other than the gold
(in any written form) is a conflict, and the answer commits to no single value. Dates and values the
question itself names ("raised from 500 mg", "on 2024-07-24") are not candidates.

A value's unit must follow its number directly ("1000 mg", "7.2%"), so "120/80 mmHg" offers only 80
(the number after a slash is the tail of a pair) and "180 mg/dL" is not a candidate for "500 mg".
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import NamedTuple

from medmemorybench.scoring._dates import DateMention, find_dates, parse_iso
from medmemorybench.scoring._match import canonical

_VALUE = re.compile(r"(\d+(?:\.\d+)?)\s?([^\d\s].*)")


class GoldValue(NamedTuple):
    """A gold that is one number with its unit ("500 mg" -> 500.0, "mg")."""

    number: float
    unit: str


def gold_value(text: str) -> GoldValue | None:
    """The gold as one number and unit, or None when it is anything else ("start metformin 500 mg")."""
    m = _VALUE.fullmatch(canonical(text).strip())
    return GoldValue(float(m.group(1)), m.group(2)) if m else None


def _values(text: str, unit: str) -> list[float]:
    pattern = re.compile(r"(?<![\w.,/])(\d+(?:\.\d+)?)\s?" + re.escape(unit) + r"(?![\w/])")
    return [float(m.group(1)) for m in pattern.finditer(canonical(text))]


def _same_day(a: DateMention, b: DateMention) -> bool:
    # a yearless mention is the same day as any dated one on that month and day
    return (a.month, a.day) == (b.month, b.day) and (None in (a.year, b.year) or a.year == b.year)


def conflicting_candidates(prediction: str, golds: Sequence[str], question_text: str = "") -> list[str]:
    """The dates or values the answer states besides the gold, when the gold is a single date or value.

    Args:
        prediction: The model's answer text.
        golds: The gold answer and its aliases (all forms of one value).
        question_text: The question; the dates and values it names are not candidates.

    Returns:
        The conflicting candidates as written canonically ("2024-04-10", "1000 mg"); empty when there
        is none or when the gold is not a single date or value.
    """
    if not golds:
        return []
    day = parse_iso(golds[0])
    if day is not None:
        gold = DateMention(day.year, day.month, day.day)
        named = find_dates(question_text)
        others = {m for m in find_dates(prediction)
                  if not _same_day(m, gold) and not any(_same_day(m, n) for n in named)}
        return sorted(f"{m.year or '????'}-{m.month:02d}-{m.day:02d}" for m in others)
    values = [v for v in (gold_value(g) for g in golds) if v is not None]
    if not values:
        return []
    numbers = {v.number for v in values}
    conflicts: set[str] = set()
    for unit in {v.unit for v in values}:
        named = set(_values(question_text, unit))
        conflicts.update(f"{n:g} {unit}" for n in _values(prediction, unit) if n not in numbers | named)
    return sorted(conflicts)
