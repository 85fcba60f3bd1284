"""The streaming protocol of one task (SPEC §3): each patient's sessions go into a fresh memory, checkpoint by
checkpoint, and each asked question is prepared at its checkpoint: what the memory was asked, what it returned,
and the prompt that shows it to a backbone.

Answering is left to the caller: the runner answers each checkpoint's questions before the stream moves on (a
memory built by an LLM, or one that answers natively, needs that); the lm-evaluation-harness task collects every
prepared prompt first and lets lm-eval's model answer them (`integrations/lm_eval_task.py`), which is the same
protocol for memories that need no LLM to read.

Guarantees: sessions are ingested at every checkpoint even when it asks nothing (or everything was answered
before a resume); memories see the observed view only (`observed.py`) and the ids they name are mapped back
before the guard, the prompt and scoring; the leakage guard stops the stream if a memory holds a session beyond
the checkpoint or one it was never given; retrieval uses what the patient asked, never the instruction prompt.
The one exception to "no gold": a memory that declares `reads_gold_evidence` (the `oracle` reference, which
measures the ceiling) is also given each question's evidence sessions, under the opaque ids it was given.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from medmemorybench.dataset.load import read_split
from medmemorybench.dataset.schema import is_persona_id
from medmemorybench.errors import InputError, RunFailedError
from medmemorybench.harness.cache import ResponseCache
from medmemorybench.harness.config import RunConfig
from medmemorybench.harness.observed import LeakageError, ObservedStream, retrieval_query
from medmemorybench.harness.progress import Progress
from medmemorybench.harness.prompting import PromptBuilder
from medmemorybench.harness.tasks import TaskConfig
from medmemorybench.memory import MemorySystem, Retrieval, load_memory
from medmemorybench.memory.base import EvidenceQuestion, NativeQuestion
from medmemorybench.memory.context import Embedder, MemoryContext, MemoryCost, MemoryLLM, Stopwatch
from medmemorybench.models._daemon_pool import map_each
from medmemorybench.models.base import Backbone, ChatRequest, Completion
from medmemorybench.questions.models import FACT_KINDS
from medmemorybench.questions.spec import type_codes
from medmemorybench.render.models import Session
from medmemorybench.simulate.rng import rng_for

_REGULAR = re.compile(r"-S(\d+)$")
PROMPT_OVERHEAD_TOKENS = 400
"""Tokens kept free for the system message, instructions and question when fitting long contexts."""
MEMORY_DIR = "memory"
"""Under the run folder: a working folder per task and patient for memories that keep files."""


@dataclass
class Asked:
    """One question prepared at its checkpoint."""

    task: TaskConfig
    question: dict
    query: str
    """What the memory was asked (`retrieval_query`), recorded in the sample."""
    retrieval: Retrieval
    """With the dataset's session ids."""
    request: ChatRequest | None
    """The prompt to answer it with; None when prompts are not built (a retrieval-only run)."""
    memory_cost: dict
    """The patient's memory cost up to this checkpoint (`MemoryCost`), recorded in the sample."""
    completion: Completion | None = None
    """The memory's own answer (`native` mode); None: a backbone answers `request`."""
    native_steps: int | None = None


@dataclass
class Checkpoint:
    """The questions a checkpoint asks, prepared after every patient has read its sessions up to it."""

    split: str
    index: int
    """1-based position among the splits streamed."""
    total: int
    asked: list[Asked]


def checkpoint_of(split: str) -> int:
    """10 for `checkpoint_10`."""
    return int(split.rpartition("_")[2])


def split_is_asked(task: TaskConfig, split: str, checkpoints: list[int] | None) -> bool:
    """Whether a run asks the questions of `split`: the task's test splits, narrowed by `--checkpoints`."""
    return (task.test_split == "all" or split in task.test_split) and (
        not checkpoints or checkpoint_of(split) in checkpoints)


def first_patients(rows: list[dict], limit: int | None) -> list[dict]:
    """The rows of the first `limit` patients by id (all when None): what `--limit` evaluates."""
    rows = sorted(rows, key=lambda r: r["persona_id"])
    return rows[:limit] if limit else rows


def guard(memory: MemorySystem, stream: ObservedStream, checkpoint: int) -> None:
    """Raise `LeakageError` when a memory holds a session beyond `checkpoint` or one it was never given."""
    for sid in sorted(memory.session_ids()):
        real = stream.real_id(sid)  # raises for an id the memory was never given
        match = _REGULAR.search(real)
        if match and int(match.group(1)) > checkpoint:
            raise LeakageError(f"memory of {stream.persona_id} holds {real} while answering checkpoint {checkpoint}")


