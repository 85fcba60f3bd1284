"""Means with n_scored, n_error and 95 % intervals, by query type × mode × checkpoint, per mode, and over types.

A value of None is an unscored row (an error): it is counted in n_error and left out of the mean, never
read as zero. 0/1 metrics (accuracy, hallucination, trap safety) get a Wilson interval; other metrics
(F1, ROUGE-L, Recall@k, the -1/0/+1 selective score) a normal approximation of the mean, not clipped.
"Mean over types" is the paper's avg accuracy: the unweighted mean of the per-type means, by default
over the paper's six types (ABS apart).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any, Literal

from medmemorybench.questions.spec import paper_codes

Z95 = 1.959963984540054


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


def _standard_error(values: Sequence[float], binary: bool) -> float | None:
    n = len(values)
    mean = sum(values) / n
    if binary:
        return math.sqrt(mean * (1 - mean) / n)
    if n < 2:
        return None
    return math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1) / n)


def summarize(key: dict[str, Any], values: Sequence[float | None], binary: bool) -> GroupStat:
    """Mean, counts and 95 % interval of one group's values (None = unscored)."""
    scored = [float(v) for v in values if v is not None]
    n_error = len(values) - len(scored)
    if not scored:
        return GroupStat(key, None, 0, n_error, None, None)
    mean = sum(scored) / len(scored)
    if binary:
        low, high = wilson_interval(sum(scored), len(scored))
        return GroupStat(key, mean, len(scored), n_error, low, high)
    se = _standard_error(scored, binary=False)
    low, high = (None, None) if se is None else (mean - Z95 * se, mean + Z95 * se)
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


def _variance_of_mean(stat: GroupStat, binary: bool) -> float | None:
    if binary:
        return stat.mean * (1 - stat.mean) / stat.n_scored
    return None if stat.ci_high is None else ((stat.ci_high - stat.mean) / Z95) ** 2


def _macro(key: dict[str, Any], per_type: list[GroupStat], binary: bool) -> GroupStat:
    scored = [g for g in per_type if g.mean is not None]
    n_scored, n_error = sum(g.n_scored for g in per_type), sum(g.n_error for g in per_type)
    if not scored:
        return GroupStat(key, None, n_scored, n_error, None, None)
    mean = sum(g.mean for g in scored) / len(scored)
    variances = [_variance_of_mean(g, binary) for g in scored]
    if any(v is None for v in variances):
        return GroupStat(key, mean, n_scored, n_error, None, None)
    # the type means are independent: Var(mean of T means) = sum of their variances / T^2
    half = Z95 * math.sqrt(sum(variances)) / len(scored)
    low, high = mean - half, mean + half
    if binary:
        low, high = max(0.0, low), min(1.0, high)
    return GroupStat(key, mean, n_scored, n_error, low, high)


def aggregate(rows: Iterable[Mapping[str, Any]], metric: str = "value",
              by: Sequence[str] = ("query_type", "mode", "checkpoint"), overall_by: Sequence[str] = ("mode",),
              type_key: str = "query_type", macro_types: Sequence[str] | None | Literal["paper"] = "paper",
              binary: bool | None = None) -> Aggregate:
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
    groups = [summarize(dict(zip(by, key, strict=True)), values, binary)
              for key, values in _group(rows, by, metric).items()]
    overall = [summarize(dict(zip(overall_by, key, strict=True)), values, binary)
               for key, values in _group(rows, overall_by, metric).items()]
    macro = []
    for key, _ in _group(rows, overall_by, metric).items():
        members = [r for r in rows if tuple(r[k] for k in overall_by) == key
                   and (macro_types is None or r[type_key] in macro_types)]
        per_type = [summarize({type_key: t[0]}, values, binary)
                    for t, values in _group(members, (type_key,), metric).items()]
        macro.append(_macro(dict(zip(overall_by, key, strict=True)), per_type, binary))
    return Aggregate(groups, overall, macro)
