"""Session fixtures made once per test run, not once per pytest-xdist worker (`make test` runs two)."""

from __future__ import annotations

import os
import pickle
from collections.abc import Callable
from typing import TypeVar

import pytest
from filelock import FileLock

T = TypeVar("T")

SHARED_FIXTURE_FILES = {
    "simulated-years": "tests/simulate/test_*invariants.py",
    "question-cohort": "tests/questions/test_*.py",
}
"""The test files that read a session fixture made with `made_once` (the simulated 1,000-patient cohort `years`, the
built question `cohort`), by the group they run in: `make test` (`--dist loadfile`) hands each group to one worker
as one unit (`tests/conftest.py`), so that worker makes the fixture while the other runs other files. A file that
reads one and is not listed still passes; it only may wait for the other worker to finish making it."""

FIRST_UNITS = (
    "simulated-years",
    "question-cohort",
    "tests/simulate/test_person_talk_invariants.py",
    "tests/simulate/test_acted_invariants.py",
    "tests/simulate/test_presupposed_invariants.py",
    "tests/simulate/test_text_invariants.py",
)
"""The slowest units of work, handed out before any other, slowest first (`tests/conftest.py`). The four files are
units of their own, out of the `simulated-years` group: each renders sessions of the cohort in its own module fixture,
each differently (other visits, acts or years, so no one rendering serves them all), and in the group they kept one
worker busy long after the other had run out of work. The first two units make different made-once fixtures, so
neither worker waits for the other's; the four files read `years` back pickled."""


def made_once(factory: pytest.TempPathFactory, name: str, make: Callable[[], T]) -> T:
    """`make()`, made by the first worker that asks and read back (pickled) by the others. Each worker would
    otherwise make it again: the 1,000-patient cohort takes about 45 s, and the question cohort about a minute. The
    file lies in the run's own temporary folder (shared by its workers, never by another run)."""
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        return make()
    path = factory.getbasetemp().parent / f"{name}.pickle"
    with FileLock(f"{path}.lock"):
        if path.is_file():
            return pickle.loads(path.read_bytes())
        value = make()
        path.write_bytes(pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL))
        return value
