"""Task YAML that lm-evaluation-harness runs too: loading, `include:` resolution, validation, and group expansion.

Top-level keys are lm-eval's own (`task`, `tag`, `class`, `dataset_path`, `dataset_name`, `test_split`,
`output_type`, `doc_to_text`, `generation_kwargs`, `metric_list`, `metadata`); what only MedMemoryBench reads sits
under `metadata` (`TaskMetadata`), where lm-eval keeps free keys. `class: !function ...` names the lm-eval task
class (`integrations/lm_eval_task.py`); here it is recorded, not imported. Errors name the file and the key path
and suggest near matches, e.g.
`tasks/medmemorybench_mixed.yaml: metric_list[2].metric: unknown metric 'rougel'; did you mean 'rouge_l'?`
"""

from __future__ import annotations

import difflib
import re
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from medmemorybench.errors import MedMemoryBenchError
from medmemorybench.files import load_yaml, safe_yaml_loader
from medmemorybench.questions.spec import type_codes
from medmemorybench.resources import prompts_dir, tasks_dir

METRICS = ("correct", "selective", "recall_at_k", "mrr", "token_f1", "rouge_l", "hallucinated", "trap_safe",
           "trap_abstained", "abstained", "mq_partial", "exact_match", "key_fact_rubric")
"""Metrics a task may list; each sample line carries them (None when not applicable)."""
SPLIT_PATTERN = re.compile(r"^checkpoint_\d+$")


class TaskConfigError(MedMemoryBenchError):
    """A task YAML file is invalid; the message names the file and key."""


class Metric(BaseModel):
    """One entry of `metric_list`."""

    model_config = ConfigDict(extra="forbid")
    metric: str
    aggregation: Literal["mean"] = "mean"
    higher_is_better: bool = True


class GenerationKwargs(BaseModel):
    """How the backbone generates answers, in lm-eval's words (`until`, `max_gen_toks`, `do_sample`)."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)
    max_tokens: int = Field(default=128, gt=0, alias="max_gen_toks")
    temperature: float = Field(default=0.0, ge=0)
    stop: list[str] = Field(default_factory=list, alias="until")
    do_sample: bool = False
    """lm-eval's switch for sampling; must agree with `temperature` (sampling exactly when it is above 0)."""

    def lm_eval_kwargs(self) -> dict[str, Any]:
        """The mapping lm-eval's models take."""
        return {"until": list(self.stop), "max_gen_toks": self.max_tokens, "temperature": self.temperature,
                "do_sample": self.do_sample}


class TaskMetadata(BaseModel):
    """`metadata`: the task's version, and everything only MedMemoryBench reads (lm-eval keeps it as free keys)."""

    model_config = ConfigDict(extra="forbid")
    version: float | int | str
    """Recorded with every result; bump it whenever scores could change."""
    description: str = ""
    query_types: Literal["all"] | list[str] = "all"
    system_prompt: str = "qa/system.jinja"
    retrieval_k: int = Field(default=5, gt=0)
    judge_prompts: str = "judge"
    memory: str = "bm25"
    """lm-eval only: the memory the lm-eval task streams into (one that needs no LLM to read)."""
    memory_args: dict[str, Any] = Field(default_factory=dict)
    """lm-eval only: its options."""
    patients: int | None = Field(default=None, gt=0)
    """lm-eval only: the first N patients (our `--limit`); None: all."""
    checkpoints: list[int] | None = None
    """lm-eval only: ask at these checkpoints only (our `--checkpoints`)."""
    by_type: list[str] = Field(default_factory=lambda: ["correct", "recall_at_k"])
    """lm-eval only: metrics also reported per question type (`correct_EEM`, ...)."""
    scoring: Literal["medmemorybench", "locomo", "longmemeval"] = "medmemorybench"
    """What `correct` is: our type scorers (or `--judge`'s rubric), LoCoMo's token F1 per category, or LongMemEval's
    judge with its own prompts (unscored without `--judge`). A source's scoring runs on an import of that source
    only (`stats.source.name` of the dataset's metadata)."""
    source_variant: str | None = None
    """With a source's scoring: the import variant the task is for (LongMemEval: `s`, `m`, `oracle`); None: any."""


