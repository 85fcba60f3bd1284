"""What a submission holds: the self-description (built-in defaults, a claim over them, a third-party system must
describe itself), `.eval_results` entries for a Hub model, the dry run's listing, eval.yaml's shape."""

from __future__ import annotations

import pytest
import yaml
from typer.testing import CliRunner

from medmemorybench.cli import app
from medmemorybench.dataset.eval_yaml import check_eval_yaml, eval_yaml
from medmemorybench.errors import InputError
from medmemorybench.leaderboard import SystemClaim, prepare_submission
from tests.leaderboard.conftest import copy_run, edit_json


def test_a_built_in_system_is_described_from_the_header_and_the_samples(answered_run):
    system = prepare_submission(answered_run).system
    assert (system.name, system.paradigm, system.memory, system.answering_model) == (
        "BM25 RAG", "unstructured", "bm25", "half-knowing-double")
    assert system.cost_per_session == {"llm_calls": 0.0, "tokens": 0.0, "ingest_s": pytest.approx(0, abs=0.1)}
    assert system.answering_model_hub_id is None


def test_a_third_party_system_must_describe_itself(answered_run, tmp_path):
    run = copy_run(answered_run, tmp_path)
    edit_json(run / "run.json", lambda h: h.update(memory={"memory": "visit_digest", "window": 3}))
    edit_json(run / "summary.json", lambda s: s["header"].update(memory={"memory": "visit_digest", "window": 3}))
    with pytest.raises(InputError, match="--system: memory 'visit_digest' is not built in"):
        prepare_submission(run)
    system = prepare_submission(run, claim=SystemClaim(version="0.3", paradigm="flat_extraction",
                                                       link="https://example.org/digest")).system
    assert (system.name, system.version, system.paradigm, system.memory_args) == (
        "visit_digest", "0.3", "flat_extraction", {"window": 3})


def test_a_hub_model_gets_eval_results_entries_with_the_headline_scores(answered_run, tmp_path):
    run = copy_run(answered_run, tmp_path)
    model = {"backbone": "openai", "model": "my-org/half-knowing-7b", "base_url": "http://127.0.0.1:8000/v1"}
    edit_json(run / "run.json", lambda h: h.update(model=model))
    edit_json(run / "summary.json", lambda s: s["header"].update(model=model))
    submission = prepare_submission(run, dataset_revision="a" * 40)
    assert submission.system.answering_model_hub_id == "my-org/half-knowing-7b"
    entries = {e["dataset"]["task_id"]: e for e in yaml.safe_load(submission.eval_results)}
    summary = submission.files["summary.json"].decode()
    efficient = yaml.safe_load(summary)["tasks"]["medmemorybench_efficient"]["metrics"]["correct"]
    assert entries["efficient"]["value"] == round(100 * efficient["mean_over_types"][0]["mean"], 2)
    assert entries["overall"]["dataset"] == {"id": "medmemorybench/MedMemoryBench", "task_id": "overall",
                                             "revision": "a" * 40}


def test_a_slice_gets_no_eval_results(retrieval_run):
    submission = prepare_submission(retrieval_run, allow_partial=True,
                                    claim=SystemClaim(answering_model_hub_id="my-org/model"))
    assert submission.eval_results is None and not submission.manifest.coverage.is_complete


def test_dry_run_prints_the_pull_requests_files_and_sends_nothing(answered_run):
    result = CliRunner().invoke(app, ["submit", str(answered_run), "--repo_id", "my-org/results", "--dry_run"])
    assert result.exit_code == 0, result.output
    added = [line.split()[1] for line in result.output.splitlines() if line.strip().startswith("add ")]
    assert [path.rpartition("/")[2] for path in added] == ["run.json", "samples.jsonl", "summary.json",
                                                           "system.json", "submission.json"]
    assert all(path.startswith("submissions/bm25-rag/half-knowing-double/") for path in added)
    assert "would send to pull request on my-org/results" in result.output
    assert not (answered_run / ".eval_results").exists()


def test_submit_to_a_folder_then_the_board(answered_run, dataset_dir, tmp_path):
    runner = CliRunner()
    for _ in range(2):  # (the same samples land in the same bundle)
        done = runner.invoke(app, ["submit", str(answered_run), "--results", str(tmp_path / "results")])
        assert done.exit_code == 0, done.output
    assert len(list((tmp_path / "results" / "submissions").glob("*/*/*"))) == 1
    board = runner.invoke(app, ["leaderboard", "--results", str(tmp_path / "results"), "--html",
                                str(tmp_path / "board"), "--dataset_path", str(dataset_dir)])  # (re-scored)
    assert board.exit_code == 0 and "1 runs and 13 paper reference rows" in board.output
    assert (tmp_path / "board" / "index.html").stat().st_size > 20_000


def test_eval_yaml_has_the_documented_shape(dataset_dir):
    splits = {config: sorted(p.stem for p in (dataset_dir / config).glob("*.parquet"))
              for config in ("efficient", "mixed")}
    document = check_eval_yaml(eval_yaml(splits), splits)
    assert [(t["id"], t["config"], t["split"]) for t in document["tasks"]] == [
        ("overall", "efficient", "checkpoint_100"), ("efficient", "efficient", "checkpoint_100"),
        ("mixed", "mixed", "checkpoint_100")]
    broken = [("tasks: []", "tasks: missing or empty"), ("name: 5", "name: missing or not a string"),
              ("tasks: [{id: a, config: efficient}]", r"tasks\[0\]: must have exactly id, config and split"),
              ("tasks: [{id: a, config: mixed, split: checkpoint_10}, {id: a, config: mixed, split: checkpoint_10}]",
               "repeated"),
              ("tasks: [{id: 'a b', config: mixed, split: checkpoint_10}]", "is not an id"),
              ("tasks: [{id: a, config: efficient, split: checkpoint_5}]", "has no split 'checkpoint_5'"),
              ("extra: 1", "extra: not a key")]
    base = yaml.safe_load(eval_yaml(splits))
    for change, message in broken:
        document = {**base, **yaml.safe_load(change)}
        with pytest.raises(InputError, match=message):
            check_eval_yaml(yaml.safe_dump(document), splits)
