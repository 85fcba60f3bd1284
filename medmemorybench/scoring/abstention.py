"""Abstention: does an answer say the records do not hold the answer? ABS accuracy and hallucination use it.

Only an answer the model wrote counts: a blank answer says nothing, and an echo (the answer copies the
prompt or the retrieved records, `echo.is_echo`) is not an abstention even when the copied system
prompt holds "That is not in my records.".
"""

from __future__ import annotations

import re

from medmemorybench.normalize import normalize_text
from medmemorybench.scoring.base import Question, Score, scorer

_NEG = r"(?:not|cannot|can't|couldn't|could not|don't|do not|didn't|did not|doesn't|does not|unable to|haven't|" \
       r"have not|hasn't|has not|never)"
_RECORD = r"(?:records?|information|info|data|details?|mention|documentation|notes?|results?|readings?|history|" \
          r"files?|chart|entry|entries|reference|value|measurements?|prescriptions?)"
_PATTERNS = (
    r"(?:\bnot|n't|\bnever) (?:\w+ ){0,2}(?:in|within|among|on) (?:my|the|your|our|any) (?:\w+ ){0,2}"
    r"(?:records?|notes|files?|chart|history)",
    r"\b(?:no|nothing|none)\b[^.;!?]{0,80}\b(?:appears?|is|are|was|were|shows?|comes? up)\b[^.;!?]{0,24}\b(?:in|on) "
    r"(?:my|the|your|our) (?:\w+ ){0,3}(?:records?|notes|files?|chart|history)",
    rf"\bno (?:[\w()/-]+ ){{0,4}}{_RECORD}\b",
    rf"\b(?:nothing|none) (?:[\w()/-]+ ){{0,4}}(?:in|on|about) (?:my|the|your|our) (?:\w+ ){{0,2}}{_RECORD}",
    r"(?:\bnot|\bnever|n't) (?:been |ever |yet )?(?:mentioned|recorded|documented|discussed|specified|stated|measured"
    r"|noted|tested|checked|provided|prescribed|started|done|told|come up|came up)\b",
    rf"\b(?:i|we) {_NEG} (?:\w+ )?(?:know|recall|remember|find|see|tell|say|determine|have a record|have any record)\b",
    rf"\b(?:i|we) {_NEG} have (?:any |that |this |the |enough |a )?(?:[\w()/-]+ ){{0,4}}{_RECORD}\b",
    rf"\b(?:i|we) {_NEG} have anything (?:recorded|on record|on file|noted|documented|written down)\b",
    r"\bnothing (?:is |was )?(?:recorded|on record|on file|noted|documented|written down)\b",
    r"\b(?:no|nothing|none|not)\b[^.;!?]{0,80}\b(?:in|on) (?:my|the|your|our) (?:\w+ ){0,3}"
    r"(?:records?|notes|files?|chart)\b",
    rf"\b(?:my|the|your|our) (?:\w+ )?{_RECORD} (?:\w+ )?{_NEG} (?:show|contain|include|mention|say|record|have|list"
    r"|hold)",
    rf"\b{_NEG} (?:find|locate|determine|tell|confirm|answer|say|see)\b",
    r"\b(?:you|we) (?:never|haven't|have not|didn't|did not) (?:\w+ )?(?:told|mentioned|discussed|talked|said|"
    r"brought up|measured|checked|tested|started|prescribed)\b",
    r"\b(?:i'm|i am|we're|we are) not (?:sure|certain|aware)\b",
    r"\b(?:not sure|unsure|no idea|insufficient (?:information|data|evidence)|not enough (?:information|data)"
    r"|there is no record|there's no record|no such (?:visit|record|test|prescription))\b",
    r"没(?:有)?[^，,。；;！!？?]{0,24}(?:记录|信息|资料|数据|提到|提及|测过|查过|检查过|开过|用过|记过|记载|登记|处方)"
    r"|没(?:有)?(?:看到|查到|找到|见到|翻到)|说不出|答不上|无从(?:得知|知道|判断)"
    r"|记录(?:中|里|上)?(?:没有|未|并没有|查不到|找不到)|病历(?:中|里|上)?(?:没有|未|查不到)|无记录|无相关|未(?:提及|记录|找到|测|查)"
    r"|不知道|无法确定|无法回答|找不到|查不到|不清楚|没(?:有)?(?:跟我|和我|向我)?(?:提过|说过|提到过|讲过)"
    r"|不在(?:我的|您的)?[\u3400-\u9fff]{0,4}(?:记录|病历|档案)",
)
_ABSTAIN = re.compile("|".join(f"(?:{p})" for p in _PATTERNS))


