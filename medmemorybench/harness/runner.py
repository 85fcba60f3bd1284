"""The protocol runner (SPEC §3): stream each patient's sessions into a fresh memory, checkpoint by
checkpoint, and ask that checkpoint's questions of all patients as one batch.

Guarantees: the memory persists across checkpoints and is fresh per patient; sessions are ingested at
every checkpoint even when it asks nothing (or everything was answered before a resume); memories see
the observed view only (opaque ids, every session dated, no labels: `observed.py`), and the ids they
name are mapped back before the guard, the prompt and scoring; a leakage guard stops the run if a
memory holds a session beyond the checkpoint or one it was never given; retrieval uses what the
patient asked (the question and its options), never the instruction prompt; prompts carry no
wall-clock time; a backbone error is recorded as an error, never scored.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from medmemorybench.dataset.load import find_local, read_split
from medmemorybench.dataset.schema import METADATA_FILE
from medmemorybench.errors import InputError, RunFailedError
from medmemorybench.files import write_atomic
from medmemorybench.harness.cache import ResponseCache, generate_cached
from medmemorybench.harness.config import RunConfig
from medmemorybench.harness.header import run_header
from medmemorybench.harness.observed import LeakageError, ObservedStream, retrieval_query
from medmemorybench.harness.prompting import PromptBuilder, SessionInfo, prompt_hash
from medmemorybench.harness.results import RUN_HEADER, SAMPLES, SampleWriter, read_samples
from medmemorybench.harness.samples import answer_echo, make_record
from medmemorybench.harness.summary import write_summary
from medmemorybench.harness.tasks import TaskConfig, resolve_tasks
from medmemorybench.memory import MemorySystem, Retrieval, load_memory
from medmemorybench.memory.base import ANSWER_MODES, NativeQuestion
from medmemorybench.memory.context import (
    Embedder,
    MemoryContext,
    MemoryCost,
    MemoryLLM,
    Stopwatch,
    resolve_embedder,
)
from medmemorybench.memory.registry import memory_class
from medmemorybench.models._daemon_pool import map_each
from medmemorybench.models.base import Backbone, ChatRequest, Completion
from medmemorybench.models.batching import BatchingBackbone
from medmemorybench.models.embedded import cache_root
from medmemorybench.questions.spec import judged_codes, type_codes
from medmemorybench.render.models import Session
from medmemorybench.scoring.base import Score
from medmemorybench.simulate.rng import rng_for

_REGULAR = re.compile(r"-S(\d+)$")
PROMPT_OVERHEAD_TOKENS = 400
"""Tokens kept free for the system message, instructions and question when fitting long contexts."""
MEMORY_BATCH = 16
"""Most construction calls answered together when patients are ingested concurrently."""
MEMORY_DIR = "memory"
"""Under --output_path: a working folder per task and patient for memories that keep files."""


@dataclass
class _Pending:
    task: TaskConfig
    question: dict
    query: str
    """What the memory was asked (`retrieval_query`), recorded in the sample."""
    retrieval: Retrieval
    """With the dataset's session ids."""
    request: ChatRequest | None
    memory_cost: dict
    """The patient's memory cost up to this checkpoint (`MemoryCost`), recorded in the sample."""
    completion: Completion | None = None
    """The memory's own answer (`native` mode); None: the backbone answers `request`."""
    native_steps: int | None = None


def _checkpoint_of(split: str) -> int:
    return int(split.rpartition("_")[2])


def _declared_splits(folder: Path) -> set[str]:
    """The splits the dataset's own metadata lists (empty for a folder without it)."""
    meta_path = folder / METADATA_FILE
    try:
        meta = json.loads(meta_path.read_text(encoding="utf-8")) if meta_path.exists() else {}
        return {f"checkpoint_{k}" for k in meta.get("stats", {}).get("questions_by_checkpoint", {})}
    except (json.JSONDecodeError, AttributeError):
        raise InputError(f"{meta_path}: not the dataset's metadata JSON") from None


