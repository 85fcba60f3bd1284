"""TLA / SUA / IG / MCD without a judge: does the answer state every key fact? Deterministic and offline.

A short key fact (a value with unit, a drug, a date) must be stated (`_match.contains_term`; a
YYYY-MM-DD fact matches the date in any written form or one of the answer's aliases). A long key fact
(a sentence the patient said, six or more content words) is stated when each of its numbers appears and
at least `LONG_FACT_RECALL` of its content words do (prefix-matched, so "skipping" counts for "skip"):
answers paraphrase sentences. For IG, an answer that endorses the common wrong answer scores 0 whatever
facts it names. For TLA and SUA whose gold is one date or value, an answer that also offers another
("2024-03-05 or 2024-04-10") scores 0: containment alone would reward listing every candidate. The
LLM judge (`llm_judge.py`) is the paper's measure for these types; this rubric is the reproducible
floor beside it.
"""

from __future__ import annotations

import re

from medmemorybench.normalize import normalize_text
from medmemorybench.scoring._dates import parse_iso, states_date
from medmemorybench.scoring._endorse import declines, endorses_wrong_answer
from medmemorybench.scoring._match import contains_term, first_contained
from medmemorybench.scoring._reading import read_answer
from medmemorybench.scoring.base import Question, Score, scorer
from medmemorybench.scoring.exact_match import conflicting, gold_strings
from medmemorybench.scoring.facts import Fact, check_chain, check_facts, facts_of
from medmemorybench.segment import has_cjk

LONG_FACT_WORDS = 6
"""A key fact with at least this many content words is matched by word recall, not verbatim."""
LONG_FACT_RECALL = 0.6
"""Share of a long fact's content words an answer must contain."""

_STOPWORDS = frozenset((
    "a", "an", "the", "i", "i'm", "my", "me", "we", "you", "your", "he", "she", "it", "its", "they", "them", "to",
    "of", "in", "on", "at", "for", "by", "with", "and", "or", "but", "so", "as", "is", "are", "was", "were", "be",
    "been", "do", "does", "did", "have", "has", "had", "not", "no", "this", "that", "these", "those", "there",
    "then", "than", "very", "just", "only", "also", "about", "from", "into", "up", "out", "if", "when", "what",
    "which", "who",
))
_TOKEN = re.compile(r"[^\W_]+(?:[.'][^\W_]+)*")
_NUMBER = re.compile(r"\d+(?:\.\d+)?")


def _tokens(text: str) -> list[str]:
    return _TOKEN.findall(normalize_text(text))


def _content_words(text: str) -> list[str]:
    return [w for w in _tokens(text) if w not in _STOPWORDS and not _NUMBER.fullmatch(w)]


def _word_stated(word: str, answer_words: set[str]) -> bool:
    stem = word[: max(3, len(word) - 2)]
    return any(candidate.startswith(stem) for candidate in answer_words)


def is_fact_stated(prediction: str, fact: str, aliases: list[str] | None = None) -> bool:
    """Whether the prediction states one key fact (see the module docstring for the rules).

    Args:
        prediction: The model's answer text.
        fact: One key fact.
        aliases: Other accepted forms of the question's answer, tried for a date fact.

    Returns:
        True when the fact is stated.
    """
    day = parse_iso(fact)
    if day is not None:
        return states_date(prediction, day) or first_contained(prediction, aliases or []) is not None
    words = _content_words(fact)
    if len(words) < LONG_FACT_WORDS:
        return contains_term(prediction, fact)
    if not all(contains_term(prediction, t) for t in _tokens(fact) if _NUMBER.fullmatch(t)):
        return False
    answer_words = set(_content_words(prediction))
    found = sum(_word_stated(word, answer_words) for word in words)
    return found / len(words) >= LONG_FACT_RECALL


def _without(prediction: str, subject: str | None) -> str:
    """The answer with the drug asked about named as "the drug": its own name states no reason ("ramipril" is no
    past ACE-inhibitor reaction, though it ends in "-pril")."""
    if not subject:
        return prediction
    return re.sub(re.escape(subject), "该药" if has_cjk(subject) else "the drug", prediction, flags=re.IGNORECASE)


