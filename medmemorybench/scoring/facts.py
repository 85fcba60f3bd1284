"""Is each gold fact stated in an answer, and does the answer offer something else in its place?

A question's `facts` (`docs/dataset.md`) say what a correct answer must state, each as one of its forms:

| kind | stated when the answer ... | conflicts when it ... |
|---|---|---|
| quantity | gives the value ("97 percent", "sixty dollars", "0.5 g"; a bare number will do) | offers another |
| date | names the day in any written form | offers another day as an alternative ("11 July or maybe 2 March") |
| name | names it (the gold's name, a brand, an abbreviation, a lay name: its `aliases`) | - |
| finding | most of its elements (`FINDING_SHARE`; numbers as values), none with another score, grade or side | - |
| gist | touches every concept group of the fact (`aliases`: one group each, its words joined by a bar) | - |
| polarity | opens with that side (`_stance.polarity`) | - |
| sentence | states its numbers and `SENTENCE_RECALL` of its content words | - |

Values compare in any unit of their kind, to the gold's last figure. A value is not offered as the answer when it is
named as earlier, later, a target or a threshold, tied to another time or a relative, one half of a pair ("128/69
mmHg"), or named by the question itself: "increased from 40 mg to 80 mg" states 80 mg and names 40 mg as the past.
What is stated may carry any role but negated and reference (`_reading`). A fact that is not `required` need not be
stated, but a conflicting value in its place is still wrong; facts that share a `group` are alternatives (one of them
suffices).
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date
from functools import lru_cache
from typing import Any

from medmemorybench.scoring._dates import parse_iso
from medmemorybench.scoring._elements import contradictions, direction_contradictions
from medmemorybench.scoring._reading import Mention, Reading, canonical_text, read_answer, spelling_neutral
from medmemorybench.scoring._stance import polarity
from medmemorybench.scoring._units import DIMENSIONLESS, in_unit, same_kind, unit_of

FINDING_SHARE = 1 / 2
"""Share of a finding's elements (its thresholds aside) an answer must state: a capable summary keeps the main ones
(a value stated in place of one of its results is a rival all the same, `_finding_values`)."""
NAME_RECALL = 2 / 3
"""Share of a long name's content words an answer must contain (three or more content words)."""
SENTENCE_RECALL = 0.6
"""Share of a long sentence's content words an answer must contain."""
STATED_ROLES = ("current", "unmarked", "past", "future", "alternative")
"""Roles in which a mention states a value (not negated, not a reference range; a hedged value is stated, and any
other value offered beside it is a rival)."""
ANSWER_ROLES = ("current", "unmarked", "alternative")
"""Roles in which a different value is offered as the answer."""

_STOPWORDS = frozenset((
    "a", "an", "the", "i", "i'm", "my", "me", "we", "you", "your", "he", "she", "it", "its", "they", "them", "to",
    "of", "in", "on", "at", "for", "by", "with", "and", "or", "but", "so", "as", "is", "are", "was", "were", "be",
    "been", "do", "does", "did", "have", "has", "had", "not", "no", "this", "that", "these", "those", "there",
    "then", "than", "very", "just", "only", "also", "about", "from", "into", "up", "out", "if", "when", "what",
    "which", "who", "any", "some", "on", "over", "after", "i've", "i'd", "i'll", "you've", "you'd", "it's", "that's",
    "one", "all", "more", "most", "than", "get", "got", "feel", "felt",
))
_ZH_STOP = frozenset("的了在是和与及或把被对从向为于并等就也都还又再很更最有无没不")
_WORD = re.compile(r"[^\W_]+(?:['][^\W_]+)*")
_CJK = re.compile(r"[\u3400-\u9fff]")
_SENTENCES = re.compile(r"[^.;!?\n。；！？]+")
_CLAUSE = re.compile(r"[,.;:!?()\n，。；：！？（）]|\bbut\b|\bwhile\b|\band\b|\bso\b|但|而")
_ELEMENT_SPLIT = re.compile(r"\s*(?:[;,，；、]|\band\b|\bwith\b|\bbut\b|和|伴|及|并)\s*")


@dataclass(frozen=True)
class Fact:
    """One gold fact (a `facts` entry of a question row)."""

    text: str
    kind: str
    aliases: tuple[str, ...] = ()
    required: bool = True
    group: str = ""

    @property
    def measured(self) -> list[date]:
        """A `RECORD_GROUP` value's days of measurement (its aliases are the ISO days the record measured it)."""
        return [day for day in (parse_iso(a) for a in self.aliases) if day is not None] \
            if self.group == RECORD_GROUP else []

    @classmethod
    def of(cls, row: dict[str, Any]) -> Fact:
        return cls(row["text"], row["kind"], tuple(row.get("aliases") or ()), bool(row.get("required", True)),
                   row.get("group") or "")

    @property
    def forms(self) -> tuple[str, ...]:
        return (self.text, *self.aliases)


def facts_of(question: dict[str, Any]) -> list[Fact]:
    """The question's gold facts (empty for a row of a build made before facts were recorded)."""
    return [Fact.of(f) for f in question.get("facts") or []]


# --- comparing one kind ----------------------------------------------------------------------------------------

def _decimals(text: str) -> int:
    m = re.search(r"\d+(?:\.(\d+))?", text)
    return len(m.group(1)) if m and m.group(1) else 0


def _gold_values(fact: Fact) -> list[tuple[Mention, int]]:
    """Each form of a quantity fact read as one value, with the gold's decimal places."""
    out = []
    for form in fact.forms:
        values = read_answer(form).values
        if values:
            out.append((values[-1] if len(values) > 1 and values[-1].unit is not DIMENSIONLESS else values[0],
                        _decimals(values[0].text)))
    return out


def _equal(mention: Mention, gold: Mention, decimals: int) -> bool:
    """The answer's value equals the gold to the gold's last figure, in the gold's unit."""
    assert mention.value is not None and gold.value is not None
    if mention.unit is DIMENSIONLESS or gold.unit is DIMENSIONLESS:
        value = mention.value
    elif same_kind(mention.unit, gold.unit):
        value = in_unit(mention.value, mention.unit, gold.unit)
    else:
        return False
    return math.isclose(round(value, decimals), gold.value, abs_tol=10 ** -(decimals + 3)) \
        or math.isclose(value, gold.value, rel_tol=1e-9)


