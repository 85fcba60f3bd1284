"""`medmemorybench build / validate / publish --dry_run` as a user runs them, including bad input."""

from __future__ import annotations

import shutil
import signal
import subprocess
import sys
import time

import pyarrow.parquet as pq
import pytest

from tests.helpers import export_small_dataset, run_cli

SMALL = ["--personas", "2", "--health-sessions", "5", "--family-sessions", "5"]


def test_build_validate_and_dry_run_publish(tmp_path):
    out = tmp_path / "out"
    result = run_cli("build", "--seed", "0", "--out", str(out), *SMALL)
    assert result.returncode == 0, result.stderr
    assert "fingerprint" in result.stdout and "MB on disk" in result.stdout
    folder = out / "medmemorybench"
    assert (folder / "README.md").is_file() and (folder / "mixed" / "checkpoint_100.parquet").is_file()
    # the default renders both languages: the Chinese configs beside the English ones
    assert (folder / "mixed_zh" / "checkpoint_100.parquet").is_file() and (folder / "questions_zh").is_dir()

    valid = run_cli("validate", str(folder))
    assert valid.returncode == 0 and "valid" in valid.stdout

    dry = run_cli("publish", str(folder), "--repo_id", "org/name", "--dry_run")
    assert dry.returncode == 0 and "add README.md" in dry.stdout

    again = run_cli("build", "--out", str(out), *SMALL)
    assert again.returncode == 2 and "already exists" in again.stderr and "Traceback" not in again.stderr


@pytest.fixture(scope="module")
def english_build(tmp_path_factory):
    """One small English build for the validate cases (the build CLI itself is the first test's); each copies it."""
    return export_small_dataset(tmp_path_factory.mktemp("english"), seed=1)


def copy_of(build, tmp_path):
    shutil.copytree(build, tmp_path / "out" / "medmemorybench")
    return tmp_path / "out"


def test_validate_lists_violations_and_exits_nonzero(tmp_path, english_build):
    out = copy_of(english_build, tmp_path)
    path = out / "medmemorybench" / "questions" / "checkpoint_10.parquet"
    table = pq.read_table(path)
    rows = table.to_pylist()
    rows[0]["evidence_session_ids"] = [rows[0]["persona_id"] + "-S090"]
    pq.write_table(table.from_pylist(rows, schema=table.schema), path)
    result = run_cli("validate", str(out / "medmemorybench"))
    assert result.returncode == 1
    assert f"{rows[0]['query_id']}: leakage" in result.stderr


def test_validate_names_a_corrupted_file(tmp_path, english_build):
    out = copy_of(english_build, tmp_path)
    (out / "medmemorybench" / "efficient" / "checkpoint_40.parquet").write_text("garbage")
    result = run_cli("validate", str(out / "medmemorybench"))
    assert result.returncode == 2
    assert "checkpoint_40.parquet: corrupted" in result.stderr and "Traceback" not in result.stderr


def test_bad_build_options_exit_2(tmp_path):
    result = run_cli("build", "--out", str(tmp_path / "o"), "--personas", "0")
    assert result.returncode == 2 and "--personas" in result.stderr
    result = run_cli("validate", str(tmp_path / "nowhere"))
    assert result.returncode == 2 and "not a MedMemoryBench dataset folder" in result.stderr


def default_sigint() -> None:
    """In the child: SIGINT as a user's shell gives it (a library imported by an earlier test may have left the
    test process ignoring it, which children inherit, and Python then installs no KeyboardInterrupt)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_interrupted_build_leaves_nothing_that_looks_complete(tmp_path):
    out = tmp_path / "out"
    proc = subprocess.Popen([sys.executable, "-m", "medmemorybench.cli", "build", "--out", str(out),
                             "--personas", "400"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            preexec_fn=default_sigint)
    time.sleep(6)
    proc.send_signal(signal.SIGINT)
    proc.wait(timeout=60)
    assert not (out / "medmemorybench").exists()
