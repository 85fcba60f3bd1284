"""Runs on MedMemoryBench and on imports of other benchmarks (LoCoMo, LongMemEval) side by side.

A run's benchmark is its header's `dataset_source` (written for an import; absent for our builds). The
cross-benchmark table has a row per memory system (memory / backbone) and a column per benchmark and task: the
task's accuracy as its benchmark defines it (MedMemoryBench: the mean over the paper's six types; LoCoMo: the mean
token F1 over all questions, its "overall"; LongMemEval: the judge's accuracy over all questions), and a second
table of Recall@k. A LongMemEval task run without a judge says "unscored (no judge)", never 0.
"""

from __future__ import annotations

from typing import Any

from medmemorybench.importers.locomo import CATEGORIES
from medmemorybench.importers.longmemeval import QUESTION_TYPES
from medmemorybench.report.tables import run_label

OURS = "MedMemoryBench"


def _source_type_names() -> dict[str, dict[str, str]]:
    """Per source, our type code -> the source's own category names for it."""
    locomo = {code: f"cat {n} {name.replace('_', '-')}" for n, (name, code) in CATEGORIES.items()}
    longmemeval: dict[str, list[str]] = {"ABS": ["abstention (_abs)"]}
    for name, code in QUESTION_TYPES.items():
        longmemeval.setdefault(code, []).append(name)
    return {"locomo": locomo, "longmemeval": {code: " + ".join(names) for code, names in longmemeval.items()}}


SOURCE_TYPE_NAMES = _source_type_names()
"""How a source names what our type holds on its import: LoCoMo's categories map 1:1 (EEM is category 4
single-hop), LongMemEval's question types several to one (EEM is single-session-user + single-session-assistant)."""


def source_of(summary: dict[str, Any]) -> dict[str, Any] | None:
    """The imported benchmark a run ran on (its header's `dataset_source`), or None for MedMemoryBench."""
    source = summary["header"].get("dataset_source")
    return source if isinstance(source, dict) else None


def benchmark_of(summary: dict[str, Any]) -> str:
    """'MedMemoryBench', 'LoCoMo', 'LongMemEval s', ... (the source's title and, for LongMemEval, its file)."""
    source = source_of(summary)
    if source is None:
        return OURS
    title = str(source.get("title") or source.get("name"))
    if source.get("name") == "longmemeval" and source.get("variant"):
        title = f"{title} {source['variant']}"
    # (a file that is not the published one, such as a test fixture, never shares a column with it)
    return f"{title} ({source['version']})" if source.get("version") == "unpublished copy" else title


def type_label(code: str, summaries: list[dict[str, Any]]) -> str:
    """A report row's label: our type code, with the source's own names for it where a run is on an import
    ('EEM · LoCoMo cat 4 single-hop')."""
    names = []
    for name in dict.fromkeys(str((source_of(s) or {}).get("name")) for s in summaries if source_of(s)):
        if code in SOURCE_TYPE_NAMES.get(name, {}):
            title = "LoCoMo" if name == "locomo" else "LongMemEval"
            names.append(f"{title} {SOURCE_TYPE_NAMES[name][code]}")
    return " · ".join([code, *names])


def unscored_entry(task: dict[str, Any]) -> dict[str, Any] | None:
    """A task's `unscored.correct` entry (n and reason), or None."""
    unscored = task.get("unscored")
    entry = unscored.get("correct") if isinstance(unscored, dict) else None
    return entry if isinstance(entry, dict) else None


def _value(summary: dict[str, Any], task: dict[str, Any], metric: str) -> str:
    if metric == "correct" and unscored_entry(task):
        return "unscored (no judge)"
    metrics = task["metrics"].get(metric)
    table = "mean_over_types" if metric == "correct" and source_of(summary) is None else "overall"
    entries = metrics.get(table) if isinstance(metrics, dict) else None
    if not isinstance(entries, list) or not entries or not isinstance(entries[0], dict) \
            or not isinstance(entries[0].get("mean"), int | float):
        return "-"
    stat = entries[0]
    errors = f", {stat['n_error']} err" if stat.get("n_error") else ""
    return f"{100 * stat['mean']:.1f} (n={stat['n_scored']}{errors})"


def cross_benchmark_table(summaries: list[dict[str, Any]],
                          metric: str = "correct") -> tuple[list[str], list[list[str]]]:
    """Header and rows: one row per memory / backbone, one column per benchmark x task (MedMemoryBench's efficient
    and mixed first). Empty (a header of one) unless the runs span MedMemoryBench and an import, or two imports."""
    if len({benchmark_of(summary) for summary in summaries}) < 2:
        return [""], []
    columns: dict[str, None] = {}
    cells: dict[str, dict[str, str]] = {}
    for summary in summaries:
        bench = benchmark_of(summary)
        for name, task in summary["tasks"].items():
            column = f"{bench}\n{task['mode'] if bench == OURS else name}"
            columns[column] = None
            cells.setdefault(run_label(summary), {})[column] = _value(summary, task, metric)
    ordered = sorted(columns, key=lambda c: (not c.startswith(OURS + "\n"), c))
    header = ["memory / backbone", *ordered]
    return header, [[label, *(row.get(c, "-") for c in ordered)] for label, row in cells.items()]


def unscored_notes(summaries: list[dict[str, Any]]) -> list[str]:
    """One line per task whose `correct` has no value by design (a LongMemEval task run without --judge)."""
    return [f"{run_label(summary)} {name}: accuracy unscored for {entry.get('n')} answers ({entry.get('reason')})"
            for summary in summaries for name, task in summary["tasks"].items() if (entry := unscored_entry(task))]


RULE_BOUNDED_TYPES = ("MCD",)
"""Types whose rule-scored accuracy is an upper bound: their rubric checks that a chain's steps are told and cannot see
one wrong fact added to a full telling (docs/scoring.md, "How far to trust an MCD score from rules")."""


def rule_bound_notes(summaries: list[dict[str, Any]]) -> list[str]:
    """One line per run scored by rules alone (no judge) with accuracy for a type of `RULE_BOUNDED_TYPES`."""
    notes = []
    for summary in summaries:
        if summary["header"].get("judge") or source_of(summary) is not None:
            continue
        scored = sorted({g["query_type"] for task in summary["tasks"].values()
                         for g in task["metrics"].get("correct", {}).get("by_type", [])
                         if g.get("query_type") in RULE_BOUNDED_TYPES and g.get("mean") is not None})
        if scored:
            notes.append(f"{run_label(summary)}: {', '.join(scored)} accuracy scored by rules (no --judge) is an upper "
                         "bound: the rubric checks the chain's steps are told and cannot see a wrong fact added "
                         "(docs/scoring.md); run with --judge for a score to compare")
    return notes

