"""Token F1 and ROUGE-L of an answer against the gold answer, with one tokenizer for English and Chinese.

English splits on word boundaries (a decimal such as "7.2" stays one token); Chinese splits into single
characters, as is usual for Chinese ROUGE. Both are lower-cased after NFKC. ROUGE-L is our own LCS
implementation (F-measure with beta = 1, as `rouge-score` reports), so no Hub download is needed.
Against several gold forms (the answer and its aliases) the best score is kept, as in SQuAD.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Callable, Sequence

from medmemorybench.scoring.base import Question, Score, scorer
from medmemorybench.scoring.exact_match import gold_strings

_CJK = re.compile(r"([\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002a6df])")
_TOKEN = re.compile(r"\d+(?:\.\d+)+|\w+")


def tokenize(text: str) -> list[str]:
    """Lower-cased tokens: English words and numbers, Chinese characters one by one.

    Args:
        text: Any text.

    Returns:
        The tokens, punctuation dropped.
    """
    text = unicodedata.normalize("NFKC", text or "").lower()
    return _TOKEN.findall(_CJK.sub(r" \1 ", text))


def f1_tokens(prediction: Sequence[str], gold: Sequence[str]) -> float:
    """Harmonic mean of token precision and recall (bag of tokens); 0.0 when either side is empty."""
    common = sum((Counter(prediction) & Counter(gold)).values())
    if common == 0:
        return 0.0
    precision, recall = common / len(prediction), common / len(gold)
    return 2 * precision * recall / (precision + recall)


def lcs_length(a: Sequence[str], b: Sequence[str]) -> int:
    """Length of the longest common subsequence of two token lists (O(len(a) * len(b)) time, O(len(b)) memory)."""
    if len(a) < len(b):
        a, b = b, a
    row = [0] * (len(b) + 1)
    for x in a:
        previous_diagonal = 0
        for j, y in enumerate(b, start=1):
            above = row[j]
            row[j] = previous_diagonal + 1 if x == y else max(row[j], row[j - 1])
            previous_diagonal = above
    return row[-1]


def rouge_l_tokens(prediction: Sequence[str], gold: Sequence[str]) -> float:
    """ROUGE-L F-measure: LCS-based precision and recall, harmonic mean; 0.0 when either side is empty."""
    lcs = lcs_length(prediction, gold)
    if lcs == 0:
        return 0.0
    precision, recall = lcs / len(prediction), lcs / len(gold)
    return 2 * precision * recall / (precision + recall)


def _best(question: Question, prediction: str, measure: Callable[[list[str], list[str]], float]) -> Score:
    predicted = tokenize(prediction)
    golds = gold_strings(question)
    if not golds:
        return Score(None, explanation=f"{question.get('query_id')}: no gold answer", status="error")
    value, gold = max((measure(predicted, tokenize(g)), g) for g in golds)
    return Score(value, explanation=f"best against {gold!r}", metadata={"gold": gold})


@scorer("token_f1", description="Token F1 of the answer against the gold answer or its best alias")
def token_f1(question: Question, prediction: str) -> Score:
    """Bag-of-tokens F1 against the gold answer (best over aliases)."""
    return _best(question, prediction, f1_tokens)


@scorer("rouge_l", description="ROUGE-L F-measure (LCS) of the answer against the gold answer or its best alias")
def rouge_l(question: Question, prediction: str) -> Score:
    """ROUGE-L F-measure against the gold answer (best over aliases)."""
    return _best(question, prediction, rouge_l_tokens)
