"""A sweep on the local process pool and on a local Ray cluster (2 CPUs) writes each cell as a one-process run of it
does; a worker killed mid-shard and a driver killed mid-sweep lose and duplicate nothing."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from dataclasses import replace
from pathlib import Path

import pytest

from medmemorybench.harness.config import RunConfig
from medmemorybench.harness.results import RUN_HEADER, SUMMARY
from medmemorybench.sweep.driver import SHARDS, SWEEP_FILE, SweepOptions, expand_sweeps, run_sweep
from medmemorybench.sweep.executors import RAY_PROCESSES, process_started
from medmemorybench.sweep.grid import make_cells
from tests.sweep.conftest import ScriptedAnswers, comparable, one_process_run

MEMORIES = ["bm25", "long_context", "none"]
TASKS = ["medmemorybench_efficient", "medmemorybench_mixed"]


def grid(dataset_dir: Path, out: Path, url: str, memories: list[str] = MEMORIES) -> list:
    base = RunConfig(tasks=[], output_path=out, dataset_path=str(dataset_dir), checkpoints=[10], use_cache=False,
                     model_args={"model": "scripted", "base_url": url, "backoff_s": 0.05})
    return make_cells(memories, ["openai"], TASKS, base, out)


def without_timings(summary: dict) -> str:
    """A summary with the measured seconds and the output folder left out."""
    text = json.dumps(summary, sort_keys=True)
    for key in ("ingest_s", "retrieve_s"):
        text = __import__("re").sub(rf'"{key}": [0-9.e-]+', f'"{key}": 0', text)
    return text.replace(str(summary["header"]["config"]["output_path"]), "OUT")


@pytest.fixture(scope="module")
def reference(dataset_dir, scripted_url, tmp_path_factory):
    """The cells of the grid, each run in one process (no shards, no executor)."""
    out = tmp_path_factory.mktemp("one-process")
    cells = grid(dataset_dir, out, scripted_url)
    for cell in cells:
        one_process_run(cell.config)
    return out, cells


def assert_same_cells(folder: Path, reference_folder: Path, cells: list) -> None:
    for cell in cells:
        mine, theirs = folder / cell.name, reference_folder / cell.name
        assert comparable(mine) == comparable(theirs), cell.name
        assert not (mine / SHARDS).exists()
        header, expected = (json.loads((f / RUN_HEADER).read_text()) for f in (mine, theirs))
        assert {k for k in header if header[k] != expected[k]} <= {"config"}
        assert {k for k in header["config"] if header["config"][k] != expected["config"][k]} == {"output_path"}
        assert without_timings(json.loads((mine / SUMMARY).read_text())) == \
            without_timings(json.loads((theirs / SUMMARY).read_text()))


def test_local_pool_shards_give_the_one_process_cells(reference, dataset_dir, scripted_url, tmp_path):
    reference_folder, cells = reference
    out = tmp_path / "local"
    finished = run_sweep(grid(dataset_dir, out, scripted_url), SweepOptions(out, workers=2, shard_size=2))
    assert finished == [out / c.name for c in cells]
    assert_same_cells(out, reference_folder, cells)
    plan = json.loads((out / SWEEP_FILE).read_text())["shards"]
    assert all(len(shards) == 2 for shards in plan.values())  # 3 patients: 2 and 1


@pytest.mark.slow  # (about 25 s; the killed-worker test below compares its Ray cells too; `make test-all`)
def test_ray_shards_give_the_one_process_cells(reference, ray_cluster, dataset_dir, scripted_url, tmp_path):
    reference_folder, cells = reference
    out = tmp_path / "ray"
    run_sweep(grid(dataset_dir, out, scripted_url), SweepOptions(out, executor="ray", shard_size=2))
    assert_same_cells(out, reference_folder, cells)
    assert ray_cluster.is_initialized()  # (the caller's connection is used and left open)


def shard_workers() -> list[int]:
    """PIDs of Ray workers running a shard now (Ray names a busy worker after its task)."""
    found = subprocess.run(["pgrep", "-f", "ray::run_shard"], capture_output=True, text=True).stdout.split()
    return [int(pid) for pid in found]


def test_a_ray_worker_killed_mid_shard_is_run_again_and_nothing_is_lost_or_doubled(
        reference, ray_cluster, dataset_dir, scripted_url, tmp_path):
    reference_folder, cells = reference
    cells = [c for c in cells if c.config.memory == "bm25"]
    out = tmp_path / "ray-kill"
    killed: list[int] = []

    def kill_one() -> None:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not killed:
            workers = shard_workers()
            if workers:
                os.kill(workers[0], signal.SIGKILL)
                killed.append(workers[0])
            time.sleep(0.05)

    ScriptedAnswers.delay_s = 0.02  # (each shard takes a few seconds: time to find and kill its worker)
    killer = threading.Thread(target=kill_one)
    killer.start()
    try:
        run_sweep(grid(dataset_dir, out, scripted_url, ["bm25"]), SweepOptions(out, executor="ray", shard_size=3))
    finally:
        ScriptedAnswers.delay_s = 0.0
        killer.join()
    assert killed, "no shard worker was found to kill"
    assert_same_cells(out, reference_folder, cells)


@pytest.mark.slow  # (about 15-20 s: two CLI sweeps, one starting its own Ray cluster; `make test-all`)
def test_a_killed_driver_resumes_where_it_stopped_and_leaves_no_ray_process(reference, dataset_dir, scripted_url,
                                                                             tmp_path):
    reference_folder, cells = reference
    cells = [c for c in cells if c.config.memory in ("bm25", "long_context")]
    out = tmp_path / "killed"
    command = [sys.executable, "-m", "medmemorybench.cli", "sweep", "--memories", "bm25,long_context", "--models",
               "openai", "--model_args", f"model=scripted,base_url={scripted_url},backoff_s=0.05", "--tasks",
               ",".join(TASKS), "--dataset_path", str(dataset_dir), "--checkpoints", "10", "--no_cache",
               "--output_path", str(out), "--shard_size", "1", "--workers", "1"]
    ScriptedAnswers.delay_s = 0.01
    try:
        driver = subprocess.Popen([*command, "--executor", "ray"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                  text=True)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and len(list(out.glob(f"*/{SHARDS}/*.json"))) < 2:
            time.sleep(0.05)
        driver.send_signal(signal.SIGKILL)
        driver.wait()
        kept = {p.relative_to(out) for p in out.glob(f"*/{SHARDS}/*.json")}
        assert kept, driver.stderr.read()
        left = json.loads((out / RAY_PROCESSES).read_text())  # (the cluster the driver started)
        # resumed on the other executor: the shards were fixed when the sweep began, whatever runs them
        resumed = subprocess.run([*command, "--resume"], capture_output=True, text=True, timeout=300)
    finally:
        ScriptedAnswers.delay_s = 0.0
    assert resumed.returncode == 0, resumed.stderr
    assert_same_cells(out, reference_folder, cells)
    assert f"shards {len(kept)}/" in resumed.stderr  # the resume began from the shards the killed driver wrote
    assert all(process_started(pid) != started for pid, started in left)  # nothing of the killed driver's cluster runs
    assert not (out / RAY_PROCESSES).exists()


def test_a_sweep_folder_is_not_reused_without_resume_nor_resumed_with_another_grid(dataset_dir, scripted_url,
                                                                                    tmp_path):
    from medmemorybench.errors import InputError

    out = tmp_path / "again"
    cells = grid(dataset_dir, out, scripted_url, ["bm25"])[:1]
    cells = [replace(cells[0], config=replace(cells[0].config, checkpoints=[10]))]
    run_sweep(cells, SweepOptions(out, workers=1))
    with pytest.raises(InputError, match="holds a sweep already; pass --resume"):
        run_sweep(cells, SweepOptions(out, workers=1))
    other = [replace(cells[0], config=replace(cells[0].config, limit=1))]
    with pytest.raises(InputError, match="another grid or other options"):
        run_sweep(other, SweepOptions(out, workers=1, resume=True))
    assert run_sweep(cells, SweepOptions(out, workers=1, resume=True)) == [out / cells[0].name]  # all done: kept
    assert expand_sweeps([out, out / cells[0].name]) == [out / cells[0].name] * 2  # (report takes the sweep's folder)
