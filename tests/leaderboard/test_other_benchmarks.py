"""Runs on imports of LoCoMo and LongMemEval on the board: labelled with their source in a table of their own, never
ranked with MedMemoryBench's, re-scored against their own import, kept off the Hub (the source's data and licence)."""

from __future__ import annotations

from pathlib import Path

import pytest

from medmemorybench.errors import InputError
from medmemorybench.importers import import_locomo, import_longmemeval
from medmemorybench.leaderboard import load_board, prepare_submission, write_to_folder
from medmemorybench.leaderboard.site import render_page
from tests.harness.conftest import RecordingBackbone, run, run_config
from tests.scoring.fakes import FakeBackbone

FIXTURES = Path(__file__).parents[1] / "importers" / "fixtures"


@pytest.fixture(scope="module")
def locomo_run(tmp_path_factory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("locomo")
    import_locomo(FIXTURES / "locomo_tiny.json", root / "import")
    folder = root / "import" / "medmemorybench"
    run(run_config(folder, root, tasks=["locomo"], memory="bm25"))
    return root / "run", folder


def test_an_import_run_is_its_own_table_labelled_with_its_source(locomo_run, tmp_path):
    run_dir, folder = locomo_run
    submission = prepare_submission(run_dir)
    assert submission.description.startswith("A run on an import of LoCoMo") and submission.eval_results is None
    write_to_folder(submission, tmp_path / "results")
    board = load_board(tmp_path / "results", verify_with=folder)  # (re-scored against its own import)
    assert all(row.kind == "paper" for row in board.rows) and not board.left_out
    [row] = board.other_rows
    assert row.benchmark == "LoCoMo (unpublished copy)" and row.tasks == "locomo" and row.memory == "bm25"
    assert row.quality["efficient"]["recall_at_k"] == 1.0
    page = render_page(board, "results")
    assert 'id="other-benchmarks"' in page and "LoCoMo (unpublished copy)" in page


def test_the_published_board_leaves_import_runs_out(locomo_run, tmp_path):
    write_to_folder(prepare_submission(locomo_run[0]), tmp_path / "results")
    board = load_board(tmp_path / "results", published=True)
    assert not board.other_rows and "not published with the board" in board.left_out[0]
    assert 'id="other-benchmarks"' not in render_page(board, "results")


def test_an_import_run_is_not_sent_to_the_hub(locomo_run):
    with pytest.raises(InputError, match="an import of LoCoMo .licence cc-by-nc-4.0.*--results DIR"):
        prepare_submission(locomo_run[0], results_repo_id="org/results")


def test_a_verified_board_without_the_runs_import_leaves_it_out_saying_why(locomo_run, tmp_path):
    write_to_folder(prepare_submission(locomo_run[0]), tmp_path / "results")
    header = next((tmp_path / "results").rglob("run.json"))
    text = header.read_text().replace(str(locomo_run[1]), str(tmp_path / "gone"))
    header.write_text(text)  # (the hash check comes after: the missing import is named first)
    board = load_board(tmp_path / "results", verify_with=locomo_run[1])
    assert not board.other_rows and "is not here" in board.left_out[0]


def test_longmemeval_runs_re_score_from_their_judges_verdicts_and_unscored_stays_unscored(tmp_path):
    import_longmemeval(FIXTURES / "longmemeval_tiny.json", tmp_path / "import", "s")
    folder = tmp_path / "import" / "medmemorybench"
    run(run_config(folder, tmp_path / "judged", tasks=["longmemeval_s"], memory="bm25"), RecordingBackbone("Paris"),
        judge=FakeBackbone(["yes"] * 10))
    run(run_config(folder, tmp_path / "bare", tasks=["longmemeval_s"], memory="bm25"), RecordingBackbone("Paris"))
    for name in ("judged", "bare"):
        write_to_folder(prepare_submission(tmp_path / name / "run"), tmp_path / "results")  # (re-scored: consistent)
    board = load_board(tmp_path / "results", verify_with=folder)
    rows = {row.unscored: row for row in board.other_rows}
    assert set(rows) == {True, False} and not board.left_out
    assert rows[False].quality["efficient"]["correct"] == 1.0 and rows[False].benchmark == "LongMemEval s"
    assert rows[True].quality["efficient"]["correct"] is None
    assert "unscored (no judge)" in render_page(board, "results")
