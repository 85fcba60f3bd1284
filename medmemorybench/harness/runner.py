"""The protocol runner (SPEC §3): stream each task with `stream.py`, and answer each checkpoint's questions of all
patients as one batch before the stream moves on.

Guarantees beyond the stream's: prompts carry no wall-clock time; a backbone error is recorded as an error, never
scored; a run whose questions do not all have a sample, or whose errors pass `--max_error_rate`, fails with
everything written kept.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path

from medmemorybench.dataset.hidden import is_hidden
from medmemorybench.dataset.load import build_metadata, dataset_source, find_local, looked_in, read_build_metadata
from medmemorybench.dataset.schema import METADATA_FILE
from medmemorybench.errors import InputError, RunFailedError
from medmemorybench.files import loads_json, write_atomic
from medmemorybench.harness.cache import ResponseCache, default_cache_path, generate_cached
from medmemorybench.harness.config import RunConfig
from medmemorybench.harness.header import run_header
from medmemorybench.harness.observed import LeakageError
from medmemorybench.harness.progress import Progress
from medmemorybench.harness.prompting import prompt_hash
from medmemorybench.harness.results import RUN_HEADER, SAMPLES, SampleWriter, read_samples
from medmemorybench.harness.samples import answer_echo, make_record
from medmemorybench.harness.stream import Asked, Checkpoint, Models, TaskStream, checkpoint_of, new_memory
from medmemorybench.harness.summary import write_summary
from medmemorybench.harness.tasks import TaskConfig, resolve_tasks
from medmemorybench.memory import MemorySystem
from medmemorybench.memory.base import ANSWER_MODES
from medmemorybench.memory.context import MemoryCost, resolve_embedder
from medmemorybench.memory.registry import memory_class
from medmemorybench.models.base import Backbone, Completion
from medmemorybench.models.batching import BatchingBackbone
from medmemorybench.questions.spec import judged_codes
from medmemorybench.scoring.base import Score
from medmemorybench.scoring.source import OURS, SOURCE_TITLES, is_judged_by_source

MEMORY_BATCH = 16
"""Most construction calls answered together when patients are ingested concurrently."""


def _declared_splits(folder: Path) -> set[str]:
    """The splits the dataset's own metadata lists (empty for a folder without it)."""
    stats = read_build_metadata(folder).get("stats", {})
    by_checkpoint = stats.get("questions_by_checkpoint", {}) if isinstance(stats, dict) else None
    if not isinstance(by_checkpoint, dict):
        raise InputError(f"{folder / METADATA_FILE}: not the dataset's metadata JSON")
    return {f"checkpoint_{k}" for k in by_checkpoint}


def task_splits(folder: Path, task: TaskConfig, only: list[int] | None, declared: set[str]) -> list[str]:
    """The task's splits, in checkpoint order, once every split the dataset declares is there for its config and
    the asked checkpoints and test splits exist."""
    config_dir = folder / task.dataset_name
    available = sorted((p.stem for p in config_dir.glob("checkpoint_*.parquet")), key=checkpoint_of)
    if not available:
        raise InputError(f"{config_dir}: no checkpoint splits (config '{task.dataset_name}' missing from the dataset; "
                         f"task {task.task})")
    missing = sorted(declared - set(available), key=checkpoint_of)
    if missing:
        raise InputError(f"{config_dir}: splits {', '.join(missing)} are missing (the dataset has "
                         f"{len(declared)}; {METADATA_FILE} lists them)")
    if only:
        unknown_points = sorted(set(only) - {checkpoint_of(s) for s in available})
        if unknown_points:
            raise InputError(f"--checkpoints: {unknown_points} not in the dataset; available: "
                             f"{', '.join(str(checkpoint_of(s)) for s in available)}")
    if task.test_split != "all":
        unknown = [s for s in task.test_split if s not in available]
        if unknown:
            raise InputError(f"{task.source_file}: test_split: {unknown} not in the dataset ({', '.join(available)})")
    return available


def dataset_splits(folder: Path, tasks: list[TaskConfig], only: list[int] | None) -> dict[str, list[str]]:
    """`task_splits` of every task, all checked before anything runs."""
    declared = _declared_splits(folder)
    return {task.task: task_splits(folder, task, only, declared) for task in tasks}


NOT_COMPARED = ("max_error_rate", "memory_concurrency")
"""Options a resume may change: the error tolerance, and how many patients are ingested at once (results do not
depend on it)."""


def _compared(value: object) -> object:
    """A header part as a resume compares it (`NOT_COMPARED` left out)."""
    return {k: v for k, v in value.items() if k not in NOT_COMPARED} if isinstance(value, dict) else value


