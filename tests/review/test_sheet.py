"""Review sheets from a small built dataset: seeded and byte-identical, stratified, complete, written atomically."""

from __future__ import annotations

import csv
import io
import json
from collections import Counter

import pytest

from medmemorybench.errors import InputError, OutputError
from medmemorybench.review import COLUMNS, score_sheets, write_review_sheet
from medmemorybench.review._text import describe_fact
from medmemorybench.review.sheet import CSV_ENCODING
from tests.helpers import export_small_dataset


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    return export_small_dataset(tmp_path_factory.mktemp("data"), personas=2)


@pytest.fixture(scope="module")
def strata(dataset, tmp_path_factory):
    """Every (item_type, category) of the dataset, from a full-size sheet's pool."""
    return write_review_sheet(dataset, tmp_path_factory.mktemp("pool") / "all.csv", sample=1).pool


def read_csv(path):
    return list(csv.DictReader(io.StringIO(path.read_text(encoding=CSV_ENCODING))))


def test_same_inputs_give_byte_identical_files(dataset, tmp_path):
    first = write_review_sheet(dataset, tmp_path / "a" / "review.csv", sample=30, seed=3)
    second = write_review_sheet(dataset, tmp_path / "b" / "review.csv", sample=30, seed=3)
    assert first.csv_path.read_bytes() == second.csv_path.read_bytes()
    assert first.markdown_path.read_bytes() == second.markdown_path.read_bytes()
    other = write_review_sheet(dataset, tmp_path / "c" / "review.csv", sample=30, seed=4)
    assert [i.item_id for i in other.items] != [i.item_id for i in first.items]


def test_sample_the_size_of_the_strata_takes_one_of_each(dataset, strata, tmp_path):
    kinds = {c for t, c in strata if t == "event"}
    types = {c for t, c in strata if t == "question"}
    assert len(kinds) >= 5 and types == {"EEM", "TLA", "SUA", "MQ", "IG", "MCD", "ABS"}
    sheet = write_review_sheet(dataset, tmp_path / "r.csv", sample=len(strata), seed=0)
    assert Counter((i.item_type, i.category) for i in sheet.items) == Counter(set(strata))


def test_larger_sample_covers_every_stratum_and_has_no_repeats(dataset, strata, tmp_path):
    rows = read_csv(write_review_sheet(dataset, tmp_path / "r.csv", sample=60, seed=1).csv_path)
    assert len(rows) == 60 and len({r["item_id"] for r in rows}) == 60
    assert {(r["item_type"], r["category"]) for r in rows} == set(strata)


def test_sample_smaller_than_the_strata_still_mixes_events_and_questions(dataset, tmp_path):
    sheet = write_review_sheet(dataset, tmp_path / "r.csv", sample=4, seed=0)
    assert Counter(i.item_type for i in sheet.items) == {"event": 2, "question": 2}
    assert len({i.category for i in sheet.items}) == 4


def test_rows_carry_the_statement_evidence_and_empty_reviewer_columns(dataset, strata, tmp_path):
    sheet = write_review_sheet(dataset, tmp_path / "r.csv", sample=len(strata), seed=0)
    rows = read_csv(sheet.csv_path)
    assert tuple(rows[0]) == COLUMNS
    assert all(r["verdict"] == r["correction"] == r["comment"] == "" for r in rows)
    questions = {q["query_id"]: q for q in _questions(dataset)}
    for row in rows:
        assert row["condition"] and row["persona_id"] in row["item_id"]
        if row["item_type"] == "event":
            assert row["date"] and not row["checkpoint"]
            assert row["what"].startswith(f"{row['category']} on {row['date']}")
            assert f"[{row['item_id'].replace('-E', '-S')}, {row['date']}]" in row["evidence"]  # its own session
        else:
            question = questions[row["item_id"]]
            assert row["checkpoint"] == str(question["checkpoint"])
            assert question["question"] in row["what"] and f"gold answer: {question['answer']}" in row["what"]
            assert all(f"[{s}, " in row["evidence"] for s in question["evidence_session_ids"])
            assert all(fact in row["what"] for fact in question["key_facts"])


def test_markdown_has_one_section_per_item_with_blanks(dataset, tmp_path):
    sheet = write_review_sheet(dataset, tmp_path / "r.csv", sample=12, seed=0)
    text = sheet.markdown_path.read_text(encoding="utf-8")
    assert sheet.markdown_path.name == "r.md"
    for number, item in enumerate(sheet.items, start=1):
        assert f"### {number}. {item.item_id} ({item.item_type}, {item.category})" in text
    assert text.count("- verdict (correct / incorrect / unsure): ____") == 12
    assert "### P0001: " in text and "trap (allergy" in text


