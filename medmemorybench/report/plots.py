"""The saturation plot: each run's headline measure by checkpoint in both modes, and the efficient-mixed gap per
checkpoint and per question type, every point with its 95 % interval.

A run's headline measure is accuracy when it answered, else Recall@k (a retrieval-only run has no accuracy). The
gap's interval combines the two modes' intervals by MOVER (Zou & Donner 2008; Newcombe's method for Wilson
intervals), which treats the modes as independent samples: conservative, since both ask the same questions.
Saturation would show as a gap that grows with the checkpoint; the titles state what is drawn, not that.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")  # files only, no display
import matplotlib.pyplot as plt  # noqa: E402

from medmemorybench.files import atomic_path  # noqa: E402
from medmemorybench.questions.spec import type_codes  # noqa: E402
from medmemorybench.render.stream import CHECKPOINT_EVERY  # noqa: E402
from medmemorybench.report.tables import run_label  # noqa: E402

MEASURES = {"correct": "accuracy", "recall_at_k": "Recall@k"}
STYLES = {"efficient": "-", "mixed": "--"}
MODES = ("efficient", "mixed")
DODGE = 0.8
"""Checkpoints between two runs' gap points at one checkpoint."""


@dataclass(frozen=True)
class Point:
    """One mean with its interval, in percent."""

    x: Any
    mean: float
    low: float | None
    high: float | None


def headline(summary: dict[str, Any]) -> str:
    """`correct` when any task of the run has answers, else `recall_at_k`."""
    has_answers = any(task["metrics"].get("correct") for task in summary["tasks"].values())
    return "correct" if has_answers else "recall_at_k"


def _points(table: list[dict[str, Any]], key: str) -> dict[Any, Point]:
    def pct(value: float | None) -> float | None:
        return None if value is None else 100 * value

    return {row[key]: Point(row[key], 100 * row["mean"], pct(row["ci_low"]), pct(row["ci_high"]))
            for row in table if row.get("mean") is not None}


def _by_mode(summary: dict[str, Any], metric: str, table: str, key: str) -> dict[str, dict[Any, Point]]:
    """mode -> x -> point, from the run's tasks that ask every type (the per-type tasks are left out)."""
    out: dict[str, dict[Any, Point]] = {}
    for task in summary["tasks"].values():
        rows = task["metrics"].get(metric, {}).get(table, [])
        if rows and task["mode"] not in out:
            out[task["mode"]] = _points(rows, key)
    return out


def gap(efficient: Point, mixed: Point) -> Point:
    """efficient - mixed, its interval by MOVER from the two intervals (None when either has none)."""
    diff = efficient.mean - mixed.mean
    if None in (efficient.low, efficient.high, mixed.low, mixed.high):
        return Point(efficient.x, diff, None, None)
    low = diff - math.sqrt((efficient.mean - efficient.low) ** 2 + (mixed.high - mixed.mean) ** 2)
    high = diff + math.sqrt((efficient.high - efficient.mean) ** 2 + (mixed.mean - mixed.low) ** 2)
    return Point(efficient.x, diff, max(low, -100.0), min(high, 100.0))


def _gaps(summary: dict[str, Any], metric: str, table: str, key: str) -> list[Point]:
    modes = _by_mode(summary, metric, table, key)
    if set(MODES) - set(modes):
        return []
    return [gap(modes["efficient"][x], modes["mixed"][x]) for x in modes["efficient"] if x in modes["mixed"]]


def _neighbours(points: list[Point]) -> list[list[Point]]:
    """Points (sorted by checkpoint) split where checkpoints were skipped: a line joins only neighbouring checkpoints,
    so a run asked at checkpoints 10 and 100 shows two points, not a trend between them it never measured."""
    runs: list[list[Point]] = []
    for point in points:
        if runs and point.x - runs[-1][-1].x == CHECKPOINT_EVERY:
            runs[-1].append(point)
        else:
            runs.append([point])
    return runs


def _fit_intervals(axis: Any, points: list[Point]) -> None:
    """Y limits holding every point and the whole of its interval (with a margin), never cutting a bar off."""
    ends = [v for p in points for v in (p.mean, p.low, p.high) if v is not None]
    if ends:
        low, high = min(ends + [0.0]), max(ends + [0.0])
        margin = max(2.0, 0.08 * (high - low))
        axis.set_ylim(low - margin, high + margin)


def _errorbars(points: list[Point]) -> list[list[float]]:
    # (clamped at 0: an interval ending at the mean, 0 % of 12, can differ from it by a rounding error)
    return [[max(0.0, p.mean - p.low) if p.low is not None else 0.0 for p in points],
            [max(0.0, p.high - p.mean) if p.high is not None else 0.0 for p in points]]


def saturation_plot(summaries: list[dict[str, Any]], out: Path) -> Path:
    """Write `saturation_figure` as PNG."""
    fig = saturation_figure(summaries)
    try:
        with atomic_path(out) as tmp:  # (a kill or a full disk never leaves half a PNG)
            fig.savefig(tmp, dpi=110, format="png")
    finally:
        plt.close(fig)
    return out