def _splits(folder: Path, task: TaskConfig, only: list[int] | None, declared: set[str]) -> list[str]:
    """The task's splits, in checkpoint order, once every split the dataset declares is there for its config and
    the asked checkpoints and test splits exist."""
    config_dir = folder / task.dataset_name
    available = sorted((p.stem for p in config_dir.glob("checkpoint_*.parquet")), key=_checkpoint_of)
    if not available:
        raise InputError(f"{config_dir}: no checkpoint splits (config '{task.dataset_name}' missing from the dataset; "
                         f"task {task.task})")
    missing = sorted(declared - set(available), key=_checkpoint_of)
    if missing:
        raise InputError(f"{config_dir}: splits {', '.join(missing)} are missing (the dataset has "
                         f"{len(declared)}; {METADATA_FILE} lists them)")
    if only:
        unknown_points = sorted(set(only) - {_checkpoint_of(s) for s in available})
        if unknown_points:
            raise InputError(f"--checkpoints: {unknown_points} not in the dataset; available: "
                             f"{', '.join(str(_checkpoint_of(s)) for s in available)}")
    if task.test_split != "all":
        unknown = [s for s in task.test_split if s not in available]
        if unknown:
            raise InputError(f"{task.source_file}: test_split: {unknown} not in the dataset ({', '.join(available)})")
    return available


NOT_COMPARED = ("max_error_rate", "memory_concurrency")
"""Options a resume may change: the error tolerance, and how many patients are ingested at once (results do not
depend on it)."""


def _compared(value: object) -> object:
    """A header part as a resume compares it (`NOT_COMPARED` left out)."""
    return {k: v for k, v in value.items() if k not in NOT_COMPARED} if isinstance(value, dict) else value


def split_is_asked(task: TaskConfig, split: str, checkpoints: list[int] | None) -> bool:
    """Whether a run asks the questions of `split`: the task's test splits, narrowed by `--checkpoints`."""
    return (task.test_split == "all" or split in task.test_split) and (
        not checkpoints or _checkpoint_of(split) in checkpoints)


def first_patients(rows: list[dict], limit: int | None) -> list[dict]:
    """The rows of the first `limit` patients by id (all when None): what `--limit` evaluates."""
    rows = sorted(rows, key=lambda r: r["persona_id"])
    return rows[:limit] if limit else rows


def _guard(memory: MemorySystem, stream: ObservedStream, checkpoint: int) -> None:
    for sid in sorted(memory.session_ids()):
        real = stream.real_id(sid)  # raises for an id the memory was never given
        match = _REGULAR.search(real)
        if match and int(match.group(1)) > checkpoint:
            raise LeakageError(f"memory of {stream.persona_id} holds {real} while answering checkpoint {checkpoint}")


