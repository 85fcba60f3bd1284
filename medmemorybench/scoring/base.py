"""Scores and the scorer registry: small functions registered by name, as in inspect_ai's `@scorer`.

A scorer takes a question row (a dict of the `questions` config) and a prediction string and returns
a `Score`. An unscored result (`value=None`, status "error") is never a zero: reports keep n_error apart.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from medmemorybench.errors import InputError

Question = dict[str, Any]


@dataclass(frozen=True)
class Score:
    """The outcome of scoring one answer."""

    value: float | None
    """In [0, 1] (the selective score alone is -1, 0 or 1); None when the answer could not be scored."""
    extracted: str | None = None
    """What the scorer read out of the prediction (letters, matched alias ...)."""
    explanation: str = ""
    """Why, in a sentence."""
    metadata: dict[str, Any] = field(default_factory=dict)
    """Details (partial credit, matched facts, judge sub-scores ...)."""
    status: Literal["scored", "error", "unscored"] = "scored"
    """"error" when unscorable (e.g. an unparseable judge reply); "unscored" when the run lacks what the measure
    needs (a LongMemEval task without `--judge`): no value, and not an error either."""


ScoreFn = Callable[[Question, str], Score]


@dataclass(frozen=True)
class ScorerInfo:
    """A registered scorer."""

    name: str
    fn: ScoreFn
    higher_is_better: bool
    aggregation: str
    description: str


SCORERS: dict[str, ScorerInfo] = {}
SCORER_ENTRY_POINTS = "medmemorybench.scorers"
"""Where a third-party package registers a module of `@scorer` functions, by scorer name (imported when first
asked for)."""


def scorer(name: str, *, higher_is_better: bool = True, aggregation: str = "mean",
           description: str) -> Callable[[ScoreFn], ScoreFn]:
    """Register a scorer under `name`."""

    def register(fn: ScoreFn) -> ScoreFn:
        SCORERS[name] = ScorerInfo(name, fn, higher_is_better, aggregation, description)
        return fn

    return register


def get_scorer(name: str) -> ScorerInfo:
    """The registered scorer called `name` (import `medmemorybench.scoring` first to register them all).

    Raises:
        InputError: If no scorer has that name; the message suggests near matches and lists them all.
    """
    from medmemorybench.registry import load_entry_point, unknown_name

    if name not in SCORERS and load_entry_point(SCORER_ENTRY_POINTS, name) and name not in SCORERS:
        raise InputError(f"scorer {name}: its entry point loaded but registered nothing under that name "
                         "(decorate the function with @scorer(name))")
    if name in SCORERS:
        return SCORERS[name]
    raise unknown_name("scorer", "scorer", name, SCORERS)
