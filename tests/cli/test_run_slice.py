"""`scripts/run_slice.py`: every system of a slice runs into its own folder, the report prints the paper's table
over them, and a second call keeps what finished instead of running it again."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.helpers import export_small_dataset

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "run_slice.py"


def test_a_slice_runs_each_system_reports_them_and_resumes(tmp_path):
    data = export_small_dataset(tmp_path / "data", personas=1)
    command = [sys.executable, str(SCRIPT), "--dataset_path", str(data), "--out", str(tmp_path / "slice"),
               "--systems", "bm25,long_context", "--model", "none", "--tasks", "medmemorybench_efficient_sua"]
    first = subprocess.run(command, capture_output=True, text=True, timeout=600)
    assert first.returncode == 0, first.stdout + first.stderr
    assert "[1/2] bm25: finished" in first.stdout and "[2/2] long_context: finished" in first.stdout
    assert "Recall@k %" in first.stdout and "bm25 / none" in first.stdout and "long_context / none" in first.stdout
    assert all((tmp_path / "slice" / s / "summary.json").exists() for s in ("bm25", "long_context"))
    second = subprocess.run(command, capture_output=True, text=True, timeout=600)
    assert "[1/2] bm25: done before, kept" in second.stdout and "[2/2] long_context: done before" in second.stdout
