"""`medmemorybench run / report / ls` as a user runs them: resume after a kill, reports, bad names."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter

import pytest

from tests.harness.conftest import RecordingBackbone, run, run_config
from tests.helpers import run_cli


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    out = tmp_path_factory.mktemp("data")
    result = run_cli("build", "--seed", "3", "--personas", "3", "--health-sessions", "10", "--family-sessions", "10",
                     "--language", "en", "--out", str(out))
    assert result.returncode == 0, result.stderr
    return out / "medmemorybench"


def _samples(run):  # noqa: ANN001, ANN202
    return [json.loads(line) for line in (run / "samples.jsonl").read_text().splitlines()]


@pytest.mark.slow  # (about 90 s: a real SmolLM2 run killed and resumed; `make test-all`)
def test_killed_run_resumes_without_repeating_or_double_counting(data, tmp_path):
    run = tmp_path / "run"
    args = [sys.executable, "-m", "medmemorybench.cli", "run", "--tasks", "medmemorybench_efficient",
            "--memory", "dense",
            "--dataset_path", str(data), "--output_path", str(run)]
    env = {**os.environ, "MEDMEMORYBENCH_CACHE": str(tmp_path / "cache")}  # cold cache: a slow enough run
    proc = subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        samples_file = run / "samples.jsonl"
        if samples_file.exists() and len(samples_file.read_text().splitlines()) >= 20:
            break
        time.sleep(0.2)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    partial = _samples(run)
    assert len(partial) >= 20 and not (run / "summary.json").exists()

    resumed = subprocess.run([*args, "--resume"], env=env, capture_output=True, text=True)
    assert resumed.returncode == 0, resumed.stderr
    full = tmp_path / "full"
    fresh = subprocess.run([*args[:-1], str(full)], env=env, capture_output=True, text=True)
    assert fresh.returncode == 0, fresh.stderr
    after, reference = _samples(run), _samples(full)
    assert len(after) == len(reference)
    assert not [key for key, n in Counter((s["task"], s["query_id"]) for s in after).items() if n > 1]
    by_key = {(s["task"], s["query_id"]): s for s in reference}
    for sample in after:  # the resumed memories were rebuilt exactly: same retrieval as an uninterrupted run
        assert sample["recall_at_k"] == by_key[(sample["task"], sample["query_id"])]["recall_at_k"]


def test_report_prints_tables_and_writes_the_plot(data, tmp_path):
    run = tmp_path / "bm25"
    result = run_cli("run", "--tasks", "medmemorybench", "--memory", "bm25", "--dataset_path", str(data),
                     "--output_path", str(run))
    assert result.returncode == 0, result.stderr
    assert "Recall@k" in result.stdout
    report = run_cli("report", str(run), "--plot", str(tmp_path / "sat.png"))
    assert report.returncode == 0, report.stderr
    assert (tmp_path / "sat.png").stat().st_size > 10_000
    assert "mean over types" in report.stdout


def test_report_prints_the_selective_score_of_answered_runs(data, tmp_path):
    config = run_config(data, tmp_path, model="recording", memory="none", limit=1, use_cache=False)
    run(config, RecordingBackbone())  # always "That is not in my records."
    report = run_cli("report", str(config.output_path), "--plot", str(tmp_path / "sat.png"))
    assert report.returncode == 0, report.stderr
    table = report.stdout[report.stdout.index("selective score x100"):report.stdout.index("Recall@k")]
    rows = {line.split()[1]: line for line in table.splitlines() if line.split()[1:2] in (["EEM"], ["ABS"])}
    assert "0.0 (n=" in rows["EEM"] and "100.0 (n=" in rows["ABS"]  # abstaining: 0 answerable, +1 on ABS


def test_unknown_names_list_the_valid_ones(data, tmp_path):
    cases = [
        (["--memory", "bm52"], "unknown memory system 'bm52'. Did you mean 'bm25'?"),
        (["--model", "gpt"], "unknown model 'gpt'"),
        (["--tasks", "medmemorybench_mixd"], "did you mean 'medmemorybench_mixed'"),
        (["--model_args", "pretrained"], "--model_args: 'pretrained' is not key=value"),
        (["--checkpoints", "ten"], "--checkpoints"),
    ]
    for args, needle in cases:
        result = run_cli("run", "--dataset_path", str(data), "--output_path", str(tmp_path / "x"), *args)
        assert result.returncode == 2, (args, result.stderr)
        assert needle in result.stderr, (args, result.stderr)
        assert "Traceback" not in result.stderr
    assert "bm25" in run_cli("run", "--dataset_path", str(data), "--memory", "bm52",
                             "--output_path", str(tmp_path / "y")).stderr


def test_report_of_a_folder_without_summary(tmp_path):
    result = run_cli("report", str(tmp_path))
    assert result.returncode == 2 and "no summary.json" in result.stderr


def test_ls_lists_tasks_and_memories():
    assert "medmemorybench_mixed" in run_cli("ls", "tasks").stdout
    assert "dense" in run_cli("ls", "memories").stdout


def test_the_chinese_tasks_run_offline_and_report_recall_for_both_modes(tmp_path):
    out = tmp_path / "data"
    built = run_cli("build", "--seed", "4", "--personas", "2", "--encounters", "20", "--health_sessions", "5",
                    "--family_sessions", "5", "--language", "zh", "--no_register", "--output_path", str(out),
                    "--allow_audit_failures")  # (two patients of 20 sessions: too few questions for the probes' bars)
    assert built.returncode == 0, built.stderr
    result = run_cli("run", "--tasks", "medmemorybench_zh", "--memory", "bm25", "--model", "none",
                     "--dataset_path", str(out / "medmemorybench"), "--output_path", str(tmp_path / "run"))
    assert result.returncode == 0, result.stderr
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    recall = {name: task["metrics"]["recall_at_k"]["overall"][0]["mean"] for name, task in summary["tasks"].items()}
    assert set(recall) == {"medmemorybench_efficient_zh", "medmemorybench_mixed_zh"}
    assert all(0 < value <= 1 for value in recall.values())
    samples = _samples(tmp_path / "run")
    assert any("\u4e00" <= ch <= "\u9fff" for ch in samples[0]["question"])  # (the questions asked are Chinese)
