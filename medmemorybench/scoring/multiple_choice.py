"""MQ: read the chosen letters out of an answer; score strict set equality and partial credit (Jaccard).

Parsing, in order: (1) if the answer restates every option ("A. x ... D. w"), drop that block; (2) blank
out the option texts, so "B) metformin" leaves "B)" and "vitamin D" as an option leaves no stray D;
(3) after the last answer marker ("answer is", "Answer:", "correct options are", "I'd pick", "答案")
that is followed by letters, read the run of letters joined by "and", ",", "/", "&" (an opening that says which is the
"only" one: the letters after "only" in the first sentence); (4) with no such
marker, take every standalone capital A-D except one right after "not", "avoid" or "except". "A"
followed by an ordinary word ("A good choice") is an article, and letters inside words ("Avoid",
"HbA1c", "B12") never count. Beyond these, negation is not understood: "C is unsafe" still reads C.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from medmemorybench.scoring.base import Question, Score, scorer

_OPTION = re.compile(r"\s*\(?([A-Za-z])\s*[.):]\s*(.*)", re.S)
_MARKER = re.compile(r"\b(?:answers?|options?|choices?|choose|pick|select)\b|答案|选项", re.I)
_TOKEN = re.compile(r"[A-Za-z]+|[^\sA-Za-z]")
_LEADING = {"is", "are", "would", "be", "the", "option", "options", "choice", "choices", "letter", "letters",
            "correct", "i", "my", "final", "both", "only", "will", "was", "were", "should", "to", "me", "for",
            ":", "：", "(", "*", "=", "-", "'", '"', "“", "是", "为", "选"}
_JOINERS = {"and", "or", "plus", "as", "well", "&", ",", "，", "/", "+", ";", "、", "和", "及", "(", ")", ".",
            "*", "'", '"', "”"}
# Words that may follow a letter used as a choice ("A is safe"); after "A", any other word marks an article.
_CHOICE_FOLLOWERS = {"and", "or", "is", "are", "plus", "only", "as", "would", "should", "could", "can", "seems",
                     "looks", "because", "since", "was", "were", "then", "too", "also", "both", "together"}
_EXCLUDED = re.compile(r"\b(?:not|avoid|except|excluding|exclude|never|unsafe)\W{0,3}$", re.I)
_OPENING = re.compile(r"[:：.。;；!！?？\n—–]|\s-\s")
_ONLY = re.compile(r"\b(?:only|just)\b|只有|只能选|只能用|只能")
_FIRST_SENTENCE = re.compile(r"[.。;；!！?？\n]")
_STANDALONE = re.compile(r"(?<![A-Za-z0-9])\(?([A-D])\)?(?![A-Za-z0-9])(?:\s+([a-z]+))?")


def split_option(option: str) -> tuple[str, str]:
    """("B", "metformin") from "B. metformin"; ("", text) when the option has no letter prefix."""
    m = _OPTION.fullmatch(option)
    return (m.group(1).upper(), m.group(2).strip()) if m else ("", option.strip())


def _body_pattern(body: str) -> str:
    return r"\s+".join(re.escape(word) for word in body.split())


def _strip_options(text: str, options: Sequence[str]) -> str:
    parsed = [split_option(o) for o in options]
    restated = [re.compile(rf"\(?\b{letter}\s*[.):]\s*{_body_pattern(body)}", re.I) for letter, body in parsed
                if letter and body]
    if restated and len(restated) == len(options) and all(p.search(text) for p in restated):
        for pattern in restated:  # a restated option block: drop its first occurrence of each option
            text = pattern.sub(" ", text, count=1)
    for _, body in sorted(parsed, key=lambda p: -len(p[1])):
        if body:
            text = re.sub(rf"(?<!\w){_body_pattern(body)}(?!\w)", " ", text, flags=re.I)
    return text


def _read_run(segment: str, letters: str) -> list[str]:
    tokens = _TOKEN.findall(segment)
    found: list[str] = []
    for i, token in enumerate(tokens):
        low = token.lower()
        following = tokens[i + 1].lower() if i + 1 < len(tokens) else ""
        if len(token) == 1 and token.upper() in letters:
            if low == "a" and following.isalpha() and following not in _CHOICE_FOLLOWERS | {"b", "c", "d"}:
                break  # "a combination of ...": an article
            found.append(token.upper())
        elif low in (_JOINERS if found else _LEADING | _JOINERS):
            continue
        else:
            break
    return found


def parse_choices(prediction: str, options: Sequence[str] = ()) -> frozenset[str]:
    """The set of option letters an answer chooses.

    Args:
        prediction: The model's answer text.
        options: The question's options ("A. metformin", ...); used to ignore restated options and
            option texts, and to limit the letters to those offered.

    Returns:
        Upper-case letters; empty when none can be read.
    """
    letters = "".join(split_option(o)[0] for o in options) or "ABCD"
    text = _strip_options(prediction or "", options)
    # an answer that opens with its letters ("A, C and D: simvastatin ...", "B和C可以吃") has chosen them: letters
    # its explanation names afterwards ("Semaglutide (B) isn't suitable") are not choices
    opening = _read_run(_OPENING.split(text.strip(), maxsplit=1)[0], letters)
    if opening:
        return frozenset(opening)
    # "Of those four, only B, buspirone. Hydroxyzine (A) is out ...", "只有B氯沙坦适合您": the first sentence's "only"
    first = _FIRST_SENTENCE.split(text.strip(), maxsplit=1)[0]
    for only in _ONLY.finditer(first):
        run = _read_run(first[only.end():], letters)
        if run:
            return frozenset(run)
    for marker in reversed(list(_MARKER.finditer(text))):
        rest = text[marker.end():].lstrip(" \t\n:：*")
        run = _read_run(rest.split("\n", 1)[0], letters)
        if run:
            return frozenset(run)
    chosen = set()
    for m in _STANDALONE.finditer(text):
        letter, word = m.group(1), m.group(2)
        if letter == "A" and word and word not in _CHOICE_FOLLOWERS:
            continue  # "A good option": an article
        if _EXCLUDED.search(text[max(0, m.start() - 12):m.start()]):
            continue  # "avoid C", "not D"
        if letter in letters:
            chosen.add(letter)
    return frozenset(chosen)


def _sets(question: Question, prediction: str) -> tuple[frozenset[str], frozenset[str]]:
    gold = frozenset(letter.upper() for letter in question.get("correct_options") or [])
    return parse_choices(prediction, question.get("options") or []), gold


@scorer("mq_exact", description="MQ: the chosen letter set equals the correct set (the paper's measure)")
def mq_exact(question: Question, prediction: str) -> Score:
    """1.0 when the parsed letter set equals `correct_options`, else 0.0."""
    chosen, gold = _sets(question, prediction)
    extracted = ", ".join(sorted(chosen))
    return Score(float(chosen == gold), extracted=extracted, explanation=f"chose {{{extracted}}}",
                 metadata={"chosen": sorted(chosen), "gold": sorted(gold)})


@scorer("mq_partial", description="MQ partial credit: |chosen ∩ correct| / |chosen ∪ correct| (Jaccard)")
def mq_partial(question: Question, prediction: str) -> Score:
    """Jaccard overlap of the parsed letter set with `correct_options` (0.0 when both are empty)."""
    chosen, gold = _sets(question, prediction)
    union = chosen | gold
    value = len(chosen & gold) / len(union) if union else 0.0
    extracted = ", ".join(sorted(chosen))
    return Score(value, extracted=extracted, explanation=f"chose {{{extracted}}}",
                 metadata={"chosen": sorted(chosen), "gold": sorted(gold)})
