"""Runs on another MedMemoryBench build than the release (another seed, a private build) go to a table of their own,
headed with that build's fingerprint and size and re-scored against that build, never ranked with the release's rows;
without that build they are left out saying how to show them, and the published Space leaves them out (issue 28)."""

from __future__ import annotations

import json
import re
import shutil

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from medmemorybench.errors import InputError
from medmemorybench.leaderboard import SystemClaim, load_board, prepare_submission, write_to_folder
from medmemorybench.leaderboard.bundle import sha256
from medmemorybench.leaderboard.rescore import release_facts
from medmemorybench.leaderboard.site import render_page
from tests.helpers import run_cli
from tests.leaderboard.conftest import edit_json


def rehash(bundle, name: str) -> None:  # noqa: ANN001
    """Make `submission.json` agree with an edited file, as a cheating submitter would."""
    edit_json(bundle / "submission.json", lambda m: m["files"].update({name: sha256((bundle / name).read_bytes())}))


@pytest.fixture
def board_folder(retrieval_run, other_build_run, tmp_path):
    """A results folder: an official bundle (a slice of the release), a bundle on another build, and a tampered
    copy of it (its summary edited, the manifest re-hashed)."""
    folder = tmp_path / "results"
    official = write_to_folder(prepare_submission(retrieval_run, allow_partial=True), folder)
    other = write_to_folder(prepare_submission(other_build_run[0], claim=SystemClaim(name="Private Build")), folder)
    tampered = write_to_folder(prepare_submission(other_build_run[0], claim=SystemClaim(name="Tampered")), folder)
    edit_json(tampered / "summary.json", lambda s: s["tasks"]["medmemorybench_efficient"]["metrics"]["recall_at_k"]
              ["mean_over_types"][0].update(mean=0.97))
    rehash(tampered, "summary.json")
    return folder, official, other, tampered


def fingerprint_of(run_dir) -> str:  # noqa: ANN001
    return json.loads((run_dir / "run.json").read_text())["dataset_fingerprint"]


def test_a_run_on_another_build_is_only_in_its_own_table_headed_with_that_build(board_folder, dataset_dir,
                                                                                 other_build_run):
    folder, official, other, tampered = board_folder
    board = load_board(folder, verify_with=dataset_dir, other_releases=[other_build_run[1]])
    assert [row.id for row in board.rows if row.kind == "run"] == [official.relative_to(folder).as_posix()]
    assert board.release == release_facts(dataset_dir) and board.release.patients == 3
    (build,) = board.other_builds
    assert build.release == release_facts(other_build_run[1]) and build.rescored
    assert build.release.fingerprint == fingerprint_of(other_build_run[0]) != board.release.fingerprint
    assert build.release.patients == 1 and build.release.questions > 0
    assert [row.id for row in build.rows] == [other.relative_to(folder).as_posix()]
    assert build.rows[0].coverage.startswith(f"{build.release.questions} of {build.release.questions} questions")
    assert len(board.left_out) == 1 and str(tampered) in board.left_out[0] and "is 0.97" in board.left_out[0]
    page = render_page(board, "results")
    heading = re.search(r'<section class="card other-build" data-fingerprint="([0-9a-f]{64})">\n<h2>([^<]*)</h2>',
                        page)
    assert heading is not None and heading[1] == build.release.fingerprint
    assert heading[2] == (f"Another MedMemoryBench build, fingerprint {build.release.fingerprint[:12]} (1 patient, "
                          f"{build.release.questions} questions): not comparable, not ranked")
    assert f"Ranked: runs\non the release with fingerprint <code>{board.release.fingerprint[:12]}</code>" in page


def test_without_its_build_a_run_on_another_build_is_left_out_saying_how_to_show_it(board_folder, dataset_dir):
    folder, official, other, tampered = board_folder
    board = load_board(folder, verify_with=dataset_dir)
    assert [row.id for row in board.rows if row.kind == "run"] == [official.relative_to(folder).as_posix()]
    assert not board.other_builds and len(board.left_out) == 2
    assert all("ran on another MedMemoryBench build" in r and "--other_release FOLDER" in r for r in board.left_out)
    assert 'class="card other-build"' not in render_page(board, "results")


