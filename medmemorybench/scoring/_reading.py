"""An answer read once: its text in canonical form, the dates and the values it states, and the role each plays.

The pipeline (research/scoring.md): normalize (NFKC, lower case), numbers in digits (`_numbers`), dates found first
and masked so their numbers are not read as values, then every number with the unit after it (`_units`). Each
mention takes a role from the words around it in its clause, the nearest first:

| role | cues (English; Chinese alike) | example |
|---|---|---|
| past | from, previously, before, earlier, used to, had been, compared with, than, instead of | "up from 40 mg" |
| current | to, now, currently, latest, most recent | "increased to 80 mg" |
| future | will, next, plan | "next we will go to 160 mg" |
| reference | target, normal, range, limit, below, above, under, over, at least | "normal is under 5.7 %" |
| alternative | or, either, maybe, probably, possibly, might | "80 mg or maybe 40 mg" |
| negated | not, no longer, isn't (right before the value) | "not 40 mg" |
| frequency | a count of times after 每日/每天 | "每日4次" |
| unmarked | none of these | "You take 80 mg." |

A range ("0-10", "60-100 次/分"), a scale's top ("out of 10", "满分10分") and a threshold (">50 µg/g", "≥ 30") are
references too.

A mention is also anchored to something else when its clause names another time (a date or a month) or a relative
before it; the fact scorers read both (`facts.py`): what is stated may have any role but negated, reference and
alternative; what conflicts with the gold is a different value offered as the answer (current, unmarked or
alternative, anchored to no other time or person).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cached_property, lru_cache

from medmemorybench.normalize import normalize_text
from medmemorybench.scoring._dates import DateMention, date_spans
from medmemorybench.scoring._numbers import digits_for_words
from medmemorybench.scoring._units import DIMENSIONLESS, Unit, normalize_unit_text, unit_after, unit_at, unit_of

_DOLLAR = unit_of("$")
NEGATION_REACH = 10
"""Characters a negation reaches forward: "not 40 mg", "isn't the 40 mg"."""
ROLES = ("current", "unmarked", "past", "future", "reference", "alternative", "negated", "frequency")

_CUES: dict[str, tuple[str, ...]] = {
    "past": ("from", "previously", "previous", "prior", "before", "earlier", "originally", "initially", "formerly",
             "used to", "had been", "at first", "compared with", "compared to", "than", "instead of", "rather than",
             "old", "last time", "until", "down from", "up from", "replacing", "replaced", "former",
             "从", "由", "之前", "以前", "原来", "原先", "此前", "起初", "上次", "曾经", "而不是", "替代", "比",
             "当初"),
    "current": ("to", "now", "currently", "presently", "at present", "today", "latest", "most recent", "newest",
                "current", "these days", "right now",
                "到", "为", "至", "现在", "目前", "最近", "最新", "改成", "改为", "调到", "加到", "减到", "如今"),
    "future": ("will", "next", "plan", "planned", "planning", "going to", "later on", "将", "下次", "计划", "准备"),
    "reference": ("target", "goal", "normal", "range", "limit", "threshold", "cut-off", "cutoff", "upper", "lower",
                  "below", "under", "above", "over", "less than", "more than", "at least", "ideally",
                  "healthy", "reference", "should be", "aim for", "no more than", "exceeds", "exceeding",
                  "目标", "正常", "范围", "以下", "以上", "低于", "高于", "超过", "不超过", "控制在", "上限", "下限",
                  "参考"),
    "alternative": ("or", "either", "maybe", "perhaps", "probably", "possibly", "might", "not sure", "unsure",
                    "i think", "i believe", "或者", "或", "可能", "还是", "大概", "也许", "不确定"),
    "negated": ("not", "no longer", "isn't", "wasn't", "aren't", "weren't", "never", "n't", "不是", "不再是", "并非"),
}
_AFTER_CUES: dict[str, tuple[str, ...]] = {
    "past": ("before", "previously", "earlier", "at first", "originally", "initially", "until", "beforehand",
             "之前", "以前", "的时候"),
    "current": ("now", "currently", "at present", "these days", "现在", "目前"),
    "alternative": ("or", "或者", "或", "还是"),
    "reference": ("or less", "or more", "or under", "or below", "or above", "以下", "以上", "以内"),
}
_RELATIVES = ("mother", "father", "mum", "mom", "dad", "husband", "wife", "partner", "son", "daughter", "sister",
              "brother", "grandmother", "grandfather", "aunt", "uncle", "relative", "母亲", "妈妈", "父亲", "爸爸",
              "丈夫", "妻子", "老伴", "爱人", "儿子", "女儿", "姐姐", "妹妹", "哥哥", "弟弟", "家人", "亲戚")
_MONTH_WORDS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
                "november", "december", "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct",
                "nov", "dec", "月")
_CLAUSE_END = re.compile(r"[.;!?\n。；！？]|\bbut\b|\bhowever\b|\bwhereas\b|\bwhile\b|但是|不过|然而")
_NUMBER = re.compile(r"(?<![A-Za-z0-9_.^])(?<![a-z]-)(\$\s?)?(-?\d+(?:\.\d+)?)")
_FREQUENCY = re.compile(r"(?:每日|每天|一天|一日|每周|每晚|每)\s*$")
"""Before a count of times: a frequency ("每日4次"), not a dose of "1 次" (one application)."""
_SCALE = re.compile(r"(?:out of|满分)\s*$")
"""Right before a scale's top ("4 out of 10", "满分10分"): the scale, not a value."""
_COMPARATOR = re.compile(r"(?:[<>≤≥]=?|大于|小于)\s*$")
"""Right before a threshold ("calprotectin 522 µg/g (>50 µg/g means active inflammation)"): a reference."""
_MINUS = re.compile(r"\bminus\s+(?=\d)")
_CJK = re.compile(r"[\u3400-\u9fff]")
_SPELLING = ((re.compile(r"(?<=[a-z])is(e|es|ed|ing|ation)\b"), r"iz\1"), (re.compile(r"ae(?=[a-z])"), "e"),
             (re.compile(r"(?<=[a-z])oe(?=[a-z])"), "e"), (re.compile(r"(?<=[a-z])our\b"), "or"),
             (re.compile(r"(?<=[a-z])tre\b"), "ter"), (re.compile(r"(?<=[a-z])(?:-|\s)(?=(?:proliferative|steroidal|"
                                                                 r"selective|specific)\b)"), ""))


