"""The protocol runner: stream order, batching, leakage guard, retrieval by what was asked, errors, cache."""

from __future__ import annotations

import datetime as dt
import json

import pytest

from medmemorybench.errors import RunFailedError
from medmemorybench.harness import runner as runner_module
from medmemorybench.harness.observed import retrieval_query
from medmemorybench.harness.results import read_samples
from medmemorybench.harness.runner import LeakageError
from medmemorybench.memory.long_context import LongContext as LongContextMemory
from tests.harness.conftest import RecordingBackbone, dataset_questions, run, run_config


def test_retrieval_only_run_writes_one_sample_per_question(dataset_dir, tmp_path):
    runner = run(run_config(dataset_dir, tmp_path, memory="bm25"))
    samples = read_samples(runner.config.output_path / "samples.jsonl")
    assert len(samples) == len(dataset_questions(dataset_dir))
    assert {s["status"] for s in samples} == {"retrieval_only"}
    assert all(s["recall_at_k"] is not None for s in samples if s["query_type"] != "ABS")
    summary = json.loads((runner.config.output_path / "summary.json").read_text())
    assert summary["header"]["dataset_fingerprint"] and summary["tasks"]["medmemorybench_efficient"]["metrics"]


class SpyMemory(LongContextMemory):
    """Records what the runner feeds and asks."""

    log: list = []

    def ingest(self, sessions):  # noqa: ANN001, ANN201
        SpyMemory.log.append(("ingest", [s.session_id for s in sessions]))
        super().ingest(sessions)

    def retrieve(self, questions, k, token_budget=None):  # noqa: ANN001, ANN201
        SpyMemory.log.append(("retrieve", list(questions)))
        return super().retrieve(questions, k, token_budget)


def test_sessions_are_streamed_even_where_nothing_is_asked(dataset_dir, tmp_path):
    SpyMemory.log = []
    run(run_config(dataset_dir, tmp_path, checkpoints=[100], limit=1), memory_factory=SpyMemory)
    ingested = [sid for kind, ids in SpyMemory.log if kind == "ingest" for sid in ids]
    assert len(ingested) == 100 and ingested == sorted(ingested)
    asked = [q for kind, qs in SpyMemory.log if kind == "retrieve" for q in qs]
    questions_at_100 = [retrieval_query(q) for q in dataset_questions(dataset_dir) if q["checkpoint"] == 100
                        and q["persona_id"] == "P0001"]
    assert asked == questions_at_100  # what the patient asked, never an instruction prompt


def test_all_patients_of_a_checkpoint_go_to_the_backbone_in_one_batch(dataset_dir, tmp_path):
    backbone = RecordingBackbone()
    run(run_config(dataset_dir, tmp_path, model="recording", memory="bm25"), backbone)
    assert len(backbone.batches) == 10  # one per checkpoint
    first = backbone.batches[0]
    assert len({r.messages[1]["content"].split("Question:")[0] for r in first}) > 1
    at_10 = {q["persona_id"] for q in dataset_questions(dataset_dir) if q["checkpoint"] == 10}
    assert at_10 == {"P0001", "P0002", "P0003"}


def test_prompts_hold_no_wall_clock_date_and_put_the_question_last(dataset_dir, tmp_path):
    backbone = RecordingBackbone()
    run(run_config(dataset_dir, tmp_path, model="recording", memory="bm25", limit=1), backbone)
    today = dt.date.today()
    for batch in backbone.batches:
        for request in batch:
            text = " ".join(m["content"] for m in request.messages)
            assert today.isoformat() not in text and str(today.year) not in text
            assert "2024-" in request.messages[0]["content"]  # "as of" comes from the data
            assert request.messages[1]["content"].rfind("Question:") > request.messages[1]["content"].rfind("[1]")


def test_backbone_errors_are_errors_not_wrong_answers(dataset_dir, tmp_path):
    # every answer failed: the run says so (exit 1 in the CLI) after writing every sample and the summary
    backbone = RecordingBackbone(error="HTTP 503: overloaded")
    config = run_config(dataset_dir, tmp_path, model="recording", memory="none", limit=1,
                        tasks=["medmemorybench_efficient_eem"])
    with pytest.raises(RunFailedError, match=r"every one of the \d+ answers failed \(first: HTTP 503: overloaded\)"):
        run(config, backbone)
    samples = read_samples(config.output_path / "samples.jsonl")
    assert samples and all(s["status"] == "error" and s["correct"] is None for s in samples)
    summary = json.loads((config.output_path / "summary.json").read_text())
    overall = summary["tasks"]["medmemorybench_efficient_eem"]["metrics"]["correct"]["overall"][0]
    assert overall["n_error"] == len(samples) and overall["n_scored"] == 0


def test_leakage_guard_stops_a_memory_holding_a_session_it_was_never_given(dataset_dir, tmp_path):
    class FutureMemory(LongContextMemory):
        def session_ids(self):  # noqa: ANN201
            return {"P0001-S099"}

    with pytest.raises(LeakageError, match="names P0001-S099, a session it was never given"):
        run(run_config(dataset_dir, tmp_path, limit=1), memory_factory=FutureMemory)


def test_rerun_is_served_from_the_response_cache(dataset_dir, tmp_path):
    config = run_config(dataset_dir, tmp_path, model="recording", memory="bm25", limit=1,
                     tasks=["medmemorybench_efficient_eem"])
    first = RecordingBackbone()
    run(config, first)
    second = RecordingBackbone()
    config.output_path = tmp_path / "run2"
    runner = run(config, second)
    assert sum(len(b) for b in second.batches) == 0
    assert all(s["cache_hit"] for s in read_samples(runner.config.output_path / "samples.jsonl"))


def test_existing_results_need_resume(dataset_dir, tmp_path):
    config = run_config(dataset_dir, tmp_path, memory="none", limit=1, tasks=["medmemorybench_efficient_eem"])
    run(config)
    from medmemorybench.errors import InputError

    with pytest.raises(InputError, match="pass --resume"):
        run(config)


def test_runner_module_has_no_wall_clock_calls():
    # Dates in prompts come from the data; the runner must not read the clock.
    with open(runner_module.__file__) as handle:
        source = handle.read()
    assert "datetime.now" not in source and "date.today" not in source and "time.time()" not in source


def test_resume_asks_failed_questions_again_and_keeps_the_rest(dataset_dir, tmp_path):
    config = run_config(dataset_dir, tmp_path, model="recording", memory="bm25", limit=1,
                     tasks=["medmemorybench_efficient_eem"], use_cache=False)
    with pytest.raises(RunFailedError):  # (every answer failed: recorded, then the run says so)
        run(config, RecordingBackbone(error="HTTP 503: overloaded"))
    config.resume = True
    runner = run(config, RecordingBackbone(reply="500 mg"))
    samples = read_samples(runner.config.output_path / "samples.jsonl")
    assert samples and all(s["status"] == "scored" for s in samples)
    assert len({s["query_id"] for s in samples}) == len(samples)


def test_checkpoint_missing_from_the_dataset_is_an_input_error(dataset_dir, tmp_path):
    from medmemorybench.errors import InputError

    with pytest.raises(InputError, match=r"--checkpoints: \[25\] not in the dataset"):
        run(run_config(dataset_dir, tmp_path, checkpoints=[25], limit=1))