class Runner:
    """Runs the configured tasks and writes samples.jsonl, run.json and summary.json."""

    def __init__(self, config: RunConfig, on_progress: Callable[[Progress], None] | None = None) -> None:
        self.config = config
        self.on_progress = on_progress or (lambda _progress: None)
        if config.limit is not None and (isinstance(config.limit, bool) or config.limit < 1):
            raise InputError(f"--limit: {config.limit} is not a number of patients (at least 1; leave it out for all)")
        if isinstance(config.memory_concurrency, bool) or not isinstance(config.memory_concurrency, int) \
                or config.memory_concurrency < 1:
            raise InputError(f"--memory_concurrency: {config.memory_concurrency} is not a number of patients "
                             "(at least 1)")
        if not 0.0 <= config.max_error_rate <= 1.0:
            raise InputError(f"--max_error_rate: {config.max_error_rate} is not a share between 0 and 1")
        self.tasks = resolve_tasks(config.tasks)
        folder = find_local(config.dataset_path)
        if folder is None:
            raise InputError(f"--dataset_path: no MedMemoryBench build found (looked in "
                             f"{looked_in(config.dataset_path)}); run `medmemorybench build --output_path out` first")
        self.folder = folder
        self.hidden = is_hidden(folder)
        if self.hidden and (config.judge or memory_class(config.memory).reads_gold_evidence):
            raise InputError(f"--dataset_path: {folder} is a hidden-gold release (no gold in it): "
                             f"{'--judge' if config.judge else '--memory ' + config.memory} needs the gold; the "
                             "maintainers score runs on it against the sealed gold")
        only_abs = [t.task for t in self.tasks if t.types() == ["ABS"]]
        if self.hidden and only_abs:
            raise InputError(f"--tasks: {only_abs[0]} asks only abstention questions, which a hidden-gold release "
                             f"does not mark ({folder}); its abstentions are asked among the types they borrow")
        check_sources(folder, self.tasks)
        self.splits = dataset_splits(folder, self.tasks, config.checkpoints)
        resolve_embedder(config.embedder)  # (checked now; the embedder itself loads when a memory first embeds)
        self.answer_mode = _answer_mode(config)
        self.expected: dict[str, int] = {}  # task -> questions the run must answer (or record as errors)
        self.backbone: Backbone | None = None
        self.judge: Backbone | None = None
        self.memory_backbone: Backbone | None = None
        self.cache: ResponseCache | None = None
        self.done: set[tuple[str, str]] = set()

    def _load_models(self) -> None:
        from medmemorybench.models import load_backbone

        def answering(backbone: Backbone) -> Backbone | None:  # (`none` is registered; it answers nothing)
            return backbone if backbone.answers else None

        self.backbone = answering(load_backbone(self.config.model, self.config.model_args))
        if self.config.judge:
            self.judge = answering(load_backbone(self.config.judge, self.config.judge_args, "--judge"))
            sourced = [t.task for t in self.tasks if is_judged_by_source(t.metadata.scoring)]
            if self.judge is None and sourced:  # (`--judge none` would leave them unscored without a word)
                raise InputError(f"--judge {self.config.judge}: answers nothing, and {sourced[0]} is scored by a "
                                 "judge; give a judge that answers (e.g. --judge openai --judge_args model=...)")
        self.memory_backbone = self.backbone
        if self.config.memory_model:
            self.memory_backbone = answering(load_backbone(self.config.memory_model, self.config.memory_model_args,
                                                           "--memory_model"))

    def _check_header(self, header: dict) -> None:
        path = self.config.output_path / RUN_HEADER
        if self.config.resume and path.exists():
            try:
                previous = loads_json(path.read_text(encoding="utf-8"))
            except (json.JSONDecodeError, UnicodeDecodeError):
                raise InputError(f"--resume: {path} is damaged (not JSON); the samples are intact: move run.json "
                                 "away to resume from them with the options given now") from None
            if not isinstance(previous, dict):
                raise InputError(f"--resume: {path} is damaged (not a run header)")
            for key in ("dataset_fingerprint", "config"):
                if _compared(previous.get(key)) != _compared(header.get(key)):
                    raise InputError(f"--resume: {path} was written with another {key}; resume with the same "
                                     "options or choose another --output_path")
        write_atomic(path, json.dumps(header, indent=1, sort_keys=True, default=str) + "\n")

    def run(self) -> Path:
        """Run everything; returns the summary path."""
        writer = SampleWriter(self.config.output_path, self.config.resume)  # refuses a non-empty folder early
        self.done = writer.done  # what a resumed run has answered already
        self._load_models()
        if self.answer_mode == "native" and self.backbone is None:
            raise InputError(f"--answer_mode native: memory '{self.config.memory}' answers with the answering model; "
                             "give --model")
        if self.memory_backbone is not None and self.config.memory_concurrency > 1:
            self.memory_backbone = BatchingBackbone(self.memory_backbone, max_batch=MEMORY_BATCH)
        header = run_header(self.config, self.folder, self.tasks, self.backbone, self.judge, self.memory_backbone,
                            self.answer_mode)
        self._check_header(header)
        if self.config.use_cache and (self.backbone is not None or self.memory_backbone is not None):
            self.cache = ResponseCache(self.config.cache_path or default_cache_path())
        try:
            for task in self.tasks:
                self._run_task(task, writer, self.cache)
        finally:
            writer.close()
            if self.cache:
                self.cache.close()
        samples = read_samples(self.config.output_path / SAMPLES)  # (read once: the summary and the check)
        summary = write_summary(self.config.output_path, header, self.tasks, samples)
        check_complete(self.tasks, self.expected, samples, self.backbone is not None, self.config.max_error_rate,
                       summary)
        return summary

    def _run_task(self, task: TaskConfig, writer: SampleWriter, cache: ResponseCache | None) -> None:
        stream = TaskStream(task, self.folder, self.splits[task.task], self.config,
                            lambda task, pid, cost: self._new_memory(task, pid, cost), answering=self.backbone,
                            answer_mode=self.answer_mode, prompts=self.backbone is not None, done=self.done,
                            on_progress=self.on_progress)
        for point in stream.checkpoints():
            patients = len({a.question["persona_id"] for a in point.asked})
            self._answer(task, point.asked, writer, cache, self._counting(task.task, point, patients))
            self.on_progress(Progress(task.task, "answer", point.split, point.index, point.total, patients, patients,
                                      answers=len(point.asked)))
        self.expected[task.task] = stream.expected

    def _counting(self, task: str, point: Checkpoint, patients: int) -> Callable[[int], None]:
        """`_answer`'s `on_answered` for one checkpoint: each answer back is reported as an `answering` step (a slow
        model's checkpoint takes minutes; its progress lines count the answers)."""
        answered = 0

        def on_answered(count: int) -> None:
            nonlocal answered
            answered += count
            self.on_progress(Progress(task, "answering", point.split, point.index, point.total, patients, patients,
                                      answered=answered, to_answer=len(point.asked)))
        return on_answered

    def _new_memory(self, task: TaskConfig, persona_id: str, cost: MemoryCost) -> MemorySystem:
        """A fresh memory for one patient of one task (`stream.new_memory` with this run's models)."""
        models = Models(self.backbone, self.memory_backbone, self.cache)
        return new_memory(self.config, task, persona_id, cost, models, self.answer_mode)

    def _answer(self, task: TaskConfig, pending: list[Asked], writer: SampleWriter,
                cache: ResponseCache | None, on_answered: Callable[[int], None]) -> None:
        """Answer (a memory that answers natively has already), judge and write one checkpoint's questions;
        `on_answered(n)`: n more of the shared model's answers are back."""
        if not pending:
            return
        completions: list[Completion | None] = [p.completion for p in pending]
        shared = [i for i, p in enumerate(pending) if p.completion is None]
        if self.backbone is not None and shared:
            answered = generate_cached(self.backbone, [pending[i].request for i in shared], cache,  # type: ignore[misc]
                                       on_answered)
            for i, completion in zip(shared, answered, strict=True):
                completions[i] = completion
        # Decided once per answer: the judge skips echoes and every measure gets the same flag.
        echoes = [answer_echo(p.request, p.retrieval, c) for p, c in zip(pending, completions, strict=True)]
        judged = self._judge(task, pending, completions, echoes)
        for item, completion, judge_score, echo in zip(pending, completions, judged, echoes, strict=True):
            record = make_record(task, item.question, item.query, item.retrieval, completion,
                                 prompt_hash(item.request) if item.request else None,
                                 hashlib.sha256(item.question["answer"].encode()).hexdigest(), judge_score,
                                 echo=echo, hidden=self.hidden)
            record["memory_cost"] = item.memory_cost
            if item.native_steps is not None:
                record["native_steps"] = item.native_steps
            writer.write(record)

    def _judge(self, task: TaskConfig, pending: list[Asked], completions: list[Completion | None],
               echoes: list[bool | None]) -> list[Score | None]:
        """The judge's verdict on each judged answer (None elsewhere), all in one batch: our rubric judge on the
        types it grades, or, for a task scored by LongMemEval's measure, its judge on every answer.

        Only answers count: a failed generation is an error and an echo is wrong without asking.
        """
        if self.judge is None:
            return [None] * len(pending)
        from medmemorybench.scoring import judge_many
        from medmemorybench.scoring.longmemeval import longmemeval_judge_many

        by_source = is_judged_by_source(task.metadata.scoring)
        judged_types = judged_codes()
        index = [i for i, (p, c, echo) in enumerate(zip(pending, completions, echoes, strict=True))
                 if (by_source or p.question["query_type"] in judged_types) and c is not None and c.error is None
                 and not echo]
        ask = longmemeval_judge_many if by_source else judge_many
        scores = ask([pending[i].question for i in index], [completions[i].text for i in index], self.judge)
        out: list[Score | None] = [None] * len(pending)
        for i, score in zip(index, scores, strict=True):
            out[i] = score
        return out