class Runner:
    """Runs the configured tasks and writes samples.jsonl, run.json and summary.json."""

    def __init__(self, config: RunConfig, on_progress: Callable[[str, int, int], None] | None = None) -> None:
        self.config = config
        self.on_progress = on_progress or (lambda *_: None)
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
            raise InputError(f"--dataset_path: no MedMemoryBench build found at {config.dataset_path or './out'}; "
                             "run `medmemorybench build --out out` first")
        self.folder = folder
        declared = _declared_splits(folder)  # every task's splits checked before anything runs
        self.splits = {task.task: _splits(folder, task, config.checkpoints, declared) for task in self.tasks}
        resolve_embedder(config.embedder)  # (checked now; the embedder itself loads when a memory first embeds)
        self.answer_mode = _answer_mode(config)
        self.expected: dict[str, int] = {}  # task -> questions the run must answer (or record as errors)
        self.backbone: Backbone | None = None
        self.judge: Backbone | None = None
        self.memory_backbone: Backbone | None = None
        self.cache: ResponseCache | None = None
        self.builder = PromptBuilder()
        self.done: set[tuple[str, str]] = set()

    def _load_models(self) -> None:
        from medmemorybench.models import load_backbone

        def answering(backbone: Backbone) -> Backbone | None:  # (`none` is registered; it answers nothing)
            return backbone if backbone.answers else None

        self.backbone = answering(load_backbone(self.config.model, self.config.model_args))
        if self.config.judge:
            self.judge = answering(load_backbone(self.config.judge, self.config.judge_args, "--judge"))
        self.memory_backbone = self.backbone
        if self.config.memory_model:
            self.memory_backbone = answering(load_backbone(self.config.memory_model, self.config.memory_model_args,
                                                           "--memory_model"))

    def _check_header(self, header: dict) -> None:
        path = self.config.output_path / RUN_HEADER
        if self.config.resume and path.exists():
            try:
                previous = json.loads(path.read_text(encoding="utf-8"))
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
            self.cache = ResponseCache(self.config.cache_path or cache_root() / "responses.sqlite")
        try:
            for task in self.tasks:
                self._run_task(task, writer, self.cache)
        finally:
            writer.close()
            if self.cache:
                self.cache.close()
        samples = read_samples(self.config.output_path / SAMPLES)  # (read once: the summary and the check)
        summary = write_summary(self.config.output_path, header, self.tasks, samples)
        self._check_complete(summary, samples)
        return summary

    def _check_complete(self, summary: Path, samples: list[dict]) -> None:
        """Fail (everything written is kept) when a question has no sample, or errors pass `max_error_rate`."""
        for task in self.tasks:
            have = sum(1 for s in samples if s["task"] == task.task)
            if have != self.expected.get(task.task, 0):
                raise RunFailedError(f"{task.task}: {have} samples for {self.expected.get(task.task, 0)} questions "
                                     f"of the dataset; see {summary}")
        if self.backbone is None or not samples:
            return
        errors = sum(1 for s in samples if s["status"] == "error")
        if errors == len(samples):
            first = next(s["error"] for s in samples if s["status"] == "error")
            raise RunFailedError(f"every one of the {errors} answers failed (first: {first}); nothing was scored. "
                                 f"Fix the backbone and rerun with --resume: {summary}")
        if errors / len(samples) > self.config.max_error_rate:
            raise RunFailedError(f"{errors} of {len(samples)} answers failed ({100 * errors / len(samples):.1f} %, "
                                 f"above --max_error_rate {self.config.max_error_rate}); they are recorded as "
                                 f"errors, never scored; rerun with --resume to ask them again: {summary}")

    def _rows(self, task: TaskConfig, split: str) -> list[dict]:
        path = self.folder / task.dataset_name / f"{split}.parquet"
        rows = read_split(path, task.dataset_name)  # (file, schema and nulls checked)
        known = set(type_codes())
        for row in rows:
            for question in row["questions"]:
                if question["query_type"] not in known:
                    raise InputError(f"{path}: {question['query_id']}: query_type "
                                     f"{question['query_type']!r} is not one of {', '.join(sorted(known))}")
        return first_patients(rows, self.config.limit)

    def _run_task(self, task: TaskConfig, writer: SampleWriter, cache: ResponseCache | None) -> None:
        memories: dict[str, MemorySystem] = {}
        costs: dict[str, MemoryCost] = {}
        streams: dict[str, ObservedStream] = {}
        sessions: dict[str, SessionInfo] = {}

        def is_asked(split: str) -> bool:
            return split_is_asked(task, split, self.config.checkpoints)

        # Sessions after the last asked checkpoint can change no answer: they are not streamed (a memory that
        # builds itself with an LLM would pay for them).
        last_asked = max((_checkpoint_of(s) for s in self.splits[task.task] if is_asked(s)), default=0)
        splits = [split for split in self.splits[task.task] if _checkpoint_of(split) <= last_asked]
        for number, split in enumerate(splits, start=1):
            checkpoint = _checkpoint_of(split)
            asked = is_asked(split)
            pending: list[_Pending] = []
            rows = self._rows(task, split)
            observed = []
            for row in rows:
                pid = row["persona_id"]
                if pid not in memories:
                    costs[pid] = MemoryCost()
                    memories[pid], streams[pid] = self._new_memory(task, pid, costs[pid]), ObservedStream(pid)
                batch = [Session.model_validate(s) for s in row["sessions"]]
                observed.append((pid, streams[pid].observe(batch)))
                for s in batch:
                    sessions[s.session_id] = SessionInfo(streams[pid].dates[s.session_id], s.kind, s.family_member)

            def ingest(item: tuple[str, list]) -> None:
                pid, new = item
                with Stopwatch(costs[pid], "ingest_s"):  # always: a checkpoint without questions still feeds it
                    memories[pid].ingest(new)
                costs[pid].sessions += len(new)
                costs[pid].items = memories[pid].size()

            # patients are independent: with --memory_concurrency their construction calls share batches
            map_each(ingest, observed, self.config.memory_concurrency, lambda _index, _result: None)
            for row in rows:
                pid = row["persona_id"]
                _guard(memories[pid], streams[pid], checkpoint)
                if asked:
                    pending.extend(self._prepare(task, row, memories[pid], streams[pid], sessions, costs[pid]))
            self._answer(task, pending, writer, cache)
            self.on_progress(f"{task.task} {split}", number, len(splits))

    def _new_memory(self, task: TaskConfig, persona_id: str, cost: MemoryCost) -> MemorySystem:
        """A fresh memory for one patient of one task, bound to its context (an empty working folder)."""
        memory = load_memory(self.config.memory, dict(self.config.memory_args))
        if self.backbone is not None and hasattr(memory, "count_tokens"):
            memory.count_tokens = self.backbone.count_tokens  # long contexts are fitted in model tokens
        workdir = self.config.output_path / MEMORY_DIR / task.task / persona_id
        shutil.rmtree(workdir, ignore_errors=True)  # (a resume builds the memory again from the first session)
        workdir.mkdir(parents=True)
        llm = MemoryLLM(self.memory_backbone, cost, self.cache) if self.memory_backbone is not None else None
        answerer = None
        if self.answer_mode == "native" and self.backbone is not None:  # (answering calls are not construction's)
            answerer = MemoryLLM(self.backbone, MemoryCost(), self.cache)
        context = MemoryContext(llm=llm, embedder=Embedder(self.config.embedder, cost), workdir=workdir,
                                rng=rng_for(0, persona_id, f"memory/{self.config.memory}"), cost=cost,
                                answerer=answerer)
        if memory.needs_llm:
            context.require_llm(self.config.memory)
        memory.bind(context)
        return memory

    def _prepare(self, task: TaskConfig, row: dict, memory: MemorySystem, stream: ObservedStream,
                 sessions: dict[str, SessionInfo], cost: MemoryCost) -> list[_Pending]:
        wanted = set(task.types())
        mine = [q for q in row["questions"] if q["query_type"] in wanted]
        self.expected[task.task] = self.expected.get(task.task, 0) + len(mine)
        questions = [q for q in mine if (task.task, q["query_id"]) not in self.done]
        if not questions:
            return []
        budget = None
        if self.backbone is not None:
            budget = self.backbone.context_window - task.generation_kwargs.max_tokens - PROMPT_OVERHEAD_TOKENS
        queries = [retrieval_query(q) for q in questions]
        if self.answer_mode == "native":
            return self._native(task, questions, queries, memory, stream, sessions, cost)
        with Stopwatch(cost, "retrieve_s"):
            retrievals = memory.retrieve(queries, task.retrieval_k, budget)
        spent = cost.to_dict()
        out = []
        for question, query, observed in zip(questions, queries, retrievals, strict=True):
            retrieval = stream.to_real(observed)  # real ids from here on: prompt labels, Recall@k, MRR
            request = None
            if self.backbone is not None:
                request = self.builder.build(task, question, retrieval.items, sessions, stream.latest)
            out.append(_Pending(task, question, query, retrieval, request, spent))
        return out

    def _native(self, task: TaskConfig, questions: list[dict], queries: list[str], memory: MemorySystem,
                stream: ObservedStream, sessions: dict[str, SessionInfo], cost: MemoryCost) -> list[_Pending]:
        """The memory answers each question itself, from the task's prompt with no memory shown."""
        requests = [self.builder.build(task, q, [], sessions, stream.latest) for q in questions]
        answers = memory.answer([NativeQuestion(query, request) for query, request in zip(queries, requests,
                                                                                          strict=True)])
        if len(answers) != len(questions):
            raise RunFailedError(f"memory '{self.config.memory}' answered {len(answers)} of {len(questions)} "
                                 "questions")
        spent = cost.to_dict()
        return [_Pending(task, question, query, stream.to_real(Retrieval(items=answer.items)), request, spent,
                         answer.completion, answer.steps)
                for question, query, request, answer in zip(questions, queries, requests, answers, strict=True)]

    def _answer(self, task: TaskConfig, pending: list[_Pending], writer: SampleWriter,
                cache: ResponseCache | None) -> None:
        if not pending:
            return
        completions: list[Completion | None] = [p.completion for p in pending]
        shared = [i for i, p in enumerate(pending) if p.completion is None]
        if self.backbone is not None and shared:
            answered = generate_cached(self.backbone, [pending[i].request for i in shared], cache)  # type: ignore[misc]
            for i, completion in zip(shared, answered, strict=True):
                completions[i] = completion
        # Decided once per answer: the judge skips echoes and every measure gets the same flag.
        echoes = [answer_echo(p.request, p.retrieval, c) for p, c in zip(pending, completions, strict=True)]
        judged = self._judge(pending, completions, echoes)
        for item, completion, judge_score, echo in zip(pending, completions, judged, echoes, strict=True):
            record = make_record(task, item.question, item.query, item.retrieval, completion,
                                 prompt_hash(item.request) if item.request else None,
                                 hashlib.sha256(item.question["answer"].encode()).hexdigest(), judge_score,
                                 echo=echo)
            record["memory_cost"] = item.memory_cost
            if item.native_steps is not None:
                record["native_steps"] = item.native_steps
            writer.write(record)

    def _judge(self, pending: list[_Pending], completions: list[Completion | None],
               echoes: list[bool | None]) -> list[Score | None]:
        """The judge's verdict on each judged answer (None elsewhere), all in one batch.

        Only answers count: a failed generation is an error and an echo is wrong without asking.
        """
        if self.judge is None:
            return [None] * len(pending)
        from medmemorybench.scoring import judge_many

        judged_types = judged_codes()
        index = [i for i, (p, c, echo) in enumerate(zip(pending, completions, echoes, strict=True))
                 if p.question["query_type"] in judged_types and c is not None and c.error is None and not echo]
        scores = judge_many([pending[i].question for i in index], [completions[i].text for i in index], self.judge)
        out: list[Score | None] = [None] * len(pending)
        for i, score in zip(index, scores, strict=True):
            out[i] = score
        return out


def _answer_mode(config: RunConfig) -> str:
    """The mode the run answers in: `--answer_mode`, else the memory's default; one the memory can answer in."""
    modes = memory_class(config.memory).answer_modes  # (an unknown --memory is refused here, before anything runs)
    mode = config.answer_mode or modes[0]
    if mode not in ANSWER_MODES:
        raise InputError(f"--answer_mode: '{mode}' is not one of {', '.join(ANSWER_MODES)}")
    if mode not in modes:
        raise InputError(f"--answer_mode {mode}: memory '{config.memory}' answers in {' or '.join(modes)} mode only")
    return mode


def run_evaluation(config: RunConfig, on_progress: Callable[[str, int, int], None] | None = None) -> Path:
    """Run the configured evaluation; returns the path of summary.json."""
    return Runner(config, on_progress).run()