def read_rows(folder: Path, task: TaskConfig, split: str, limit: int | None,
              patients: list[str] | None = None) -> list[dict]:
    """The rows of one split of the task's config, checked, by patient; the first `limit` patients (of them, those
    in `patients` when given: a sweep's shard)."""
    path = folder / task.dataset_name / f"{split}.parquet"
    rows = read_split(path, task.dataset_name)  # (file, schema and nulls checked)
    known = set(type_codes())
    for row in rows:
        for question in row["questions"]:
            if question["query_type"] not in known:
                raise InputError(f"{path}: {question['query_id']}: query_type "
                                 f"{question['query_type']!r} is not one of {', '.join(sorted(known))}")
            kinds = {f["kind"] for f in question.get("facts") or []} | {
                f["kind"] for step in question.get("reasoning_chain") or [] for f in step.get("facts") or []}
            if kinds - set(FACT_KINDS):
                raise InputError(f"{path}: {question['query_id']}: fact kind {sorted(kinds - set(FACT_KINDS))[0]!r} "
                                 f"is not one of {', '.join(FACT_KINDS)}")
    rows = first_patients(rows, limit)
    if patients is None:
        return rows
    wanted = set(patients)
    return [row for row in rows if row["persona_id"] in wanted]


@dataclass
class Models:
    """The backbones a stream uses: `answering` sizes long contexts and makes prompts worth building, `memory`
    is what a memory builds itself with; the cache serves both."""

    answering: Backbone | None = None
    memory: Backbone | None = None
    cache: ResponseCache | None = None


def new_memory(config: RunConfig, task: TaskConfig, persona_id: str, cost: MemoryCost, models: Models,
               answer_mode: str) -> MemorySystem:
    """A fresh memory for one patient of one task, bound to its context (an empty working folder)."""
    memory = load_memory(config.memory, dict(config.memory_args))
    if models.answering is not None and hasattr(memory, "count_tokens"):
        memory.count_tokens = models.answering.count_tokens  # long contexts are fitted in model tokens
    if not is_persona_id(persona_id):  # (the folder is removed below: never one named by a path in the data)
        raise InputError(f"--dataset_path: persona_id {str(persona_id)[:80]!r} is not a plain id (letters, digits, "
                         "'_', '.', '-'); `medmemorybench validate` the dataset")
    workdir = config.output_path / MEMORY_DIR / task.task / persona_id
    shutil.rmtree(workdir, ignore_errors=True)  # (a resume builds the memory again from the first session)
    workdir.mkdir(parents=True)
    llm = MemoryLLM(models.memory, cost, models.cache) if models.memory is not None else None
    answerer = None
    if answer_mode == "native" and models.answering is not None:  # (answering calls are not construction's)
        answerer = MemoryLLM(models.answering, MemoryCost(), models.cache)
    context = MemoryContext(llm=llm, embedder=Embedder(config.embedder, cost), workdir=workdir,
                            rng=rng_for(0, persona_id, f"memory/{config.memory}"), cost=cost, answerer=answerer)
    if memory.needs_llm:
        context.require_llm(config.memory)
    memory.bind(context)
    return memory


def _with_evidence(questions: list[dict], queries: list[str], stream: ObservedStream) -> list[EvidenceQuestion]:
    """Each question with its gold evidence under the ids its memory was given (for `reads_gold_evidence`)."""
    out = []
    for question, query in zip(questions, queries, strict=True):
        try:
            evidence = stream.opaque_ids(question["evidence_session_ids"])
        except InputError as exc:
            raise InputError(f"{question['query_id']}: evidence_session_ids: {exc}") from None
        out.append(EvidenceQuestion(question["query_id"], query, evidence))
    return out


MemoryFactory = Callable[[TaskConfig, str, MemoryCost], MemorySystem]
"""(task, persona id, that patient's cost counter) -> a fresh, bound memory."""