def _states_quantity(reading: Reading, fact: Fact) -> int | None:
    golds = _gold_values(fact)
    return next((m.start for m in reading.values if m.role in STATED_ROLES and any(_equal(m, g, d) for g, d in golds)),
                None)


def _paired(reading: Reading, mention: Mention) -> bool:
    """One half of a pair of readings ("128/69 mmHg"): not a rival answer to either half."""
    text = reading.text
    return text[mention.end:mention.end + 1] == "/" or text[max(0, mention.start - 1):mention.start] == "/"


def _quantity_conflicts(reading: Reading, facts: list[Fact], named: Reading) -> list[str]:
    """Values offered as the answer that equal none of the question's gold values of their kind (a visit that started
    two drugs has two right doses)."""
    return [m.text for m in _rival_values(reading, facts, named)]


def _rival_values(reading: Reading, facts: list[Fact], named: Reading, dated: bool = False) -> list[Mention]:
    """The mentions `_quantity_conflicts` names; `dated`: a value tied to another time is offered too (a story told
    visit by visit dates every value)."""
    golds = [g for fact in facts for g in _gold_values(fact)]
    out = []
    for m in reading.values:
        if m.role not in ANSWER_ROLES or (m.elsewhere and not dated) or m.unit is DIMENSIONLESS \
                or _paired(reading, m):
            continue
        if any(_equal(m, n, _decimals(n.text)) for n in named.values if n.unit is not DIMENSIONLESS):
            continue  # (a value the question names: "the pharmacy gave me 5 mg" is not the answer's rival)
        rivals = [g for g, _ in golds if g.unit is not DIMENSIONLESS and same_kind(m.unit, g.unit)]
        if rivals and not any(_equal(m, g, d) for g, d in golds):
            out.append(m)
    return out


SCORE_KIND = "score"
"""The kind of a score's points (`_units`): a score the patient gave a symptom in their own words ("4 out of 10",
"我给4分") is in the sessions but in no structured record, so a score the record lacks is a rival only in the place
of the chain's own."""


def _chain_conflicts(reading: Reading, values: list[Fact], record: list[Fact], named: Reading) -> list[str]:
    """Values a chain's telling offers that the chain never had: one the record never had either (a score: see
    `SCORE_KIND`), or a value the record has at another visit told where none of the chain's values of its kind is,
    unless the answer ties it to a day the record measured it ("NT-proBNP 436" from June told as the diagnostic 911
    fails; "on 28 January your CRP was 3.4 mg/L" is that visit's). A story told visit by visit dates every value, so
    a dated value is offered too."""
    golds = [g for fact in values for g in _gold_values(fact)]
    stated = [m for m in reading.values if any(_equal(m, g, d) for g, d in golds)]
    out = []
    for m in _rival_values(reading, values, named, dated=True):
        had = [fact for fact in record if any(_equal(m, g, d) for g, d in _gold_values(fact))]
        beside = any(same_kind(m.unit, s.unit) for s in stated)  # (a true other visit told beside the chain's own)
        if (had or m.unit.kind == SCORE_KIND) and (beside or _measured_on(reading, m, [day for f in had
                                                                                      for day in f.measured])):
            continue
        out.append(m.text)
    return out


_SENTENCE_END = re.compile(r"(?<!\d)\.|\.(?!\d)|[;!?\n。；！？]")
"""A sentence's end: a full stop that is no decimal point ("3.4 mg/L"), or another stop."""


def _measured_on(reading: Reading, mention: Mention, days: list[date]) -> bool:
    """Whether the date nearest a value in its sentence is a day the record measured that value (`days`; a date
    without a year on month and day)."""
    left = max((m.end() for m in _SENTENCE_END.finditer(reading.text, 0, mention.start)), default=0)
    right = next((m.start() for m in _SENTENCE_END.finditer(reading.text, mention.end)), len(reading.text))
    near = [d for d in reading.dates if left <= d.start and d.end <= right and d.date is not None]
    if not near or not days:
        return False
    told = min(near, key=lambda d: mention.start - d.end if d.end <= mention.start else d.start - mention.end).date
    return any(told.month == day.month and told.day == day.day and told.year in (None, day.year) for day in days)


def _states_date(reading: Reading, fact: Fact) -> int | None:
    day = parse_iso(fact.text)
    if day is None:
        return None
    return next((d.start for d in reading.dates if d.role in STATED_ROLES and d.date is not None
                 and (d.date.month, d.date.day) == (day.month, day.day) and d.date.year in (None, day.year)), None)


def _date_conflicts(reading: Reading, facts: list[Fact], named: Reading) -> list[str]:
    days = [d for d in (parse_iso(f.text) for f in facts) if d is not None]
    return [d.text for d in reading.dates if days and d.role == "alternative" and d.date is not None
            and all((d.date.month, d.date.day) != (day.month, day.day) for day in days)]


def content_words(text: str) -> list[str]:
    """The words of a text that carry its content (stopwords and bare numbers left out), spelling-neutral; Chinese
    segmented into words (`segment.words`), one-character function words left out."""
    text = spelling_neutral(canonical_text(text))
    if _CJK.search(text):
        from medmemorybench.segment import words

        return [w for w in words(text) if not re.fullmatch(r"-?\d+(?:\.\d+)?|[a-z]", w)
                and not (len(w) == 1 and w in _ZH_STOP) and w not in _STOPWORDS]
    return [w for w in _WORD.findall(text) if w not in _STOPWORDS and not re.fullmatch(r"-?\d+(?:\.\d+)?", w)]


_SUFFIXES = ("ations", "ation", "ings", "ing", "ions", "ion", "ures", "ure", "ally", "al", "ies", "es", "ed", "s",
             "ly", "y")


def stem(word: str) -> str:
    """A word without one inflection or derivation suffix, keeping at least four letters ("distortion" -> "distort",
    "architectural" -> "architectur", "statins" -> "statin"): the prefix an answer's word must start with."""
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 4:
            return word[:-len(suffix)]
    return word


