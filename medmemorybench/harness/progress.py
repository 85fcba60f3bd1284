"""Where a run stands, reported as it moves: data only (the command line draws it as a bar or as log lines)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal


@dataclass(frozen=True)
class Progress:
    """One step of a task's stream: a patient has read its sessions, an answer of a checkpoint has come back
    (`answering`), or a checkpoint's questions are answered."""

    task: str
    step: Literal["ingest", "answering", "answer"]
    split: str
    """The checkpoint split being streamed, e.g. `checkpoint_30`."""
    checkpoint: int
    """1-based position of `split` among the splits the task streams."""
    checkpoints: int
    patients_done: int
    """Patients that have read their sessions of this checkpoint (all of them once `step` is `answer`)."""
    patients: int
    sessions: int = 0
    """Sessions read in this step."""
    answers: int = 0
    """Questions answered (or prepared, in a retrieval-only run) in this step."""
    answered: int = 0
    """`answering`: the checkpoint's answers back so far, of `to_answer`."""
    to_answer: int = 0

    @property
    def fraction(self) -> float:
        """Share of the task done: checkpoints before this one, then this one's patients (answering ends it)."""
        # reading is most of a checkpoint; its answers are the rest
        within = 1.0 if self.step == "answer" else self.patients_done / (self.patients + 1)
        if self.step == "answering":
            within = (self.patients + self.answered / max(self.to_answer, 1)) / (self.patients + 1)
        return (self.checkpoint - 1 + within) / max(self.checkpoints, 1)