class TaskConfig(BaseModel):
    """A runnable task."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)
    task: str
    tag: list[str] = Field(default_factory=list)
    task_class: str | None = Field(default=None, alias="class")
    """lm-eval's `class:` (a `!function` reference): the task class lm-eval builds; not used here."""
    dataset_path: str = "medmemorybench"
    dataset_name: Literal["efficient", "mixed", "efficient_zh", "mixed_zh"]
    """The config streamed: a mode, in English or (`_zh`) Chinese."""
    test_split: Literal["all"] | list[str] = "all"
    output_type: Literal["generate_until"] = "generate_until"
    doc_to_text: str
    generation_kwargs: GenerationKwargs = Field(default_factory=GenerationKwargs)
    metric_list: list[Metric]
    metadata: TaskMetadata
    source_file: str = ""

    @property
    def version(self) -> str:
        """`metadata.version` (results record it; bump it whenever scores could change)."""
        return str(self.metadata.version)

    @property
    def system_prompt(self) -> str:
        """The system message's template (relative to prompts/)."""
        return self.metadata.system_prompt

    @property
    def retrieval_k(self) -> int:
        """Items retrieved per question, and the k of Recall@k."""
        return self.metadata.retrieval_k

    @property
    def mode(self) -> str:
        """`efficient` or `mixed`, whatever the language (results are grouped by it)."""
        return self.dataset_name.partition("_")[0]

    @property
    def language(self) -> str:
        """The language of the config streamed (`en`, `zh`)."""
        return self.dataset_name.partition("_")[2] or "en"

    def template_for(self, query_type: str) -> str:
        """The prompt template file (relative to prompts/) for a query type."""
        return self.doc_to_text.replace("{query_type}", query_type.lower())

    def types(self) -> list[str]:
        """The query types this task asks."""
        query_types = self.metadata.query_types
        return list(type_codes()) if query_types == "all" else list(query_types)


class GroupConfig(BaseModel):
    """A group of tasks and how their scores aggregate."""

    model_config = ConfigDict(extra="forbid")
    group: str
    task: list[str] = Field(min_length=1)
    aggregate_metric_list: list[dict[str, Any]] = Field(default_factory=list)
    metadata: dict[str, Any] = Field(default_factory=dict)
    source_file: str = ""


class _Loader(safe_yaml_loader()):  # type: ignore[misc]
    """YAML's safe loader, reading lm-eval's `!function module.name` tag as its text (never importing it); libyaml's
    where PyYAML has it (a run resolves its tasks several times; pure-Python parsing was most of that)."""


_Loader.add_constructor("!function", lambda loader, node: loader.construct_scalar(node))


def _read(path: Path, seen: tuple[Path, ...] = ()) -> dict[str, Any]:
    """A YAML mapping with its `include:` chain merged in (the including file wins)."""
    if path in seen:
        raise TaskConfigError(f"{path}: include: cycle through {' -> '.join(p.name for p in seen)}")
    try:
        raw = load_yaml(path.read_text(encoding="utf-8"), _Loader)
    except FileNotFoundError:
        raise TaskConfigError(f"{seen[-1] if seen else path}: include: file '{path.name}' does not exist") from None
    except yaml.YAMLError as exc:
        raise TaskConfigError(f"{path}: not valid YAML: {exc}".replace("\n", " ")) from None
    if not isinstance(raw, dict):
        raise TaskConfigError(f"{path}: expected a mapping of keys")
    include = raw.pop("include", None)
    if include is None:
        return raw
    base = _read(path.parent / str(include), (*seen, path))
    merged = {**base, **raw}
    if isinstance(base.get("metadata"), dict) and isinstance(raw.get("metadata"), dict):
        merged["metadata"] = {**base["metadata"], **raw["metadata"]}
    return merged


def _near(name: str, options: list[str]) -> str:
    match = difflib.get_close_matches(name, options, n=1)
    return f"; did you mean '{match[0]}'?" if match else ""