@lru_cache(maxsize=16384)  # a pure function of its text, read for every fact of every answer
def spelling_neutral(text: str) -> str:
    """British and American spellings made one ("generalised" -> "generalized", "anaemia" -> "anemia",
    "oesophagus" -> "esophagus", "tumour" -> "tumor", "litre" -> "liter"; "non-proliferative" -> "nonproliferative").
    Applied to both sides of a comparison, so a word changed on both sides still matches itself."""
    for pattern, replacement in _SPELLING:
        text = pattern.sub(replacement, text)
    return text


@lru_cache(maxsize=16384)  # a pure function of its text, read for every fact of every answer
def canonical_text(text: str) -> str:
    """The form every comparison reads: normalized, curly quotes and minus signs plain, numbers in digits."""
    text = normalize_text((text or "").replace("\u2212", "-").replace("\u2019", "'").replace("\u2018", "'"))
    text = normalize_unit_text(text)
    return _MINUS.sub("-", digits_for_words(text, unit_after()))


@dataclass(frozen=True)
class Mention:
    """A value or a date the answer states."""

    start: int
    end: int
    role: str
    """One of `ROLES`."""
    elsewhere: bool
    """Its clause ties it to another time or to a relative (context, not the answer)."""
    value: float | None = None
    unit: Unit = DIMENSIONLESS
    date: DateMention | None = None
    text: str = ""


def _clause_bounds(text: str, start: int, end: int) -> tuple[int, int]:
    left = max((m.end() for m in _CLAUSE_END.finditer(text, 0, start)), default=0)
    right = next((m.start() for m in _CLAUSE_END.finditer(text, end)), len(text))
    return left, right


Cues = list[tuple[str, str, re.Pattern[str]]]
"""(role, cue, its pattern) for every cue of a table, compiled once: scoring reads tens of thousands of windows."""


def _compiled(cues: dict[str, tuple[str, ...]]) -> Cues:
    return [(role, word, re.compile(re.escape(word) if _CJK.match(word) or word == "n't"
                                    else rf"(?<![a-z]){re.escape(word)}(?![a-z])"))
            for role, words in cues.items() for word in words]


_BEFORE_PATTERNS = _compiled(_CUES)
_AFTER_PATTERNS = _compiled(_AFTER_CUES)


def _cue_positions(window: str, cues: Cues) -> list[tuple[int, int, str]]:
    """(start, end, role) of every cue found in `window`."""
    found = []
    for role, word, pattern in cues:
        if word in window:  # a cheap test first: most cues are absent from a short window
            found += [(m.start(), m.end(), role) for m in pattern.finditer(window)]
    return found


def _role(text: str, start: int, end: int, clause: tuple[int, int], before_limit: int) -> str:
    """The role of the mention at [start, end): the nearest cue before it within `before_limit` characters, else
    the nearest cue right after it, else the nearest before it in its clause, else unmarked."""
    left, right = clause
    before = text[left:start]
    # a negation reaches only the value right after it ("not 40 mg", "不是40毫克"), not one further on in its clause
    # ("not suitable because of your budget of $45")
    before_cues = [c for c in _cue_positions(before, _BEFORE_PATTERNS)
                   if c[2] != "negated" or len(before) - c[1] <= NEGATION_REACH]
    near = [c for c in before_cues if len(before) - c[1] <= before_limit]
    if near:
        return max(near, key=lambda c: (c[1], c[1] - c[0]))[2]
    after = text[end:min(right, end + 24)]
    after_cues = [c for c in _cue_positions(after, _AFTER_PATTERNS) if c[0] <= 12]
    if after_cues:
        return min(after_cues, key=lambda c: c[0])[2]
    far = [c for c in before_cues if c[2] in ("past", "future", "reference")
           and len(before) - c[1] <= 3 * before_limit]
    if far:
        return max(far, key=lambda c: c[1])[2]
    return "unmarked"


