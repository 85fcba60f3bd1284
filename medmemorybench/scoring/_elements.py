"""The structured elements of a finding that an answer can contradict, in English and Chinese alike.

A finding names things that have exactly one right form among a few rivals: a gene or a code (PKD1, not PKD2; HLA-B27;
CKD G3a), a class, grade or stage by its letter or number (Mayo 1C, not 1B; 慢性肾脏病3a期; Kellgren-Lawrence 3级;
ISN/RPS IV型; NYHA class III), a variant type (truncating, 截短型; not missense, 错义), a severity (mild, 中度), a
site (medial, 下叶) and a side (right, 左; bilateral, 双侧, or the two sides named). An answer contradicts such an
element when it names a rival of it and never the element's own form:

- a code or grade is a rival when it shares a tag with the element's (a code's letters, "pkd"; a name before it,
  "mayo"; its class word, "stage", 级, 期) and has another value; where the only shared tag is a bare class word,
  the rival must stand in a sentence that names one of the finding's other words (its anchors: 高血压2级 is no rival
  to a knee X-ray's Kellgren-Lawrence 3级);
- a word of an exclusive set (sides, sites, severities, variant types) is a rival in a sentence naming an anchor;
- "1C or above" (1C级及以上) is also stated by 1D, and 1D is no rival;
- `known` findings (the other findings of the same chain) lend their forms: a rival that one of them names is another
  true finding of the story (CKD stage 3a in March, 3b in June), not a contradiction.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

from medmemorybench.scoring._reading import canonical_text, spelling_neutral

_CJK = re.compile(r"[\u3400-\u9fff]")
_SENTENCE = re.compile(r"[^.;!?\n。；！？]+")
_RUN = re.compile(r"(?<![a-z0-9.^/])[a-z0-9]+(?![a-z0-9^])")
"""A run of letters and digits that is not part of a number or a unit ("1.73m2", "kg/m2", "x10^9")."""
_PIECE = re.compile(r"([a-z]*)(\d+)((?:[a-z](?![a-z0-9]))?)")
"""One code inside a run: letters, a number, a final letter ("pkd1", "g3a", "hba1c", "1c"; "g2a2" is two)."""
_ROMAN = {"i": 1, "ii": 2, "iii": 3, "iv": 4, "v": 5}
_CLASS_AFTER = re.compile(r"\s*([级期型])")
_CLASS_BEFORE = re.compile(r"\b(class|grade|stage|type|category|level|tier)\s*$")
GENERIC_TAGS = frozenset(("class", "grade", "stage", "type", "category", "level", "tier", "级", "期", "型"))
"""Tags that say only that a value is a class: a rival sharing no other needs an anchor in its sentence."""
_NAME_BEFORE = re.compile(r"(?<![a-z])[a-z]{2,}")
_NOT_NAMES = frozenset(("the", "a", "an", "of", "in", "at", "is", "was", "were", "and", "or", "so", "with", "your",
                        "my", "to", "as", "on", "by", "be", "it", "ml", "mg", "min", "mmhg", "kg", "mmol", "umol",
                        "iu", "pg", "ng", "dl", "per", "above", "below", "than", "now", "which", "that", "score",
                        "total", "down", "up", "from"))
_AT_LEAST = re.compile(r"\s*[级期型]?\s*(?:及以上|或以上|以上|or above|or higher|and above|or more|\+)")

EXCLUSIVE: dict[str, dict[str, str]] = {
    "side": {"right": r"\bright\b|右", "left": r"\bleft\b|左", "both": r"\bbilateral(?:ly)?\b|双侧|两侧|两边"},
    "site": {"medial": r"\bmedial\b|内侧", "lateral": r"\blateral\b|外侧"},
    "lobe": {"upper": r"\bupper lobe|上叶", "middle": r"\bmiddle lobe|中叶", "lower": r"\blower lobe|下叶"},
    "segment": {"proximal": r"\bproximal\b|近端", "distal": r"\bdistal\b|远端"},
    "laterality": {"opposite": r"\bopposite\b|\bcontralateral\b|对侧", "same": r"\bsame side\b|\bipsilateral\b|同侧"},
    "severity": {"mild": r"\bmild(?:ly)?\b|轻度|轻(?=中度)", "moderate": r"\bmoderate(?:ly)?\b|中度|中(?=重度)",
                 "severe": r"\bsevere(?:ly)?\b|重度"},
    "variant": {"truncating": r"(?<!non-)(?<!non)\btruncat\w*|(?<!非)截短|\bnonsense\b|无义|\bframeshift\b|移码",
                "missense": r"\bmissense\b|错义|\bnon-?truncat\w*|非截短|\bin-frame\b"},
}
"""Words of which a finding's element names one and a contradicting answer another, by set and member."""


