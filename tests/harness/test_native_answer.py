"""The `native` answer mode: a memory that answers itself gets the task's prompt with no memory shown and the
answering LLM through the run's cache; its answer, the items it used (mapped to the dataset's ids for Recall@k)
and its steps are recorded, and the mode is in the run header. Modes a memory cannot answer in are refused."""

from __future__ import annotations

import json
from collections.abc import Sequence

import pytest

from medmemorybench.errors import InputError
from medmemorybench.harness.results import read_samples
from medmemorybench.memory.base import MemoryItem, MemorySystem, NativeAnswer, NativeQuestion, Retrieval
from medmemorybench.memory.context import summed_completion
from medmemorybench.memory.registry import MEMORY_SYSTEMS
from medmemorybench.models.base import ChatRequest
from medmemorybench.render.models import ObservedSession
from tests.harness.conftest import RecordingBackbone, run, run_config


class NotebookMemory(MemorySystem):
    """Unit-test double: keeps every session; answers in two steps (a lookup call, then the answer with the
    latest session's date added to the task's prompt) and says it used the latest session."""

    name = "notebook"
    answer_modes = ("native", "shared")

    def __init__(self) -> None:
        super().__init__()
        self.sessions: list[ObservedSession] = []

    def reset(self) -> None:
        self.sessions.clear()

    def ingest(self, sessions: Sequence[ObservedSession]) -> None:
        self.sessions.extend(sessions)

    def retrieve(self, questions: Sequence[str], k: int, token_budget: int | None = None) -> list[Retrieval]:
        return [Retrieval(items=[MemoryItem(s.date or "", (s.session_id,)) for s in self.sessions[-k:]])
                for _ in questions]

    def answer(self, questions: Sequence[NativeQuestion]) -> list[NativeAnswer]:
        latest = self.sessions[-1]
        lookups = self.context.answerer.generate([
            ChatRequest(messages=[{"role": "user", "content": f"lookup {q.query}"}]) for q in questions])
        finals = self.context.answerer.generate([
            q.request.model_copy(update={"messages": [*q.request.messages[:-1], {
                "role": "user", "content": f"My notes end on {latest.date}.\n{q.request.messages[-1]['content']}"}]})
            for q in questions])
        return [NativeAnswer(summed_completion(final, [lookup, final]), [MemoryItem("notes", (latest.session_id,))], 2)
                for lookup, final in zip(lookups, finals, strict=True)]

    def session_ids(self) -> set[str]:
        return {s.session_id for s in self.sessions}


@pytest.fixture
def notebook(monkeypatch):
    monkeypatch.setitem(MEMORY_SYSTEMS, "notebook", f"{__name__}:NotebookMemory")


def test_a_native_memory_answers_itself_and_its_items_steps_and_mode_are_recorded(dataset_dir, tmp_path, notebook):
    backbone = RecordingBackbone(lambda r: "looked up" if r.messages[0]["content"].startswith("lookup")
                                 else "No, that is not in my records.")
    config = run_config(dataset_dir, tmp_path, memory="notebook", limit=1, checkpoints=[10],
                        tasks=["medmemorybench_efficient_sua"])
    run(config, backbone=backbone)
    samples = read_samples(config.output_path / "samples.jsonl")
    assert samples and all(s["output"] == "No, that is not in my records." and s["native_steps"] == 2
                           for s in samples)
    assert all(s["tokens"]["prompt"] == 20 and s["tokens"]["completion"] == 6 for s in samples)  # both steps
    answered = [r for batch in backbone.batches for r in batch if not r.messages[0]["content"].startswith("lookup")]
    # the task's own prompt, with what the memory added, and nothing retrieved by the harness
    assert all("My notes end on" in r.messages[-1]["content"] for r in answered)
    assert all(r.messages[0]["role"] == "system" for r in answered)
    (used,) = {tuple(s["retrieved"][0]["session_ids"]) for s in samples}
    assert used[0].endswith("-S010")  # the dataset's id of the 10th consultation, not the opaque one it saw
    header = json.loads((config.output_path / "run.json").read_text())
    assert header["answer_mode"] == "native"


def test_the_same_memory_in_shared_mode_is_answered_by_the_harness_prompt(dataset_dir, tmp_path, notebook):
    backbone = RecordingBackbone("I do not know.")
    config = run_config(dataset_dir, tmp_path, memory="notebook", limit=1, checkpoints=[10],
                        tasks=["medmemorybench_efficient_sua"], answer_mode="shared")
    run(config, backbone=backbone)
    samples = read_samples(config.output_path / "samples.jsonl")
    assert samples and all("native_steps" not in s for s in samples)
    assert json.loads((config.output_path / "run.json").read_text())["answer_mode"] == "shared"


@pytest.mark.parametrize(("memory", "mode", "says"), [
    ("bm25", "native", "--answer_mode native: memory 'bm25' answers in shared mode only"),
    ("bm25", "sideways", "--answer_mode: 'sideways' is not one of shared, native"),
    ("notebook", "native", "--answer_mode native: memory 'notebook' answers with the answering model; give --model"),
])
def test_a_mode_the_memory_cannot_answer_in_is_refused(dataset_dir, tmp_path, notebook, memory, mode, says):
    with pytest.raises(InputError, match=says):
        run(run_config(dataset_dir, tmp_path, memory=memory, limit=1, checkpoints=[10], answer_mode=mode))
    assert not (tmp_path / "run" / "samples.jsonl").exists() or not read_samples(tmp_path / "run" / "samples.jsonl")