def check_sources(folder: Path, tasks: list[TaskConfig]) -> None:
    """Refuse, in one line, a task that makes no sense on this dataset: a source's scoring on a dataset that is not
    an import of that source (or of another variant), or one of our tasks asking only types an import lacks."""
    source = dataset_source(folder)
    name = (source or {}).get("name")
    title = (source or {}).get("title") or name
    for task in tasks:
        scoring, variant = task.metadata.scoring, task.metadata.source_variant
        if scoring != OURS:
            wanted = SOURCE_TITLES.get(scoring, scoring)
            if name != scoring:
                what = f"an import of {title}" if source else "a MedMemoryBench build"
                raise InputError(f"--tasks {task.task}: scores with {wanted}'s own measure and runs on an import of "
                                 f"{wanted} (`medmemorybench import {scoring} FILE`); {folder} is {what}")
            if variant is not None and source.get("variant") != variant:  # type: ignore[union-attr]
                raise InputError(f"--tasks {task.task}: is for {wanted}'s '{variant}' file; {folder} imports its "
                                 f"'{source.get('variant')}' file; run --tasks {own_task(source)}")  # type: ignore[union-attr]
        elif source is not None:
            stats = build_metadata(folder).get("stats") or {}
            present = set((stats.get("questions_by_type") or {}) if isinstance(stats, dict) else {})
            if task.language != "en" or not present & set(task.types()):
                raise InputError(f"--tasks {task.task}: asks {'/'.join(task.types())} questions in "
                                 f"{task.language}; {folder} is an import of {title} (English, types "
                                 f"{', '.join(sorted(present)) or 'none'}); run its own task (--tasks "
                                 f"{own_task(source)}) or medmemorybench_efficient")


