"""Means with n_scored, n_error and 95 % intervals, by query type × mode × checkpoint, per mode, and over types.

A value of None is an unscored row (an error): it is counted in n_error and left out of the mean, never
read as zero. 0/1 metrics (accuracy, hallucination, trap safety) get a Wilson interval; other means (F1,
ROUGE-L, MRR, a Recall@k with fractions, the -1/0/+1 selective score) a percentile bootstrap, seeded from the
metric and the group so that the same rows always give the same interval, and clipped to the metric's range
(`value_range`; a normal interval would run past it: -0.48..1.48 for two recalls of 0 and 1). A group of one
value has no bootstrap interval. "Mean over types" is the paper's avg accuracy: the unweighted mean of the
per-type means, by default over the paper's six types (ABS apart), its interval a bootstrap resampling within
each type.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from functools import lru_cache
from typing import Any, Literal

import numpy as np

from medmemorybench.questions.spec import paper_codes

Z95 = 1.959963984540054
RESAMPLES = 2000
"""Bootstrap resamples per interval."""
UNIT_RANGE = (0.0, 1.0)


@dataclass(frozen=True)
class GroupStat:
    """The summary of one group of rows."""

    key: dict[str, Any]
    """The grouping values, e.g. {"query_type": "EEM", "mode": "mixed", "checkpoint": 30}."""
    mean: float | None
    """Mean of the scored values; None when none was scored."""
    n_scored: int
    """Rows with a value."""
    n_error: int
    """Rows whose value is None (unscored)."""
    ci_low: float | None
    """Lower end of the 95 % interval (None when it cannot be computed)."""
    ci_high: float | None
    """Upper end of the 95 % interval."""

    def as_dict(self) -> dict[str, Any]:
        """A flat dict for tables: the key fields, then the statistics."""
        stats = asdict(self)
        return {**stats.pop("key"), **stats}


@dataclass(frozen=True)
class Aggregate:
    """Everything `aggregate` computes."""

    groups: list[GroupStat]
    """One entry per `by` group."""
    overall: list[GroupStat]
    """Per `overall_by` group (per mode), all rows pooled."""
    macro: list[GroupStat]
    """Per `overall_by` group, the unweighted mean of the per-type means (the paper's avg accuracy)."""


def wilson_interval(successes: float, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval of a proportion.

    Raises:
        ValueError: If n is not positive.
    """
    if n <= 0:
        raise ValueError("wilson_interval needs n > 0")
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def bootstrap_interval(values: Sequence[float], seed: str, value_range: tuple[float, float] = UNIT_RANGE,
                       ) -> tuple[float | None, float | None]:
    """95 % percentile-bootstrap interval of the mean, clipped to `value_range`; (None, None) below two values.

    `seed` names the group (metric and key): the same values and seed always give the same interval.
    """
    if len(values) < 2:
        return None, None
    return _bootstrap(tuple(float(v) for v in values), seed, (float(value_range[0]), float(value_range[1])))


@lru_cache(maxsize=4096)  # a report, a verification and a board aggregate the same groups again
def _bootstrap(values: tuple[float, ...], seed: str, value_range: tuple[float, float]) -> tuple[float, float]:
    rng = np.random.default_rng(_seed(seed))
    array = np.asarray(values, dtype=float)
    means = array[rng.integers(0, len(array), size=(RESAMPLES, len(array)))].mean(axis=1)
    low, high = np.quantile(means, [0.025, 0.975])
    return _clip(float(low), value_range), _clip(float(high), value_range)


def _seed(text: str) -> int:
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big")


def _clip(value: float, value_range: tuple[float, float]) -> float:
    return min(max(value, value_range[0]), value_range[1])


def summarize(key: dict[str, Any], values: Sequence[float | None], binary: bool,
              value_range: tuple[float, float] = UNIT_RANGE, seed: str = "") -> GroupStat:
    """Mean, counts and 95 % interval of one group's values (None = unscored); `seed` names the group for the
    bootstrap (the caller's metric; the key is added)."""
    scored = [float(v) for v in values if v is not None]
    n_error = len(values) - len(scored)
    if not scored:
        return GroupStat(key, None, 0, n_error, None, None)
    mean = sum(scored) / len(scored)
    if binary:
        low, high = wilson_interval(sum(scored), len(scored))
        return GroupStat(key, mean, len(scored), n_error, low, high)
    low, high = bootstrap_interval(scored, f"{seed}|{json.dumps(key, sort_keys=True, default=str)}", value_range)
    return GroupStat(key, mean, len(scored), n_error, low, high)


def _sortable(value: Any) -> tuple:
    return (0, value, "") if isinstance(value, (int, float)) and not isinstance(value, bool) else (1, 0, str(value))


def _group(rows: Sequence[Mapping[str, Any]], keys: Sequence[str], metric: str) -> dict[tuple, list]:
    groups: dict[tuple, list] = {}
    for index, row in enumerate(rows):
        for key in (*keys, metric):
            if key not in row:
                raise ValueError(f"aggregate: row {index} has no {key!r} (keys: {', '.join(map(str, row))})")
        groups.setdefault(tuple(row[k] for k in keys), []).append(row[metric])
    return dict(sorted(groups.items(), key=lambda item: tuple(map(_sortable, item[0]))))


def _macro(key: dict[str, Any], per_type: dict[str, list[float | None]], value_range: tuple[float, float],
           seed: str) -> GroupStat:
    """The unweighted mean of the per-type means, its interval a bootstrap that resamples within each type."""
    scored = {t: [float(v) for v in values if v is not None] for t, values in per_type.items()}
    n_scored = sum(len(v) for v in scored.values())
    n_error = sum(len(values) for values in per_type.values()) - n_scored
    scored = {t: v for t, v in scored.items() if v}
    if not scored:
        return GroupStat(key, None, n_scored, n_error, None, None)
    mean = sum(sum(v) / len(v) for v in scored.values()) / len(scored)
    if n_scored < 2:
        return GroupStat(key, mean, n_scored, n_error, None, None)
    rng = np.random.default_rng(_seed(f"{seed}|macro|{json.dumps(key, sort_keys=True, default=str)}"))
    type_means = [np.asarray(v)[rng.integers(0, len(v), size=(RESAMPLES, len(v)))].mean(axis=1)
                  for _, v in sorted(scored.items())]
    low, high = np.quantile(np.mean(type_means, axis=0), [0.025, 0.975])
    return GroupStat(key, mean, n_scored, n_error, _clip(float(low), value_range), _clip(float(high), value_range))


def aggregate(rows: Iterable[Mapping[str, Any]], metric: str = "value",
              by: Sequence[str] = ("query_type", "mode", "checkpoint"), overall_by: Sequence[str] = ("mode",),
              type_key: str = "query_type", macro_types: Sequence[str] | None | Literal["paper"] = "paper",
              binary: bool | None = None, value_range: tuple[float, float] = UNIT_RANGE) -> Aggregate:
    """Summarize one metric over result rows.

    Args:
        rows: Dicts holding the `by` and `overall_by` keys, `type_key`, and the metric value (a number,
            a bool, or None for an unscored row).
        metric: The key holding the value.
        by: The grouping of `groups`.
        overall_by: The grouping of `overall` and `macro` (per mode).
        type_key: The key naming the question type, for the mean over types.
        macro_types: The types the mean over types covers ("paper": the registry's paper types, the six; None:
            all present).
        binary: Whether the metric is 0/1 (Wilson intervals); None: decided from the values.
        value_range: The metric's range, which bootstrap intervals are clipped to ((-1, 1) for the selective score).

    Returns:
        The per-group, overall and mean-over-types summaries, each sorted by key.

    Raises:
        ValueError: If a row lacks a key.
    """
    rows = list(rows)
    if macro_types == "paper":
        macro_types = paper_codes()
    if binary is None:
        binary = all(row.get(metric) in (None, 0, 1) for row in rows)
    groups = [summarize(dict(zip(by, key, strict=True)), values, binary, value_range, metric)
              for key, values in _group(rows, by, metric).items()]
    overall = [summarize(dict(zip(overall_by, key, strict=True)), values, binary, value_range, metric)
               for key, values in _group(rows, overall_by, metric).items()]
    macro = []
    for key, _ in _group(rows, overall_by, metric).items():
        members = [r for r in rows if tuple(r[k] for k in overall_by) == key
                   and (macro_types is None or r[type_key] in macro_types)]
        per_type = {t[0]: values for t, values in _group(members, (type_key,), metric).items()}
        macro.append(_macro(dict(zip(overall_by, key, strict=True)), per_type, value_range, metric))
    return Aggregate(groups, overall, macro)