@dataclass(frozen=True)
class Code:
    """A code, class, grade or stage a text names: its value (number, final letter) and its tags."""

    number: int
    letter: str
    tags: frozenset[str]
    start: int
    end: int
    at_least: bool = False

    def shares(self, other: Code) -> frozenset[str]:
        return self.tags & other.tags

    def covers(self, other: Code) -> bool:
        """Whether the other code states this one: the same value, or, for "1C or above", one above it."""
        if (other.number, other.letter) == (self.number, self.letter):
            return True
        return self.at_least and (other.number, other.letter) > (self.number, self.letter)


@lru_cache(maxsize=4096)
def _text(text: str) -> str:
    return spelling_neutral(canonical_text(text)).replace("左右", "  ")


def _tags(text: str, start: int, end: int, own: str) -> set[str]:
    """A code's tags: its letters, the names shortly before it ("mayo", "ckd stage"), its class word after it."""
    tags = {own} if own else set()
    before = text[max(0, start - 16):start]
    tags |= {m.group(0) for m in _NAME_BEFORE.finditer(text, 0, start)
             if m.end() > start - 16 and m.group(0) not in _NOT_NAMES}
    if (m := _CLASS_BEFORE.search(before)) is not None:
        tags.add(m.group(1))
    if (m := _CLASS_AFTER.match(text, end)) is not None:
        tags.add(m.group(1))
    return tags


@lru_cache(maxsize=4096)
def codes(text: str) -> tuple[Code, ...]:
    """The codes, classes, grades and stages a (canonical) text names."""
    out = []
    for run in _RUN.finditer(text):
        word = run.group(0)
        start, end = run.span()
        if word in _ROMAN or word.isdigit():
            # a bare number or a roman numeral is a class only with its class word ("stage 4", "IV型", "3级")
            tags = _tags(text, start, end, "")
            if not tags & GENERIC_TAGS or (word.isdigit() and len(word) > 2):
                continue
            number = _ROMAN[word] if word in _ROMAN else int(word)
            out.append(Code(number, "", frozenset(tags), start, end, bool(_AT_LEAST.match(text, end))))
            continue
        if word.isalpha():
            continue
        for piece in _PIECE.finditer(word):
            letters, number, letter = piece.groups()
            if not letters and not letter:
                continue  # (a number inside a code run: "500" of "500mg")
            p_start, p_end = start + piece.start(), start + piece.end()
            tags = _tags(text, p_start, p_end, letters)
            if not tags:
                continue
            out.append(Code(int(number), letter, frozenset(tags), p_start, p_end, bool(_AT_LEAST.match(text, p_end))))
    return tuple(out)


@lru_cache(maxsize=4096)
def _codes_within(finding: str, element: str) -> tuple[Code, ...]:
    """The element's codes read in its whole finding (both canonical): their tags and "or above" may stand outside it
    ("Mayo imaging class (1C or above)" is split before "1C"; "1C级及以上" at 及)."""
    at = finding.find(element)
    if at < 0:
        return codes(element)
    return tuple(c for c in codes(finding) if at <= c.start < at + len(element))