class TaskStream:
    """Streams one task's splits and prepares the questions each checkpoint asks.

    Args:
        splits: Every split of the task's config, in checkpoint order (the runner checks them).
        make_memory: Makes each patient's memory (`new_memory` bound to the run's models).
        prompts: Whether to build each question's prompt (a retrieval-only run has no use for them).
        done: (task, query id) pairs answered before (a resume); they are not prepared again.
        on_progress: Called after each patient's ingest and after each checkpoint is prepared.
    """

    def __init__(self, task: TaskConfig, folder: Path, splits: list[str], config: RunConfig,
                 make_memory: MemoryFactory, *, answering: Backbone | None = None, answer_mode: str = "shared",
                 prompts: bool = True, done: set[tuple[str, str]] | None = None,
                 on_progress: Callable[[Progress], None] | None = None) -> None:
        self.task, self.folder, self.config = task, folder, config
        self.make_memory, self.answering, self.answer_mode = make_memory, answering, answer_mode
        self.builder = PromptBuilder() if prompts else None
        self.done = done or set()
        self.on_progress = on_progress or (lambda _progress: None)
        self.expected = 0
        """Questions of the task in the streamed rows (answered before or now)."""
        # Sessions after the last asked checkpoint can change no answer: they are not streamed (a memory that
        # builds itself with an LLM would pay for them).
        last_asked = max((checkpoint_of(s) for s in splits if self._is_asked(s)), default=0)
        self.splits = [split for split in splits if checkpoint_of(split) <= last_asked]

    def _is_asked(self, split: str) -> bool:
        return split_is_asked(self.task, split, self.config.checkpoints)

    def checkpoints(self) -> Iterator[Checkpoint]:
        """Each streamed checkpoint in order, its questions prepared (none at a checkpoint not asked)."""
        memories: dict[str, MemorySystem] = {}
        costs: dict[str, MemoryCost] = {}
        streams: dict[str, ObservedStream] = {}
        for index, split in enumerate(self.splits, start=1):
            rows = read_rows(self.folder, self.task, split, self.config.limit, self.config.patients)
            observed = []
            for row in rows:
                pid = row["persona_id"]
                if pid not in memories:
                    costs[pid] = MemoryCost()
                    memories[pid], streams[pid] = self.make_memory(self.task, pid, costs[pid]), ObservedStream(pid)
                batch = [Session.model_validate(s) for s in row["sessions"]]
                observed.append((pid, streams[pid].observe(batch)))

            self._ingest(observed, memories, costs, split, index)
            asked: list[Asked] = []
            for row in rows:
                pid = row["persona_id"]
                guard(memories[pid], streams[pid], checkpoint_of(split))
                if self._is_asked(split):
                    asked.extend(self._prepare(row, memories[pid], streams[pid], costs[pid]))
            yield Checkpoint(split, index, len(self.splits), asked)

    def _ingest(self, observed: list[tuple[str, list]], memories: dict[str, MemorySystem],
                costs: dict[str, MemoryCost], split: str, index: int) -> None:
        """Every patient reads its new sessions (the checkpoint's questions wait for all of them)."""
        def ingest(item: tuple[str, list]) -> int:
            pid, new = item
            with Stopwatch(costs[pid], "ingest_s"):  # always: a checkpoint without questions still feeds it
                memories[pid].ingest(new)
            costs[pid].sessions += len(new)
            costs[pid].items = memories[pid].size()
            return len(new)

        patients_done = 0

        def report(_position: int, sessions_read: int) -> None:
            nonlocal patients_done
            patients_done += 1
            self.on_progress(Progress(self.task.task, "ingest", split, index, len(self.splits), patients_done,
                                      len(observed), sessions=sessions_read))

        # patients are independent: with --memory_concurrency their construction calls share batches
        map_each(ingest, observed, self.config.memory_concurrency, report)

    def _prepare(self, row: dict, memory: MemorySystem, stream: ObservedStream, cost: MemoryCost) -> list[Asked]:
        wanted = set(self.task.types())
        mine = [q for q in row["questions"] if q["query_type"] in wanted]
        self.expected += len(mine)
        questions = [q for q in mine if (self.task.task, q["query_id"]) not in self.done]
        if not questions:
            return []
        queries = [retrieval_query(q) for q in questions]
        if self.answer_mode == "native":
            return self._native(questions, queries, memory, stream, cost)
        budget = None
        if self.answering is not None:
            budget = (self.answering.context_window - self.task.generation_kwargs.max_tokens
                      - PROMPT_OVERHEAD_TOKENS)
        with Stopwatch(cost, "retrieve_s"):
            if memory.reads_gold_evidence:  # the oracle reference alone: the ceiling is measured on the gold
                retrievals = memory.retrieve_with_evidence(_with_evidence(questions, queries, stream),
                                                           self.task.retrieval_k, budget)
            else:
                retrievals = memory.retrieve(queries, self.task.retrieval_k, budget)
        spent = cost.to_dict()
        out = []
        for question, query, observed in zip(questions, queries, retrievals, strict=True):
            retrieval = stream.to_real(observed)  # real ids from here on: prompt dates, Recall@k, MRR
            request = None
            if self.builder is not None:
                request = self.builder.build(self.task, question, retrieval.items, stream.dates, stream.latest)
            out.append(Asked(self.task, question, query, retrieval, request, spent))
        return out

    def _native(self, questions: list[dict], queries: list[str], memory: MemorySystem, stream: ObservedStream,
                cost: MemoryCost) -> list[Asked]:
        """The memory answers each question itself, from the task's prompt with no memory shown."""
        builder = self.builder or PromptBuilder()
        requests = [builder.build(self.task, q, [], stream.dates, stream.latest) for q in questions]
        answers = memory.answer([NativeQuestion(query, request)
                                 for query, request in zip(queries, requests, strict=True)])
        if len(answers) != len(questions):
            raise RunFailedError(f"memory '{self.config.memory}' answered {len(answers)} of {len(questions)} "
                                 "questions")
        spent = cost.to_dict()
        return [Asked(self.task, question, query, stream.to_real(Retrieval(items=answer.items)), request, spent,
                      answer.completion, answer.steps)
                for question, query, request, answer in zip(questions, queries, requests, answers, strict=True)]


__all__ = ["Asked", "Checkpoint", "LeakageError", "Models", "TaskStream", "checkpoint_of", "guard", "new_memory",
           "read_rows"]