def _elsewhere(text: str, start: int, clause: tuple[int, int], own_dates: list[tuple[int, int]]) -> bool:
    """Whether the clause before the mention names another time (a date or a month) or a relative."""
    left, _ = clause
    before = text[left:start]
    if any(left <= s and e <= start for s, e in own_dates):
        return True
    words = re.findall(r"[a-z]+", before)
    if any(w in _MONTH_WORDS for w in words) or re.search(r"\d\s*月", before):
        return True
    return any(r in before for r in _RELATIVES if _CJK.match(r)) or any(w in _RELATIVES for w in words)


@dataclass
class Reading:
    """An answer read once (`read_answer`)."""

    raw: str
    text: str
    dates: list[Mention] = field(default_factory=list)
    values: list[Mention] = field(default_factory=list)

    @cached_property
    def words(self) -> list[str]:
        return re.findall(r"[^\W_]+(?:[.'][^\W_]+)*", spelling_neutral(self.text))


@lru_cache(maxsize=4096)
def read_answer(answer: str) -> Reading:
    """The answer's dates and values, each with its role (see the module docstring). Read once per answer text and
    shared (scoring asks for it per fact and per check): callers must not change the `Reading`."""
    text = canonical_text(answer)
    chinese = bool(_CJK.search(text))
    limit = 8 if chinese else 22
    reading = Reading(answer, text)
    spans = date_spans(text)
    date_ranges = [(s.start, s.end) for s in spans]
    for span in spans:
        clause = _clause_bounds(text, span.start, span.end)
        others = [r for r in date_ranges if r != (span.start, span.end)]
        reading.dates.append(Mention(span.start, span.end, _role(text, span.start, span.end, clause, limit),
                                     _elsewhere(text, span.start, clause, others), date=span.date,
                                     text=text[span.start:span.end]))
    masked = list(text)
    for s, e in date_ranges:
        masked[s:e] = " " * (e - s)
    plain = "".join(masked)
    consumed = 0
    for m in _NUMBER.finditer(plain):
        if m.start() < consumed:
            continue  # a number inside a unit ("1.73" of mL/min/1.73m²)
        unit, unit_end = DIMENSIONLESS, m.end()
        if m.group(1):
            unit = _DOLLAR
        elif (found := unit_at(plain, m.end())) is not None:
            unit, unit_end = found
        consumed = unit_end
        clause = _clause_bounds(text, m.start(), unit_end)
        before = text[max(0, m.start() - 8):m.start()]
        role = "frequency" if unit.key == "times" and _FREQUENCY.search(before) \
            else "reference" if _SCALE.search(before) or _COMPARATOR.search(before) \
            else _role(text, m.start(), unit_end, clause, limit)
        reading.values.append(Mention(m.start(), unit_end, role,
                                      _elsewhere(text, m.start(), clause, date_ranges), value=float(m.group(2)),
                                      unit=unit, text=text[m.start():unit_end]))
    _pairs(reading)
    return reading


_SHARED_UNIT = re.compile(r"\s*(?:/|-|–|~|～|to|or|and|到|至|或者|或|和|、|,|，)\s*(?:\d|\$)")
_RANGE = re.compile(r"\s*(?:-|–|~|～)\s*")


def _pairs(reading: Reading) -> None:
    """A number whose unit is said once for two: "120/80 mmHg" (a pair of readings), "from 40 to 80 mg", "10 or 20 mg",
    "从40到80毫克": the first number takes the second's unit."""
    values = reading.values
    for i in range(len(values) - 2, -1, -1):
        first, second = values[i], values[i + 1]
        between = reading.text[first.end:second.start + 1]
        if first.unit is DIMENSIONLESS and second.unit is not DIMENSIONLESS and _SHARED_UNIT.fullmatch(between):
            values[i] = first = Mention(first.start, first.end, first.role, first.elsewhere, first.value, second.unit,
                                        text=first.text)
        if _RANGE.fullmatch(reading.text[first.end:second.start]):  # "0-10", "60-100 次/分": a range, not a value
            values[i] = Mention(first.start, first.end, "reference", first.elsewhere, first.value, first.unit,
                                text=first.text)
            values[i + 1] = Mention(second.start, second.end, "reference", second.elsewhere, second.value,
                                    second.unit, text=second.text)
