"""Side-by-side tables of runs: accuracy and Recall@k per question type and mode, with n and errors."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from medmemorybench.errors import InputError
from medmemorybench.files import loads_json
from medmemorybench.harness.results import RUN_HEADER, SUMMARY
from medmemorybench.memory.oracle import OracleMemory
from medmemorybench.questions.spec import type_codes

CEILING_MEMORY = OracleMemory.name
"""The memory whose runs are the benchmark's ceiling, a reference and not a system (it is handed each question's gold
evidence): reports label it so and show it apart from the systems, and the board never ranks it among them."""


def load_summary(run_dir: Path) -> dict[str, Any]:
    """A run's summary.json.

    Raises:
        InputError: naming the folder when it holds no summary.
    """
    path = Path(run_dir) / SUMMARY
    if not path.is_file():
        hint = " (the run has not finished: `medmemorybench run ... --resume` completes it)" \
            if (Path(run_dir) / RUN_HEADER).exists() else ""
        raise InputError(f"{run_dir}: no {SUMMARY}{hint}")
    try:
        summary = loads_json(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise InputError(f"{path}: damaged (not JSON); `medmemorybench run ... --resume` in {run_dir} rewrites it "
                         "from the samples") from None
    problem = _summary_problem(summary)
    if problem:
        raise InputError(f"{path}: not a run summary ({problem})")
    return summary


def _summary_problem(summary: object) -> str | None:
    """What the tables and the plot need of a summary that it lacks (None when it has it all)."""
    if not isinstance(summary, dict):
        return "not a JSON object"
    header, tasks = summary.get("header"), summary.get("tasks")
    if not isinstance(header, dict) or not all(isinstance(header.get(k), dict) for k in ("memory", "model")):
        return "no header with memory and model"
    if not isinstance(tasks, dict):
        return "no tasks"
    for name, task in tasks.items():
        if not isinstance(task, dict) or not isinstance(task.get("metrics"), dict) or "mode" not in task:
            return f"task {name!r} has no mode or metrics"
    return None


def backbone_label(header: dict[str, Any]) -> str:
    """The answering model's name from a run header ('SmolLM2-135M-Instruct', 'none'); a local folder's name only."""
    model = header["model"].get("model") or header["model"].get("backbone")
    return Path(str(model)).name


def is_ceiling(summary: dict[str, Any]) -> bool:
    """Whether a run is the ceiling reference (`CEILING_MEMORY`), not a memory system."""
    return summary["header"]["memory"].get("memory") == CEILING_MEMORY


def run_label(summary: dict[str, Any]) -> str:
    """'bm25 / SmolLM2-135M-Instruct' from the header, with the memory options given ('dense (window=4, stride=4)
    / none'), so that two runs that chunk differently never share a label; the ceiling says so ('oracle (ceiling)
    / none')."""
    header = summary["header"]
    shown = [f"{k}={v}" for k, v in header["memory"].items() if k != "memory"]
    if is_ceiling(summary):
        shown.insert(0, "ceiling")
    options = f" ({', '.join(shown)})" if shown else ""
    return f"{header['memory']['memory']}{options} / {backbone_label(header)}"


def _shown(summary: dict[str, Any], name: str, task: dict[str, Any]) -> str:
    """A column's second line: the mode, or for a run on an import its task (`locomo`: not a mode of ours)."""
    return name if summary["header"].get("dataset_source") else task["mode"]


def _cell(stat: dict[str, Any] | None) -> str:
    if not stat:
        return "-"
    if stat.get("mean") is None:
        return f"- ({stat['n_error']} err)" if stat.get("n_error") else "-"
    errors = f", {stat['n_error']} err" if stat.get("n_error") else ""
    return f"{100 * stat['mean']:.1f} (n={stat['n_scored']}{errors})"


def metric_table(summaries: list[dict[str, Any]], metric: str) -> tuple[list[str], list[list[str]]]:
    """Header and rows: one row per type (+ mean over types), one column per run x mode (x task on an import, its
    rows labelled with the source's own category names too)."""
    from medmemorybench.report.benchmarks import type_label  # (it reads run_label from here)

    columns: list[tuple[dict, str, str]] = []
    for summary in summaries:
        for name, task in summary["tasks"].items():
            if metric in task["metrics"]:
                columns.append((task["metrics"][metric], f"{run_label(summary)}\n{_shown(summary, name, task)}", name))
    header = ["type", *(label for _, label, _ in columns)]
    rows = []
    for query_type in type_codes():
        cells = [_cell(next((g for g in m["by_type"] if g["query_type"] == query_type), None)) for m, _, _ in columns]
        if any(c != "-" for c in cells):
            rows.append([type_label(query_type, summaries), *cells])
    rows.append(["mean over types", *(_cell((m.get("mean_over_types") or [None])[0]) for m, _, _ in columns)])
    rows.append(["all questions", *(_cell((m.get("overall") or [None])[0]) for m, _, _ in columns)])
    return header, rows


COST_ROWS = (("accuracy %", None), ("sessions read", "sessions"), ("items stored / patient", "items_per_patient"),
             ("LLM calls / session", "llm_calls"), ("prompt tokens / session", "prompt_tokens"),
             ("completion tokens / session", "completion_tokens"), ("parse failures", "parse_failures"),
             ("embedding calls / session", "embedding_calls"), ("ingest s / session", "ingest_s"),
             ("retrieve s (all)", "retrieve_s"))
"""Rows of `cost_table`: what a memory cost to build and search, beside what it scored."""


def cost_table(summaries: list[dict[str, Any]]) -> tuple[list[str], list[list[str]]]:
    """Header and rows: accuracy (all questions) and the memory's cost, one column per run x mode with costs."""
    from medmemorybench.report.benchmarks import unscored_entry  # (it reads run_label from here)

    columns = [(task, f"{run_label(summary)}\n{_shown(summary, name, task)}") for summary in summaries
               for name, task in summary["tasks"].items() if task.get("memory_cost")]
    header = ["", *(label for _, label in columns)]
    rows = []
    for title, key in COST_ROWS:
        cells = []
        for task, _ in columns:
            cost = task["memory_cost"]
            if key is None and unscored_entry(task):
                cells.append("unscored (no judge)")
            elif key is None:
                cells.append(_cell((task["metrics"].get("correct", {}).get("overall") or [None])[0]))
            elif key in cost["per_session"]:
                cells.append(f"{cost['per_session'][key]:.4g}")
            elif key == "items_per_patient":
                cells.append("-" if cost[key] is None else f"{cost[key]:.4g}")
            else:
                cells.append(f"{cost['totals'][key]:.4g}")
        rows.append([title, *cells])
    return header, rows


MODES = ("efficient", "mixed")
PAPER_COST = (("LLM calls / session", "llm_calls"), ("tokens / session", "tokens"), ("ingest s / session", "ingest_s"))
"""Cost columns beside the paper's table (construction per session, averaged over the modes a run has)."""


def _percent(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


def table_mean(metrics: dict[str, Any], table: str, query_type: str | None = None) -> float | None:
    """The mean of one entry of a metric's summary tables (`overall`, `mean_over_types`, or `by_type` for
    `query_type`); None when absent or unscored."""
    entries = metrics.get(table) or []
    if query_type is not None:
        entries = [g for g in entries if g.get("query_type") == query_type]
    return entries[0].get("mean") if entries else None


def cost_per_session(summary: dict[str, Any]) -> dict[str, float | None]:
    """What building the memory cost per session (`PAPER_COST` keys), averaged over the run's modes."""
    costs = [task["memory_cost"]["per_session"] for task in summary["tasks"].values() if task.get("memory_cost")]
    out: dict[str, float | None] = {}
    for _title, key in PAPER_COST:
        values = [c["prompt_tokens"] + c["completion_tokens"] if key == "tokens" else c[key] for c in costs]
        out[key] = sum(values) / len(values) if values else None
    return out


@dataclass
class PaperRow:
    """One run in the paper's layout, as numbers (percent; None: not run or nothing scored)."""

    label: str
    by_mode: dict[str, dict[str, float | None]]
    """Mode -> question type code (and "mean", the mean over types) -> accuracy %."""
    mean: float | None
    """The mean of the modes' means over types."""
    cost: dict[str, float | None]
    """`cost_per_session`."""


def paper_rows(summaries: list[dict[str, Any]], metric: str = "correct") -> tuple[list[str], list[PaperRow]]:
    """The question types any run has scores for, and one `PaperRow` per run."""
    types = [code for code in type_codes()
             if any(g["query_type"] == code for summary in summaries for task in summary["tasks"].values()
                    for g in task["metrics"].get(metric, {}).get("by_type", []))]
    rows = []
    for summary in summaries:
        by_task = {task["mode"]: task["metrics"][metric] for task in summary["tasks"].values()
                   if metric in task["metrics"]}
        by_mode: dict[str, dict[str, float | None]] = {}
        for mode, metrics in by_task.items():
            cells = {code: table_mean(metrics, "by_type", code) for code in types}
            cells["mean"] = table_mean(metrics, "mean_over_types")
            by_mode[mode] = {key: None if value is None else 100 * value for key, value in cells.items()}
        means = [cells["mean"] for cells in by_mode.values() if cells["mean"] is not None]
        rows.append(PaperRow(run_label(summary), by_mode, sum(means) / len(means) if means else None,
                             cost_per_session(summary)))
    return types, rows


def paper_table(summaries: list[dict[str, Any]], metric: str = "correct") -> tuple[list[str], list[list[str]]]:
    """The paper's main table: a row per run (memory / backbone), a column per type and mode, each mode's mean over
    types and the mean of the modes, then what the memory cost per session."""
    types, rows = paper_rows(summaries, metric)
    header = ["memory / backbone", *(f"{code} {mode[:3]}" for mode in MODES for code in [*types, "mean"]), "mean",
              *(title for title, _ in PAPER_COST)]
    text_rows = []
    for row in rows:
        cells = [_percent(row.by_mode.get(mode, {}).get(code)) for mode in MODES for code in [*types, "mean"]]
        cells.append(_percent(row.mean))
        cells += ["-" if row.cost[key] is None else f"{row.cost[key]:.4g}" for _title, key in PAPER_COST]
        text_rows.append([row.label, *cells])
    keep = [i for i in range(len(header)) if i == 0 or any(row[i] != "-" for row in text_rows)]  # (a mode nobody ran)
    return [header[i] for i in keep], [[row[i] for i in keep] for row in text_rows]
