"""The selective score: +1 for a right answer, 0 for abstaining, -1 for a wrong one; on ABS, +1 abstain, -1 answer.

Accuracy rewards answering everything; the hallucination rate rewards abstaining from everything (an
always-abstaining system has 0 % hallucination). The selective score prices both: on an answerable
question abstaining is worth 0, so guessing pays only when the guess is right more often than wrong,
and on an ABS question any answer costs 1. An always-abstaining system scores 0 on every answerable
type, an always-answering one 2 * accuracy - 1 (below 0 whenever it is wrong more often than right)
and -1 on ABS, while a memory that answers what it holds and abstains otherwise scores above both.

An abstention forfeits the answer's credit even when the abstaining answer also names the right value
("I'm not sure, maybe 500 mg" scores 0): otherwise prefixing every answer with "I'm not sure" would
keep every right answer's +1 and turn every wrong one into 0. A blank answer is not an abstention
(-1), and neither is an echo of the prompt or records (-1).
"""

from __future__ import annotations

from medmemorybench.scoring.abstention import is_abstention
from medmemorybench.scoring.base import Question, Score


def selective_score(question: Question, prediction: str, correct: bool | None, *, echo: bool = False) -> Score:
    """The selective score of one answer.

    Args:
        question: A question row (uses `abstain`: True for ABS questions).
        prediction: The model's answer text.
        correct: The question's accuracy verdict (None when unscored, e.g. a judge error).
        echo: Whether the answer is an echo of the prompt or records (`is_echo`).

    Returns:
        A score of 1.0, 0.0 or -1.0, metadata `outcome` one of "correct", "abstained", "wrong", "echo";
        unscored (value None, status "error") when the answer does not abstain and `correct` is None.
    """
    if echo:
        return Score(-1.0, explanation="echoes the prompt or records: neither an answer nor an abstention",
                     metadata={"outcome": "echo"})
    abstains = is_abstention(prediction)
    if question.get("abstain"):
        if abstains:
            return Score(1.0, explanation="abstains where the records hold no answer",
                         metadata={"outcome": "abstained"})
        return Score(-1.0, explanation="answers where the records hold no answer", metadata={"outcome": "wrong"})
    if abstains:
        return Score(0.0, explanation="abstains", metadata={"outcome": "abstained"})
    if correct is None:
        return Score(None, explanation="correctness unscored", status="error")
    if correct:
        return Score(1.0, explanation="answers correctly", metadata={"outcome": "correct"})
    return Score(-1.0, explanation="answers wrongly", metadata={"outcome": "wrong"})
