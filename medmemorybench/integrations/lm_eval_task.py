"""MedMemoryBench as an lm-evaluation-harness task: `lm_eval run --tasks medmemorybench_mixed --include_path tasks`.

lm-eval builds this class from a task YAML's `class: !function ...` (its documented route for Python tasks). The
documents are the questions, prepared by the same streaming protocol as `medmemorybench run` (`harness/stream.py`):
per patient a fresh memory reads the sessions checkpoint by checkpoint and retrieves for each question at its
checkpoint, and each question's prompt is rendered from our templates. lm-eval's model then answers every prompt,
and each answer is scored by our scorers (`harness/samples.make_record`), so the same prompts give the same
scores as our runner. This holds for memories that need no LLM to read (long_context, bm25, dense): answering
later cannot change what they retrieved.

Settings live under the task's `metadata` (`harness/tasks.TaskMetadata`): `memory`, `memory_args`, `patients`,
`checkpoints`, `by_type`, overridable with `lm_eval run --metadata '{...}'`. The dataset is found as our runner
finds it (`dataset/load.find_local`): `$MEDMEMORYBENCH_DATA`, `./out/medmemorybench`, or the registered build.
"""

from __future__ import annotations

import json
import logging
import sys
import tempfile
from pathlib import Path
from typing import Any

import datasets
from lm_eval.api.task import ConfigurableTask

from medmemorybench.dataset.load import find_local
from medmemorybench.errors import InputError
from medmemorybench.harness.config import RunConfig
from medmemorybench.harness.progress import Progress
from medmemorybench.harness.runner import dataset_splits
from medmemorybench.harness.samples import answer_echo, make_record
from medmemorybench.harness.stream import Asked, Models, TaskStream, new_memory
from medmemorybench.harness.tasks import TaskConfig, TaskMetadata, load_task_file
from medmemorybench.memory.base import MemoryItem, Retrieval
from medmemorybench.memory.registry import memory_class
from medmemorybench.models.base import ChatRequest, Completion

logger = logging.getLogger(__name__)


def _one_line_errors(previous: Any) -> Any:
    """An excepthook that prints a user's mistake (an `InputError` of ours, however lm-eval wrapped it) as one line,
    as our own commands do, and hands anything else to `previous`. Only an uncaught exception reaches it: under the
    `lm_eval` command line, never inside a program that calls lm-eval and catches what it raises."""

    def hook(kind: type[BaseException], error: BaseException, trace: Any) -> None:
        cause: BaseException | None = error
        while cause is not None and not isinstance(cause, InputError):
            cause = cause.__cause__ or cause.__context__
        if cause is None:
            previous(kind, error, trace)
        else:
            print(f"error: {cause}", file=sys.stderr)

    hook.medmemorybench = True  # type: ignore[attr-defined]
    return hook


if not getattr(sys.excepthook, "medmemorybench", False):  # (once, however often lm-eval imports this module)
    sys.excepthook = _one_line_errors(sys.excepthook)


def task_settings(config: dict[str, Any]) -> TaskConfig:
    """Our task, read from the YAML lm-eval loaded (`metadata.config_source`) with our loader (which validates it
    and merges `metadata` through `include:`), then lm-eval's runtime metadata (`--metadata`) on top.

    Raises:
        InputError: naming the key of a bad runtime value, or a memory that needs an LLM to read.
    """
    metadata = dict(config.get("metadata") or {})
    source = metadata.get("config_source")
    if not source or not Path(source).is_file():
        raise InputError(f"{config.get('task')}: MedMemoryBench tasks are read from their YAML file "
                         f"(metadata.config_source: {source!r}); run them with --include_path tasks")
    task = load_task_file(Path(source))
    if not isinstance(task, TaskConfig):
        raise InputError(f"{source}: a group, not a task")
    runtime = {k: v for k, v in metadata.items() if k in TaskMetadata.model_fields}  # (model_args come along too)
    try:
        merged = TaskMetadata.model_validate({**task.metadata.model_dump(), **runtime})
    except ValueError as exc:
        first = getattr(exc, "errors", lambda: [{}])()[0]
        where = ".".join(str(p) for p in first.get("loc", ())) or "?"
        raise InputError(f"{source}: metadata.{where}: {first.get('msg', exc)} (from --metadata or the YAML)") from None
    cls = memory_class(merged.memory)
    if cls.needs_llm or "shared" not in cls.answer_modes:
        raise InputError(f"{source}: metadata.memory: '{merged.memory}' needs an LLM while it reads (or answers "
                         "itself); under lm-eval use long_context, bm25 or dense (`medmemorybench run` runs the rest)")
    return task.model_copy(update={"metadata": merged})


def prepare_documents(task: TaskConfig, folder: Path) -> list[dict[str, Any]]:
    """One document per asked question, in stream order: its prompt (system and user message), the question row
    and what the memory retrieved (as JSON, for scoring)."""
    settings = task.metadata
    with tempfile.TemporaryDirectory(prefix="medmemorybench-lm-eval-") as workdir:
        config = RunConfig(tasks=[task.task], output_path=Path(workdir), memory=settings.memory,
                           memory_args=dict(settings.memory_args), dataset_path=str(folder),
                           limit=settings.patients, checkpoints=settings.checkpoints)
        splits = dataset_splits(folder, [task], settings.checkpoints)[task.task]

        def make_memory(task_: TaskConfig, persona_id: str, cost) -> Any:  # noqa: ANN001
            return new_memory(config, task_, persona_id, cost, Models(), "shared")

        def report(progress: Progress) -> None:
            if progress.patients_done == progress.patients:
                logger.info("%s: %s (%d/%d) read by %d patients", task.task, progress.split, progress.checkpoint,
                            progress.checkpoints, progress.patients)

        stream = TaskStream(task, folder, splits, config, make_memory, prompts=True, on_progress=report)
        return [_document(asked) for point in stream.checkpoints() for asked in point.asked]