def same_word(word: str, candidate: str) -> bool:
    """Whether an answer's word is another form of a gold word: the gold's stem begins it ("distorted" for
    "distortion", `stem`), or the two share all but the last letter of the shorter one, at least three ("face" and
    "facial", "loss" and "losing", "tender" and "tenderness")."""
    if candidate.startswith(stem(word)) or word.startswith(candidate) and len(candidate) >= 4:
        return True
    shorter = min(len(word), len(candidate))
    common = len(os.path.commonprefix([word, candidate]))
    return shorter >= 4 and common >= max(3, shorter - 1)


def _word_in(word: str, answer_words: set[str]) -> bool:
    """Whether an answer word is `word` or another form of it (`same_word`)."""
    return word in answer_words or any(same_word(word, candidate) for candidate in answer_words)


def _negated_before(text: str, start: int) -> bool:
    before = text[max(0, start - 16):start]
    return bool(re.search(r"(?:\bnot|\bno|n't|\bnever|\bnor|不是|没有|并非|而非)\s*(?:\w+\s+)?$", before))


def _mention_spans(haystack: str, form: str) -> list[tuple[int, int]]:
    """Where a spelling-neutral text names a name or phrase (at word boundaries; Chinese as a substring)."""
    needle = spelling_neutral(canonical_text(form)).strip(" .。")
    if not needle:
        return []
    if needle not in haystack:  # the cheap test first: most names are absent
        return []
    # (a Latin name stands between Chinese characters as a word: "每晚用CPAP")
    pattern = re.escape(needle) if _CJK.search(needle) else \
        rf"(?<![^\W\u3400-\u9fff]|\+){re.escape(needle)}(?![^\W\u3400-\u9fff]|\+|\.\d)"
    return [m.span() for m in re.finditer(pattern, haystack)]


def _mentions(haystack: str, form: str) -> list[int]:
    return [start for start, _ in _mention_spans(haystack, form)]


def _contains(reading: Reading, form: str) -> int | None:
    """Where the answer states a name or phrase (`_mentions`), not right after a negation ("not metformin"); None when
    it does not."""
    haystack = spelling_neutral(reading.text)
    return next((p for p in _mentions(haystack, form) if not _negated_before(haystack, p)), None)


def _recall(reading: Reading, text: str) -> tuple[float, int | None]:
    """Share of the text's content words the answer contains, and where the first of them is."""
    words = content_words(text)
    if not words:
        return 0.0, None
    if _CJK.search(text):
        hits = [spelling_neutral(reading.text).find(w) for w in words]
    else:
        answer = set(reading.words)
        hits = [_word_position(reading, w) if _word_in(w, answer) else -1 for w in words]
    found = [h for h in hits if h >= 0]
    return len(found) / len(words), (min(found) if found else None)


def _word_position(reading: Reading, word: str) -> int:
    m = re.search(rf"(?<!\w){re.escape(stem(word))}", spelling_neutral(reading.text))
    return m.start() if m else 0


def _numbers_stated(reading: Reading, text: str) -> bool:
    """Every value a text states is stated by the answer (as a value, in any unit of its kind; a threshold the text
    names may be named as one)."""
    values = read_answer(text).values
    return all(any(_equal(m, g, _decimals(g.text)) for m in reading.values if m.role != "negated") for g in values)


def _is_reference(element: str) -> bool:
    """An element that only names a threshold ("above the 125 pg/mL rule-out threshold"): context, not a result."""
    values = read_answer(element).values
    return bool(values) and all(v.role == "reference" for v in values)


_BRACKETED = re.compile(r"(.+?)\s*[(（]([^)）]{2,})[)）]\s*")
"""A name with its short form in brackets ("持续气道正压通气（CPAP）"): either part names it."""


def _states_name(reading: Reading, fact: Fact) -> int | None:
    parts = [part for form in fact.forms if (m := _BRACKETED.fullmatch(form)) for part in m.groups()]
    found = [p for p in (_contains(reading, form) for form in (*fact.forms, *parts)) if p is not None]
    if found:
        return min(found)
    for form in fact.forms:
        words = content_words(form)
        if len(words) >= 3 and _numbers_stated(reading, form):
            share, position = _recall(reading, form)
            if share >= NAME_RECALL:
                return position
        elif len(words) == 2 and not _CJK.search(form):
            # two words in one sentence, in any order: "vision was blurred" names "blurred vision"
            for sentence in _SENTENCES.finditer(reading.text):
                part = read_answer(sentence.group(0))
                share, _ = _recall(part, form)
                if share == 1.0:
                    return sentence.start()
    return None


def finding_elements(text: str) -> list[str]:
    """A finding's elements: its clauses, split at commas, semicolons, "and" and "with" ("continuous inflammation
    from the rectum to the splenic flexure", "Mayo endoscopic subscore 2", "crypt abscesses", ...)."""
    inner = re.sub(r"[(（]([^)）]*)[)）]", r", \1", text)  # (a Chinese finding's value in full-width brackets too)
    return [p for p in _ELEMENT_SPLIT.split(inner) if p and (content_words(p) or re.search(r"\d", p))]


_NEGATIVE = re.compile(r"\b(?:no|not|non|without|never|negative|absent|free|normal|clear of|nil|gone|resolved|"
                       r"disappeared|went away|settled|subsided|eased off|cleared up)\b|n't|"
                       r"无|没有|没|未|不|阴性|正常|消失|消退|消了|全消|都消|退了|好了|不见了")
"""A clause that says something is absent or gone; Chinese in its ways of saying gone too (压痛消退, 全消了, 好了)."""


_LEFT = re.compile(r"\s+(?:left|remaining|any ?more|any longer)$")
"""The end of an element that says nothing is left ("no heartburn left"): its sense, not a word an answer must use."""
_NOT_GONE = re.compile(r"(?:\bnot|n't|\bnever)\s+(?:\w+\s+){0,2}?(?:gone|left|resolved|disappeared|settled|"
                       r"subsided|went away|cleared up)\b|(?:没有?|未|不)\S{0,2}?(?:消失|消退|好)")
"""A clause that says something has not gone: it is still there, though its words of absence say otherwise."""


def _negative(text: str) -> bool:
    """Whether a finding's element says something is absent ("no red flags", "无压痛")."""
    return bool(_NEGATIVE.search(spelling_neutral(canonical_text(text))))