def _find(prediction: str | None, question: str = "", asks_date: bool = False) -> str | None:
    """The abstention phrase an answer says, unless it commits to an answer all the same ("I have no record of the
    exact dose, but it was probably 50 mcg": a value, a date or a yes/no outside the phrase is an answer)."""
    if not prediction or not prediction.strip():
        return None
    text = normalize_text(prediction).replace("\u2019", "'")
    m = _ABSTAIN.search(text)
    if m is None:
        return None
    # an answer that opens by saying the records do not hold it is an abstention whatever context it adds in later
    # sentences ("That is not in my records. (They mention sertraline, started on 2024-02-11.)"); a value in the
    # refusing sentence itself is an answer all the same ("no record of the exact dose, but probably 50 mcg")
    first = _SENTENCE_END.split(prediction.strip(), maxsplit=1)[0]
    opens = _ABSTAIN.search(normalize_text(first).replace("\u2019", "'")) is not None
    if _commits(first if opens else prediction, question, asks_date):
        return None
    return m.group(0)


def _commits(prediction: str, question: str, asks_date: bool) -> bool:
    """Whether the answer gives a value with its unit (or, to a question asking when, a date) as its answer: in a
    clause that says nothing is missing, and not one the question names ("I have no record of the exact dose, but it
    was probably 50 mcg" answers; "there was no visit on 13 May; your nearest visits were on 10 and 20 May" does
    not)."""
    from medmemorybench.scoring._reading import read_answer

    reading, asked = read_answer(prediction), read_answer(question)
    named_values = {(m.value, m.unit.kind) for m in asked.values}
    named_days = {(d.date.month, d.date.day) for d in asked.dates if d.date}

    def asserted(mention) -> bool:  # noqa: ANN001
        clause = _clause(reading.text, mention.start)
        return mention.role in ("current", "unmarked", "alternative") and not _ABSTAIN.search(clause)

    values = [m for m in reading.values if asserted(m) and m.unit.key not in ("", "times", "days")
              and (m.value, m.unit.kind) not in named_values]
    dates = [d for d in reading.dates if asks_date and asserted(d) and d.date
             and (d.date.month, d.date.day) not in named_days]
    return bool(values or dates)


_SENTENCE_END = re.compile(r"(?<=[.!?。！？])\s|[。！？]")
_CLAUSE_END = re.compile(r"[,:.;!?\n，：。；！？]|\bbut\b|但是|不过|但")


def _clause(text: str, position: int) -> str:
    left = max((m.end() for m in _CLAUSE_END.finditer(text, 0, position)), default=0)
    right = next((m.start() for m in _CLAUSE_END.finditer(text, position)), len(text))
    return text[left:right]


DATE_TEMPLATES = ("tla.",)
"""Phrasing intents whose answer is a date (an abstention question borrows one: "On what date did I begin X?")."""


def asks_date(question: Question) -> bool:
    """Whether the question's answer would be a date (TLA's "when" intents, not "what happened on <date>")."""
    template = question.get("template") or ""
    return template.startswith(DATE_TEMPLATES) and template != "tla.event_on_date"


def is_abstention(prediction: str | None, *, echo: bool = False, question: str = "", asks_date: bool = False) -> bool:
    """Whether the answer declines for lack of information ("not in my records", "I don't know", ...).

    Args:
        prediction: The model's answer text; None or blank is not an abstention (it says nothing).
        echo: Whether the answer is an echo of the prompt or records (`is_echo`); an echo never abstains.

    Returns:
        True when some abstention phrase occurs and the answer is not an echo.
    """
    return not echo and _find(prediction, question, asks_date) is not None


def abstains(question: Question, prediction: str | None, *, echo: bool = False) -> bool:
    """`is_abstention` as the question reads it (its own values and dates are no answer; a date answers it only when
    it asks when): what every measure of an answer to `question` uses."""
    return is_abstention(prediction, echo=echo, question=question.get("question") or "", asks_date=asks_date(question))


@scorer("abstained", description="ABS: the answer says the records do not hold the answer")
def abstained(question: Question, prediction: str) -> Score:
    """1.0 when the prediction abstains, else 0.0 (the accuracy of ABS questions).

    Args:
        question: A question row (unused beyond the interface).
        prediction: The model's answer text.

    Returns:
        The score; `extracted` is the abstention phrase found.
    """
    phrase = _find(prediction, question.get("question") or "", asks_date(question))
    if phrase is None:
        return Score(0.0, explanation="answers instead of abstaining")
    return Score(1.0, extracted=phrase, explanation=f"abstains: {phrase!r}")
