"""`scripts/run_slice.py` (a sweep of the paper's systems): every system of a slice runs into its own folder, the
report prints the paper's table over them, and a second call keeps what finished instead of running it again."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import export_small_dataset

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "run_slice.py"


@pytest.mark.slow  # (about 13 s of CPU: every system of the slice through the script; `make test-all`)
def test_a_slice_runs_each_system_reports_them_and_resumes(tmp_path):
    data = export_small_dataset(tmp_path / "data", personas=1)
    command = [sys.executable, str(SCRIPT), "--dataset_path", str(data), "--out", str(tmp_path / "slice"),
               "--systems", "bm25,long_context", "--model", "none", "--tasks", "medmemorybench_efficient_sua"]
    first = subprocess.run(command, capture_output=True, text=True, timeout=600)
    assert first.returncode == 0, first.stdout + first.stderr
    cells = [f"{system}__none__medmemorybench_efficient_sua" for system in ("bm25", "long_context")]
    assert all(f"{cell}: done" in first.stderr for cell in cells), first.stderr
    assert "Recall@k %" in first.stdout and "bm25 / none" in first.stdout and "long_context / none" in first.stdout
    assert all((tmp_path / "slice" / cell / "summary.json").exists() for cell in cells)
    second = subprocess.run(command, capture_output=True, text=True, timeout=600)
    assert second.returncode == 0, second.stderr
    assert "shards 2/2" in second.stderr and ": done" not in second.stderr  # nothing ran again
    assert "bm25 / none" in second.stdout
