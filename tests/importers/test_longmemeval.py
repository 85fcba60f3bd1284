"""The LongMemEval importer on a tiny file of our own in LongMemEval's format
(tests/importers/fixtures/longmemeval_tiny.json): three questions, each haystack one stream, the quirks counted."""

import json
from pathlib import Path

import pytest

from medmemorybench.dataset.load import is_build, read_rows
from medmemorybench.dataset.validate import validate_rows
from medmemorybench.errors import InputError
from medmemorybench.importers import import_longmemeval
from medmemorybench.importers.common import PLACEHOLDER_REPLY
from medmemorybench.importers.longmemeval import version_of

FIXTURE = Path(__file__).parent / "fixtures" / "longmemeval_tiny.json"


@pytest.fixture(scope="module")
def imported(tmp_path_factory):
    out = tmp_path_factory.mktemp("lme")
    report = import_longmemeval(FIXTURE, out, "oracle")
    return report, read_rows(out / "medmemorybench")


def _rows_by_persona(rows):
    return {r["persona_id"]: r for split in rows["efficient"].values() for r in split}


def test_counts_every_quirk(imported):
    report, _ = imported
    assert dict(report.quirks) == {
        "abstention_evidence_not_scored": 1, "abstention_questions": 1, "answer_sessions_not_in_haystack": 1,
        "answer_sessions_without_user_has_answer": 1, "answers_not_text": 1, "empty_turns_dropped": 1,
        "has_answer_turns": 6, "haystacks_reordered_by_date": 1, "sessions_after_question": 1, "sessions_padded": 1}
    assert (report.personas, report.sessions, report.questions) == (3, 9, 3)
    assert report.questions_by_type == {"ABS": 1, "MCD": 1, "SUA": 1}
    assert report.questions_by_source_category == {"knowledge-update": 1, "multi-session": 1,
                                                   "single-session-user.abstention": 1}


def test_one_stream_per_question_asked_at_the_end(imported):
    report, rows = imported
    assert is_build(report.output) and validate_rows(rows) == []
    assert sorted(rows["efficient"]) == ["checkpoint_2", "checkpoint_3", "checkpoint_4"]
    update = _rows_by_persona(rows)["lq_update"]
    assert update["checkpoint"] == 3 and [s["event_ids"] for s in update["sessions"]] == [
        ["filler_01"], ["answer_a1"], ["answer_a2"]]
    assert [s["date"] for s in update["sessions"]] == ["2023-04-01", "2023-04-15", "2023-05-30"]
    assert [t["role"] for t in update["sessions"][1]["turns"]] == ["patient", "doctor"]
    (q,) = update["questions"]
    assert (q["query_id"], q["query_type"], q["template"]) == ("lq_update-Q1", "SUA", "longmemeval.knowledge-update")
    assert q["evidence_session_ids"] == ["lq_update-S002", "lq_update-S003"] and q["answer"] == "Riverside Gym"
    meta = json.loads((report.output / "medmemorybench.json").read_text())
    assert meta["stats"]["source"]["variant"] == "oracle" and meta["stats"]["source"]["sha256"] == report.sha256
    assert "license: mit" in (report.output / "README.md").read_text()


def test_haystack_sorted_padded_and_evidence_mapped(imported):
    _, rows = imported
    count = _rows_by_persona(rows)["lq_count"]
    assert [s["event_ids"][0] for s in count["sessions"]] == ["filler_02", "answer_c1", "answer_c2", "answer_c3"]
    padded = count["sessions"][2]["turns"]
    assert padded[1] == {"role": "doctor", "text": PLACEHOLDER_REPLY}
    assert [t["text"] for t in count["sessions"][0]["turns"]][1] == "Slow chin tucks and shoulder rolls help."
    (q,) = count["questions"]
    assert q["answer"] == "3" and q["query_type"] == "MCD"
    assert q["evidence_session_ids"] == ["lq_count-S002", "lq_count-S003", "lq_count-S004"]  # answer_c9 is absent


def test_abstention(imported):
    _, rows = imported
    (q,) = _rows_by_persona(rows)["lq_pet_abs"]["questions"]
    assert q["query_type"] == "ABS" and q["abstain"] and q["evidence_session_ids"] == []
    assert q["absent_fact"] == q["question"] and q["answer"].startswith("You mentioned a rabbit")
    assert q["template"] == "longmemeval.single-session-user.abstention"


def test_version_from_the_file_name():
    assert version_of(Path("longmemeval_s_cleaned.json")) == "cleaned (2025-09)"
    assert version_of(Path("longmemeval_s.json")).startswith("original")


def _item(**changes):
    item = json.loads(FIXTURE.read_text())[0]
    item.update(changes)
    return item


@pytest.mark.parametrize(("data", "expected"), [
    ({"question_id": "x"}, "top level (a list of questions): expected a list, got an object"),
    ([_item(question_type="trivia")], "'question_type': 'trivia' is not one of"),
    ([_item(haystack_dates=["2023/04/01 (Sat) 10:00"])], "differ in length (3, 1, 3)"),
    ([{k: v for k, v in _item().items() if k != "answer_session_ids"}], "'answer_session_ids': expected a list, got "
                                                                        "nothing"),
    ([_item(), _item()], "'question_id' repeats an earlier question's"),
    ([_item(haystack_sessions=[[{"role": "user"}], [], []])], "session 0: turn 0: 'content': expected a string"),
])
def test_bad_files_give_one_line_naming_the_file(tmp_path, data, expected):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data))
    with pytest.raises(InputError) as caught:
        import_longmemeval(path, tmp_path / "out", "s")
    message = str(caught.value)
    assert message.startswith(str(path)) and expected in message and "\n" not in message


def test_not_json_deep_nesting_and_unknown_variant(tmp_path):
    path = tmp_path / "bad.json"
    path.write_bytes(b"\xff\xfe not text")
    with pytest.raises(InputError, match="not UTF-8"):
        import_longmemeval(path, tmp_path, "s")
    path.write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(InputError, match="nested too deeply"):
        import_longmemeval(path, tmp_path, "m")
    with pytest.raises(InputError, match="variant: 'xl'"):
        import_longmemeval(FIXTURE, tmp_path, "xl")
