"""A plan before the bill (`sweep --plan`, `run --plan`): per cell, the sessions its memory ingests, the questions
it answers, the LLM calls and tokens they take at each memory's measured per-session cost (`costs.yaml`), and the
wall time on the chosen executor. Nothing runs; only the dataset's id, session-count and question-type columns
are read.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

import pyarrow.compute as pc
import pyarrow.parquet as pq
import yaml

from medmemorybench.harness.runner import Runner
from medmemorybench.harness.stream import checkpoint_of, split_is_asked
from medmemorybench.questions.spec import judged_codes
from medmemorybench.scoring.source import is_judged_by_source
from medmemorybench.sweep.grid import Cell
from medmemorybench.sweep.shards import cell_patients


@cache
def measured_costs() -> dict[str, Any]:
    """The packaged `costs.yaml`."""
    return yaml.safe_load(resources.files("medmemorybench.sweep").joinpath("costs.yaml").read_text(encoding="utf-8"))


@dataclass(frozen=True)
class CellPlan:
    """What one cell will cost."""

    name: str
    patients: int
    sessions: int
    questions: int
    memory_calls: float
    answer_calls: int
    judge_calls: int
    prompt_tokens: float
    completion_tokens: float
    seconds: float
    """Machine seconds of work (CPU seconds on the reference machine; `measured` says whether the memory's cost
    was measured at all)."""
    measured: bool


def plan_cell(cell: Cell, runner: Runner) -> CellPlan:
    """The cell's counts from its dataset, and its cost from `costs.yaml` (a memory not measured costs nothing
    there, and says so through `measured`)."""
    task = runner.tasks[0]
    config = cell.config
    splits = runner.splits[task.task]
    asked = [s for s in splits if split_is_asked(task, s, config.checkpoints)]
    last = max((checkpoint_of(s) for s in asked), default=0)
    # (LongMemEval's judge grades every answer of its tasks; ours the types it judges)
    wanted = set(task.types())
    judged = wanted if is_judged_by_source(task.metadata.scoring) else set(judged_codes())
    patients: set[str] = set()
    sessions = questions = judged_questions = 0
    chosen = set(cell_patients(runner, config.limit))  # (as the run takes them)
    for split in (s for s in splits if checkpoint_of(s) <= last):
        table = pq.read_table(runner.folder / task.dataset_name / f"{split}.parquet",
                              columns=["persona_id", "sessions", "questions"])
        ids = table.column("persona_id").to_pylist()
        keep = [i for i, pid in enumerate(ids) if pid in chosen]
        patients.update(ids[i] for i in keep)
        counts = pc.list_value_length(table.column("sessions")).to_pylist()
        sessions += sum(counts[i] or 0 for i in keep)
        if split in asked:
            rows = table.column("questions").to_pylist()
            for i in keep:
                types = [q["query_type"] for q in rows[i] if q["query_type"] in wanted]
                questions += len(types)
                judged_questions += sum(1 for t in types if t in judged)
    costs = measured_costs()
    per_session = costs["memories"].get(config.memory)
    memory = per_session or {"llm_calls": 0, "prompt_tokens": 0, "completion_tokens": 0, "ingest_s": 0.0}
    answers = questions if (config.model != "none" or runner.answer_mode == "native") else 0
    judges = judged_questions if config.judge else 0
    answer = costs["answer"]
    calls = answers + judges
    seconds = sessions * memory["ingest_s"] + questions * costs["retrieve_s"] + calls * answer["seconds"]
    return CellPlan(cell.name, len(patients), sessions, questions, sessions * memory["llm_calls"], answers, judges,
                    sessions * memory["prompt_tokens"] + calls * answer["prompt_tokens"],
                    sessions * memory["completion_tokens"] + calls * answer["completion_tokens"], seconds,
                    per_session is not None)


def plan_cells(cells: list[Cell]) -> list[CellPlan]:
    """`plan_cell` of every cell, each cell's options checked first (as a run would)."""
    return [plan_cell(cell, Runner(cell.config)) for cell in cells]