def _states_element(reading: Reading, element: str) -> int | None:
    """Where the answer states one element of a finding (its values, its words) with the same sense: "no facial
    tenderness" is not stated by "still some tenderness", nor "a clear nose" by "the nose hadn't cleared"."""
    return _read_element(reading, element)[0]


def _read_element(reading: Reading, element: str) -> tuple[int | None, bool]:
    """Where the answer states an element of a finding (`_states_element`), and whether it says its words in the
    opposite sense instead ("still some tenderness" against "no facial tenderness")."""
    if not _numbers_stated(reading, element):
        return None, False
    words = content_words(element)
    if not words or _only_values(element):  # ("37.1 °C": its unit's letters are no words to find)
        values = read_answer(element).values
        return next((m.start for m in reading.values for g in values if _equal(m, g, _decimals(g.text))), 0), False
    if _contains(reading, element) is not None:
        return _contains(reading, element), False
    negative = _negative(element)
    basis = element
    if negative and _LEFT.search(element):
        # ("no heartburn left": "left" says the absence, which the sense check reads: "the heartburn had gone")
        basis = _LEFT.sub("", element)
        words = content_words(basis) or words
    share, _ = _recall(reading, basis)
    if not share:
        return None, False
    enough = share >= (1.0 if len(words) <= 2 else SENTENCE_RECALL)
    text = spelling_neutral(reading.text)
    # its sense read in the sentence that says most of it ("the dipstick was negative" near the end, not the first
    # "urine" of the answer); of several that say as much, the first that says it in the element's sense ("heartburn"
    # told at the first visit, "the heartburn had gone" at the review)
    recalls = [(_recall(read_answer(s.group(0)), basis)[0], s.start()) for s in _SENTENCES.finditer(reading.text)]
    most = max((r for r, _ in recalls), default=0.0)
    opposite_first = False
    for n, start in enumerate([s for r, s in recalls if r == most] or [0]):
        end = next((m.end() for m in _SENTENCES.finditer(text, start)), len(text))
        if _CJK.search(element):
            found = [text.find(w, start, end) for w in words]
        else:  # (the answer's own form of each word: "tender" for "tenderness")
            found = [next((m.start() for m in _WORD.finditer(text, start, end) if same_word(w, m.group(0))), -1)
                     for w in words]
        # every word said in the element's sense: "your face was no longer tender" says "no facial tenderness", "the
        # nose hadn't cleared" does not say "a clear nose", "the heartburn hadn't gone" does not say "no heartburn"
        senses = [_clause_negative(text, p) == negative and not (negative and _NOT_GONE.search(_clause_at(text, p)))
                  for p in found if p >= 0]
        # a word left out and its opposite said in its place ("your nose was still blocked most days" for "a clear
        # nose most days"): the element the other way round, however many of its other words are there
        missing = [w for w, p in zip(words, found, strict=True) if p < 0]
        opposite = any(_OPPOSITE.get(w) and _OPPOSITE[w].search(text, start, end) for w in missing)
        if enough and all(senses) and not opposite:
            return start, False
        opposite_first = opposite_first or (n == 0 and opposite)
    if opposite_first:
        return None, True
    # said the other way round: every mention of its words, anywhere in the answer, in the opposite sense ("仍有压痛"
    # for "面部无压痛", "链球菌快速检测阴性" for "阳性"; a Chinese word where the text holds it)
    if _CJK.search(element):
        mentions = [m.start() for w in words for m in re.finditer(re.escape(w), text)]
    else:
        mentions = [m.start() for w in words for m in _WORD.finditer(text) if same_word(w, m.group(0))]
    if negative and _judged_normal_only(element):  # ("temperature 36.6 °C" is no "abnormal temperature")
        everywhere = [not _ABNORMAL.search(_clause_at(text, p)) for p in mentions]
    else:
        everywhere = [_clause_negative(text, p) == negative for p in mentions]
    return None, share >= 1 / 2 and bool(everywhere) and not any(everywhere)


_NORMAL = re.compile(r"\bnormal\b|正常")
_ABNORMAL = re.compile(r"\babnormal\w*|\b(?:high|rai[sz]ed|elevated|low|fever\w*|febrile|above|below)\b|"
                       r"异常|偏高|偏低|升高|降低|发热|发烧")
"""Words that say a result is out of its range: the other way round of "normal"."""


def _judged_normal_only(element: str) -> bool:
    """Whether an element's sense of absence is only its judgement "normal" ("a normal temperature"): an answer that
    gives the value without the judgement does not say the other way round; only one calling it abnormal does."""
    text = spelling_neutral(canonical_text(element))
    return bool(_NORMAL.search(text)) and not _NEGATIVE.search(_NORMAL.sub(" ", text))


_OPPOSITE = {word: re.compile(pattern) for word, pattern in {
    "clear": r"\b(?:blocked|congested|stuffy|cloudy|crackl\w*|wheez\w*|obstructed)\b",
    "positive": r"\bnegative\b", "negative": r"\bpositive\b", "normal": r"\babnormal\b",
    "improved": r"\bworse\b|\bworsen\w*", "better": r"\bworse\b|\bworsen\w*", "worse": r"\bbetter\b|\bimproved\b",
    "阴性": r"阳性", "阳性": r"阴性", "清晰": r"不清|浑浊|堵", "好转": r"加重|恶化", "正常": r"异常"}.items()}
"""A finding's word and the words that say the other way round in its place."""


def _only_values(element: str) -> bool:
    """Whether an element is nothing but values with their units ("37.1 °C", "522 µg/g")."""
    reading = read_answer(element)
    rest = list(reading.text)
    for value in reading.values:
        rest[value.start:value.end] = " " * (value.end - value.start)
    return bool(reading.values) and not content_words("".join(rest))


def _clause_negative(text: str, position: int) -> bool:
    """Whether the clause around `position` says something is absent or not so."""
    return bool(_NEGATIVE.search(_clause_at(text, position)))


def _elements(form: str) -> list[str]:
    """A finding's elements that are results (its thresholds aside, unless it is nothing else)."""
    return [e for e in finding_elements(form) if not _is_reference(e)] or finding_elements(form)


