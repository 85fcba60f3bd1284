"""The fault suite: a real run through the `openai` backbone against a server that fails a seeded share of
requests with every fault kind of `tests/faults.py`. Every run completes, every question has a sample, a
failed answer is an error with its reason (never scored), and a run where everything fails exits with a
clear failure. `scripts/bench_faults.py` runs the same at 11 seeds."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from medmemorybench.errors import RunFailedError
from medmemorybench.harness.results import read_samples
from medmemorybench.harness.runner import Runner
from tests.cli.test_build_cli import default_sigint
from tests.faults import FAULTS, fault_server
from tests.harness.conftest import dataset_questions, run_config

OPENAI_ARGS = {"model": "m", "max_retries": 1, "backoff_s": 0.01, "timeout_s": 1.0, "concurrency": 4}


def run_against(url: str, dataset_dir, out, **kwargs):  # noqa: ANN001, ANN201
    config = run_config(dataset_dir, out, model="openai", model_args={**OPENAI_ARGS, "base_url": url}, memory="bm25",
                        tasks=["medmemorybench_efficient_eem"], use_cache=False, **kwargs)
    return config, Runner(config)


@pytest.mark.parametrize("seed", [0, 1])
def test_a_run_at_20_percent_mixed_faults_completes_with_every_error_recorded(dataset_dir, tmp_path, seed):
    with fault_server(share=0.2, seed=seed) as (url, server):
        config, runner = run_against(url, dataset_dir, tmp_path, max_error_rate=1.0)
        runner.run()
    samples = read_samples(config.output_path / "samples.jsonl")
    expected = [q for q in dataset_questions(dataset_dir) if q["query_type"] == "EEM"]
    assert sorted(s["query_id"] for s in samples) == sorted(q["query_id"] for q in expected)
    assert sum(server.served[k] for k in FAULTS) > 0
    for sample in samples:
        if sample["status"] == "error":
            assert sample["error"] and sample["correct"] is None and sample["scores"] == {}
        else:
            assert sample["output"] == "ok" and sample["correct"] is not None
    summary = json.loads((config.output_path / "summary.json").read_text())
    assert summary["n_errors"] == sum(s["status"] == "error" for s in samples)


def test_a_run_where_every_request_fails_exits_with_a_failure(dataset_dir, tmp_path):
    with fault_server(share=1.0, seed=3) as (url, _), pytest.raises(RunFailedError, match="nothing was scored"):
        run_against(url, dataset_dir, tmp_path, max_error_rate=1.0)[1].run()
    assert (tmp_path / "run" / "summary.json").exists()  # everything written is kept


def test_ctrl_c_ends_a_run_within_seconds_while_requests_hang(dataset_dir, tmp_path):
    """Every request hangs a minute (inside the client's timeout): SIGINT must not wait for them."""
    with fault_server(share=1.0, seed=0, kinds=["hang"], hang_s=60) as (url, server):
        args = f"model=m,base_url={url},max_retries=0,timeout_s=90,concurrency=4"
        process = subprocess.Popen(
            [sys.executable, "-m", "medmemorybench.cli", "run", "--tasks", "medmemorybench_efficient_eem",
             "--memory", "bm25", "--model", "openai", "--model_args", args, "--dataset_path", str(dataset_dir),
             "--output_path", str(tmp_path / "run"), "--no_cache"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env={**os.environ, "HF_HUB_OFFLINE": "1"},
            preexec_fn=default_sigint)
        deadline = time.monotonic() + 120
        while sum(server.served.values()) < 4 and time.monotonic() < deadline:  # four requests in flight
            time.sleep(0.1)
        assert sum(server.served.values()) >= 4
        interrupted = time.monotonic()
        process.send_signal(signal.SIGINT)
        _, stderr = process.communicate(timeout=60)
        took = time.monotonic() - interrupted
    assert process.returncode == 130 and "interrupted" in stderr and "Traceback" not in stderr
    # the requests hang 60 s: stopping well inside that is the point; writing what was done took 8.7 s once at load 12
    assert took < 20, f"took {took:.1f} s to stop"