def _document(asked: Asked) -> dict[str, Any]:
    system, user = (m["content"] for m in asked.request.messages)  # type: ignore[union-attr]
    question = asked.question
    retrieval = {"items": [{"text": i.text, "session_ids": list(i.session_ids), "score": i.score}
                           for i in asked.retrieval.items],
                 "truncated_sessions": asked.retrieval.truncated_sessions}
    return {"query_id": question["query_id"], "query_type": question["query_type"],
            "persona_id": question["persona_id"], "checkpoint": question["checkpoint"], "system": system,
            "prompt": user, "gold": question["answer"], "query": asked.query,
            "question_json": json.dumps(question, sort_keys=True, default=str), "retrieval_json": json.dumps(retrieval)}


def score_document(task: TaskConfig, doc: dict[str, Any], answer: str) -> dict[str, float]:
    """Our scores of one answer (`make_record`, as the runner records them), the ones that apply: every metric of
    the task's `metric_list`, and `<metric>_<TYPE>` for those in `metadata.by_type`."""
    question = json.loads(doc["question_json"])
    stored = json.loads(doc["retrieval_json"])
    retrieval = Retrieval(items=[MemoryItem(i["text"], tuple(i["session_ids"]), i["score"]) for i in stored["items"]],
                          truncated_sessions=stored["truncated_sessions"])
    kwargs = task.generation_kwargs
    request = ChatRequest(messages=[{"role": "system", "content": doc["system"]},
                                    {"role": "user", "content": doc["prompt"]}],
                          max_tokens=kwargs.max_tokens, temperature=kwargs.temperature, stop=kwargs.stop)
    completion = Completion(text=answer.strip())  # (our backbones strip their answers too)
    record = make_record(task, question, doc["query"], retrieval, completion, None, "", None,
                         echo=answer_echo(request, retrieval, completion))
    scores = {m.metric: float(record[m.metric]) for m in task.metric_list if record.get(m.metric) is not None}
    for metric in task.metadata.by_type:
        if record.get(metric) is not None:
            scores[f"{metric}_{question['query_type']}"] = float(record[metric])
    return scores


def metric_names(task: TaskConfig) -> dict[str, bool]:
    """Every metric the task reports, with whether higher is better (per-type ones included)."""
    higher = {m.metric: m.higher_is_better for m in task.metric_list}
    names = dict(higher)
    for metric in task.metadata.by_type:
        for query_type in task.types():
            names[f"{metric}_{query_type}"] = higher.get(metric, True)
    return names


class MedMemoryBenchTask(ConfigurableTask):
    """A MedMemoryBench task for lm-evaluation-harness (built by lm-eval from `class:` in the task YAML)."""

    def __init__(self, config: dict[str, Any] | None = None, **kwargs: Any) -> None:
        config = dict(config or {})
        config.pop("class", None)
        self.ours = task_settings(config)
        torch = sys.modules.get("torch")  # (loaded by a local model such as lm-eval's hf; absent for API models)
        if torch is not None:
            torch.set_flush_denormal(True)  # as our hf backbone does: the same numerics, and CPU generation ~14x faster
        self.folder = find_local(self.ours.dataset_path)
        if self.folder is None:
            raise InputError(f"{self.ours.source_file}: dataset_path: no MedMemoryBench build found for "
                             f"'{self.ours.dataset_path}' (set MEDMEMORYBENCH_DATA to a build folder, or run "
                             "`medmemorybench build --output_path out` here)")
        config.update(
            output_type="generate_until", generation_kwargs=self.ours.generation_kwargs.lm_eval_kwargs(),
            test_split="test", doc_to_text="prompt", doc_to_target="gold", description="system",
            metric_list=[{"metric": name, "aggregation": "mean", "higher_is_better": higher}
                         for name, higher in metric_names(self.ours).items()],
            process_results=lambda doc, results: score_document(self.ours, doc, results[0]),
            metadata={**(config.get("metadata") or {}), **self.ours.metadata.model_dump(),
                      "version": self.ours.version, "dataset_folder": str(self.folder)},
        )
        super().__init__(config=config, **kwargs)

    def download(self, dataset_kwargs: dict[str, Any] | None = None, **kwargs: Any) -> None:
        """The documents come from our own stream over the build, not from `load_dataset`."""
        documents = prepare_documents(self.ours, self.folder)
        if not documents:
            raise InputError(f"{self.ours.source_file}: no question asked (metadata.checkpoints "
                             f"{self.ours.metadata.checkpoints}, query types {self.ours.types()})")
        self.dataset = datasets.DatasetDict({"test": datasets.Dataset.from_list(documents)})

    def fewshot_context(self, doc: dict, num_fewshot: int, system_instruction: str | None = None,
                        apply_chat_template: bool = False, fewshot_as_multiturn: bool = False,
                        chat_template: Any = None, gen_prefix: str | None = None) -> str:
        """Our two messages: through the model's chat template when lm-eval applies one (as our `hf` backbone
        does), else as plain text, the system message first."""
        if num_fewshot:
            raise InputError(f"{self.ours.task}: MedMemoryBench tasks take no few-shot examples (--num_fewshot 0)")
        system = f"{system_instruction}\n\n{doc['system']}" if system_instruction else doc["system"]
        messages = [{"role": "system", "content": system}, {"role": "user", "content": doc["prompt"]}]
        if apply_chat_template and chat_template is not None:
            return chat_template(messages, add_generation_prompt=True)
        return f"{system}\n\n{doc['prompt']}\n\n"
