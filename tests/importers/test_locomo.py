"""The LoCoMo importer on a tiny file of our own in LoCoMo's format (tests/importers/fixtures/locomo_tiny.json):
two conversations carrying the published file's quirks, each counted and mapped as docs/other_benchmarks.md says."""

import hashlib
import json
from pathlib import Path

import pytest

from medmemorybench.dataset.load import is_build, read_rows
from medmemorybench.dataset.validate import validate_rows
from medmemorybench.errors import InputError
from medmemorybench.importers import import_locomo
from medmemorybench.importers.common import ImportReport
from medmemorybench.importers.locomo import NOT_MENTIONED, evidence_sessions

FIXTURE = Path(__file__).parent / "fixtures" / "locomo_tiny.json"


@pytest.fixture(scope="module")
def imported(tmp_path_factory):
    out = tmp_path_factory.mktemp("locomo")
    report = import_locomo(FIXTURE, out)
    return report, read_rows(out / "medmemorybench")


def _questions(rows):
    return {q["query_id"]: q for split in rows["questions"].values() for q in split}


def test_counts_every_quirk(imported):
    report, _ = imported
    assert dict(report.quirks) == {
        "adversarial_evidence_not_scored": 2, "adversarial_questions": 2, "adversarial_with_answer": 1,
        "answers_not_text": 1, "evidence_ids_repaired": 3, "evidence_ids_unparsed": 1,
        "evidence_sessions_unknown": 1, "evidence_turns_unknown": 2, "image_captions_kept": 1,
        "questions_at_end_no_evidence": 3, "sessions_without_turns": 2}
    assert (report.personas, report.sessions, report.questions) == (2, 5, 11)
    assert report.questions_by_type == {"ABS": 2, "EEM": 6, "IG": 1, "MCD": 1, "TLA": 1}
    assert report.questions_by_source_category == {"1": 1, "2": 1, "3": 1, "4": 6, "5": 2}
    assert report.examples["evidence_ids_unparsed"] == ["sample 0 (conv-a): qa 7: 'D'"]


def test_rows_are_a_valid_build_with_source_metadata(imported, tmp_path):
    report, rows = imported
    folder = report.output
    assert is_build(folder) and validate_rows(rows) == []
    assert sorted(rows["efficient"]) == ["checkpoint_1", "checkpoint_2", "checkpoint_3"]
    assert rows["mixed"] == rows["efficient"]
    meta = json.loads((folder / "medmemorybench.json").read_text())
    assert meta["stats"]["source"]["sha256"] == hashlib.sha256(FIXTURE.read_bytes()).hexdigest() == report.sha256
    assert meta["stats"]["source"]["name"] == "locomo" and meta["stats"]["source"]["version"] == "unpublished copy"
    assert meta["stats"]["import_report"]["quirks"]["sessions_without_turns"] == 2
    card = (folder / "README.md").read_text()
    assert "license: cc-by-nc-4.0" in card and "# LoCoMo (imported)" in card


def test_sessions_roles_dates_and_numbering(imported):
    _, rows = imported
    first = {r["persona_id"]: r for r in rows["efficient"]["checkpoint_1"]}
    a = first["conv-a"]["sessions"]
    assert [s["session_id"] for s in a] == ["conv-a-S001"]
    assert a[0]["date"] == "2022-03-03" and a[0]["event_ids"] == ["session_1"]
    assert [t["role"] for t in a[0]["turns"]] == ["patient", "doctor", "patient"]
    assert a[0]["turns"][1]["text"] == "Ben: Congrats! I started learning the cello last week."
    # conv-b's session_1 is empty: its session_2 is our first session, and its evidence D2:1 points there
    b = first["conv-b"]["sessions"]
    assert [s["event_ids"] for s in b] == [["session_2"]] and b[0]["turns"][0]["role"] == "doctor"
    image = rows["efficient"]["checkpoint_2"][0]["sessions"][0]["turns"][1]["text"]
    assert image.endswith("[shares an image: a photo of a lemon cake on a plate]")
    # session_4 has a date and no turns: not a session of ours
    assert all(len(r["sessions"]) <= 1 for r in rows["efficient"]["checkpoint_3"])