@lru_cache(maxsize=4096)
def _members(text: str, kind: str) -> dict[str, list[int]]:
    """Where a (canonical) text names each member of an exclusive set (`EXCLUSIVE[kind]`)."""
    found: dict[str, list[int]] = {}
    for name, pattern in EXCLUSIVE[kind].items():
        hits = [m.start() for m in re.finditer(pattern, text)]
        if hits:
            found[name] = hits
    if kind == "side" and "right" in found and "left" in found:
        found.setdefault("both", found["right"] + found["left"])  # ("the left and the right sinus": both)
    return found


@lru_cache(maxsize=4096)
def _anchors(finding: str) -> tuple[str, ...]:
    """The finding's words that tie a rival to it: its content words, without codes, class words and the words of the
    exclusive sets."""
    from medmemorybench.scoring.facts import content_words

    out = []
    for word in content_words(finding):
        if re.search(r"\d", word) or word in GENERIC_TAGS or word in _ROMAN:
            continue
        if any(re.search(p, word) for members in EXCLUSIVE.values() for p in members.values()):
            continue
        if _CJK.search(word) and len(word) < 2:
            continue
        out.append(word)
    return tuple(out)


def _anchored(text: str, position: int, anchors: tuple[str, ...]) -> bool:
    """Whether the sentence around `position` names one of the anchors (a Chinese word as a substring, an English one
    by its stem)."""
    from medmemorybench.scoring.facts import same_word

    sentence = next((m.group(0) for m in _SENTENCE.finditer(text) if m.start() <= position < m.end()), "")
    words = re.findall(r"[^\W\d_]+", sentence)
    return any(a in sentence if _CJK.search(a) else any(same_word(a, w) for w in words) for a in anchors)


def contradictions(answer: str, element: str, finding: str, known: Iterable[str] = ()) -> list[str]:
    """What the answer names in the place of the element's codes, classes and exclusive words (see the module
    docstring): empty when it contradicts none. `finding`: the whole finding the element is part of (its anchors);
    `known`: other true findings, whose forms are no rivals."""
    text, own_text = _text(answer), _text(element)
    known_texts = [_text(k) for k in known]
    anchors = _anchors(finding)
    out: list[str] = []
    mine = codes(text)
    known_codes = [c for k in known_texts for c in codes(k)]
    for gold in _codes_within(_text(finding), own_text):
        if any(gold.shares(c) and gold.covers(c) for c in mine):
            continue
        for rival in mine:
            shared = gold.shares(rival)
            if not shared or any(k.shares(rival) and k.covers(rival) for k in known_codes):
                continue
            if shared - GENERIC_TAGS or _anchored(text, rival.start, anchors):
                out.append(text[rival.start:rival.end])
    for kind in EXCLUSIVE:
        own = _members(own_text, kind)
        if len(own) != 1 or next(iter(own)) in _members(text, kind):
            continue  # (an element naming two members, "mild to moderate", names no one form)
        lent = {name for k in known_texts for name in _members(k, kind)}
        for name, hits in _members(text, kind).items():
            if name not in lent and any(_anchored(text, p, anchors) for p in hits):
                out.append(name)
    return out


DIRECTIONS: dict[str, str] = {
    "high": r"\b(?:rai[sz]ed|high|higher|elevated|increased|above (?:the )?normal)\b|升高|偏高|增高|增加",
    "low": r"\b(?:low|lower|reduced|decreased|depressed|below (?:the )?normal)\b|降低|偏低|减低|低下|减退",
    "normal": r"\b(?:normal|preserved|intact)\b|(?<!不)正常|保留|尚可",
}
"""The way a result lies from its range: a finding's "C3 0.42 g/L (low)", "C-peptide 2.19 nmol/L, still preserved"."""
_AGAINST = {"high": ("low", "normal"), "low": ("high", "normal"), "normal": ("high", "low")}
_BARE_DIRECTION = re.compile(r"(?:still|very|markedly|clearly|mildly|仍|明显|稍)?\s*(?:" +
                             "|".join(DIRECTIONS.values()) + r")\s*", re.IGNORECASE)
