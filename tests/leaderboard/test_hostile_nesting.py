"""Deep nesting and stray lines in the files a user hands us are one line naming the file (exit 2), never a
`RecursionError` or `KeyError` traceback; a nested bundle is left out of the board and the page is still written
(issue 28)."""

from __future__ import annotations

import json
import re
import shutil

import pytest

from medmemorybench.errors import InputError
from medmemorybench.files import NESTED_TOO_DEEPLY, load_yaml, loads_json
from medmemorybench.harness.results import read_samples
from medmemorybench.leaderboard import load_board, prepare_submission, write_to_folder
from medmemorybench.leaderboard.bundle import sha256
from tests.helpers import run_cli

DEEP_JSON = "[" * 200_000 + "]" * 200_000
DEEP_YAML = "a: " + "[" * 200_000 + "]" * 200_000


def test_deep_json_and_yaml_are_decode_errors():
    import yaml

    with pytest.raises(json.JSONDecodeError, match=re.escape(NESTED_TOO_DEEPLY)):
        loads_json(DEEP_JSON)
    with pytest.raises(yaml.YAMLError, match=re.escape(NESTED_TOO_DEEPLY)):
        load_yaml(DEEP_YAML)


@pytest.mark.parametrize(("line", "message"), [
    (DEEP_JSON, "line 2 is not valid JSON (nested too deeply"),
    ('{"a": 1}', "line 2 is not a sample"),
    ("[1, 2]", "line 2 is not a sample"),
])
def test_a_samples_line_that_is_not_a_sample_names_its_line(tmp_path, line, message):
    path = tmp_path / "samples.jsonl"
    path.write_text('{"task": "t", "query_id": "q1"}\n' + line + "\n")
    with pytest.raises(InputError, match=re.escape(message)):
        read_samples(path)


def test_resume_and_report_on_nested_files_are_one_line(dataset_dir, tmp_path):
    out = tmp_path / "run"
    first = run_cli("run", "--tasks", "medmemorybench_efficient_sua", "--memory", "bm25", "--checkpoints", "10",
                    "--dataset_path", str(dataset_dir), "--output_path", str(out))
    assert first.returncode == 0, first.stderr
    samples = out / "samples.jsonl"
    samples.write_text(samples.read_text() + "[" * 5_000 + "]" * 5_000 + "\n")  # (deep, under the line limit)
    resumed = run_cli("run", "--tasks", "medmemorybench_efficient_sua", "--memory", "bm25", "--checkpoints", "10",
                      "--dataset_path", str(dataset_dir), "--output_path", str(out), "--resume")
    assert resumed.returncode == 2 and "Traceback" not in resumed.stderr
    assert f"{samples}: line" in resumed.stderr and "nested too deeply" in resumed.stderr
    (out / "summary.json").write_text(DEEP_JSON)
    report = run_cli("report", str(out))
    assert report.returncode == 2 and "Traceback" not in report.stderr
    assert f"{out / 'summary.json'}: damaged (not JSON)" in report.stderr


def test_a_nested_system_file_is_one_line(answered_run, tmp_path):
    system = tmp_path / "system.yaml"
    system.write_text(DEEP_YAML[:60_000] + "]" * 1)  # (within the 64 KiB a self-description may take)
    result = run_cli("submit", str(answered_run), "--system", str(system), "--results", str(tmp_path / "res"))
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert f"{system}: not YAML or JSON" in result.stderr


def test_a_nested_bundle_is_left_out_and_the_board_still_stands(answered_run, tmp_path):
    folder = tmp_path / "results"
    bundle = write_to_folder(prepare_submission(answered_run), folder)
    other = bundle.parent / "nested-copy"
    shutil.copytree(bundle, other)
    (other / "summary.json").write_text(DEEP_JSON)
    meta = json.loads((other / "submission.json").read_text())
    meta["files"]["summary.json"] = sha256((other / "summary.json").read_bytes())
    (other / "submission.json").write_text(json.dumps(meta))
    board = load_board(folder)
    assert any(row.kind == "run" for row in board.rows)
    assert any(str(other / "summary.json") in reason and "nested too deeply" in reason for reason in board.left_out)
    page = run_cli("leaderboard", "--results", str(folder), "--html", str(tmp_path / "site"), "--no-verify")
    assert page.returncode == 0, page.stderr
    assert (tmp_path / "site" / "index.html").exists()


def test_a_bundle_with_a_nested_samples_line_is_left_out_saying_so(answered_run, dataset_dir, tmp_path):
    folder = tmp_path / "results"
    bundle = write_to_folder(prepare_submission(answered_run), folder)
    samples = bundle / "samples.jsonl"
    samples.write_text(samples.read_text() + "[" * 5_000 + "]" * 5_000 + "\n")  # (deep, under the line limit)
    meta = json.loads((bundle / "submission.json").read_text())
    meta["files"]["samples.jsonl"] = sha256(samples.read_bytes())
    (bundle / "submission.json").write_text(json.dumps(meta))
    board = load_board(folder, verify_with=dataset_dir)  # (a verified board reads every sample)
    assert any(str(samples) in reason and "nested too deeply" in reason for reason in board.left_out)