def test_a_run_claiming_the_releases_fingerprint_is_checked_against_the_release(board_folder, dataset_dir,
                                                                                other_build_run):
    folder, _official, other, _tampered = board_folder
    edit_json(other / "run.json", lambda h: h.update(dataset_fingerprint=release_facts(dataset_dir).fingerprint))
    rehash(other, "run.json")
    board = load_board(folder, verify_with=dataset_dir, other_releases=[other_build_run[1]])
    assert not board.other_builds and [row.kind for row in board.rows].count("run") == 1
    assert any(str(other) in reason and "ran on another" not in reason for reason in board.left_out)


def test_the_published_board_leaves_runs_on_other_builds_out(board_folder, dataset_dir):
    folder, *_ = board_folder
    board = load_board(folder, verify_with=dataset_dir, published=True)
    assert not board.other_builds and len(board.left_out) == 2
    assert all("not published with the board, which shows runs on the release only" in r for r in board.left_out)


def test_a_board_that_does_not_re_score_still_keeps_other_builds_apart(board_folder, dataset_dir):
    folder, official, other, tampered = board_folder
    board = load_board(folder, pinned=release_facts(dataset_dir).fingerprint)
    assert [row.id for row in board.rows if row.kind == "run"] == [official.relative_to(folder).as_posix()]
    (build,) = board.other_builds
    assert not build.rescored and build.release.patients is None  # (nothing read: only what the runs recorded)
    assert [row.id for row in build.rows] == [other.relative_to(folder).as_posix()]
    # (hashes alone cannot tell the tampered one: it is refused as a copy of the first submitted's samples)
    assert board.left_out == [f"{tampered.relative_to(folder).as_posix()}: refused: its samples are a copy of "
                              f"{other.relative_to(folder).as_posix()}'s (the same SHA-256), submitted earlier"]
    assert "This page was written without re-scoring them" in render_page(board, "results")


def test_an_edited_copy_of_the_other_build_is_refused_and_each_run_on_it_left_out_by_name(board_folder, dataset_dir,
                                                                                          other_build_run, tmp_path):
    folder, official, other, tampered = board_folder
    edited = tmp_path / "edited-build"
    shutil.copytree(other_build_run[1], edited)
    changed = 0
    for path in sorted((edited / "questions").glob("*.parquet")):  # (a forger's gold: the sessions it retrieved)
        rows = pq.read_table(path).to_pylist()
        for row in rows:
            changed += row["evidence_session_ids"] != ["P0001-S001"]
            row["evidence_session_ids"] = ["P0001-S001"]
        pq.write_table(pa.Table.from_pylist(rows, schema=pq.read_schema(path)), path)
    assert changed
    board = load_board(folder, verify_with=dataset_dir, other_releases=[edited])
    assert not board.other_builds
    assert [row.id for row in board.rows if row.kind == "run"] == [official.relative_to(folder).as_posix()]
    # (each line names the bundle left out, then why: the build's rows are not the fingerprint it records)
    assert sorted(reason.split(": ")[0] for reason in board.left_out) == sorted([str(other), str(tampered)])
    assert all("the build it ran on (--other_release) is refused" in reason
               and "its rows do not match its own fingerprint" in reason for reason in board.left_out)


@pytest.mark.parametrize(("given", "verify", "message"), [
    ("nowhere", True, "--other_release: no MedMemoryBench build at"),
    ("release", True, "is the release itself"),
    ("other", False, "which --no-verify would not do"),
])
def test_other_release_refuses_what_is_no_other_build(board_folder, dataset_dir, other_build_run, tmp_path, given,
                                                      verify, message):
    folders = {"nowhere": tmp_path / "nowhere", "release": dataset_dir, "other": other_build_run[1]}
    with pytest.raises(InputError, match=re.escape(message)):
        load_board(board_folder[0], verify_with=dataset_dir if verify else None, other_releases=[folders[given]])


def test_the_command_writes_the_page_with_the_other_builds_table(board_folder, dataset_dir, other_build_run,
                                                                 tmp_path):
    folder, *_ = board_folder
    done = run_cli("leaderboard", "--results", str(folder), "--html", str(tmp_path / "board"), "--dataset_path",
                   str(dataset_dir), "--other_release", str(other_build_run[1].parent), timeout=300)
    assert done.returncode == 0, done.stderr
    assert "1 runs on other builds (not ranked)" in done.stdout and done.stderr.count("left out: ") == 1
    assert 'class="card other-build"' in (tmp_path / "board" / "index.html").read_text()