def _states_finding(reading: Reading, fact: Fact) -> int | None:
    for form in fact.forms:
        elements = _elements(form)
        read = [_read_element(reading, e) for e in elements]
        found = [p for p, _ in read if p is not None]
        # (an element said the other way round, with another score, or with another gene, class, grade, site or side
        # contradicts the finding, however much else is told)
        contradicted = any(c for _, c in read) or any(_other_score(reading, e) or contradictions(reading.raw, e, form)
                                                      for e in elements)
        if elements and len(found) >= math.ceil(FINDING_SHARE * len(elements)) and not contradicted:
            return min(found)
    return None


def contradicted(reading: Reading, fact: Fact, known: Iterable[Fact] = ()) -> list[str]:
    """What the answer names in the place of a finding's gene, code, class, grade, stage, variant type, severity, site
    or side (`_elements.contradictions`), or which way it says one of its results lies against the finding's ("raised"
    for "C3 0.42 g/L (low)", `_elements.direction_contradictions`); empty when nothing, or when the fact is no
    finding); `known`: the other findings of the story, whose forms are other true findings, not rivals."""
    if fact.kind != "finding":
        return []
    others = [form for other in known if other.kind == "finding" and other != fact for form in other.forms]
    found = [[c for e in _elements(form) for c in contradictions(reading.raw, e, form, others)]
             + direction_contradictions(reading.raw, form) for form in fact.forms]
    return [] if any(not f for f in found) else found[0]


def _other_score(reading: Reading, element: str) -> bool:
    """Whether the answer gives another bare value where the element names its score: "a CRB-65 score of 0" for "of
    1", "Mayo subscore 3" for "2" (a value in a clause naming all of the element's words)."""
    own = [m for m in read_answer(element).values if m.unit is DIMENSIONLESS]
    words = content_words(element)
    if not own or not words or _numbers_stated(reading, element):
        return False
    return any(m.unit is DIMENSIONLESS and all(w in spelling_neutral(_clause_at(reading.text, m.start)) for w in words)
               and not any(_equal(m, g, _decimals(g.text)) for g in own) for m in reading.values)


def _finding_values(fact: Fact) -> list[Fact]:
    """A finding's results as values (its thresholds aside): a different value in their place is a rival answer."""
    return [Fact(m.text, "quantity") for e in finding_elements(fact.text) if not _is_reference(e)
            for m in read_answer(e).values if m.unit is not DIMENSIONLESS and m.role != "reference"]


def _states_gist(reading: Reading, fact: Fact) -> int | None:
    """Where every concept group of the gist has a word, all in one sentence when there are several (a chest X-ray and
    a blood pressure elsewhere in the answer are no chest pressure)."""
    groups = [[w for w in group.split("|") if w.strip()] for group in fact.aliases]
    # both spellings: a word's prefix is neutralised alone ("toe"), the answer's word in full ("toes" -> "tes")
    for text, fold in ((spelling_neutral(reading.text), spelling_neutral), (reading.text, lambda t: t)):
        position = _gist_in(text, [[fold(canonical_text(w)).strip() for w in group] for group in groups])
        if position is not None:
            return position
    return None


@lru_cache(maxsize=8192)
def _word_start(word: str) -> re.Pattern[str]:
    """A gist word at a word start (its inflections by prefix); Chinese as a substring."""
    return re.compile(re.escape(word) if _CJK.search(word) else rf"(?<![a-z0-9]){re.escape(word)}")


def _gist_in(text: str, groups: list[list[str]]) -> int | None:
    def where(word: str, start: int, end: int) -> int | None:
        # gists.yaml's rule: a word (or phrase) at a word start, its inflections by prefix; Chinese as a substring;
        # not where its clause calls it fine ("injections would be fine for you" is no needle phobia)
        if text.find(word, start, end) < 0:  # the cheap test first: most gist words are absent
            return None
        for m in _word_start(word).finditer(text, start, end):
            if not _ENDORSED.search(_clause_at(text, m.start())):
                return m.start()
        return None

    spans = [(0, len(text))] if len(groups) < 2 else [m.span() for m in _SENTENCES.finditer(text)]
    for start, end in spans:
        positions = []
        for group in groups:
            hits = [p for p in (where(w, start, end) for w in group) if p is not None]
            if not hits:
                break
            positions.append(min(hits))
        else:
            if positions:
                return min(positions)
    return None


_ENDORSED = re.compile(r"\b(?:would be|is|are|will be|should be)\s+(?:fine|ok|okay|no problem|safe)\b|没问题|可以用|"
                       r"没关系")


def _clause_at(text: str, position: int) -> str:
    left = max((m.end() for m in _CLAUSE.finditer(text, 0, position)), default=0)
    right = next((m.start() for m in _CLAUSE.finditer(text, position)), len(text))
    return text[left:right]


def _states_sentence(reading: Reading, fact: Fact) -> int | None:
    for form in fact.forms:
        position = _contains(reading, form)
        if position is not None:
            return position
        share, position = _recall(reading, form)
        if _numbers_stated(reading, form) and share >= SENTENCE_RECALL:
            return position
    return None


def _states_polarity(reading: Reading, fact: Fact) -> int | None:
    return 0 if polarity(reading.raw) == fact.text.strip().lower() else None


_STATED = {"quantity": _states_quantity, "date": _states_date, "name": _states_name, "finding": _states_finding,
           "gist": _states_gist, "sentence": _states_sentence, "polarity": _states_polarity}
_CONFLICTS = {"quantity": _quantity_conflicts, "date": _date_conflicts}


def locate(reading: Reading, fact: Fact) -> int | None:
    """Where the answer states the fact (its first mention, in `reading.text`), or None when it does not."""
    if fact.kind not in _STATED:
        raise ValueError(f"unknown fact kind {fact.kind!r}; known: {', '.join(_STATED)}")
    return _STATED[fact.kind](reading, fact)


def states(reading: Reading, fact: Fact) -> bool:
    """Whether the answer states the fact (see the module docstring)."""
    return locate(reading, fact) is not None


def _with_values(facts: list[Fact]) -> list[Fact]:
    return [*facts, *(v for f in facts if f.kind == "finding" for v in _finding_values(f))]


