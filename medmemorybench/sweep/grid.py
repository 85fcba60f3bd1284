"""A sweep's grid: memories × models × tasks, each cell one ordinary run (a `RunConfig`) with its own folder.

A grid comes from flags (`--memories bm25,dense --models none --tasks medmemorybench_efficient`, one set of
`--model_args` for every model) or from a YAML file where each memory and model may carry its own args:

    tasks: [medmemorybench_efficient, medmemorybench_mixed]
    memories:
      - bm25
      - {memory: mem0, memory_model: openai, memory_model_args: {base_url: "http://gpu1:8000/v1"}}
    models:
      - none
      - {model: openai, label: qwen7b, model_args: {model: Qwen2.5-7B-Instruct, base_url: "http://gpu1:8000/v1"}}
    limit: 20            # any run option shared by every cell (RUN_OPTIONS)

A cell's folder is `<memory>__<model>__<task>` under the sweep's output folder (labels: the `label` key, else the
memory or model name), so `report`, `submit` and `run --resume` read it as any run folder.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

import yaml

from medmemorybench.errors import InputError
from medmemorybench.files import load_yaml
from medmemorybench.harness.config import RunConfig
from medmemorybench.harness.tasks import resolve_tasks

MEMORY_KEYS = ("memory", "memory_args", "memory_model", "memory_model_args", "answer_mode", "label")
MODEL_KEYS = ("model", "model_args", "label")
RUN_OPTIONS = ("dataset_path", "limit", "checkpoints", "judge", "judge_args", "use_cache", "cache_path",
               "max_error_rate", "embedder", "memory_concurrency")
"""Run options a grid file may set once for every cell."""
MAX_CELLS = 10_000
"""More cells than this is a mistake in the grid (the paper's full grid is 13 × a few models × 4 tasks)."""
_LABEL = re.compile(r"[^A-Za-z0-9._-]+")


@dataclass(frozen=True)
class Cell:
    """One run of the grid."""

    name: str
    """The folder name under the sweep's output folder: `<memory>__<model>__<task>`."""
    config: RunConfig

    @property
    def task(self) -> str:
        return self.config.tasks[0]


def _label(text: str, where: str) -> str:
    label = _LABEL.sub("-", text).strip("-.")[:60]
    if not label:
        raise InputError(f"{where}: label {text!r} has no letter or digit to name a folder with")
    return label


def _entry(value: Any, keys: tuple[str, ...], name_key: str, where: str) -> dict[str, Any]:
    """A memory or model entry: a bare name, or a mapping of `keys` naming it under `name_key`."""
    if isinstance(value, str) and value.strip():
        return {name_key: value.strip()}
    if not isinstance(value, dict) or not isinstance(value.get(name_key), str) or not value[name_key].strip():
        raise InputError(f"{where}: {value!r} is neither a name nor a mapping with a {name_key!r} name")
    unknown = sorted(set(value) - set(keys))
    if unknown:
        raise InputError(f"{where}: unknown key {unknown[0]!r}; one of {', '.join(keys)}")
    for key in keys:
        if key.endswith("_args") and not isinstance(value.get(key, {}), dict):
            raise InputError(f"{where}: {key} must be a mapping of options, not {value[key]!r}")
    return dict(value)


def _model_label(entry: dict[str, Any]) -> str:
    """`label`, else the model name and the served or loaded model it names (`openai-Qwen2.5-7B-Instruct`)."""
    if "label" in entry:
        return str(entry["label"])
    args = entry.get("model_args") or {}
    named = args.get("model") or args.get("pretrained")
    return f"{entry['model']}-{Path(str(named)).name}" if named else entry["model"]


def make_cells(memories: list[Any], models: list[Any], tasks: list[str], base: RunConfig,
               output_path: Path) -> list[Cell]:
    """Every (memory, model, task) cell, in that nesting order, each task name resolved (a group expands to its
    tasks); `base` holds the options every cell shares."""
    if not memories or not models or not tasks:
        raise InputError("--memories, --models and --tasks each need at least one entry")
    task_names = [t.task for t in resolve_tasks(tasks)]
    cells: list[Cell] = []
    seen: dict[str, int] = {}
    for m_index, raw_memory in enumerate(memories):
        memory = _entry(raw_memory, MEMORY_KEYS, "memory", f"memories[{m_index}]")
        for k_index, raw_model in enumerate(models):
            model = _entry(raw_model, MODEL_KEYS, "model", f"models[{k_index}]")
            for task in task_names:
                memory_label = _label(str(memory.get("label", memory["memory"])), f"memories[{m_index}]")
                name = f"{memory_label}__{_label(_model_label(model), f'models[{k_index}]')}__{task}"
                if name in seen:
                    raise InputError(f"two cells would share the folder {name!r}: give one of them a `label` in the "
                                     "grid file")
                seen[name] = len(cells)
                config = replace(base, tasks=[task], output_path=output_path / name, model=model["model"],
                                 model_args=dict(model.get("model_args") or base.model_args),
                                 memory=memory["memory"], memory_args=dict(memory.get("memory_args") or {}),
                                 memory_model=memory.get("memory_model", base.memory_model),
                                 memory_model_args=dict(memory.get("memory_model_args") or base.memory_model_args),
                                 answer_mode=memory.get("answer_mode", base.answer_mode))
                cells.append(Cell(name, config))
                if len(cells) > MAX_CELLS:
                    raise InputError(f"the grid has more than {MAX_CELLS:,} cells; split it into several sweeps")
    return cells


def read_grid(path: Path) -> dict[str, Any]:
    """A grid file: `memories`, `models`, `tasks` and shared run options (`RUN_OPTIONS`), checked."""
    try:
        data = load_yaml(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise InputError(f"--grid: cannot read {path} ({exc.strerror or exc})") from None
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        raise InputError(f"--grid: {path} is not YAML ({str(exc).splitlines()[0]})") from None
    if not isinstance(data, dict):
        raise InputError(f"--grid: {path} must be a mapping with memories, models and tasks")
    allowed = {"memories", "models", "tasks", *RUN_OPTIONS}
    unknown = sorted(set(data) - allowed)
    if unknown:
        raise InputError(f"--grid: {path}: unknown key {unknown[0]!r}; one of {', '.join(sorted(allowed))}")
    for key in ("memories", "models", "tasks"):
        value = data.get(key)
        if isinstance(value, str):
            data[key] = [value]
        elif not isinstance(value, list) or not value:
            raise InputError(f"--grid: {path}: {key} must be a non-empty list")
    if not all(isinstance(t, str) for t in data["tasks"]):
        raise InputError(f"--grid: {path}: tasks must be task, group or tag names")
    return data


def apply_run_options(base: RunConfig, options: dict[str, Any], where: str) -> RunConfig:
    """`base` with the grid file's shared run options, each checked for its type."""
    types = {f.name: f.type for f in fields(RunConfig)}
    updates: dict[str, Any] = {}
    for key in RUN_OPTIONS:
        if key not in options:
            continue
        value = options[key]
        expected = str(types[key])
        if key.endswith("_args") and not isinstance(value, dict):
            raise InputError(f"{where}: {key} must be a mapping of options")
        if key == "checkpoints" and value is not None and (
                not isinstance(value, list) or not all(isinstance(v, int) and not isinstance(v, bool) for v in value)):
            raise InputError(f"{where}: checkpoints must be a list of numbers, e.g. [10, 50]")
        if expected.startswith("int") and value is not None and (isinstance(value, bool) or not isinstance(value, int)):
            raise InputError(f"{where}: {key} must be a whole number, not {value!r}")
        if key == "max_error_rate" and (isinstance(value, bool) or not isinstance(value, int | float)):
            raise InputError(f"{where}: max_error_rate must be a number between 0 and 1")
        if key == "use_cache" and not isinstance(value, bool):
            raise InputError(f"{where}: use_cache must be true or false")
        if key in ("dataset_path", "judge", "embedder") and value is not None and not isinstance(value, str):
            raise InputError(f"{where}: {key} must be a string")
        updates[key] = Path(value) if key == "cache_path" and value is not None else value
    return replace(base, **updates)


def task_cells(config: RunConfig) -> list[Cell]:
    """A one-process run seen as cells, one per task it resolves to (for `run --plan`)."""
    return [Cell(task.task, replace(config, tasks=[task.task])) for task in resolve_tasks(config.tasks)]
