"""Numbers however an answer writes them, turned into digits: "sixty" -> "60", "seven point two" -> "7.2",
"one hundred and twenty" -> "120", "七十四点五" -> "74.5", "百分之九十七" -> "97%", "两次" -> "2次", "1,582" -> "1582".

Only spans that are numbers are rewritten: an English number word is read where it stands as a quantity (followed
by a unit or a digit-like continuation, or after a word that introduces a value: "was", "of", "at", "to", "from"),
so "one of them" and "no one" stay words; a Chinese numeral is read before a unit or counter word, after 百分之, or
in a date (三月十二日), so 一直, 统一 and 十分稳定 stay words (cn2an's `transform` rewrites them: research/scoring.md).
"""

from __future__ import annotations

import re

_ONES = {"zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
         "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15,
         "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19}
_TENS = {"twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80,
         "ninety": 90}
_SCALES = {"hundred": 100, "thousand": 1000}
_NUMBER_WORDS = {*_ONES, *_TENS, *_SCALES}
_TOKEN = re.compile(r"[a-z]+")
_VALUE_BEFORE = re.compile(r"(?:\b(?:was|is|were|are|of|at|to|from|about|around|roughly|approximately|only|just|"
                           r"reading|score|scored|came out|measured|now|by)\s+)$")
_DIGIT_WORDS = {w: str(v) for w, v in _ONES.items() if v < 10}

_ZH_DIGITS = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8,
              "九": 9}
_ZH_UNITS = {"十": 10, "百": 100, "千": 1000, "万": 10000}
_ZH_NUMERAL = "[零〇一二两三四五六七八九十百千万]+(?:点[零〇一二三四五六七八九]+)?"
_ZH_COUNTERS = ("次|天|日|号|周|个月|月|年|岁|小时|分钟|分|片|粒|支|喷|毫克|微克|纳克|皮克|克|毫升|升|毫摩尔|微摩尔|"
                "纳摩尔|皮摩尔|毫米|千帕|分贝|摄氏度|"
                "单位|国际单位|公斤|千克|斤|厘米|毫米|美元|美金|块|元|度|倍|级|型|mg|mcg|ml|kg|%")
_ZH_SPAN = re.compile(rf"百分之({_ZH_NUMERAL}|\d+(?:\.\d+)?)|({_ZH_NUMERAL})(?=\s*(?:{_ZH_COUNTERS}))")
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")


def _zh_integer(numeral: str) -> int | None:
    """'两' -> 2, '五百' -> 500, '十二' -> 12, '一千五百' -> 1500, '二〇二四' -> 2024; None when not a numeral."""
    if all(c in _ZH_DIGITS for c in numeral) and len(numeral) > 1:  # digit by digit: 二〇二四
        return int("".join(str(_ZH_DIGITS[c]) for c in numeral))
    total, section, digit = 0, 0, None
    for char in numeral:
        if char in _ZH_DIGITS:
            digit = _ZH_DIGITS[char]
        elif char == "万":
            total += (section + (digit or 0)) * 10000
            section, digit = 0, None
        elif char in _ZH_UNITS:
            section += (1 if digit is None else digit) * _ZH_UNITS[char]
            digit = None
        else:
            return None
    return total + section + (digit or 0)


def zh_number(numeral: str) -> str:
    """A Chinese numeral as digits ('七十四点五' -> '74.5'); unchanged when it is not one."""
    whole, _, fraction = numeral.partition("点")
    value = _zh_integer(whole)
    if value is None:
        return numeral
    if fraction:
        return f"{value}." + "".join(str(_ZH_DIGITS[c]) for c in fraction)
    return str(value)


def _zh_replace(match: re.Match) -> str:
    percent, numeral = match.group(1), match.group(2)
    if numeral in ("十", "万") and match.string[match.end():match.end() + 1] == "分":
        return numeral  # 十分 / 万分: "very", not ten points
    return (zh_number(percent) + "%") if percent is not None else zh_number(numeral)


def _en_value(words: list[str]) -> str | None:
    """The value of a run of English number words ("one hundred and twenty" -> "120", "seven point two" -> "7.2")."""
    if "point" in words:
        head, tail = words[:words.index("point")], words[words.index("point") + 1:]
        whole = _en_value(head) if head else "0"
        digits = [_DIGIT_WORDS.get(w) for w in tail]
        if whole is None or not digits or None in digits:
            return None
        return f"{whole}." + "".join(d for d in digits if d)
    total, current, seen = 0, 0, False
    for word in words:
        if word == "and":
            continue
        if word == "a":
            current = max(current, 1)
            continue
        if word in _ONES:
            current += _ONES[word]
        elif word in _TENS:
            current += _TENS[word]
        elif word == "hundred":
            current = max(current, 1) * 100
        elif word == "thousand":
            total += max(current, 1) * 1000
            current = 0
        else:
            return None
        seen = True
    return str(total + current) if seen else None


def _runs(text: str) -> list[tuple[int, int, list[str]]]:
    """Maximal runs of number words (with "and" and "a" inside, "point" and digit words after): (start, end, words)."""
    tokens = list(_TOKEN.finditer(text))
    runs, i = [], 0
    while i < len(tokens):
        word = tokens[i].group(0)
        starts_scale = word == "a" and i + 1 < len(tokens) and tokens[i + 1].group(0) in _SCALES
        if word not in _NUMBER_WORDS and not starts_scale:
            i += 1
            continue
        j = i
        while j + 1 < len(tokens):
            following = tokens[j + 1].group(0)
            gap = text[tokens[j].end():tokens[j + 1].start()]
            if gap.strip(" -") or not (following in _NUMBER_WORDS or following in ("and", "point")):
                break
            if following == "and" and not (j + 2 < len(tokens) and tokens[j + 2].group(0) in _NUMBER_WORDS):
                break
            if following == "point" and not (j + 2 < len(tokens) and tokens[j + 2].group(0) in _DIGIT_WORDS):
                break
            j += 1
        runs.append((tokens[i].start(), tokens[j].end(), [t.group(0) for t in tokens[i:j + 1]]))
        i = j + 1
    return runs


def _en_replace(text: str, unit_after: re.Pattern) -> str:
    out, last = [], 0
    for start, end, words in _runs(text):
        value = _en_value(words)
        if value is None:
            continue
        if not (unit_after.match(text[end:]) or _VALUE_BEFORE.search(text[:start])):
            continue  # "one of them", "no one": words, not quantities
        out.append(text[last:start] + value)
        last = end
    return "".join(out) + text[last:]


_RATE_FIRST = re.compile(r"每(分钟|分|小时)\s*(\d+(?:\.\d+)?)\s*次")


def digits_for_words(text: str, unit_after: re.Pattern) -> str:
    """`text` (already lower-cased and NFKC-normalized) with its number words and Chinese numerals as digits and its
    thousands separators gone.

    Args:
        text: Normalized text.
        unit_after: Matches at the start of what follows a number when that is a unit ("mg", " percent", "%"):
            an English number word is read as a number before one.

    Returns:
        The text with numbers in digits.
    """
    text = _ZH_SPAN.sub(_zh_replace, text)
    text = re.sub(rf"({_ZH_NUMERAL})(?=\s*[月日号年])", lambda m: zh_number(m.group(1)), text)
    text = _en_replace(text, unit_after)
    # "每分钟75次" (75 a minute, said the Chinese way round) -> "75次/分"
    text = _RATE_FIRST.sub(lambda m: f"{m.group(2)}次/{'小时' if m.group(1) == '小时' else '分'}", text)
    return _THOUSANDS.sub("", text)
