"""One place per question type: its code, quota and cadence, maker, scorers, primary measure, judge and prompt.

Generation, scoring, the judge, aggregation, the report, the dataset card and the task validator read
`question_types()` instead of lists of codes of their own. A type is one module in `questions/types/`
that calls `register(QuestionType(...))`, a prompt `prompts/qa/<code>.jinja` and a phrasing file
`questions/phrasings/<language>/<code>.yaml`; nothing else changes to add one.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import random

    from medmemorybench.questions.facts import Draft, FactFinder


@dataclass(frozen=True)
class QuestionType:
    """A question type (SPEC §2)."""

    code: str
    """Type code in the data ("EEM")."""
    name: str
    """What it tests, for the card and the report."""
    order: int
    """Position in tables and in the data (the paper's order, abstention last)."""
    make: Callable[[FactFinder, int, random.Random], list[Draft]]
    """Candidate drafts valid at a checkpoint (every evidence event at or before it)."""
    quota: int
    """Questions per patient at each checkpoint where the type is asked."""
    every: int = 10
    """Asked at checkpoints that are multiples of this (MCD: every 20 sessions)."""
    paper: bool = True
    """One of the paper's six types (their mean is the headline macro average)."""
    scorers: tuple[str, ...] = ("key_fact_rubric",)
    """Scorer names (`scoring.accuracy.SCORER_FUNCTIONS`); the first is accuracy when no judge is used."""
    judged: bool = False
    """An LLM judge, when given, decides accuracy (free-text answers)."""
    rubric: str = ""
    """What the judge checks, quoted into its prompt."""
    prompt: str | None = None
    """Prompt template under `prompts/qa/` (default `<code lower>.jinja`)."""
    kind_cap: float = 1.0
    """Largest share of one sub-kind among the type's questions of a patient (EEM: 0.4)."""
    balanced: bool = False
    """Sub-kinds are `<group>:yes` / `<group>:no` and each group's two sides stay within one question of each
    other (IG: a constant yes or no must not win, nor a rule on which drugs are asked)."""
    date_cap: float = 0.25
    """Largest share of the type's questions that may name a session's date."""

    @property
    def prompt_file(self) -> str:
        return self.prompt or f"qa/{self.code.lower()}.jinja"


_REGISTRY: dict[str, QuestionType] = {}


def register(spec: QuestionType) -> QuestionType:
    """Add a type (a second registration of a code replaces the first: a test's toy type, say)."""
    _REGISTRY[spec.code] = spec
    return spec


def unregister(code: str) -> None:
    _REGISTRY.pop(code, None)


def _discover() -> None:
    from medmemorybench.questions import types

    for module in pkgutil.iter_modules(types.__path__):
        importlib.import_module(f"{types.__name__}.{module.name}")


def question_types() -> list[QuestionType]:
    """Every registered type, in table order."""
    if not _REGISTRY:
        _discover()
    return sorted(_REGISTRY.values(), key=lambda s: (s.order, s.code))


def type_codes() -> tuple[str, ...]:
    return tuple(s.code for s in question_types())


def paper_codes() -> tuple[str, ...]:
    """The types of the headline macro average."""
    return tuple(s.code for s in question_types() if s.paper)


def judged_codes() -> tuple[str, ...]:
    return tuple(s.code for s in question_types() if s.judged)


def get_type(code: str) -> QuestionType:
    types_ = {s.code: s for s in question_types()}
    if code not in types_:
        raise KeyError(f"unknown question type {code!r}; known: {', '.join(types_)}")
    return types_[code]