_DIRECTION_CLAUSE = re.compile(r"[,;:，；：。!?！？]|(?<!\d)\.|\.(?!\d)|\b(?:and|but|while|whereas|which)\b|但|而")
_VALUE = re.compile(r"(?<![a-zA-Z0-9.])\d+(?:\.\d+)?")


def _direction(text: str) -> str | None:
    """The one way a text says a result lies (None for none or several)."""
    found = [name for name, pattern in DIRECTIONS.items() if re.search(pattern, text)]
    return found[0] if len(found) == 1 else None


def _subject(element: str) -> str | None:
    """What an element with a value measures: the last word before its value ("c3" of "C3 0.42 g/L", "peptide" of
    "fasting C-peptide 2.19 nmol/L"; the last two characters of a Chinese name: "c肽")."""
    value = _VALUE.search(element)
    before = _text(element[:value.start()] if value else "").strip()
    if _CJK.search(before):
        return before[-2:] if len(before) >= 2 else None
    words = [w for w in re.findall(r"[a-z][a-z0-9]*", before) if len(w) >= 2 or re.search(r"\d", w)]
    return words[-1] if words else None


def _window(text: str, position: int) -> str:
    """The clause around `position`, a bracket's content and its lead-in as one ("raised complement (C3 0.42 ...)"),
    and, where the clause says no way, a Chinese answer's next clause ("C肽0.51 nmol/L，在正常范围")."""
    open_at = text.rfind("(", 0, position)
    if open_at >= 0 and text.find(")", open_at) >= position:
        position = open_at
    left = max((m.end() for m in _DIRECTION_CLAUSE.finditer(text, 0, position)), default=0)
    close_at = text.find(")", position)
    inner = close_at >= 0 and text.rfind("(", 0, close_at) == position
    right_from = close_at if inner else position
    bound = _DIRECTION_CLAUSE.search(text, right_from)
    right = bound.start() if bound else len(text)
    clause = text[left:right]
    if _direction(clause) is None and bound is not None and _CJK.search(clause):
        after = _DIRECTION_CLAUSE.search(text, bound.end())
        following = text[bound.end():after.start() if after else len(text)]
        if not re.search(r"\d", following):
            clause += " " + following
    return clause


def direction_contradictions(answer: str, finding: str) -> list[str]:
    """Where the answer says the other way a result of the finding lies: "raised complement (C3 0.42 ...)" for "C3
    0.42 g/L (low)", "your C-peptide was low" for "C-peptide 2.19 nmol/L, still preserved", "C肽...在正常范围" for
    "偏低". A result's way is its element's own word or a bare word of direction right after it ("(low)", "偏低"); the
    answer's is read in the clause of each mention of the result's subject or value, and counts only where it names
    no way the finding gives."""
    from medmemorybench.scoring.facts import finding_elements

    text = _text(answer)
    elements = finding_elements(finding)
    out: list[str] = []
    for n, element in enumerate(elements):
        if not _VALUE.search(element):
            continue
        own = _text(element)
        way = _direction(own)
        if way is None and n + 1 < len(elements) and _BARE_DIRECTION.fullmatch(_text(elements[n + 1])):
            way = _direction(_text(elements[n + 1]))
        subject = _subject(element)
        if way is None or subject is None:
            continue
        pattern = re.escape(subject) if _CJK.search(subject) else rf"(?<![a-z0-9]){re.escape(subject)}(?![a-z0-9])"
        for m in re.finditer(pattern, text):
            said = _direction(_window(text, m.start()))
            if said in _AGAINST[way]:
                out.append(f"{said} {subject}")
                break
    return out