def score_facts(question: Question, prediction: str) -> Score:
    """1.0 when the answer states every gold fact of the question (`facts`) and offers nothing in their place; for IG,
    a "yes" that declines the drug in its reasons invents a bar, and an answer that takes the common wrong answer's
    side is wrong whatever it states."""
    subject = question.get("subject") if question.get("query_type") == "IG" else None
    if subject and any(subject.lower() in form.lower() for f in facts_of(question) for form in f.forms):
        subject = None  # (the reason is the drug itself: "the reaction you had to doxycycline for acne")
    reading = read_answer(_without(prediction or "", subject))
    check = check_facts(reading, facts_of(question), question.get("question") or "")
    metadata: dict = {"stated": check.stated, "missing": check.missing}
    if check.conflicting:
        metadata["conflicting"] = check.conflicting
    if question.get("query_type") == "IG":
        metadata["endorsed"] = endorses_wrong_answer(question, prediction)
        says_yes = any(f.kind == "polarity" and f.text == "yes" for f in facts_of(question))
        if says_yes and question.get("subject") and declines(prediction, question["subject"]):
            return Score(0.0, explanation="says yes but bars the drug in its reasons", metadata=metadata)
        if metadata["endorsed"] and not says_yes:
            return Score(0.0, explanation="endorses the common wrong answer", metadata=metadata)
    if check.missing:
        return Score(0.0, explanation=f"missing {check.missing!r}", metadata=metadata)
    if check.conflicting:
        return Score(0.0, explanation=f"also offers {check.conflicting!r}: no single answer", metadata=metadata)
    return Score(1.0, extracted="; ".join(check.stated), explanation="states every gold fact", metadata=metadata)


def score_chain(question: Question, prediction: str) -> Score:
    """An MCD answer: correct when it tells enough of the chain's steps and its conclusion (`facts.check_chain`)."""
    chain = question.get("reasoning_chain") or []
    steps = [[Fact.of(f) for f in node.get("facts") or []] for node in chain]
    check = check_chain(read_answer(prediction or ""), steps, question.get("question") or "",
                        [node.get("node") or "" for node in chain])
    metadata = {"ncr": check.ncr, "crc": check.crc, "covered": check.covered, "given": check.given,
                "conclusion": check.conclusion}
    if check.rivals:
        metadata["rivals"] = list(check.rivals)
    if check.conflicting:
        metadata["conflicting"] = list(check.conflicting)
    if check.contradicted:
        metadata["contradicted"] = list(check.contradicted)
    if not check.passed:
        why = ("the conclusion is not told" if not check.conclusion else
               f"tells {', '.join(check.rivals)} as given in the place of the chain's drug" if check.rivals else
               f"offers {', '.join(check.conflicting)} where the record has another value" if check.conflicting else
               f"names {', '.join(check.contradicted)} where a finding has another" if check.contradicted else
               f"tells {check.ncr:.0%} of the steps")
        return Score(0.0, explanation=why, metadata=metadata)
    return Score(1.0, explanation=f"tells {check.ncr:.0%} of the steps and the conclusion", metadata=metadata)


@scorer("key_fact_rubric", description="TLA/SUA/IG/MCD: every gold fact is stated, nothing offered in its place, "
                                       "and, for IG, the right side taken (deterministic)")
def key_fact_rubric(question: Question, prediction: str) -> Score:
    """1.0 when the answer states what the gold requires, else 0.0.

    With structured gold (a row's `facts`, an MCD row's chain steps with theirs): `score_facts` or `score_chain`.
    A row of an older build (key facts only): every key fact stated, and an IG answer does not endorse the wrong
    answer.

    Args:
        question: A question row (uses `facts`, `reasoning_chain`, else `key_facts`, `answer_aliases`,
            `query_type`, `common_wrong_answer`); with no key facts, the gold answer or an alias must be stated.
        prediction: The model's answer text.

    Returns:
        The score; metadata has what was stated and missing (MCD: ncr, crc, covered steps), for IG `endorsed`,
        and `conflicting` when the answer offers other dates or values in the gold's place.
    """
    if question.get("query_type") == "MCD" and any(n.get("facts") for n in question.get("reasoning_chain") or []):
        return score_chain(question, prediction)
    if question.get("facts"):
        return score_facts(question, prediction)
    prediction = prediction or ""
    aliases = list(question.get("answer_aliases") or [])
    facts = [f for f in question.get("key_facts") or [] if f.strip()]
    if facts:
        stated = [f for f in facts if is_fact_stated(prediction, f, aliases)]
        missing = [f for f in facts if f not in stated]
    elif gold_strings(question):
        hit = first_contained(prediction, gold_strings(question))
        stated, missing = ([hit], []) if hit else ([], gold_strings(question)[:1])
    else:
        return Score(None, explanation=f"{question.get('query_id')}: no key facts and no answer to check against",
                     status="error")
    total = len(stated) + len(missing)
    metadata: dict = {"coverage": len(stated) / total if total else 0.0, "missing": missing}
    if question.get("query_type") == "IG":
        metadata["endorsed"] = endorses_wrong_answer(question, prediction)
        if metadata["endorsed"]:
            return Score(0.0, explanation="endorses the common wrong answer", metadata=metadata)
    if missing:
        return Score(0.0, explanation=f"missing {missing!r}", metadata=metadata)
    others = conflicting(question, prediction)
    if others:
        metadata["conflicting"] = others
        return Score(0.0, explanation=f"also offers {others!r}: no single answer", metadata=metadata)
    return Score(1.0, extracted="; ".join(stated), explanation="states every key fact", metadata=metadata)