def own_task(source: dict) -> str:
    """The shipped task that scores an import with its source's measure (`locomo`, `longmemeval_s`, ...)."""
    name = str(source.get("name"))
    return name if name == "locomo" else f"{name}_{source.get('variant')}"


def check_complete(tasks: list[TaskConfig], expected: dict[str, int], samples: list[dict], answered: bool,
                   max_error_rate: float, summary: Path) -> None:
    """Fail (everything written is kept) when a question has no sample, or errors pass `max_error_rate` (`answered`:
    a backbone answered; a retrieval-only run has no errors to count). Shared by a run and a sweep's cell."""
    for task in tasks:
        have = sum(1 for s in samples if s["task"] == task.task)
        if have != expected.get(task.task, 0):
            raise RunFailedError(f"{task.task}: {have} samples for {expected.get(task.task, 0)} questions "
                                 f"of the dataset; see {summary}")
    if not answered or not samples:
        return
    errors = sum(1 for s in samples if s["status"] == "error")
    if errors == len(samples):
        first = next(s["error"] for s in samples if s["status"] == "error")
        raise RunFailedError(f"every one of the {errors} answers failed (first: {first}); nothing was scored. "
                             f"Fix the backbone and rerun with --resume: {summary}")
    if errors / len(samples) > max_error_rate:
        raise RunFailedError(f"{errors} of {len(samples)} answers failed ({100 * errors / len(samples):.1f} %, "
                             f"above --max_error_rate {max_error_rate}); they are recorded as "
                             f"errors, never scored; rerun with --resume to ask them again: {summary}")


def _answer_mode(config: RunConfig) -> str:
    """The mode the run answers in: `--answer_mode`, else the memory's default; one the memory can answer in."""
    modes = memory_class(config.memory).answer_modes  # (an unknown --memory is refused here, before anything runs)
    mode = config.answer_mode or modes[0]
    if mode not in ANSWER_MODES:
        raise InputError(f"--answer_mode: '{mode}' is not one of {', '.join(ANSWER_MODES)}")
    if mode not in modes:
        raise InputError(f"--answer_mode {mode}: memory '{config.memory}' answers in {' or '.join(modes)} mode only")
    return mode


def run_evaluation(config: RunConfig, on_progress: Callable[[Progress], None] | None = None) -> Path:
    """Run the configured evaluation; returns the path of summary.json."""
    return Runner(config, on_progress).run()


__all__ = ["LeakageError", "Runner", "check_complete", "dataset_splits", "run_evaluation", "task_splits"]
