"""Running the runner on the shared small dataset (`dataset_dir`, in tests/conftest.py), and test doubles."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pyarrow.parquet as pq

from medmemorybench.harness.config import RunConfig
from medmemorybench.harness.runner import Runner
from medmemorybench.models.base import Backbone, ChatRequest, Completion


def run_config(dataset_dir: Path, tmp_path: Path, **kwargs) -> RunConfig:
    """A run of `dataset_dir` into `tmp_path` (default task: medmemorybench_efficient)."""
    return RunConfig(tasks=kwargs.pop("tasks", ["medmemorybench_efficient"]), output_path=tmp_path / "run",
                     dataset_path=str(dataset_dir), cache_path=tmp_path / "cache.sqlite", **kwargs)


def run(config: RunConfig, backbone: Backbone | None = None, memory_factory=None,  # noqa: ANN001
        judge: Backbone | None = None) -> Runner:
    """Run `config`, with `backbone` as the model, `judge` as the judge and `memory_factory` making each
    patient's memory."""
    runner = Runner(config)
    if backbone is not None or judge is not None:
        def load_models() -> None:
            runner.backbone, runner.judge, runner.memory_backbone = backbone, judge, backbone

        runner._load_models = load_models  # type: ignore[method-assign]
    if memory_factory is not None:
        runner._new_memory = lambda *_context: memory_factory()  # type: ignore[method-assign]
    runner.run()
    return runner


def stream_rows(dataset_dir: Path, mode: str = "efficient") -> list[dict]:
    """Every row of a stream config, by patient then checkpoint."""
    paths = (dataset_dir / mode).glob("checkpoint_*.parquet")
    rows = [row for path in paths for row in pq.read_table(path).to_pylist()]
    return sorted(rows, key=lambda row: (row["persona_id"], row["checkpoint"]))


def dataset_questions(dataset_dir: Path, mode: str = "efficient") -> list[dict]:
    """Every question of a stream config."""
    return [q for row in stream_rows(dataset_dir, mode) for q in row["questions"]]


class RecordingBackbone(Backbone):
    """Unit-test double: answers every request with `reply` (or an error) and records each batch.

    `reply` is a fixed text or a function of the request (`echo_system_prompt` repeats the system message).
    """

    name = "recording"

    def __init__(self, reply: str | Callable[[ChatRequest], str] = "That is not in my records.",
                 error: str | None = None) -> None:
        self.reply, self.error = reply, error
        self.batches: list[list[ChatRequest]] = []

    @property
    def model_id(self) -> str:
        return "recording-double"

    def generate(self, requests):  # noqa: ANN001, ANN201
        self.batches.append(list(requests))
        if self.error:
            return [Completion(error=self.error) for _ in requests]
        return [Completion(text=self.reply(r) if callable(self.reply) else self.reply, prompt_tokens=10,
                           completion_tokens=3) for r in requests]


def echo_system_prompt(request: ChatRequest) -> str:
    """What a small model does with the `none` memory: it repeats its system prompt, which holds
    "That is not in my records."."""
    return request.messages[0]["content"]


JUDGE_SAYS_CORRECT = ('{"correct": true, "reason": "fake", "ncr": 1.0, "crc": 1.0, "cc": 1.0, '
                      '"same_conclusion": true, "veto": false}')
"""A verdict that both judge templates (rubric and MCD) read as correct."""
