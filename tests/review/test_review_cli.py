"""`medmemorybench review` as a user runs it: write a sheet, score two, and bad input as one line with exit 2."""

from __future__ import annotations

import csv
import io
import json

import pytest

from medmemorybench.review.sheet import COLUMNS, CSV_ENCODING
from tests.helpers import export_small_dataset, run_cli


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    return export_small_dataset(tmp_path_factory.mktemp("data"), personas=2)


def fill(sheet, out, verdicts):
    rows = list(csv.DictReader(io.StringIO(sheet.read_text(encoding=CSV_ENCODING))))
    for row, verdict in zip(rows, verdicts, strict=False):
        row["verdict"] = verdict
    with out.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=COLUMNS)
        writer.writeheader()
        writer.writerows(rows)
    return out


def test_write_then_score_two_reviewers(dataset, tmp_path):
    sheet = tmp_path / "review" / "review.csv"
    result = run_cli("review", str(dataset), "--sample", "20", "--seed", "0", "--out", str(sheet))
    assert result.returncode == 0, result.stderr
    assert "20 items" in result.stdout and (tmp_path / "review" / "review.md").is_file()

    a = fill(sheet, tmp_path / "a.csv", ["correct"] * 15 + ["incorrect"] * 5)
    b = fill(sheet, tmp_path / "b.csv", ["correct"] * 14 + ["incorrect"] * 6)
    scores = tmp_path / "scores.json"
    result = run_cli("review", "--score", str(a), str(b), "--json", str(scores))
    assert result.returncode == 0, result.stderr
    assert "agreement" in result.stdout and "Cohen's kappa" in result.stdout
    overall = next(r for r in json.loads(scores.read_text())["agreement"] if r["category"] == "overall")
    # 19 of 20 agree; p_e = (15*14 + 5*6) / 400 = 0.6, kappa = (0.95 - 0.6) / 0.4 = 0.875
    assert overall["n_both"] == 20 and overall["kappa"] == pytest.approx(0.875)


def test_existing_sheet_is_one_line_and_exit_2(dataset, tmp_path):
    sheet = tmp_path / "review.csv"
    assert run_cli("review", str(dataset), "--sample", "5", "--out", str(sheet)).returncode == 0
    again = run_cli("review", str(dataset), "--sample", "5", "--out", str(sheet))
    assert again.returncode == 2 and "already exists" in again.stderr and "Traceback" not in again.stderr


@pytest.mark.parametrize(("args", "message"), [
    (["out/medmemorybench", "--sample", "5"], "--output_path: required when writing a sheet"),
    (["--sample", "5", "--out", "r.csv"], "review: give one DATASET folder (got 0)"),
    (["--score"], "--score: give one or two filled sheets (got 0)"),
    (["--score", "missing.csv"], "missing.csv: no such file"),
    (["--score", "x.csv", "--sample", "3"], "--sample: applies only when writing a sheet"),
])
def test_bad_input_is_one_line_and_exit_2(args, message):
    result = run_cli("review", *args)
    assert result.returncode == 2 and message in result.stderr and "Traceback" not in result.stderr


def test_unknown_verdict_names_file_row_and_field(tmp_path):
    path = tmp_path / "s.csv"
    path.write_text("item_id,item_type,category,verdict\nP1-E1,event,lab_check,maybe\n", encoding="utf-8")
    result = run_cli("review", "--score", str(path))
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert f"{path}: row 2 (P1-E1): verdict: 'maybe'" in " ".join(result.stderr.split())


def test_help_ends_with_examples():
    result = run_cli("review", "--help")
    assert result.returncode == 0 and "medmemorybench review --score" in result.stdout
