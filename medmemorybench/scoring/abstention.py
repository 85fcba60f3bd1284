"""Abstention: does an answer say the records do not hold the answer? ABS accuracy and hallucination use it.

Only an answer the model wrote counts: a blank answer says nothing, and an echo (the answer copies the
prompt or the retrieved records, `echo.is_echo`) is not an abstention even when the copied system
prompt holds "That is not in my records.".
"""

from __future__ import annotations

import re

from medmemorybench.normalize import normalize_text
from medmemorybench.scoring.base import Question, Score, scorer

_NEG = r"(?:not|cannot|can't|couldn't|could not|don't|do not|didn't|did not|unable to)"
_RECORD = r"(?:records?|information|info|data|details?|mention|documentation)"
_PATTERNS = (
    r"(?:\bnot|n't|\bnever) (?:\w+ )?(?:in|within|among) (?:my|the|your|our|any) (?:\w+ ){0,2}"
    r"(?:records?|notes|files?)",
    rf"\bno (?:\w+ ){{0,2}}{_RECORD}\b",
    r"(?:\bnot|\bnever|n't) (?:been |ever )?(?:mentioned|recorded|documented|discussed|specified|stated|measured"
    r"|noted|tested|checked|provided)\b",
    rf"\b(?:i|we) {_NEG} (?:know|recall|remember|find|see|tell|say|determine)\b",
    rf"\b(?:i|we) {_NEG} have (?:any |that |this |the |enough )?{_RECORD}\b",
    rf"\b{_NEG} (?:find|locate|determine|tell|confirm|answer|say)\b",
    r"\b(?:i'm|i am|we're|we are) not (?:sure|certain|aware)\b",
    r"\b(?:not sure|unsure|no idea|insufficient (?:information|data|evidence)|not enough (?:information|data))\b",
    r"没有(?:相关|这方面的?)?(?:记录|信息|提到|提及)|记录(?:中|里)(?:没有|未)|无记录|未(?:提及|记录|找到)|不知道|无法确定"
    r"|找不到|不清楚|不在(?:我的|您的)?[\u3400-\u9fff]{0,4}(?:记录|病历|档案)",
)
_ABSTAIN = re.compile("|".join(f"(?:{p})" for p in _PATTERNS))


def _find(prediction: str | None) -> str | None:
    if not prediction or not prediction.strip():
        return None
    m = _ABSTAIN.search(normalize_text(prediction).replace("\u2019", "'"))
    return m.group(0) if m else None


def is_abstention(prediction: str | None, *, echo: bool = False) -> bool:
    """Whether the answer declines for lack of information ("not in my records", "I don't know", ...).

    Args:
        prediction: The model's answer text; None or blank is not an abstention (it says nothing).
        echo: Whether the answer is an echo of the prompt or records (`is_echo`); an echo never abstains.

    Returns:
        True when some abstention phrase occurs and the answer is not an echo.
    """
    return not echo and _find(prediction) is not None


@scorer("abstained", description="ABS: the answer says the records do not hold the answer")
def abstained(question: Question, prediction: str) -> Score:
    """1.0 when the prediction abstains, else 0.0 (the accuracy of ABS questions).

    Args:
        question: A question row (unused beyond the interface).
        prediction: The model's answer text.

    Returns:
        The score; `extracted` is the abstention phrase found.
    """
    phrase = _find(prediction)
    if phrase is None:
        return Score(0.0, explanation="answers instead of abstaining")
    return Score(1.0, extracted=phrase, explanation=f"abstains: {phrase!r}")