def saturation_figure(summaries: list[dict[str, Any]]) -> Any:
    """Accuracy (runs that answered) and Recall@k by checkpoint, each panel only when some run has it, then the gap
    by checkpoint and by type."""
    measures = [m for m in MEASURES if any(_by_mode(s, m, "by_checkpoint", "checkpoint") for s in summaries)]
    fig = plt.figure(figsize=(12, 8.5), constrained_layout=True)
    grid = fig.add_gridspec(2, 2)
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    top = [grid[0, :]] if len(measures) <= 1 else [grid[0, 0], grid[0, 1]]  # (one measure: the whole width)
    by_checkpoint = [fig.add_subplot(cell) for cell in top[:max(len(measures), 1)]] + [fig.add_subplot(grid[1, 0])]
    for axis, metric in zip(by_checkpoint, measures or ["recall_at_k"], strict=False):
        _draw_by_checkpoint(axis, summaries, metric, colors)
    _draw_gap_by_checkpoint(by_checkpoint[-1], summaries, colors)
    _draw_gap_by_type(fig.add_subplot(grid[1, 1]), summaries, colors)
    checkpoints = sorted({x for s in summaries for m in MEASURES
                          for points in _by_mode(s, m, "by_checkpoint", "checkpoint").values() for x in points})
    for axis in by_checkpoint:  # (the same checkpoints on every axis, even for a run asked at one of them)
        if checkpoints:
            axis.set_xticks(checkpoints)
            axis.set_xlim(checkpoints[0] - 5, checkpoints[-1] + 5)
    return fig


def _label(summary: dict[str, Any], metric: str) -> str:
    return f"{run_label(summary)}: {MEASURES[metric]}"


def _draw_by_checkpoint(axis: Any, summaries: list[dict[str, Any]], metric: str, colors: list[str]) -> None:
    retrieval_only = any(headline(s) == "recall_at_k" for s in summaries)
    for index, summary in enumerate(summaries):
        if metric == "recall_at_k" and retrieval_only and headline(summary) != metric:
            continue  # (a run that answered is on the accuracy panel; its recall is in the tables)
        for mode, points in _by_mode(summary, metric, "by_checkpoint", "checkpoint").items():
            color = colors[index % len(colors)]
            for part, series in enumerate(_neighbours(sorted(points.values(), key=lambda p: p.x))):
                axis.plot([p.x for p in series], [p.mean for p in series], STYLES.get(mode, "-"), marker="o",
                          color=color, label=f"{run_label(summary)} [{mode}]" if part == 0 else None)
                if len(series) > 1:
                    axis.fill_between([p.x for p in series], [p.low if p.low is not None else p.mean for p in series],
                                      [p.high if p.high is not None else p.mean for p in series], color=color,
                                      alpha=0.1)
                else:  # (a band needs two neighbouring points)
                    axis.errorbar([p.x for p in series], [p.mean for p in series], yerr=_errorbars(series),
                                  capsize=3, color=color, linestyle="none")
    axis.set_title(f"{MEASURES[metric]} by checkpoint (95 % intervals)")
    axis.set_xlabel("checkpoint (regular sessions read)")
    axis.set_ylabel(f"{MEASURES[metric]} (%)")
    axis.set_ylim(0, 100)
    axis.grid(alpha=0.3)
    _legend_or_note(axis, bool(axis.lines), "no run has this measure")


def _draw_gap_by_checkpoint(axis: Any, summaries: list[dict[str, Any]], colors: list[str]) -> None:
    drawn: list[Point] = []
    for index, summary in enumerate(summaries):
        metric = headline(summary)
        points = sorted(_gaps(summary, metric, "by_checkpoint", "checkpoint"), key=lambda p: p.x)
        shift = (index - (len(summaries) - 1) / 2) * DODGE  # (runs side by side, their bars apart)
        for part, series in enumerate(_neighbours(points)):
            axis.errorbar([p.x + shift for p in series], [p.mean for p in series], yerr=_errorbars(series),
                          marker="o", capsize=3, color=colors[index % len(colors)],
                          label=_label(summary, metric) if part == 0 else None)
        drawn += points
    axis.axhline(0, color="grey", linewidth=0.8)
    _fit_intervals(axis, drawn)
    # (what the gap means, saturation where it grows, is the reader's to judge: the title states no conclusion)
    axis.set_title("efficient - mixed by checkpoint (95 % intervals)")
    axis.set_xlabel("checkpoint (regular sessions read)")
    axis.set_ylabel("efficient - mixed (percentage points)")
    axis.grid(alpha=0.3)
    _legend_or_note(axis, bool(drawn))


def _draw_gap_by_type(axis: Any, summaries: list[dict[str, Any]], colors: list[str]) -> None:
    runs = [(index, s, _gaps(s, headline(s), "by_type", "query_type")) for index, s in enumerate(summaries)]
    runs = [(index, s, points) for index, s, points in runs if points]
    order = [code for code in type_codes() if any(p.x == code for _, _, points in runs for p in points)]
    width = 0.8 / max(len(runs), 1)
    for slot, (index, summary, points) in enumerate(runs):
        by_type = {p.x: p for p in points}
        series = [by_type[code] for code in order if code in by_type]
        xs = [order.index(p.x) + (slot - (len(runs) - 1) / 2) * width for p in series]
        axis.bar(xs, [p.mean for p in series], width=width, yerr=_errorbars(series), capsize=3,
                 color=colors[index % len(colors)], label=_label(summary, headline(summary)))
    axis.axhline(0, color="grey", linewidth=0.8)
    _fit_intervals(axis, [p for _, _, points in runs for p in points])
    axis.set_xticks(range(len(order)), order)
    axis.set_title("efficient - mixed by question type, all checkpoints (95 % intervals)")
    axis.set_xlabel("question type")
    axis.set_ylabel("efficient - mixed (percentage points)")
    axis.grid(alpha=0.3, axis="y")
    _legend_or_note(axis, bool(runs))


def _legend_or_note(axis: Any, drawn: bool, note: str = "no run has both modes: no gap to show") -> None:
    if drawn:
        axis.legend(fontsize=7)
    else:
        axis.text(0.5, 0.5, note, ha="center", va="center", transform=axis.transAxes)