def value_kinds(facts: Iterable[Fact]) -> set[str]:
    """The kinds of the values facts hold as the scorer compares them: their quantities' and their findings' results
    ("ALT 72 U/L and AST 38 U/L" in a liver panel's finding: U/L), `unit_kind`'s names."""
    return {g.unit.kind for f in _with_values(list(facts)) if f.kind == "quantity" for g, _ in _gold_values(f)
            if g.unit is not DIMENSIONLESS}


def conflicts(reading: Reading, facts: list[Fact], named: Reading | None = None) -> list[str]:
    """What the answer offers in the place of the facts of a kind that has rivals (values, dates) as the answer;
    `named`: the question read, whose own values are no rivals."""
    out: list[str] = []
    facts = _with_values(facts)
    for kind, find in _CONFLICTS.items():
        mine = [f for f in facts if f.kind == kind]
        if mine:
            out += find(reading, mine, named or read_answer(""))
    return out


@dataclass(frozen=True)
class FactCheck:
    """How an answer stands against a question's facts."""

    stated: list[str]
    missing: list[str]
    conflicting: list[str]

    @property
    def passed(self) -> bool:
        return not self.missing and not self.conflicting


def check_facts(reading: Reading, facts: Iterable[Fact], question: str = "") -> FactCheck:
    """Every required fact (or one of each group) stated, and nothing offered in place of any fact (the values the
    `question` names are no rivals)."""
    facts = list(facts)
    named = read_answer(question)
    stated, missing, conflicting = [], [], []
    groups: dict[str, list[Fact]] = {}
    conflicting = conflicts(reading, facts, named)
    for fact in facts:
        if fact.group:
            groups.setdefault(fact.group, []).append(fact)
        elif fact.required:
            (stated if states(reading, fact) else missing).append(fact.text)
    for members in groups.values():
        hit = next((f for f in members if states(reading, f)), None)
        if hit is not None:
            stated.append(hit.text)
        elif any(f.required for f in members):
            missing.append(" or ".join(f.text for f in members))
    return FactCheck(stated, missing, list(dict.fromkeys(conflicting)))


@dataclass(frozen=True)
class ChainCheck:
    """How an answer tells a reasoning chain (`check_chain`)."""

    covered: list[int]
    """Steps the answer tells (0-based), in chain order."""
    given: list[int]
    """Steps the question itself names (every one of their facts is in its words): no evidence of memory."""
    ncr: float
    """Share of the other steps told."""
    crc: float
    """Share of consecutive told steps told in chain order (1.0 with fewer than two)."""
    conclusion: bool
    """The last step the question does not give is told."""

    cause: bool = True
    """The step before the conclusion is told too (what brought it about: the drug raised before the score fell)."""
    reasons: bool = True
    """Every step that tells why a drug was passed over (`WHY_GROUP`) is told."""
    rivals: tuple[str, ...] = ()
    """Other drugs the answer tells as given in the place of the chain's (`RIVAL_GROUP`)."""
    conflicting: tuple[str, ...] = ()
    """Values the answer offers that equal none of the chain's values of their kind ("NT-proBNP 436 pg/mL" where the
    record measured 911): a step told with the wrong value is another patient's story."""
    contradicted: tuple[str, ...] = ()
    """What the answer names in the place of a finding's gene, class, grade, site or side (`contradicted`): "PKD2" where
    the test found PKD1, however many steps it tells."""

    @property
    def passed(self) -> bool:
        return (self.ncr >= CHAIN_COVERAGE and self.conclusion and self.cause and self.reasons and not self.rivals
                and not self.conflicting and not self.contradicted)


KEY_GROUP = "key"
"""A chain step's facts of this group are what the step must be told by (the drug the question asks about)."""
WHY_GROUP = "why"
"""A chain step with a fact of this group must be told (the fact a drug was passed over for: "why was I given what I
got?")."""
RECORD_GROUP = "record"
"""A chain's facts of this group are no part of any step: they are the values the patient's record has (up to the
checkpoint) in the units the chain's visits measured or its facts hold, each with the ISO days it was measured as its
aliases; an answer quoting one tells another true visit, not a wrong value."""
RIVAL_GROUP = "rival"
"""A chain step's facts of this group are no part of the step: they are the other drugs the guideline offered for what
the question's drug was given for, none of them ever taken by the patient; an answer that tells one as given (not as
passed over: "rather than naproxen", "没有用") tells another treatment."""
TAKEN_GROUP = "taken"
"""A chain's facts of this group are no part of any step: they are every drug the patient took up to the checkpoint;
an answer that tells another drug the knowledge base knows as given ("amoxicillin was started") tells a treatment the
patient never had. A row of an older build holds none, and only its rivals (`RIVAL_GROUP`) are checked."""
CHAIN_COVERAGE = 0.75
"""Share of a chain's steps (those the question does not give) an answer must tell: the paper's NCR threshold."""


def unit_kind(spelling: str) -> str:
    """The kind of quantity a unit spelling measures, as values are compared ("%" and "% predicted": a percentage);
    the spelling itself where it is no known unit."""
    unit = unit_of(spelling)
    return unit.kind if unit else spelling