def _check(config: TaskConfig, path: Path, prompts: Path) -> None:
    for index, metric in enumerate(config.metric_list):
        if metric.metric not in METRICS:
            raise TaskConfigError(f"{path}: metric_list[{index}].metric: unknown metric '{metric.metric}'"
                                  f"{_near(metric.metric, list(METRICS))} Known: {', '.join(METRICS)}")
    if config.test_split != "all":
        for index, split in enumerate(config.test_split):
            if not SPLIT_PATTERN.match(split):
                raise TaskConfigError(f"{path}: test_split[{index}]: '{split}' is not a split name like checkpoint_10")
    for index, query_type in enumerate(config.types()):
        if query_type not in type_codes():
            raise TaskConfigError(f"{path}: metadata.query_types[{index}]: unknown type '{query_type}'"
                                  f"{_near(query_type, list(type_codes()))} Known: {', '.join(type_codes())}")
    if config.generation_kwargs.do_sample != (config.generation_kwargs.temperature > 0):
        raise TaskConfigError(f"{path}: generation_kwargs.do_sample: must be true exactly when temperature > 0 "
                              f"(temperature {config.generation_kwargs.temperature})")
    for index, metric in enumerate(config.metadata.by_type):
        if metric not in METRICS:
            raise TaskConfigError(f"{path}: metadata.by_type[{index}]: unknown metric '{metric}'"
                                  f"{_near(metric, list(METRICS))} Known: {', '.join(METRICS)}")
    needed = {"metadata.system_prompt": config.system_prompt,
              **{f"doc_to_text ({t})": config.template_for(t) for t in config.types()}}
    if config.metadata.source_variant is not None and config.metadata.scoring == "medmemorybench":
        raise TaskConfigError(f"{path}: metadata.source_variant: only for a source's scoring (metadata.scoring: "
                              "locomo or longmemeval)")
    for key, template in needed.items():
        if not (prompts / template).is_file():
            raise TaskConfigError(f"{path}: {key}: template '{template}' not found in {prompts}")


def load_task_file(path: Path, prompts: Path | None = None) -> TaskConfig | GroupConfig:
    """Load and validate one task or group file."""
    raw = _read(path)
    raw["source_file"] = str(path)
    model: type[TaskConfig] | type[GroupConfig] = GroupConfig if "group" in raw else TaskConfig
    try:
        config = model.model_validate(raw)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"])
        kind = "unknown key" if err["type"] == "extra_forbidden" else err["msg"]
        raise TaskConfigError(f"{path}: {where}: {kind}") from None
    if isinstance(config, TaskConfig):
        _check(config, path, prompts or prompts_dir())
    return config


def load_registry(folder: Path | None = None, prompts: Path | None = None) -> dict[str, TaskConfig | GroupConfig]:
    """Every task and group in the folder, by name (files starting with '_' are includes, not tasks)."""
    folder = folder or tasks_dir()
    registry: dict[str, TaskConfig | GroupConfig] = {}
    for path in sorted(folder.glob("*.yaml")):
        if path.name.startswith("_"):
            continue
        config = load_task_file(path, prompts)
        name = config.group if isinstance(config, GroupConfig) else config.task
        if name in registry:
            raise TaskConfigError(f"{path}: task '{name}' is also defined in {registry[name].source_file}")
        registry[name] = config
    return registry


def resolve_tasks(names: list[str], folder: Path | None = None) -> list[TaskConfig]:
    """Task configs for names of tasks, groups or tags, groups expanded, in order, without repeats.

    Raises:
        TaskConfigError: for an unknown name, listing near matches and every valid name.
    """
    registry = load_registry(folder)
    if not names:
        raise TaskConfigError("--tasks: no task named; give tasks, groups or tags, e.g. --tasks medmemorybench "
                              "(see 'medmemorybench ls tasks')")
    tags: dict[str, list[str]] = {}
    for name, config in registry.items():
        if isinstance(config, TaskConfig):
            for tag in config.tag:
                tags.setdefault(tag, []).append(name)
    out: list[TaskConfig] = []

    def add(name: str, trail: tuple[str, ...]) -> None:
        if name in trail:
            raise TaskConfigError(f"--tasks: group cycle through {' -> '.join((*trail, name))}")
        config = registry.get(name)
        if isinstance(config, GroupConfig):
            for member in config.task:
                add(member, (*trail, name))
        elif isinstance(config, TaskConfig):
            if all(c.task != name for c in out):
                out.append(config)
        elif name in tags:
            for member in tags[name]:
                add(member, (*trail, name))
        else:
            known = sorted([*registry, *tags])
            raise TaskConfigError(f"--tasks: unknown task '{name}'{_near(name, known)} "
                                  f"Run 'medmemorybench ls tasks' for the list: {', '.join(known)}")

    for name in names:
        add(name, ())
    return out
