"""The runner hands a memory its context and records what the memory cost, per patient and checkpoint."""

from __future__ import annotations

import json

import pytest

from medmemorybench.errors import InputError
from medmemorybench.harness.results import read_samples
from tests.harness.conftest import RecordingBackbone, run, run_config
from tests.memory.test_memos import scripted_extraction


def test_a_memory_that_builds_itself_needs_a_model(dataset_dir, tmp_path):
    with pytest.raises(InputError, match="--memory memos: builds itself with an LLM; give --model"):
        run(run_config(dataset_dir, tmp_path, memory="memos", limit=1, checkpoints=[10]))


def test_each_sample_records_its_patients_memory_cost_and_the_summary_sums_it(dataset_dir, tmp_path):
    backbone = RecordingBackbone(lambda r: scripted_extraction(r) if r.response_schema else "I do not know.")
    config = run_config(dataset_dir, tmp_path, memory="memos", limit=1, checkpoints=[10, 20],
                        tasks=["medmemorybench_efficient_eem"])
    run(config, backbone=backbone)
    samples = read_samples(config.output_path / "samples.jsonl")
    by_checkpoint = {s["checkpoint"]: s["memory_cost"] for s in samples}
    assert by_checkpoint[10]["sessions"] == 10 and by_checkpoint[20]["sessions"] == 20
    extraction_calls = sum(1 for batch in backbone.batches for r in batch if r.response_schema)
    # one call per session, answers not counted; nothing after the last asked checkpoint is read
    assert by_checkpoint[20]["llm_calls"] == extraction_calls == 20
    assert by_checkpoint[20]["items"] == 20 and by_checkpoint[10]["items"] == 10
    summary = json.loads((config.output_path / "summary.json").read_text())
    cost = summary["tasks"]["medmemorybench_efficient_eem"]["memory_cost"]
    assert cost["patients"] == 1 and cost["totals"]["llm_calls"] == 20 and cost["per_session"]["llm_calls"] == 1.0
    assert [c["checkpoint"] for c in cost["by_checkpoint"]] == [10, 20]
    assert summary["header"]["memory_model"]["model"] == "recording-double"
    assert (config.output_path / "memory" / "medmemorybench_efficient_eem").is_dir()  # a folder per patient


def test_retrieval_memories_report_their_size_and_no_llm_calls(dataset_dir, tmp_path):
    config = run_config(dataset_dir, tmp_path, memory="bm25", limit=1, checkpoints=[10],
                        tasks=["medmemorybench_efficient_eem"])
    run(config)
    (cost,) = {json.dumps(s["memory_cost"], sort_keys=True) for s in read_samples(config.output_path / "samples.jsonl")}
    cost = json.loads(cost)
    assert cost["llm_calls"] == 0 and cost["items"] > 0 and cost["sessions"] == 10


def _without_seconds(sample: dict) -> dict:
    cost = {k: v for k, v in sample["memory_cost"].items() if not k.endswith("_s")}
    return {**{k: v for k, v in sample.items() if k not in ("latency_ms", "memory_cost")}, "memory_cost": cost}


def test_concurrent_ingestion_shares_batches_and_changes_no_result(dataset_dir, tmp_path):
    def reply(request):  # noqa: ANN001, ANN202
        return scripted_extraction(request) if request.response_schema else "That is not in my records."

    results = {}
    for concurrency in (1, 3):
        backbone = RecordingBackbone(reply)
        config = run_config(dataset_dir, tmp_path / f"c{concurrency}", memory="memos", checkpoints=[10, 20],
                            tasks=["medmemorybench_efficient_eem"], memory_concurrency=concurrency, use_cache=False)
        run(config, backbone=backbone)
        results[concurrency] = [_without_seconds(s) for s in read_samples(config.output_path / "samples.jsonl")]
        largest = max(len(batch) for batch in backbone.batches if batch[0].response_schema)
        # one patient's checkpoint is a batch of 10 sessions; three at once share batches of up to 16
        assert largest == (10 if concurrency == 1 else 16)
    assert results[1] == results[3] and len(results[1]) > 0


def test_report_puts_the_memory_cost_beside_accuracy(dataset_dir, tmp_path):
    from medmemorybench.report import cost_table, load_summary

    backbone = RecordingBackbone(lambda r: scripted_extraction(r) if r.response_schema else "I do not know.")
    config = run_config(dataset_dir, tmp_path, memory="memos", limit=1, checkpoints=[10],
                        tasks=["medmemorybench_efficient_eem"])
    run(config, backbone=backbone)
    header, rows = cost_table([load_summary(config.output_path)])
    table = {row[0]: row[1] for row in rows}
    assert len(header) == 2 and table["LLM calls / session"] == "1" and table["sessions read"] == "10"
    assert table["accuracy %"].startswith("0.0 (n=") and table["items stored / patient"] == "10"


def test_the_paper_table_has_a_row_per_system_with_types_by_mode_means_and_cost(dataset_dir, tmp_path):
    """Rows: runs; columns: each type in efficient then mixed, each mode's mean over types, their mean, and the
    construction cost per session. A run of one mode leaves the other's cells empty."""
    from medmemorybench.report import load_summary, paper_table

    memos = run_config(dataset_dir, tmp_path / "memos", memory="memos", limit=1, checkpoints=[10],
                       tasks=["medmemorybench_efficient_sua", "medmemorybench_mixed_sua"])
    run(memos, backbone=RecordingBackbone(lambda r: scripted_extraction(r) if r.response_schema else "I do not know."))
    bm25 = run_config(dataset_dir, tmp_path / "bm25", memory="bm25", limit=1, checkpoints=[10],
                      tasks=["medmemorybench_efficient_sua"])
    run(bm25, backbone=RecordingBackbone("I do not know."))
    header, rows = paper_table([load_summary(memos.output_path), load_summary(bm25.output_path)])
    assert header[:4] == ["memory / backbone", "SUA eff", "mean eff", "SUA mix"]
    assert header[4:] == ["mean mix", "mean", "LLM calls / session", "tokens / session", "ingest s / session"]
    by_system = {row[0].split(" / ")[0]: dict(zip(header, row, strict=True)) for row in rows}
    assert by_system["memos"]["SUA eff"] == "0.0" and by_system["memos"]["mean"] == "0.0"
    assert by_system["memos"]["LLM calls / session"] == "1"
    assert by_system["bm25"]["SUA mix"] == "-" and by_system["bm25"]["LLM calls / session"] == "0"
    header, _rows = paper_table([load_summary(bm25.output_path)])  # (no mixed run: no mixed columns)
    assert header[:4] == ["memory / backbone", "SUA eff", "mean eff", "mean"]
