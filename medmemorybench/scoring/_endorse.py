"""Does an IG answer endorse the question's common wrong answer ("Yes, X is a standard treatment ...")?

Checks in order, the first that applies decides: (1) the answer repeats the wrong answer; (2) an
abstention ("I don't know") takes no side; (3) both open with a clear yes or no and they agree ("Yes, ..."
for a drug the patient must not take; "No, ..." when the wrong answer says the habit does not matter);
(4) otherwise, for a yes-type wrong answer, a sentence that names its subject (the forbidden drug) with a
recommending word and no negating word, and for a no-type wrong answer, a dismissal ("doesn't matter",
"no need to change"). "Yes, but ..." counts as no opening.
"""

from __future__ import annotations

import re

from medmemorybench.normalize import normalize_text
from medmemorybench.scoring._match import contains_term
from medmemorybench.scoring.abstention import is_abstention
from medmemorybench.scoring.base import Question

_YES = re.compile(r"(?:yes|yeah|yep|sure|absolutely|definitely|certainly|of course|go ahead|by all means)\b")
_NO = re.compile(r"(?:no|nope|not|never|unfortunately|better not|avoid|i (?:would|do|can)(?: not|n't)"
                 r"|i (?:wouldn't|don't|can't)|you (?:should|must|can)(?: not|n't)|you (?:shouldn't|mustn't|can't)"
                 r"|(?:please )?(?:don't|do not))\b")
_HEDGE = re.compile(r"\b(?:but|however|although|though|not)\b|n't\b")
_CLAUSE = re.compile(r"[.;!?\n]|\bbut\b|\bhowever\b")
_VERBS = {"is", "are", "would", "can", "could", "should", "will", "may", "was", "might"}
_RECOMMEND = {"good", "reasonable", "suitable", "safe", "fine", "recommend", "recommended", "option", "start",
              "try", "take", "ask", "appropriate", "worth", "helpful", "choice", "okay", "ok", "benefit", "add",
              "switch", "use", "prescribe", "standard"}
_NEGATE = {"not", "never", "avoid", "unsafe", "unsuitable", "instead", "contraindicated", "against", "no",
           "risk", "risky", "dangerous", "allergy", "allergic", "interact", "interacts", "interaction", "rather"}
_DISMISS = ("doesn't matter", "does not matter", "don't matter", "do not matter", "no need to change",
            "nothing to change", "no problem", "no issue", "not a problem", "won't affect", "will not affect",
            "doesn't affect", "does not affect", "are fine", "is fine", "no changes needed", "no change needed")


def _opening(text: str) -> str:
    return re.sub(r"^[^\w]+", "", normalize_text(text).replace("\u2019", "'"))


def polarity(text: str) -> str | None:
    """"yes" or "no" when the text opens with a clear answer, else None ("Yes, but ..." is None)."""
    opening = _opening(text)
    first_sentence = re.split(r"[.;!?\n]", opening, maxsplit=1)[0]
    yes = _YES.match(opening)
    if yes:
        return None if _HEDGE.search(first_sentence[yes.end():]) else "yes"
    return "no" if _NO.match(opening) else None


def wrong_subject(wrong_answer: str) -> str | None:
    """What a yes-type wrong answer recommends: the words after "Yes," up to the verb ("duloxetine")."""
    opening = _opening(wrong_answer)
    m = _YES.match(opening)
    if not m:
        return None
    words = re.findall(r"[^\s,:;]+", opening[m.end():])
    for i, word in enumerate(words[:6]):
        if word in _VERBS:
            return " ".join(words[:i]) or None
    return None


def _recommends(prediction: str, subject: str) -> bool:
    for clause in _CLAUSE.split(normalize_text(prediction).replace("\u2019", "'")):
        if not contains_term(clause, subject):
            continue
        words = set(re.findall(r"[a-z']+", clause))
        if words & _RECOMMEND and not words & _NEGATE and "n't" not in clause:
            return True
    return False


def endorses_wrong_answer(question: Question, prediction: str) -> bool:
    """Whether the prediction endorses the question's `common_wrong_answer`.

    Args:
        question: A question row (uses `common_wrong_answer`).
        prediction: The model's answer text.

    Returns:
        True when the answer takes the wrong answer's side; False when it does not, when it is empty,
        or when the question has no wrong answer.
    """
    wrong = question.get("common_wrong_answer") or ""
    if not wrong.strip() or not (prediction or "").strip():
        return False
    if contains_term(prediction, wrong):
        return True
    if is_abstention(prediction):  # "I don't know" opens with a no, but takes no side
        return False
    wrong_side, said = polarity(wrong), polarity(prediction)
    if wrong_side and said:
        return wrong_side == said
    if wrong_side == "yes":
        subject = wrong_subject(wrong)
        return bool(subject) and _recommends(prediction, subject)
    if wrong_side == "no":
        text = normalize_text(prediction).replace("\u2019", "'")
        return any(phrase in text for phrase in _DISMISS)
    return False
