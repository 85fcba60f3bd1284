"""Runs to submit, made on the shared small dataset (`dataset_dir`) by the real runner and memory, answered by a
test double that knows some gold answers, and helpers to tamper with a copy of a run."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from medmemorybench.models.base import ChatRequest, Completion
from tests.harness.conftest import RecordingBackbone, dataset_questions, run, run_config

WRONG = "I believe it was 5 mg."


class HalfKnowingBackbone(RecordingBackbone):
    """Unit-test double: answers every other question (in dataset order) with its gold answer and the rest
    with `WRONG`, so a run has right and wrong answers to re-score."""

    name = "half-knowing"

    def __init__(self, questions: list[dict]) -> None:
        super().__init__()
        self.gold = {q["question"]: (q["answer"] if i % 2 == 0 else WRONG) for i, q in enumerate(questions)}

    @property
    def model_id(self) -> str:
        return "half-knowing-double"

    def answer(self, request: ChatRequest) -> str:
        content = request.messages[-1]["content"]
        return next((answer for question, answer in self.gold.items() if question in content), WRONG)

    def generate(self, requests):  # noqa: ANN001, ANN201
        return [Completion(text=self.answer(r), prompt_tokens=10, completion_tokens=3) for r in requests]


@pytest.fixture(scope="session")
def answered_run(dataset_dir, tmp_path_factory) -> Path:
    """A complete run of both modes, every question answered (half of them right), bm25 memory."""
    tmp = tmp_path_factory.mktemp("answered")
    questions = dataset_questions(dataset_dir, "efficient")
    config = run_config(dataset_dir, tmp, tasks=["medmemorybench"], memory="bm25", model="hf")
    run(config, backbone=HalfKnowingBackbone(questions))
    return config.output_path


@pytest.fixture(scope="session")
def retrieval_run(dataset_dir, tmp_path_factory) -> Path:
    """A retrieval-only slice: one patient, checkpoints 10 and 20, the efficient mode."""
    config = run_config(dataset_dir, tmp_path_factory.mktemp("retrieval"), memory="bm25", limit=1,
                        checkpoints=[10, 20])
    run(config)
    return config.output_path


@pytest.fixture(scope="session")
def oracle_run(dataset_dir, tmp_path_factory) -> Path:
    """The ceiling as a retrieval-only slice: the oracle memory, one patient, checkpoints 10 and 20, efficient."""
    config = run_config(dataset_dir, tmp_path_factory.mktemp("oracle"), memory="oracle", limit=1,
                        checkpoints=[10, 20])
    run(config)
    return config.output_path


@pytest.fixture(scope="session")
def other_build_run(tmp_path_factory) -> tuple[Path, Path]:
    """(A retrieval-only run, its build): one patient of another seed than `dataset_dir`'s, complete on its own data
    (so a submitter could present it as "every question answered")."""
    from medmemorybench.dataset import BuildOptions, build_dataset, export_dataset
    from medmemorybench.knowledge import default_knowledge
    from medmemorybench.render.templates import load_templates

    root = tmp_path_factory.mktemp("other-build")
    built = build_dataset(default_knowledge(), load_templates("en"),
                          BuildOptions(seed=6, personas=1, health_sessions=10, family_sessions=0))
    folder = export_dataset(built, root / "build")
    config = run_config(folder, root, memory="bm25")
    run(config)
    return config.output_path, folder


def copy_run(run_dir: Path, tmp_path: Path) -> Path:
    """A copy of a run folder (without the memory's working files) to tamper with."""
    target = tmp_path / "run-copy"
    shutil.copytree(run_dir, target, ignore=shutil.ignore_patterns("memory"))
    return target


def edit_samples(run_dir: Path, change: Callable[[list[dict]], list[dict]]) -> None:
    """Rewrite samples.jsonl through `change`."""
    path = run_dir / "samples.jsonl"
    samples = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    path.write_text("".join(json.dumps(s, ensure_ascii=False) + "\n" for s in change(samples)), encoding="utf-8")


def edit_json(path: Path, change: Callable[[dict], None]) -> None:
    """Rewrite a JSON file through `change` (in place)."""
    value = json.loads(path.read_text(encoding="utf-8"))
    change(value)
    path.write_text(json.dumps(value, indent=1, sort_keys=True) + "\n", encoding="utf-8")
