"""The exceptions MedMemoryBench raises; `cli.py` turns them into one clear line and exit code 2."""

from __future__ import annotations

from collections.abc import Sequence


class MedMemoryBenchError(Exception):
    """Base class of every error the library raises on purpose."""


class KnowledgeError(MedMemoryBenchError):
    """The knowledge base is inconsistent; `problems` lists every problem, each naming file and field."""

    def __init__(self, problems: Sequence[str]) -> None:
        self.problems = list(problems)
        count = len(self.problems)
        head = f"knowledge base has {count} problem{'s' if count != 1 else ''}"
        super().__init__(head + ":\n  " + "\n  ".join(self.problems))


class SimulationError(MedMemoryBenchError):
    """The simulator could not build a consistent care year (a knowledge-base gap, named in the message)."""


class InputError(MedMemoryBenchError):
    """A file or option given by the user is invalid; the message names it."""


class OutputError(MedMemoryBenchError):
    """A file could not be written (a read-only folder, a full disk); the message names it. What was written
    before it is kept."""


class RunFailedError(MedMemoryBenchError):
    """A run finished but its results cannot be trusted as complete (nothing scored, too many errors, questions
    without a sample); everything written is kept. The CLI exits 1 with the message."""
