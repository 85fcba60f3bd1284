"""EEM: is the gold entity (or one of its aliases) stated in the answer? The paper's normalized containment.

Containment is number-aware (see `_match.contains_term`): "7.2 %" is not inside "17.2 %", "25 mg" is
not inside "125 mg", "K" is not "K+", and "500mg" equals "500 mg".
"""

from __future__ import annotations

from medmemorybench.scoring._match import first_contained
from medmemorybench.scoring.base import Question, Score, scorer


def gold_strings(question: Question) -> list[str]:
    """The gold answer followed by its aliases, without blanks or repeats.

    Args:
        question: A question row.

    Returns:
        The accepted surface forms, gold answer first.
    """
    strings = [question.get("answer") or "", *(question.get("answer_aliases") or [])]
    return list(dict.fromkeys(s for s in strings if s.strip()))


@scorer("exact_match", description="EEM: the gold answer or an alias is stated in the answer (number-aware)")
def exact_match(question: Question, prediction: str) -> Score:
    """1.0 when the prediction states the gold answer or any alias, else 0.0.

    Args:
        question: A question row (uses `answer` and `answer_aliases`).
        prediction: The model's answer text.

    Returns:
        The score; `extracted` is the gold form that was found.
    """
    golds = gold_strings(question)
    hit = first_contained(prediction or "", golds)
    if hit is None:
        return Score(0.0, explanation=f"none of {golds!r} is stated", metadata={"gold": golds})
    return Score(1.0, extracted=hit, explanation=f"states {hit!r}", metadata={"gold": golds})
