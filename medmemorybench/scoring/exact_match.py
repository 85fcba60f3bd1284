"""EEM: is the gold entity (or one of its aliases) stated in the answer? The paper's normalized containment.

Containment is number-aware (see `_match.contains_term`): "7.2 %" is not inside "17.2 %", "25 mg" is
not inside "125 mg", "K" is not "K+", and "500mg" equals "500 mg". A gold that is one value is not
stated by an answer that also offers another value with its unit ("500 mg, later 1000 mg": see
`_candidates`).
"""

from __future__ import annotations

from medmemorybench.scoring._candidates import conflicting_candidates
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


SINGLE_VALUED_TYPES = ("EEM", "SUA", "TLA")
"""Types whose gold, when it is one date or one value with its unit, admits no second candidate."""


def conflicting(question: Question, prediction: str) -> list[str]:
    """Other dates or values the answer offers for a single-valued gold (empty when none or not applicable).

    Args:
        question: A question row (uses `query_type`, `answer`, `answer_aliases`, `question`).
        prediction: The model's answer text.

    Returns:
        The conflicting candidates (see `_candidates.conflicting_candidates`).
    """
    if question.get("query_type") not in SINGLE_VALUED_TYPES:
        return []
    return conflicting_candidates(prediction or "", gold_strings(question), question.get("question") or "")


@scorer("exact_match", description="EEM: the gold answer or an alias is stated in the answer (number-aware)")
def exact_match(question: Question, prediction: str) -> Score:
    """1.0 when the prediction states the gold answer or any alias and no conflicting value, else 0.0.

    Args:
        question: A question row (uses `answer`, `answer_aliases`, `query_type`, `question`).
        prediction: The model's answer text.

    Returns:
        The score; `extracted` is the gold form that was found; metadata `conflicting` lists the
        other values offered for a single-valued gold.
    """
    if question.get("facts"):
        from medmemorybench.scoring.rubric import score_facts

        return score_facts(question, prediction)
    golds = gold_strings(question)
    hit = first_contained(prediction or "", golds)
    if hit is None:
        return Score(0.0, explanation=f"none of {golds!r} is stated", metadata={"gold": golds})
    others = conflicting(question, prediction)
    if others:
        return Score(0.0, extracted=hit, explanation=f"states {hit!r} but also {others!r}",
                     metadata={"gold": golds, "conflicting": others})
    return Score(1.0, extracted=hit, explanation=f"states {hit!r}", metadata={"gold": golds})
