"""The CLI as a user runs it: simulate, show, knowledge; bad input gives one line and exit code 2."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from tests.helpers import copy_knowledge, run_cli


def test_simulate_writes_one_file_per_patient_and_a_manifest(tmp_path):
    out = tmp_path / "years"
    result = run_cli("simulate", "--seed", "0", "--personas", "3", "--out", str(out))
    assert result.returncode == 0, result.stderr
    assert sorted(p.name for p in out.iterdir()) == ["P0001.json", "P0002.json", "P0003.json", "manifest.json"]
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["seed"] == 0 and len(manifest["files"]) == 3
    year = json.loads((out / "P0001.json").read_text())
    assert len(year["events"]) == 100 and len(year["persona"]["traps"]) == 6


def test_show_prints_phases_traps_and_chains(tmp_path):
    out = tmp_path / "years"
    assert run_cli("simulate", "--personas", "1", "--out", str(out)).returncode == 0
    result = run_cli("show", str(out / "P0001.json"))
    assert result.returncode == 0, result.stderr
    for heading in ("trap facts", "family", "phase 1: hidden onset", "phase 5:", "regimen changes", "causal chains"):
        assert heading in result.stdout


def test_existing_output_folder_is_refused_and_kept(tmp_path):
    out = tmp_path / "years"
    out.mkdir()
    (out / "keep.txt").write_text("mine")
    result = run_cli("simulate", "--personas", "1", "--out", str(out))
    assert result.returncode == 2
    assert "--out" in result.stderr and "already exists" in result.stderr
    assert "Traceback" not in result.stderr
    assert (out / "keep.txt").read_text() == "mine"


def test_nonsense_options_exit_2_naming_the_option(tmp_path):
    for args, needle in (
        (["--personas", "0"], "--personas"),
        (["--personas", "many"], "--personas"),
        (["--encounters", "5"], "--encounters"),
        (["--condition", "flu"], "unknown condition 'flu'"),
    ):
        result = run_cli("simulate", "--out", str(tmp_path / "x"), *args)
        assert result.returncode == 2, args
        assert needle in result.stderr, (args, result.stderr)
        assert "Traceback" not in result.stderr
        assert not (tmp_path / "x").exists()


def test_broken_knowledge_base_names_file_and_field(tmp_path):
    data = copy_knowledge(tmp_path)
    path = data / "preferences.yaml"
    doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    doc["economic_profiles"][0]["monthly_budget_usd"] = "cheap"
    path.write_text(yaml.safe_dump(doc, allow_unicode=True), encoding="utf-8")
    out = tmp_path / "years"
    result = run_cli("simulate", "--knowledge", str(data), "--out", str(out))
    assert result.returncode == 2
    assert "preferences.yaml: economic_profiles[0].monthly_budget_usd" in result.stderr
    assert "Traceback" not in result.stderr
    assert not out.exists() and not Path(str(out) + ".partial").exists()


def test_show_rejects_a_file_that_is_not_a_care_year(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"seed": 0, "persona": {}, "events": []}))
    result = run_cli("show", str(bad))
    assert result.returncode == 2
    assert "bad.json: persona" in result.stderr and "Traceback" not in result.stderr
    missing = run_cli("show", str(tmp_path / "nope.json"))
    assert missing.returncode == 2 and "no such file" in missing.stderr


def test_knowledge_command_reports_counts():
    result = run_cli("knowledge")
    assert result.returncode == 0, result.stderr
    assert "valid" in result.stdout and "drugs" in result.stdout