def test_questions_placed_after_their_last_evidence(imported):
    _, rows = imported
    q = _questions(rows)
    assert (q["conv-a-Q0001"]["checkpoint"], q["conv-a-Q0001"]["evidence_session_ids"]) == (1, ["conv-a-S001"])
    assert q["conv-a-Q0002"]["answer"] == "2022" and q["conv-a-Q0002"]["query_type"] == "TLA"
    assert q["conv-a-Q0003"]["evidence_session_ids"] == ["conv-a-S001", "conv-a-S003"]
    assert q["conv-a-Q0003"]["checkpoint"] == 3 and q["conv-a-Q0003"]["template"] == "locomo.category_1.multi_hop"
    assert q["conv-a-Q0007"]["evidence_session_ids"] == ["conv-a-S003"]  # 'D:3:1' read as D3:1
    assert (q["conv-a-Q0008"]["checkpoint"], q["conv-a-Q0008"]["evidence_session_ids"]) == (3, [])  # 'D'
    assert (q["conv-b-Q0002"]["checkpoint"], q["conv-b-Q0002"]["evidence_session_ids"]) == (2, [])  # D5:1


def test_adversarial_questions_are_abstentions(imported):
    _, rows = imported
    q = _questions(rows)["conv-a-Q0005"]
    assert q["query_type"] == "ABS" and q["abstain"] and q["answer"] == NOT_MENTIONED
    assert q["common_wrong_answer"] == "a lemon cake" and q["absent_fact"] == q["question"]
    assert q["evidence_session_ids"] == [] and q["checkpoint"] == 2  # placed by its evidence, not scored on it
    assert _questions(rows)["conv-a-Q0006"]["answer"] == NOT_MENTIONED  # its source 'answer' is counted, not used


def test_placement_end_asks_everything_after_the_conversation(tmp_path):
    report = import_locomo(FIXTURE, tmp_path, placement="end")
    rows = read_rows(report.output)
    assert {q["checkpoint"] for q in _questions(rows).values() if q["persona_id"] == "conv-a"} == {3}
    assert "questions_at_end_no_evidence" not in report.quirks


def test_evidence_forms():
    report = ImportReport("locomo", "t", "t", "0", "f")
    assert evidence_sessions(["D8:6; D9:17", "D9:1 D4:4", "D30:05", "D", 7, "D2:1"], "q", report) == [8, 9, 4, 30, 2]
    assert report.quirks == {"evidence_ids_repaired": 3, "evidence_ids_unparsed": 2}


def _write(tmp_path, text):
    path = tmp_path / "bad.json"
    path.write_text(text)
    return path


@pytest.mark.parametrize(("text", "expected"), [
    ("{not json", "not JSON"),
    ('{"sample_id": "x"}', "top level (a list of conversations): expected a list, got an object"),
    ('[{"sample_id": "x", "qa": []}]', "sample 0 (x): 'conversation': expected an object, got nothing"),
    ('[{"sample_id": "x", "conversation": {"speaker_a": "A", "speaker_b": "B", "session_1": '
     '[{"speaker": "A", "dia_id": "D1:1", "text": "hi"}]}, "qa": [{"question": "q", "answer": "a", '
     '"evidence": [], "category": 9}]}]', "qa 0: 'category': 9 is not one of 1, 2, 3, 4, 5"),
    ('[{"sample_id": "x", "conversation": {"speaker_a": "A", "speaker_b": "B", "session_1": '
     '[{"speaker": "A", "dia_id": "D1:1", "text": "hi"}]}, "qa": [{"question": "q", "evidence": [], '
     '"category": 4}]}]', "qa 0: 'answer': missing"),
    ('[{"sample_id": "x", "conversation": {"speaker_a": "A", "speaker_b": "B", "session_1": '
     '[{"speaker": "A", "text": 5}]}, "qa": []}]', "session_1: turn 0: 'text': expected a string, got an integer"),
    ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
])
def test_bad_files_give_one_line_naming_the_file(tmp_path, text, expected):
    path = _write(tmp_path, text)
    with pytest.raises(InputError) as caught:
        import_locomo(path, tmp_path / "out")
    message = str(caught.value)
    assert message.startswith(str(path)) and expected in message and "\n" not in message
    assert not (tmp_path / "out" / "medmemorybench").exists()


def test_missing_file_unknown_placement_and_existing_output(tmp_path):
    with pytest.raises(InputError, match="cannot read"):
        import_locomo(tmp_path / "absent.json", tmp_path)
    with pytest.raises(InputError, match="placement"):
        import_locomo(FIXTURE, tmp_path, placement="middle")
    import_locomo(FIXTURE, tmp_path)
    with pytest.raises(InputError, match="already exists"):
        import_locomo(FIXTURE, tmp_path)
    assert import_locomo(FIXTURE, tmp_path, overwrite=True).questions == 11
