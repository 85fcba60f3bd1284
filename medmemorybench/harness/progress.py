"""Where a run stands, reported as it moves: data only (the command line draws it as a bar or as log lines)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal


@dataclass(frozen=True)
class Progress:
    """One step of a task's stream: a patient has read its sessions, or a checkpoint's questions are answered."""

    task: str
    step: Literal["ingest", "answer"]
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

    @property
    def fraction(self) -> float:
        """Share of the task done: checkpoints before this one, then this one's patients (answering ends it)."""
        # reading is most of a checkpoint; its answers are the rest
        within = 1.0 if self.step == "answer" else self.patients_done / (self.patients + 1)
        return (self.checkpoint - 1 + within) / max(self.checkpoints, 1)