def test_filled_sheet_scores(dataset, tmp_path):
    sheet = write_review_sheet(dataset, tmp_path / "r.csv", sample=10, seed=0)
    rows = read_csv(sheet.csv_path)
    for k, row in enumerate(rows):
        row["verdict"] = ("correct", "correct", "incorrect", "unsure", "")[k % 5]
    filled = tmp_path / "filled.csv"
    with filled.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=COLUMNS)
        writer.writeheader()
        writer.writerows(rows)
    overall = score_sheets([filled]).sheets[0].error_rates[-1]
    assert (overall.category, overall.n_reviewed, overall.incorrect, overall.unsure) == ("overall", 8, 2, 2)
    assert overall.error_rate == pytest.approx(2 / 6)


def test_existing_output_is_refused_and_kept(dataset, tmp_path):
    out = tmp_path / "r.csv"
    write_review_sheet(dataset, out, sample=5)
    before = out.read_bytes()
    with pytest.raises(InputError, match=r"--output_path: .*r\.csv already exists; .*--overwrite"):
        write_review_sheet(dataset, out, sample=6)
    assert out.read_bytes() == before
    write_review_sheet(dataset, out, sample=6, overwrite=True)
    assert len(read_csv(out)) == 6


def test_existing_markdown_beside_is_refused(dataset, tmp_path):
    (tmp_path / "r.md").write_text("notes", encoding="utf-8")
    with pytest.raises(InputError, match=r"r\.md already exists"):
        write_review_sheet(dataset, tmp_path / "r.csv", sample=5)
    assert not (tmp_path / "r.csv").exists()


def test_a_failed_write_leaves_nothing_behind(dataset, tmp_path, monkeypatch):
    import medmemorybench.files as files

    def fail(*_args):
        raise OSError("disk full")

    monkeypatch.setattr(files.os, "replace", fail)
    with pytest.raises(OutputError, match=r"r\.csv: could not be written \(disk full\)"):
        write_review_sheet(dataset, tmp_path / "out" / "r.csv", sample=5)
    assert list((tmp_path / "out").iterdir()) == []


@pytest.mark.parametrize(("sample", "out", "message"), [
    (0, "r.csv", "--sample: must be at least 1"),
    (5, "r.txt", r"--output_path: .*r\.txt must end in \.csv"),
])
def test_bad_options_are_named_before_the_dataset_is_read(tmp_path, sample, out, message):
    with pytest.raises(InputError, match=message):
        write_review_sheet(tmp_path / "no-such-dataset", tmp_path / out, sample=sample)


def test_sample_larger_than_the_dataset_is_named(dataset, tmp_path):
    with pytest.raises(InputError, match=r"--sample: 100000 is more than the \d+ events and questions"):
        write_review_sheet(dataset, tmp_path / "r.csv", sample=100000)


def test_the_folder_above_a_build_points_to_the_build(dataset, tmp_path):
    with pytest.raises(InputError, match=r"holds a build; give the dataset folder .*medmemorybench"):
        write_review_sheet(dataset.parent, tmp_path / "r.csv", sample=5)


def test_not_a_dataset_folder_is_named(tmp_path):
    with pytest.raises(InputError, match="not a MedMemoryBench dataset folder"):
        write_review_sheet(tmp_path, tmp_path / "r.csv", sample=5)


def test_facts_are_described_field_by_field():
    assert describe_fact({"type": "lab", "lab": "hba1c", "value": 8.0, "unit": "%"}) == "lab hba1c: value 8 %"
    medication = {"type": "medication", "drug": "metformin", "action": "increase", "dose": 1000.0, "unit": "mg",
                  "frequency": "twice_daily", "previous_dose": 500.0, "reason": None}
    assert describe_fact(medication) == ("medication: drug metformin; action increase; dose 1000 mg; "
                                         "frequency twice daily; previous dose 500 mg")
    allergy = {"type": "allergy", "group": "statin_myopathy", "agent": {"en": "Lipitor", "zh": "立普妥"}}
    assert describe_fact(allergy) == "allergy: group statin myopathy; agent Lipitor"


def _questions(dataset):
    import pyarrow.parquet as pq

    files = sorted((dataset / "questions").glob("*.parquet"))
    return [row for path in files for row in pq.read_table(path).to_pylist()]


def test_fingerprint_is_in_the_markdown(dataset, tmp_path):
    fingerprint = json.loads((dataset / "medmemorybench.json").read_text())["fingerprint"]
    sheet = write_review_sheet(dataset, tmp_path / "r.csv", sample=3)
    assert fingerprint in sheet.markdown_path.read_text(encoding="utf-8")
