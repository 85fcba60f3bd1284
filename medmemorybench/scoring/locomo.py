"""LoCoMo's own QA measure: token F1 per category, as snap-research/LoCoMo computes it (not ours).

Read from `task_eval/evaluation.py` (`normalize_answer`, `f1_score`, `f1`, `eval_question_answering`) and
`task_eval/gpt_utils.py` (`get_cat_5_answer`, the category-5 options) at commit cbfbc1dba6bc53d00625212a0f22d55ffee7c1fc
(the file's last change; the repository's HEAD when read was 3eb6f2c5, 2024-08-12):

- normalise: drop every ',' first, lower-case, drop ASCII punctuation, drop the words a, an, the *and* `and`,
  collapse white space; then Porter-stem each token (NLTK's `PorterStemmer`, its default mode);
- F1: bag-of-stems precision and recall; 0 when nothing is shared (two empty sides included);
- category 1 (multi-hop): the reply and the gold are split at ',' (before normalising), and the score is the mean
  over gold parts of the best F1 of any reply part;
- categories 2 and 4: plain F1; category 3: F1 against the gold cut at its first ';';
- category 5 (adversarial): 1 when the reply (a bare `a`/`b`/`(a)`/`(b)` first mapped to the option it names)
  contains "no information available" or "not mentioned", else 0; the gold is not read;
- each question's score is rounded to 3 decimals, as `evaluate_qa.py` stores it before averaging.

The category is the source's, kept in an imported question's `template` (`locomo.category_1.multi_hop`).
`docs/other_benchmarks.md` ("Scoring") says what is faithful and what differs.
"""

from __future__ import annotations

import re
import string
from functools import lru_cache

import regex

from medmemorybench.scoring.base import Question, Score, scorer
from medmemorybench.scoring.text_overlap import f1_tokens

CATEGORY_NAMES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
"""LoCoMo's categories by the ids its evaluation code uses (`task_eval/evaluation.py`)."""
NOT_MENTIONED = "Not mentioned in the conversation"
"""The category-5 option LoCoMo counts right (`task_eval/gpt_utils.py`)."""
ABSTAIN_PHRASES = ("no information available", "not mentioned")
"""What a category-5 reply must contain, lower-cased, to score 1."""

_CATEGORY = re.compile(r"locomo\.category_(\d)\b")
_ARTICLES = regex.compile(r"\b(a|an|the|and)\b")  # (theirs: `regex`, with "and" among the articles)
_PUNCTUATION = frozenset(string.punctuation)


@lru_cache(maxsize=1)
def _stemmer():  # noqa: ANN202 - nltk has no type hints
    from nltk.stem import PorterStemmer  # (pure Python; no NLTK data needed)

    return PorterStemmer()


def category_of(question: Question) -> int | None:
    """The LoCoMo category id of an imported question (from `template`), or None for any other question."""
    match = _CATEGORY.match(str(question.get("template") or ""))
    return int(match[1]) if match else None


def normalize_answer(text: str) -> str:
    """LoCoMo's `normalize_answer`: commas dropped, lower case, ASCII punctuation and a/an/the/and dropped."""
    text = "".join(ch for ch in text.replace(",", "").lower() if ch not in _PUNCTUATION)
    return " ".join(_ARTICLES.sub(" ", text).split())


def stems(text: str) -> list[str]:
    """The Porter stems of the normalised text's words."""
    stemmer = _stemmer()
    return [stemmer.stem(word) for word in normalize_answer(text).split()]


def f1_score(prediction: str, gold: str) -> float:
    """LoCoMo's `f1_score`: bag-of-stems F1 (0.0 when no stem is shared)."""
    return f1_tokens(stems(prediction), stems(gold))


def multi_answer_f1(prediction: str, gold: str) -> float:
    """LoCoMo's `f1` (category 1): mean over the gold's comma-separated parts of the best F1 of a reply part."""
    parts = [p.strip() for p in prediction.split(",")]
    return sum(max(f1_score(p, g.strip()) for p in parts) for g in gold.split(",")) / len(gold.split(","))


def option_chosen(prediction: str, not_mentioned_first: bool, adversarial_answer: str | None) -> str:
    """LoCoMo's `get_cat_5_answer`: a bare option letter read as the option it names; any other reply, stripped
    and lower-cased, as itself."""
    reply = prediction.strip().lower()
    options = {"a": NOT_MENTIONED, "b": adversarial_answer or ""}
    if not not_mentioned_first:
        options = {"a": options["b"], "b": options["a"]}
    if len(reply) == 1:
        return options["a"] if "a" in reply else options["b"]
    if len(reply) == 3:
        return options["a"] if "(a)" in reply else options["b"]
    return reply


def not_mentioned_first(question: Question) -> bool:
    """Whether a category-5 question lists "Not mentioned in the conversation" as option (a). LoCoMo draws the
    order at random per question; ours is fixed by the last digit of the query id (even: first), the same rule
    `prompts/qa/locomo/abs.jinja` applies, so a rerun asks the same prompt."""
    digits = [ch for ch in str(question.get("query_id", "")) if ch.isdigit()]
    return not digits or int(digits[-1]) % 2 == 0


@scorer("locomo_f1", description="LoCoMo's own measure: token F1 per category (Porter stems; category 1 by parts, "
                                  "5 says 'not mentioned'), for imported LoCoMo questions")
def locomo_f1(question: Question, prediction: str) -> Score:
    """LoCoMo's score of one reply to an imported LoCoMo question (see the module docstring).

    Returns:
        The score in [0, 1], rounded to 3 decimals, with the category in metadata; status "error" for a question
        that is not an imported LoCoMo question (no `locomo.category_N` template).
    """
    category = category_of(question)
    if category not in CATEGORY_NAMES:
        return Score(None, explanation=f"{question.get('query_id')}: not a LoCoMo question (template "
                     f"{question.get('template')!r}); LoCoMo's F1 needs its category", status="error")
    gold = str(question.get("answer") or "")
    if category == 5:
        reply = option_chosen(prediction, not_mentioned_first(question), question.get("common_wrong_answer"))
        value = float(any(phrase in reply.lower() for phrase in ABSTAIN_PHRASES))
        return Score(value, extracted=reply, explanation="says it is not mentioned" if value else
                     "does not say it is not mentioned", metadata={"category": 5, "category_name": "adversarial"})
    if category == 3:
        gold = gold.split(";")[0].strip()
    value = multi_answer_f1(prediction, gold) if category == 1 else f1_score(prediction, gold)
    return Score(round(value, 3), explanation=f"LoCoMo F1 against {gold!r}",
                 metadata={"category": category, "category_name": CATEGORY_NAMES[category], "gold": gold})
