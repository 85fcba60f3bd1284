"""No silent cache: the response cache belongs to the project a run starts from, and every run says how many of
its answers the cache gave."""

from __future__ import annotations

import json
from pathlib import Path

from medmemorybench.console import report_cache_use
from medmemorybench.harness.cache import default_cache_path
from tests.harness.conftest import RecordingBackbone, run, run_config

EEM = ["medmemorybench_efficient_eem"]


def test_the_default_cache_is_the_projects_own(tmp_path, monkeypatch):
    monkeypatch.delenv("MEDMEMORYBENCH_CACHE", raising=False)
    monkeypatch.chdir(tmp_path)
    assert default_cache_path() == tmp_path / ".medmemorybench" / "responses.sqlite"
    monkeypatch.setenv("MEDMEMORYBENCH_CACHE", str(tmp_path / "shared"))  # a cache shared on purpose
    assert default_cache_path() == tmp_path / "shared" / "responses.sqlite"


def test_a_rerun_counts_its_cached_answers_and_says_so(dataset_dir, tmp_path, capsys):
    first = run_config(dataset_dir, tmp_path / "a", model="recording", limit=1, tasks=EEM)
    run(first, RecordingBackbone("fresh"))
    again = run_config(dataset_dir, tmp_path / "b", model="recording", limit=1, tasks=EEM)
    again.cache_path = first.cache_path
    backbone = RecordingBackbone("never asked")
    run(again, backbone)
    summary = json.loads((again.output_path / "summary.json").read_text())
    assert summary["n_cache_hits"] == summary["n_samples"] > 0 and backbone.batches == []
    report_cache_use(again.output_path / "summary.json", again)
    said = capsys.readouterr().out
    assert f"answers: 0 asked of the model, {summary['n_samples']} from the response cache" in said
    assert str(first.cache_path) in said and "--no_cache asks the model again" in said
    first_summary = json.loads((first.output_path / "summary.json").read_text())
    assert first_summary["n_cache_hits"] == 0


def test_a_run_without_the_cache_says_so(dataset_dir, tmp_path, capsys):
    config = run_config(dataset_dir, tmp_path, model="recording", limit=1, tasks=EEM, use_cache=False)
    run(config, RecordingBackbone("fresh"))
    report_cache_use(Path(config.output_path) / "summary.json", config)
    assert "asked of the model (response cache off)" in capsys.readouterr().out
