"""`medmemorybench audit` and the build's audit gate, as a user runs them, including a dataset that fails."""

from __future__ import annotations

import pyarrow.parquet as pq
import pytest

from medmemorybench.dataset import BuildOptions
from medmemorybench.dataset.audit import ProbeResult
from medmemorybench.dataset.pipeline import build_and_export
from medmemorybench.errors import InputError
from tests.helpers import run_cli


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    out = tmp_path_factory.mktemp("audit") / "out"
    result = run_cli("build", "--seed", "0", "--out", str(out), "--personas", "2")  # (default noise: it must bite)
    assert result.returncode == 0, result.stderr
    return out / "medmemorybench"


@pytest.mark.slow  # (about 16 s of CPU: the whole audit through the CLI; `make test-all`)
def test_audit_prints_every_probe_and_the_card_carries_the_table(built):
    result = run_cli("audit", str(built))
    assert result.returncode == 0, result.stdout + result.stderr
    for probe in ("question_only", "constant", "abs_wording", "date_in_question", "evidence_age", "duplicates",
                  "noise_lowers_bm25"):
        assert probe in result.stdout
    assert "questions in 'zh'" in result.stdout  # (the Chinese questions are audited too)
    assert "Memory-less audit" in (built / "README.md").read_text()


def test_audit_fails_a_dataset_with_a_repeated_question(built, tmp_path):
    import shutil

    copy = tmp_path / "copy"
    shutil.copytree(built, copy)
    path = copy / "questions" / "checkpoint_20.parquet"
    table = pq.read_table(path)
    rows = table.to_pylist()
    rows.append({**rows[0], "query_id": rows[0]["query_id"] + "x"})
    pq.write_table(table.from_pylist(rows, schema=table.schema), path)
    result = run_cli("audit", str(copy), "--no-retrieval")
    assert result.returncode == 1 and "duplicates" in result.stderr and "Traceback" not in result.stderr


def test_audit_names_a_folder_that_is_not_a_dataset(tmp_path):
    result = run_cli("audit", str(tmp_path))
    assert result.returncode == 2 and str(tmp_path) in result.stderr and "Traceback" not in result.stderr


def test_build_refuses_to_export_a_dataset_that_fails_a_probe(tmp_path, monkeypatch):
    import medmemorybench.dataset.build as build

    failing = [ProbeResult("abs_wording", "ABS", 0.9, 0.6, False, "best rule: 'often'")]
    monkeypatch.setattr(build, "audit_questions", lambda questions, language="en": failing)
    options = BuildOptions(personas=1, health_sessions=2, family_sessions=2, language="en")
    with pytest.raises(InputError, match=r"abs_wording \(ABS, en\)"):
        build_and_export(tmp_path, options)
    assert not (tmp_path / "medmemorybench").exists()
    folder, _ = build_and_export(tmp_path, options, allow_audit_failures=True)
    assert "FAIL" in (folder / "README.md").read_text()
