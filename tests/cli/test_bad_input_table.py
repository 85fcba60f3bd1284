"""Every case of the bad-input table (`tests/bad_inputs.py`) is refused with exit code 2 and one line naming the
file, field or option, no traceback, and nothing left looking complete."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from medmemorybench.cli import app
from tests.bad_inputs import CASES, Case, Outcome, Workspace, markers, problems, run_in_child
from tests.helpers import export_small_dataset


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    return export_small_dataset(tmp_path_factory.mktemp("bad-input-data"), personas=2)


def run_in_process(args: list[str], env: dict[str, str]) -> Outcome:
    result = CliRunner().invoke(app, args, env=env)
    crashed = result.exception is not None and not isinstance(result.exception, SystemExit)
    return Outcome(result.exit_code, result.stderr, crashed or "Traceback" in result.output)


def test_the_table_is_large_and_names_each_case_once():
    names = [case.name for case in CASES]
    assert len(names) >= 80
    assert len(set(names)) == len(names)


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.name)
def test_bad_input_is_refused_clearly(case: Case, data, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # (no case may find a dataset in the working folder by accident)
    workspace = Workspace(tmp_path / "case", data)
    workspace.root.mkdir()
    env = {"MEDMEMORYBENCH_CACHE": str(tmp_path / "default-cache"), **case.env(workspace)}
    args = case.args(workspace)
    before = markers(workspace.root)
    if case.file_size_limit is None:
        outcome = run_in_process(args, env)
    else:
        outcome = run_in_child(args, env, case.file_size_limit, tmp_path)
    found = problems(case, workspace, outcome, before)
    assert not found, "\n".join(found)