def check_chain(reading: Reading, steps: list[list[Fact]], question: str,
                told: list[str] | None = None) -> ChainCheck:
    """Which steps of a chain the answer tells (a step is told when any one of its facts is stated), and which values
    it offers that the chain and the record (`RECORD_GROUP`) never had, and what it names in the place of a finding's
    gene, class, grade, site or side (`contradicted`).

    Correct (`passed`) when at least `CHAIN_COVERAGE` of the steps the question does not give are told, the last
    two of them (the conclusion and what brought it about) are, and so is every step that tells why a drug was passed
    over, no value of a chain's kind is one the chain and the record never had ("NT-proBNP 436" where it was
    911), and no finding is contradicted ("a PKD2 missense variant" for "a truncating PKD1 variant"). The order of
    telling is measured (`crc`) but not required: a capable answer to "why ...?" often gives the conclusion first
    and the causes after "because". The question gives a step when it names every fact the step's own sentence
    (`told`, the gold's step) states ("what tests found my anxiety?" gives "I was worrying all the time"), or,
    without the sentences, every fact of the step.
    """
    asked = read_answer(question)
    drugs_given = [f for facts in steps for f in facts if f.group not in (RIVAL_GROUP, TAKEN_GROUP)
                   and f.kind == "name"]
    # (a rival the gold's own telling names, as a test's name, "the levodopa challenge test", tells nothing apart)
    gold = read_answer(" ".join(told or []))
    rivals = tuple(f.text for facts in steps for f in facts if f.group == RIVAL_GROUP
                   and offers(reading, f, drugs_given) and not offers(gold, f, drugs_given))
    taken = [f for facts in steps for f in facts if f.group == TAKEN_GROUP]
    if taken:
        rivals += tuple(dict.fromkeys(never_taken(reading, [*taken, *drugs_given])))
    record = [f for facts in steps for f in facts if f.group == RECORD_GROUP]
    steps = [[f for f in facts if f.group not in (RIVAL_GROUP, RECORD_GROUP, TAKEN_GROUP)] for facts in steps]
    values = [f for f in _with_values([f for facts in steps for f in facts]) if f.kind == "quantity"]
    # (a chain with values holds its record's too, its own among them; a row of an older build holds none, and a
    # value there cannot be told from another true visit)
    conflicting = tuple(dict.fromkeys(_chain_conflicts(reading, values, record, asked))) if record else ()
    if told:
        conflicting += tuple(dict.fromkeys(_dose_conflicts(reading, drugs_given, gold)))
    # (a finding of one step is no rival to another's: stage 3a in March, 3b in June)
    findings = [f for facts in steps for f in facts if f.kind == "finding"]
    contradicting = tuple(dict.fromkeys(c for f in findings for c in contradicted(reading, f, findings)))
    sentences = [read_answer(t) for t in told] if told and len(told) == len(steps) else None

    def is_given(i: int, facts: list[Fact]) -> bool:
        shown = [f for f in facts if sentences is None or states(sentences[i], f)] or facts
        return bool(facts) and all(states(asked, f) for f in shown)

    given = [i for i, facts in enumerate(steps) if is_given(i, facts)]
    positions: dict[int, int] = {}
    for i, facts in enumerate(steps):
        if i in given:
            continue
        # a step's key facts where it has some the question does not name (what it asks about: the drug given), else
        # any of its facts the question does not name
        unnamed = [f for f in facts if not states(asked, f)]
        needed = [f for f in unnamed if f.group == KEY_GROUP] or unnamed
        found = [p for p in (locate(reading, f) for f in needed) if p is not None]
        if found:
            positions[i] = min(found)
    open_steps = [i for i in range(len(steps)) if i not in given]
    covered = sorted(positions)
    pairs = list(zip(covered, covered[1:], strict=False))
    crc = sum(positions[a] <= positions[b] for a, b in pairs) / len(pairs) if pairs else 1.0
    ncr = len(covered) / len(open_steps) if open_steps else 0.0
    why = [i for i in open_steps if any(f.group == WHY_GROUP for f in steps[i])]
    return ChainCheck(covered, given, ncr, crc, bool(open_steps) and open_steps[-1] in positions,
                      len(open_steps) < 2 or open_steps[-2] in positions, all(i in positions for i in why), rivals,
                      conflicting, contradicting)


_TELLING = re.compile(r"[.;!?\n。；！？，]|(?<=[\u3400-\u9fff]),|,(?=[\u3400-\u9fff])|"
                      r"\b(?:but|so|because|then|while|whereas|which)\b|但|所以|然后|于是|改用|改开|改为|换成")
"""Where a clause that could pass a drug over ends (a Chinese comma does; an English list's commas do not: "rather
than ibuprofen, naproxen or aspirin")."""
_PASSED_OVER = re.compile(r"\b(?:not|no|never|nor|rather than|instead of|in place of|other than|avoid\w*|without|"
                          r"except|unsafe|ruled out|passed over|can't|cannot|couldn't|wouldn't|shouldn't|didn't|"
                          r"don't|won't|"
                          r"(?:chosen|picked|preferred|favou?red|selected) over|preferred to|allergic to|"
                          r"allergy to|reaction to|intolerant (?:of|to))\b|n't\b|不|没|未|非|避免|代替|除了")
_HARMED_BY = re.compile(r"\s*(?:allerg|intoleran|reaction|过敏|不耐受)")
"""Right after a drug's name: what the patient cannot take ("your PTU allergy", "对布洛芬过敏"), not what was given."""
_LIST_GAP = r"(?:(?!\b(?:as|since|when|while|after|before|which|who|that|because)\b)[\w/()\-', ]){0,80}?"
"""Between a drug's name and what is said of it: other drugs of a list ("A or B", "(A/B)"), no clause of its own."""
_PASSED_OVER_AFTER = re.compile(
    _LIST_GAP + r"\b(?:was|were|is|are|been|be)\s+(?:\w+ly\s+)?(?:avoided|ruled out|passed over|excluded|rejected|"
    r"set aside|unsuitable|contraindicated|off the table|(?:not|never)\s+(?:\w+ )?(?:used|given|chosen|started|"
    r"prescribed|suitable|appropriate|safe|an option))\b|" + _LIST_GAP +
    r"\b(?:wasn't|weren't|isn't|aren't)\s+(?:\w+ )?(?:used|given|chosen|started|prescribed|suitable|appropriate|"
    r"safe|an option)\b|"
    r"[^,.;。；]{0,12}?(?:(?:没有?|未|不)(?:用|选|开|考虑|适合|合适|能用|宜|可用|可以用|采用)|被排除|排除了|被避免|禁用|"
    r"(?:超出|超过)[^,.;。；]{0,12}?预算|太贵)|"
    r"\s+(?:was|is|would have been|would be)\s+(?:over|beyond|outside|above)\s+(?:yo?u?r|the)\s+budget\b")
"""After a drug's name in its clause (past a list of other drugs): the drug passed over ("the usual combined pills
(A or B) were avoided", "A was not used", "A was ruled out", "美沙拉秦因为预算没有用", "美沙拉秦超出您每月80美元的预算",
"A was over your budget")."""
_USUAL = re.compile(r"\b(?:usual(?:ly)?|normally|typically|standard|first[- ]line|most (?:people|patients)|"
                    r"would (?:normally |usually )?"
                    r"(?:be|have been|use|start|give))\b|本来|原本|通常|一般|首选|常规|按说|按理")
