"""Scoring filled review sheets: error rates, agreement and Cohen's κ against hand-computed values; bad input."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from medmemorybench.errors import InputError
from medmemorybench.review import cohen_kappa, read_sheet, score_sheets, write_scores_json
from medmemorybench.review.sheet import COLUMNS

# Ten items both reviewers judged, plus one only A judged. The 3x3 confusion matrix (A rows, B columns):
#               B correct  B incorrect  B unsure
#   A correct        5          1           0
#   A incorrect      1          2           0
#   A unsure         0          1           0
# p_o = 7/10; A's marginals 6/3/1, B's 6/4/0, so p_e = (6*6 + 3*4 + 1*0)/100 = 0.48;
# kappa = (0.70 - 0.48) / (1 - 0.48) = 0.22 / 0.52 = 11/26.
# lab_check holds four of them: (c,c) (c,c) (i,i) (c,i): p_o = 3/4, p_e = (3*2 + 1*2)/16 = 1/2, kappa = 1/2.
PAIRS = [
    ("P0001-E001", "event", "lab_check", "correct", "correct"),
    ("P0001-E002", "event", "lab_check", "correct", "correct"),
    ("P0001-E003", "event", "lab_check", "incorrect", "incorrect"),
    ("P0001-E004", "event", "lab_check", "correct", "incorrect"),
    ("P0001-E005", "event", "prescription", "correct", "correct"),
    ("P0001-C010-EEM1", "question", "EEM", "correct", "correct"),
    ("P0001-C010-EEM2", "question", "EEM", "correct", "correct"),
    ("P0001-C010-IG1", "question", "IG", "incorrect", "correct"),
    ("P0001-C010-IG2", "question", "IG", "incorrect", "incorrect"),
    ("P0001-C020-MCD1", "question", "MCD", "unsure", "incorrect"),
    ("P0001-C020-MCD2", "question", "MCD", "correct", ""),  # B left it empty: not in the agreement
]


def write_sheet(path: Path, rows: list[dict], columns: tuple[str, ...] = COLUMNS) -> Path:
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=columns, extrasaction="ignore", lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    return path


def sheet_rows(which: int) -> list[dict]:
    return [{"item_id": i, "item_type": t, "category": c, "verdict": pair[which], "what": "x", "evidence": "y"}
            for i, t, c, *pair in PAIRS]


@pytest.fixture
def sheets(tmp_path):
    return write_sheet(tmp_path / "a.csv", sheet_rows(0)), write_sheet(tmp_path / "b.csv", sheet_rows(1))


def by_category(rows):
    return {r.category: r for r in rows}


def test_kappa_and_agreement_match_the_hand_computed_confusion_matrix(sheets):
    scores = score_sheets(list(sheets))
    agreement = by_category(scores.agreement)
    assert agreement["overall"].n_both == 10 and agreement["overall"].n_agree == 7
    assert agreement["overall"].percent_agreement == pytest.approx(0.7)
    assert agreement["overall"].kappa == pytest.approx(11 / 26)
    assert agreement["lab_check"].kappa == pytest.approx(0.5)
    assert agreement["lab_check"].percent_agreement == pytest.approx(0.75)


def test_error_rate_counts_unsure_apart(sheets):
    rates = by_category(score_sheets([sheets[0]]).sheets[0].error_rates)
    overall = rates["overall"]
    counts = (overall.n_items, overall.n_reviewed, overall.correct, overall.incorrect, overall.unsure)
    assert counts == (11, 11, 7, 3, 1)
    assert overall.error_rate == pytest.approx(3 / 10)
    assert rates["all events"].error_rate == pytest.approx(1 / 5)
    assert rates["IG"].error_rate == 1.0
    assert rates["MCD"].error_rate == 0.0  # one unsure, one correct: unsure is not an error


def test_empty_verdicts_are_not_reviewed_and_an_all_unsure_category_has_no_rate(tmp_path):
    rows = [{"item_id": "P1-E1", "item_type": "event", "category": "lab_check", "verdict": "unsure"},
            {"item_id": "P1-E2", "item_type": "event", "category": "lab_check", "verdict": ""}]
    rate = by_category(score_sheets([write_sheet(tmp_path / "s.csv", rows)]).sheets[0].error_rates)["lab_check"]
    assert (rate.n_items, rate.n_reviewed, rate.unsure, rate.error_rate) == (2, 1, 1, None)


def test_kappa_edge_cases():
    assert cohen_kappa([("correct", "correct"), ("incorrect", "incorrect")]) == 1.0
    # every label the same on both sides: chance agreement is 1, so kappa is 0/0, not 1 and not 0
    assert cohen_kappa([("correct", "correct")] * 4) is None
    assert cohen_kappa([]) is None
    # systematic disagreement on a balanced set is -1
    assert cohen_kappa([("correct", "incorrect"), ("incorrect", "correct")]) == -1.0


def test_verdicts_read_case_insensitively_and_blank_rows_skipped(tmp_path):
    path = tmp_path / "s.csv"
    path.write_text("item_id,item_type,category,verdict\nP1-E1,event,lab_check, Correct \n,,,\n", encoding="utf-8")
    assert [(i.item_id, i.verdict, i.row) for i in read_sheet(path)] == [("P1-E1", "correct", 2)]


def test_semicolon_sheet_with_a_bom_is_read(tmp_path):
    path = tmp_path / "s.csv"
    path.write_text("\ufeffitem_id;item_type;category;verdict\nP1-E1;event;lab_check;incorrect\n", encoding="utf-8")
    assert read_sheet(path)[0].verdict == "incorrect"


def test_scores_json_keeps_undefined_as_null(sheets, tmp_path):
    out = write_scores_json(score_sheets(list(sheets)), tmp_path / "scores.json")
    data = json.loads(out.read_text())
    overall = next(r for r in data["agreement"] if r["category"] == "overall")
    assert overall["kappa"] == pytest.approx(11 / 26)
    prescription = next(r for r in data["agreement"] if r["category"] == "prescription")
    assert prescription["kappa"] is None  # one item, both correct


def test_missing_file_is_named(tmp_path):
    with pytest.raises(InputError, match=r"nope\.csv: no such file"):
        read_sheet(tmp_path / "nope.csv")


def test_missing_column_names_file_row_and_column(tmp_path):
    path = write_sheet(tmp_path / "s.csv", sheet_rows(0), columns=("item_id", "item_type", "category", "what"))
    with pytest.raises(InputError, match=r"s\.csv: row 1: missing column verdict"):
        read_sheet(path)


def test_unknown_verdict_names_file_row_and_field(tmp_path):
    rows = sheet_rows(0)
    rows[2]["verdict"] = "wrong"
    with pytest.raises(InputError, match=r"s\.csv: row 4 \(P0001-E003\): verdict: 'wrong' is not one of correct, "
                                         r"incorrect, unsure"):
        read_sheet(write_sheet(tmp_path / "s.csv", rows))


def test_repeated_item_id_names_both_rows(tmp_path):
    rows = sheet_rows(0)
    rows[3]["item_id"] = rows[0]["item_id"]
    with pytest.raises(InputError, match=r"row 5 \(P0001-E001\): item_id: repeats row 2"):
        read_sheet(write_sheet(tmp_path / "s.csv", rows))


def test_item_id_only_on_the_second_sheet_is_named(tmp_path, sheets):
    rows = sheet_rows(1)
    rows[4]["item_id"] = "P0009-E005"
    other = write_sheet(tmp_path / "c.csv", rows)
    with pytest.raises(InputError, match=r"c\.csv: row 6 \(P0009-E005\): item_id: not in .*a\.csv"):
        score_sheets([sheets[0], other])


def test_item_missing_from_the_second_sheet_is_named(tmp_path, sheets):
    other = write_sheet(tmp_path / "c.csv", sheet_rows(1)[:-1])
    with pytest.raises(InputError, match=r"c\.csv: item_id: 1 item\(s\) of .*a\.csv are missing, first "
                                         r"P0001-C020-MCD2 \(.*a\.csv row 12\)"):
        score_sheets([sheets[0], other])


def test_category_edited_on_one_sheet_is_named(tmp_path, sheets):
    rows = sheet_rows(1)
    rows[0]["category"] = "follow_up"
    other = write_sheet(tmp_path / "c.csv", rows)
    with pytest.raises(InputError, match=r"c\.csv: row 2 \(P0001-E001\): category: 'follow_up' differs from "
                                         r"'lab_check'"):
        score_sheets([sheets[0], other])


def test_three_sheets_are_refused(sheets):
    with pytest.raises(InputError, match="--score: give one or two filled sheets"):
        score_sheets([*sheets, sheets[0]])
