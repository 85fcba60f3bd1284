"""Dates written in an answer, in whatever form: "2024-03-04", "4 March 2024", "March 4th", "2024年3月4日".

A date without a year matches on month and day: the sessions themselves say "4 March" (a care year
lies within one calendar year), so an answer that repeats them is right. A numeric day/month form is read
where only one order is a date ("26/5/2024", "5/26/2024"); "04/03/2024" is ambiguous and is not read.
"""

from __future__ import annotations

import re
from datetime import date
from typing import NamedTuple

from medmemorybench.normalize import normalize_text

_MONTHS = {name: number for number, names in enumerate((
    ("january", "jan"), ("february", "feb"), ("march", "mar"), ("april", "apr"), ("may",), ("june", "jun"),
    ("july", "jul"), ("august", "aug"), ("september", "sep", "sept"), ("october", "oct"),
    ("november", "nov"), ("december", "dec")), start=1) for name in names}
_MONTH = "(" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\b\.?"
_ORDINALS = {word: number for number, word in enumerate((
    "first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth", "eleventh",
    "twelfth",
    "thirteenth", "fourteenth", "fifteenth", "sixteenth", "seventeenth", "eighteenth", "nineteenth", "twentieth",
    "twenty-first", "twenty-second", "twenty-third", "twenty-fourth", "twenty-fifth", "twenty-sixth",
    "twenty-seventh", "twenty-eighth", "twenty-ninth", "thirtieth", "thirty-first"), start=1)}
_ORDINAL = "(" + "|".join(sorted(_ORDINALS, key=len, reverse=True)) + ")"
_DAY = r"(?<!\d)(\d{1,2})(?:st|nd|rd|th)?(?!\d)"
_YEAR = r"(\d{4})(?!\d)"

_ISO = re.compile(r"(?<!\d)(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})(?!\d)")
_CHINESE = re.compile(r"(?:(\d{4})\s*年\s*)?(\d{1,2})\s*月\s*(\d{1,2})\s*[日号]")
_DAY_MONTH = re.compile(_DAY + r"\s+(?:of\s+)?" + _MONTH + r"(?:,?\s*" + _YEAR + ")?")
_MONTH_DAY = re.compile(r"\b" + _MONTH + r"\s+(?:the\s+)?" + _DAY + r"(?:,?\s*" + _YEAR + ")?")
_WORD_DAY_MONTH = re.compile(r"\b(?:the\s+)?" + _ORDINAL + r"\s+(?:of\s+)?" + _MONTH + r"(?:,?\s*" + _YEAR + ")?")
_MONTH_WORD_DAY = re.compile(r"\b" + _MONTH + r"\s+(?:the\s+)?" + _ORDINAL + r"\b(?:,?\s*" + _YEAR + ")?")
_NUMERIC = re.compile(r"(?<![\d/.])(\d{1,2})[/.](\d{1,2})[/.](\d{4})(?![\d/])")
_ZH_DATE_NUMERAL = re.compile(r"([零〇一二两三四五六七八九十]+)(?=\s*[年月日号])")


class DateMention(NamedTuple):
    """A calendar date read from text; `year` is None when the text gives none."""

    year: int | None
    month: int
    day: int


def _valid(year: int | None, month: int, day: int) -> bool:
    try:
        date(year or 2024, month, day)  # 2024 is a leap year: "29 February" stays valid without a year
    except ValueError:
        return False
    return True


class DateSpan(NamedTuple):
    """A date and where a (normalized) text states it."""

    date: DateMention
    start: int
    end: int


def date_spans(text: str) -> list[DateSpan]:
    """Every date a normalized text (`normalize_text`; Chinese numerals in dates are read here) states, with its span,
    in text order; a span inside another is left out ("4 March 2024" is one date, not also "4 March")."""
    text = _ZH_DATE_NUMERAL.sub(lambda m: _zh_digits(m.group(1)), text)
    found: list[DateSpan] = []

    def add(year: str | None, month: int, day: int, m: re.Match) -> None:
        y = int(year) if year else None
        if _valid(y, month, day):
            found.append(DateSpan(DateMention(y, month, day), m.start(), m.end()))

    for m in _ISO.finditer(text):
        add(m.group(1), int(m.group(2)), int(m.group(3)), m)
    for m in _CHINESE.finditer(text):
        add(m.group(1), int(m.group(2)), int(m.group(3)), m)
    for m in _NUMERIC.finditer(text):
        first, second = int(m.group(1)), int(m.group(2))
        if (first > 12) != (second > 12):  # one order only: day/month or month/day
            add(m.group(3), min(first, second), max(first, second), m)
    for m in _DAY_MONTH.finditer(text):
        add(m.group(3), _MONTHS[m.group(2)], int(m.group(1)), m)
    for m in _MONTH_DAY.finditer(text):
        add(m.group(3), _MONTHS[m.group(1)], int(m.group(2)), m)
    for m in _WORD_DAY_MONTH.finditer(text):
        add(m.group(3), _MONTHS[m.group(2)], _ORDINALS[m.group(1)], m)
    for m in _MONTH_WORD_DAY.finditer(text):
        add(m.group(3), _MONTHS[m.group(1)], _ORDINALS[m.group(2)], m)
    found.sort(key=lambda s: (s.start, -s.end))
    out: list[DateSpan] = []
    for span in found:
        if not any(o.start <= span.start and span.end <= o.end for o in out):
            out.append(span)
    return out


def _zh_digits(numeral: str) -> str:
    from medmemorybench.scoring._numbers import zh_number

    return zh_number(numeral)


def find_dates(text: str) -> list[DateMention]:
    """Every date `text` states, in text order.

    Args:
        text: Free text.

    Returns:
        The dates, each with its year when one is written.
    """
    return [span.date for span in date_spans(normalize_text(text))]


def parse_iso(text: str) -> date | None:
    """`text` as a date when it is exactly YYYY-MM-DD, else None."""
    try:
        return date.fromisoformat(text.strip()) if len(text.strip()) == 10 else None
    except ValueError:
        return None


def states_date(text: str, day: date) -> bool:
    """Whether `text` states `day` (any written form; a yearless date matches on month and day).

    Args:
        text: The answer.
        day: The gold date.

    Returns:
        True when some date in the text is that day.
    """
    return any(m.month == day.month and m.day == day.day and m.year in (None, day.year) for m in find_dates(text))
