"""A sweep's grid (flags and grid files), its plan, and the command's answers to bad input."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pytest

from medmemorybench.errors import InputError
from medmemorybench.harness.config import RunConfig
from medmemorybench.harness.header import config_record
from medmemorybench.sweep.driver import SweepOptions, run_sweep
from medmemorybench.sweep.executors import Resources
from medmemorybench.sweep.grid import apply_run_options, make_cells, read_grid
from medmemorybench.sweep.plan import plan_cells
from medmemorybench.sweep.shards import merge_samples, split_patients
from tests.helpers import run_cli

BASE = RunConfig(tasks=[], output_path=Path("out"))


def test_cells_nest_memory_model_task_and_carry_each_entrys_args():
    cells = make_cells(["bm25", {"memory": "dense", "label": "minilm"}],
                       ["none", {"model": "openai", "model_args": {"model": "org/Qwen-7B", "base_url": "http://h/v1"}}],
                       ["medmemorybench_efficient", "medmemorybench_mixed"], BASE, Path("out"))
    assert [c.name for c in cells][:3] == ["bm25__none__medmemorybench_efficient", "bm25__none__medmemorybench_mixed",
                                           "bm25__openai-Qwen-7B__medmemorybench_efficient"]
    assert len(cells) == 8 and cells[-1].name == "minilm__openai-Qwen-7B__medmemorybench_mixed"
    assert cells[-1].config.memory == "dense" and cells[-1].config.model_args["base_url"] == "http://h/v1"
    assert cells[-1].config.output_path == Path("out") / cells[-1].name and cells[-1].config.tasks == [cells[-1].task]


def test_a_group_expands_to_its_tasks():
    cells = make_cells(["bm25"], ["none"], ["medmemorybench"], BASE, Path("out"))
    assert {c.task for c in cells} >= {"medmemorybench_efficient", "medmemorybench_mixed"}


@pytest.mark.parametrize(("memories", "models", "message"), [
    ([], ["none"], "at least one entry"),
    ([{"label": "x"}], ["none"], "neither a name nor a mapping"),
    ([{"memory": "bm25", "oops": 1}], ["none"], "unknown key 'oops'"),
    ([{"memory": "bm25", "memory_args": "k=1"}], ["none"], "memory_args must be a mapping"),
    (["bm25", {"memory": "bm25"}], ["none"], "share the folder"),
    ([{"memory": "bm25", "label": "///"}], ["none"], "no letter or digit"),
])
def test_bad_grid_entries_are_refused_by_name(memories, models, message):
    with pytest.raises(InputError, match=message):
        make_cells(memories, models, ["medmemorybench_efficient"], BASE, Path("out"))


@pytest.mark.parametrize(("text", "message"), [
    ("memories: [bm25\n", "not YAML"),
    ("- bm25\n", "must be a mapping"),
    ("memories: [bm25]\nmodels: [none]\ntasks: []\n", "tasks must be a non-empty list"),
    ("memories: [bm25]\nmodels: [none]\ntasks: [medmemorybench]\nseed: 3\n", "unknown key 'seed'"),
    ("memories: [bm25]\nmodels: [none]\ntasks: [{a: 1}]\n", "task, group or tag names"),
])
def test_bad_grid_files_are_refused(tmp_path, text, message):
    path = tmp_path / "grid.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError, match=message):
        read_grid(path)


@pytest.mark.parametrize(("options", "message"), [
    ({"limit": "2"}, "limit must be a whole number"),
    ({"checkpoints": "10"}, "checkpoints must be a list"),
    ({"use_cache": "yes"}, "use_cache must be true or false"),
    ({"judge_args": [1]}, "judge_args must be a mapping"),
    ({"max_error_rate": True}, "max_error_rate must be a number"),
])
def test_shared_run_options_are_checked(options, message):
    with pytest.raises(InputError, match=message):
        apply_run_options(BASE, options, "--grid")


def test_a_whole_run_records_no_patients_and_a_shard_does():
    assert "patients" not in config_record(BASE)
    assert config_record(RunConfig(tasks=[], output_path=Path("o"), patients=["p1"]))["patients"] == ["p1"]


def test_shards_are_contiguous_slices_by_id_and_merge_back_in_run_order():
    assert split_patients(["p3", "p1", "p2"], 2) == [("p1", "p2"), ("p3",)]
    first = [{"checkpoint": 10, "q": "p1a"}, {"checkpoint": 10, "q": "p2a"}, {"checkpoint": 20, "q": "p1b"}]
    second = [{"checkpoint": 10, "q": "p3a"}, {"checkpoint": 20, "q": "p3b"}]
    assert [s["q"] for s in merge_samples([first, second])] == ["p1a", "p2a", "p3a", "p1b", "p3b"]


def test_the_plan_counts_what_a_run_streams_and_asks(dataset_dir, tmp_path):
    base = RunConfig(tasks=[], output_path=tmp_path, dataset_path=str(dataset_dir), checkpoints=[10, 20], limit=2)
    (plan,) = plan_cells(make_cells(["memos"], ["openai"], ["medmemorybench_efficient"], base, tmp_path))
    from tests.harness.conftest import dataset_questions, stream_rows

    rows = [r for r in stream_rows(dataset_dir) if r["persona_id"] in sorted({r["persona_id"] for r in
                                                                                stream_rows(dataset_dir)})[:2]]
    assert plan.patients == 2
    assert plan.sessions == sum(len(r["sessions"]) for r in rows if r["checkpoint"] <= 20)
    asked = [q for r in rows if r["checkpoint"] in (10, 20) for q in r["questions"]]
    assert plan.questions == plan.answer_calls == len(asked) > 0
    assert plan.memory_calls == plan.sessions and plan.measured  # memos: one measured call per session
    assert len(dataset_questions(dataset_dir)) > plan.questions


def test_sweep_plan_from_the_command_line_runs_nothing(dataset_dir, tmp_path):
    out = tmp_path / "grid"
    result = run_cli("sweep", "--memories", "bm25,letta", "--tasks", "medmemorybench_efficient", "--dataset_path",
                     str(dataset_dir), "--output_path", str(out), "--plan")
    assert result.returncode == 0, result.stderr
    assert "bm25__none__medmemorybench_efficient" in result.stdout and "wall time: about" in result.stdout
    assert not out.exists()


@pytest.mark.parametrize(("args", "message"), [
    (["--executor", "dask"], "--executor: 'dask' is not one of local, ray"),
    (["--grid", "g.yaml", "--memories", "bm25"], "leave out --memories"),
    (["--checkpoints", "ten"], "not a comma-separated list"),
])
def test_bad_sweep_options_get_one_line_and_exit_2(dataset_dir, tmp_path, args, message):
    result = run_cli("sweep", "--dataset_path", str(dataset_dir), "--output_path", str(tmp_path / "grid"), *args,
                     cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    assert message in result.stderr and "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "grid" / "sweep.json").exists()


@pytest.mark.parametrize(("change", "message"), [
    ({"workers": 0}, "--workers: 0 is not a number of processes"),
    ({"shard_size": 0}, "--shard_size: 0 is not a number of patients"),
    ({"resources": Resources(gpus=1)}, "the local executor does not place GPUs"),
    ({"resources": Resources(cpus=0)}, "--cpus_per_task must be above 0"),
])
def test_bad_sweep_options_are_refused_before_anything_is_written(dataset_dir, tmp_path, change, message):
    base = RunConfig(tasks=[], output_path=tmp_path, dataset_path=str(dataset_dir))
    cells = make_cells(["bm25"], ["none"], ["medmemorybench_efficient"], base, tmp_path / "grid")
    with pytest.raises(InputError, match=re.escape(message)):
        run_sweep(cells, replace(SweepOptions(tmp_path / "grid"), **change))
    assert not (tmp_path / "grid").exists()


@pytest.mark.parametrize(("memories", "tasks", "message"), [
    (["nosuch"], ["medmemorybench_efficient"], "nosuch"),
    (["bm25"], ["medmemorybench_nosuch"], "medmemorybench_nosuch"),
])
def test_unknown_memories_and_tasks_are_named(dataset_dir, tmp_path, memories, tasks, message):
    from medmemorybench.harness.tasks import TaskConfigError

    base = RunConfig(tasks=[], output_path=tmp_path, dataset_path=str(dataset_dir))
    with pytest.raises((InputError, TaskConfigError), match=message):
        run_sweep(make_cells(memories, ["none"], tasks, base, tmp_path / "grid"), SweepOptions(tmp_path / "grid"))
    assert not (tmp_path / "grid").exists()


@pytest.mark.parametrize(("record", "message"), [
    ("{", "damaged (not JSON)"),
    ('{"cells": [], "shards": []}', "not a sweep's record"),
    ('{"cells": [{"name": "../../elsewhere"}], "shards": {}}', "is not a plain folder name"),
    ('{"cells": [{"name": ".hidden"}], "shards": {}}', "is not a plain folder name"),
])
def test_a_hostile_sweep_record_is_refused_before_any_folder_is_read(tmp_path, record, message):
    from medmemorybench.sweep.driver import SWEEP_FILE, expand_sweeps

    (tmp_path / SWEEP_FILE).write_text(record)
    with pytest.raises(InputError, match=re.escape(message)):
        expand_sweeps([tmp_path])


def test_report_on_a_hostile_sweep_record_is_one_line(tmp_path):
    (tmp_path / "sweep.json").write_text('{"cells": [{"name": "../../elsewhere"}], "shards": {}}')
    report = run_cli("report", str(tmp_path))
    assert report.returncode == 2 and "is not a plain folder name" in report.stderr and "Traceback" not in report.stderr


def test_run_plan_prints_each_task_and_writes_nothing(dataset_dir, tmp_path):
    out = tmp_path / "run"
    result = run_cli("run", "--tasks", "medmemorybench_efficient,medmemorybench_mixed", "--memory", "mem0", "--model",
                     "openai", "--model_args", "model=m", "--dataset_path", str(dataset_dir), "--output_path",
                     str(out), "--plan")
    assert result.returncode == 0, result.stderr
    assert "medmemorybench_efficient " in result.stdout and "medmemorybench_mixed " in result.stdout
    assert "one-process run" in result.stdout and not out.exists()