_CONTRAST = re.compile(r"[\s,.;。；]*(?:(?:but|however|yet)\b|但|可是|不过|然而)")
"""The usual choice named in a clause a contrast follows is passed over ("本来一般用美沙拉秦，但因预算选了柳氮磺吡啶",
"the usual choice would be ibuprofen, but ...")."""


def _passed_over_at(text: str, start: int, end: int) -> bool:
    """Whether the drug named at text[start:end] is passed over, not told as given: by a cue before it in its clause
    ("not", "rather than", "没有用"), by one after it ("were avoided", "was ruled out", "没有用"; "allergy", "过敏"),
    or as the usual choice a contrast follows ("本来一般用X，但…")."""
    left = max((c.end() for c in _TELLING.finditer(text, 0, start)), default=0)
    if _PASSED_OVER.search(text[left:start]) or _HARMED_BY.match(text, end) or _PASSED_OVER_AFTER.match(text, end):
        return True
    boundary = _TELLING.search(text, end)
    return bool(boundary and _USUAL.search(text[left:start]) and _CONTRAST.match(text, boundary.start()))


def offers(reading: Reading, fact: Fact, besides: Iterable[Fact] = ()) -> bool:
    """Whether the answer tells a drug as given: it names it (any form) in a clause that does not pass it over ("not",
    "rather than", "avoided", "ruled out", "chosen over", "allergic to", "没有用", "不能用" before it in its clause;
    "allergy", "过敏" right after it; "were avoided", "was not used", "没有用" after it and the drugs listed with it;
    the usual choice a contrast follows: "本来一般用X，但…", "the usual choice would be X, but"); a mention inside a
    name of `besides` (the drugs the chain did give) is none: 泼尼松 (prednisone) in 泼尼松龙 (prednisolone)."""
    text = spelling_neutral(reading.text)
    for other in besides:
        for form in sorted(other.forms, key=len, reverse=True):
            for start, end in _mention_spans(text, form):
                text = text[:start] + " " * (end - start) + text[end:]
    return any(not _passed_over_at(text, start, end) for form in fact.forms
               for start, end in _mention_spans(text, form))


_STARTING = r"\b(?:start\w*|began|begun|prescrib\w*|put (?:you )?on|given|gave)\b|开了"
"""Words that tell a drug started ("started on", "prescribed", "开了"): both a start (`_STARTED`) and a drug given
(`_GIVING`) read them."""
_GIVING = re.compile(_STARTING + r"|\b(?:added|adding|switch\w* (?:you )?to|changed to|took|taking|course of|"
                     r"(?:was|were|been|is|are) on)\b|开始用|开始服|加用|加了|改用|换成|换用|服用|用上|给您用")
"""A clause that tells a drug as given ("amoxicillin was started", "put you on", "加用")."""


@lru_cache(maxsize=8192)
def _neutral_name(name: str) -> str:
    """A drug name as names are compared (`never_taken` reads every name of the knowledge base for every answer)."""
    return spelling_neutral(canonical_text(name))


def never_taken(reading: Reading, taken: list[Fact]) -> list[str]:
    """The drugs (of the knowledge base, `_drugs`) the answer tells as given in a clause that says so (`_GIVING`) and
    `offers`, that are none of `taken` (every drug the patient took, and the chain's)."""
    from medmemorybench.scoring._drugs import drug_names

    known = {_neutral_name(form) for fact in taken for form in fact.forms}
    text = spelling_neutral(reading.text)
    out = []
    for names in drug_names():
        if any(_neutral_name(name) in known for name in names):
            continue
        fact = Fact(names[0], "name", names[1:])
        spans = [span for name in names for span in _mention_spans(text, name)]
        told = any(_GIVING.search(_clause_at(text, start)) for start, _ in spans)
        if told and offers(reading, fact, taken):
            out.append(names[0])
    return out


_CHANGED = re.compile(r"\b(?:rais\w*|increas\w*|doubl\w*|halv\w*|reduc\w*|lower\w*|cut|titrat\w*|went up|gone up|"
                      r"stepped|up to|down to|from)\b|加量|增加|加到|增至|减量|减到|调到|调整|上调|下调")
"""A clause that tells a dose change ("raised to 1000 mg", "加到"): the new dose is no start dose."""
_STARTED = re.compile(_STARTING + r"|开始|起始|首剂")
"""A clause that tells a drug started ("started on metformin 1,000 mg", "开始用")."""
_DOSE_GAP = 24
"""Characters after a drug's name within which its dose is told ("metformin extended-release 500 mg")."""


def _doses_after(reading: Reading, text: str, form: str) -> list[tuple[int, Mention]]:
    """Each mention of a drug's name and the first value with a unit right after it in its clause."""
    out = []
    for start, end in _mention_spans(text, form):
        clause_end = start + len(_clause_at(text, start)) + 40
        value = next((m for m in reading.values if end <= m.start <= end + _DOSE_GAP and m.start < clause_end
                      and m.unit is not DIMENSIONLESS), None)
        if value is not None:
            out.append((start, value))
    return out


def _dose_conflicts(reading: Reading, drugs: list[Fact], gold: Reading) -> list[str]:
    """Start doses of the chain's drugs the chain never gave: a dose told right after a drug's name in a clause that
    tells it started, with no change ("started on metformin 1,000 mg twice a day" where the chain started 500 mg),
    that equals none of the doses the chain's own telling gives that drug (its start, and any change it tells)."""
    text, gold_text = spelling_neutral(reading.text), spelling_neutral(gold.text)
    out = []
    for drug in drugs:
        chain = [m for form in drug.forms for _, m in _doses_after(gold, gold_text, form)]
        if not chain:
            continue
        for form in drug.forms:
            for start, m in _doses_after(reading, text, form):
                clause = text[max((c.end() for c in _CLAUSE.finditer(text, 0, start)), default=0):m.end]
                if m.role not in ANSWER_ROLES or not _STARTED.search(clause) or _CHANGED.search(clause):
                    continue
                rivals = [g for g in chain if same_kind(m.unit, g.unit)]
                if rivals and not any(_equal(m, g, _decimals(g.text)) for g in rivals):
                    out.append(m.text)
    return out
