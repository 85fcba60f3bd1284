"""Number-aware containment shared by the rule scorers: is a gold string stated in an answer?

Both sides go through `canonical` (the dataset's `normalize_text`, then units and number spacing),
and a hit only counts at token boundaries, so "7.2 %" is not found in "17.2 %", "25 mg" not in
"125 mg", "K" not in "K+" and "insulin" not in "insulinoma". Chinese needles are matched without
boundaries (Chinese has no spaces).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from medmemorybench.normalize import normalize_text

_UNIT_SYNONYMS = (
    (re.compile(r"(?<=\d)\s*(?:milligrams?|mgs|毫克)(?:\b|(?=[\u3400-\u9fff]))"), "mg"),
    (re.compile(r"(?<=\d)\s*(?:micrograms?|μg|ug|微克)(?![a-z])"), "mcg"),
    (re.compile(r"(?<=\d)\s*(?:international units\b|国际单位)"), "iu"),
    (re.compile(r"(?<=\d)\s*毫升"), "ml"),
    (re.compile(r"(?<=\d)\s*毫摩尔\s*/\s*升"), "mmol/l"),
    # a rate per minute (breaths, beats) however it is written: the number is what is asked
    (re.compile(r"(?<=\d)\s*(?:次\s*/\s*分钟?|次每分钟?|(?:breaths|beats)\s*/\s*min|bpm)(?![a-z])"), "/min"),
)
_ZH_DIGITS = {"零": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9}
_ZH_UNITS = {"十": 10, "百": 100, "千": 1000}
_ZH_COUNTED = r"次|天|日|周|个月|年|岁|小时|片|粒|支|毫克|微克|毫升|mg|mcg|ml"
_ZH_NUMBER = re.compile(rf"[零一二两三四五六七八九十百千]+(?=\s*(?:{_ZH_COUNTED}))")
_ZH_FREQUENCY = re.compile(r"(?:每天|每日|一天|一日|1天|1日)\s*(\d+)\s*次")
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")
_TIMES_TEN = re.compile(r"(?<=\d)\s*[×x*]\s*10\s*\^?\s*(?=\d)")  # "× 10⁹" (NFKC: "× 109"), "x 10^9"
_TRAILING_ZEROS = re.compile(r"(?<![\d.])(\d+)\.(\d*?)0+(?![\d.])")
_NUMBER_THEN_LETTER = re.compile(r"(?<![^\W\d_])(\d+(?:\.\d+)?)(?=[^\W\d_])")
_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002a6df]")


def _zh_number(numeral: str) -> str:
    """'两' -> '2', '五百' -> '500', '十二' -> '12', '一千五百' -> '1500' (up to 9999; else unchanged)."""
    total, digit = 0, None
    for char in numeral:
        if char in _ZH_DIGITS:
            digit = _ZH_DIGITS[char]
        elif char in _ZH_UNITS:
            total += (1 if digit is None else digit) * _ZH_UNITS[char]
            digit = None
    if digit is not None:
        total += digit
    return str(total) if numeral[-1] in _ZH_UNITS or len(numeral) == 1 or any(c in _ZH_UNITS for c in numeral) \
        else numeral


def canonical(text: str) -> str:
    """The form both sides of a comparison take.

    `normalize_text` (NFKC, lower case, single spaces, "7.2 %" -> "7.2%"), then: Chinese numerals before a unit
    or a count become digits ("两次" -> "2次", "五百毫克" -> "500 mg") and a daily frequency one form ("一天两次",
    "每天2次" -> "每日2次"), the minus sign
    becomes "-", "1,000" becomes "1000", unit spellings converge ("500 milligrams" -> "500 mg"),
    "× 10^9" becomes "x10", trailing decimal zeros go ("10.0" -> "10": the same value), and a number
    glued to a word is split from it ("500mg" -> "500 mg"; "HbA1c" and "B12" stay whole).

    Args:
        text: Any text.

    Returns:
        The canonical text.
    """
    text = normalize_text(text.replace("\u2212", "-").replace("\u2019", "'"))
    text = _ZH_NUMBER.sub(lambda m: _zh_number(m.group(0)), text)  # 两次 -> 2次, 五百毫克 -> 500毫克
    text = _ZH_FREQUENCY.sub(r"每日\1次", text)  # 一天2次, 每天2次 -> 每日2次
    text = _THOUSANDS.sub("", text)
    for pattern, unit in _UNIT_SYNONYMS:
        text = pattern.sub(unit, text)
    text = _TIMES_TEN.sub("x10", text)
    text = _TRAILING_ZEROS.sub(lambda m: m.group(1) + ("." + m.group(2) if m.group(2) else ""), text)
    return _NUMBER_THEN_LETTER.sub(r"\1 ", text)


def is_cjk(char: str) -> bool:
    """Whether `char` is a Chinese character."""
    return bool(_CJK.match(char))


def _is_word_char(char: str) -> bool:
    return char.isalnum() and not is_cjk(char)


def _left_ok(haystack: str, start: int, first: str) -> bool:
    if start == 0 or not _is_word_char(first):
        return True
    before = haystack[start - 1]
    if _is_word_char(before):
        return False
    # "5" inside "0.5" or "2,5": the needle would be the tail of a longer number
    return not (first.isdigit() and before in ".," and start >= 2 and haystack[start - 2].isdigit())


def _right_ok(haystack: str, end: int, last: str) -> bool:
    if end >= len(haystack) or not _is_word_char(last):
        return True
    after = haystack[end]
    if _is_word_char(after) or after == "+":  # "K" is not "K+", "2" is not "2+"
        return False
    # "7" inside "7.2": the needle would be the head of a longer number
    return not (last.isdigit() and after in ".," and end + 1 < len(haystack) and haystack[end + 1].isdigit())


def contains_term(text: str, term: str) -> bool:
    """Whether `term` is stated in `text` (canonical forms, token boundaries).

    Args:
        text: The answer to search.
        term: The gold string (a value with unit, a drug name, a phrase).

    Returns:
        True when some occurrence of the canonical term sits at token boundaries.
    """
    haystack, needle = canonical(text), canonical(term)
    if not needle:
        return False
    start = haystack.find(needle)
    while start != -1:
        end = start + len(needle)
        if _left_ok(haystack, start, needle[0]) and _right_ok(haystack, end, needle[-1]):
            return True
        start = haystack.find(needle, start + 1)
    return False


def first_contained(text: str, terms: Iterable[str]) -> str | None:
    """The first of `terms` that `text` states, or None."""
    return next((term for term in terms if term and contains_term(text, term)), None)
