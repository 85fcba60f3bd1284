"""The board reads a results folder without trusting it: changed files, tampered bundles (with --verify), links and
unsafe names are left out with the reason; rows come from the report's numbers; the paper's rows are labelled."""

from __future__ import annotations

import json
import os

import pytest

from medmemorybench.leaderboard import SystemClaim, load_board, prepare_submission, write_to_folder
from medmemorybench.leaderboard.bundle import is_slug, sha256, slug
from medmemorybench.leaderboard.site import embedded_json, render_page
from medmemorybench.leaderboard.systems import load_systems
from medmemorybench.memory.registry import MEMORY_SYSTEMS
from medmemorybench.report import paper_rows
from tests.leaderboard.conftest import edit_json


@pytest.fixture
def results(answered_run, tmp_path):
    folder = tmp_path / "results"
    submission = prepare_submission(answered_run)
    return folder, write_to_folder(submission, folder), submission


def test_a_run_row_holds_the_reports_numbers_and_the_papers_rows_are_labelled(results):
    folder, _bundle, submission = results
    board = load_board(folder)
    (run,) = [row for row in board.rows if row.kind == "run"]
    (expected,) = paper_rows([json.loads(submission.files["summary.json"])])[1]
    assert run.main == expected.by_mode and run.mean == expected.mean and run.complete
    assert set(run.curves) == {"efficient", "mixed"} and run.curves["mixed"]["correct"][0][0] == 10
    assert run.provenance["dataset_fingerprint"] == submission.manifest.dataset_fingerprint
    paper = {row.memory: row for row in board.rows if row.kind == "paper"}
    # every figure of the paper's table, per type and mode, not only the means
    assert len(paper) == 13 and paper["long_context"].main["efficient"]["mean"] == 51.58
    assert paper["letta"].main["mixed"] == {"EEM": 40.5, "TLA": 23.0, "SUA": 52.0, "MQ": 70.35, "IG": 49.5,
                                            "MCD": 13.97, "mean": 41.55}
    assert paper["long_context"].mean == pytest.approx((51.58 + 38.75) / 2)
    assert {row.backbone for row in paper.values()} == {"GPT-5.1"}
    assert {row.coverage for row in paper.values()} == {"reported in the paper, on its own data"}


def test_an_oracle_bundle_is_the_ceiling_row_never_a_run(results, oracle_run):
    folder, _bundle, _ = results
    write_to_folder(prepare_submission(oracle_run, allow_partial=True), folder)
    board = load_board(folder)
    (ceiling,) = [row for row in board.rows if row.kind == "ceiling"]
    assert ceiling.memory == "oracle" and ceiling.system == "Oracle" and ceiling.paradigm == "reference"
    assert [row.memory for row in board.rows if row.kind == "run"] == ["bm25"]
    assert ceiling.quality["efficient"]["recall_at_k"] is not None


def test_every_built_in_memory_has_a_name_and_paradigm():
    systems = {system.memory for system in load_systems().systems}
    assert systems == set(MEMORY_SYSTEMS)


def test_a_file_changed_after_submission_is_left_out(results):
    folder, bundle, _ = results
    with (bundle / "samples.jsonl").open("a") as handle:
        handle.write("\n")
    board = load_board(folder)
    assert [row for row in board.rows if row.kind == "run"] == []
    assert board.left_out == [f"{bundle / 'samples.jsonl'}: does not match its hash in submission.json"]


def test_a_tampered_bundle_with_consistent_hashes_is_left_out_when_verified(results, dataset_dir):
    folder, bundle, _ = results
    edit_json(bundle / "summary.json", lambda s: s["tasks"]["medmemorybench_mixed"]["metrics"]["correct"]
              ["mean_over_types"][0].update(mean=0.97))
    edit_json(bundle / "submission.json",
              lambda m: m["files"].update({"summary.json": sha256((bundle / "summary.json").read_bytes())}))
    assert any(row.kind == "run" for row in load_board(folder).rows)  # (hashes alone cannot tell)
    board = load_board(folder, verify_with=dataset_dir)
    assert not any(row.kind == "run" for row in board.rows)
    assert "mean_over_types[0].mean is 0.97" in board.left_out[0]


def test_links_and_unsafe_names_are_not_followed(results, tmp_path):
    folder, bundle, _ = results
    outside = tmp_path / "outside"
    outside.mkdir()
    os.symlink(outside, folder / "submissions" / "escape")
    (folder / "submissions" / "Not A Slug").mkdir()
    board = load_board(folder)
    assert len([row for row in board.rows if row.kind == "run"]) == 1
    assert sorted(reason.split(": ")[0].rpartition("/")[2] for reason in board.left_out) == ["Not A Slug", "escape"]


@pytest.mark.parametrize(("text", "expected"), [("BM25 RAG", "bm25-rag"), ("../../etc/passwd", "etc-passwd"),
                                                ("<img src=x>", "img-src-x"), (".git", "git"), ("", "unnamed"),
                                                ("a/../b", "a-.-b"), ("a" * 80, "a" * 48)])
def test_bundle_path_parts_are_made_safe(text, expected):
    assert slug(text) == expected and is_slug(slug(text))  # (what submit writes, the board reads)


def test_submitted_text_cannot_close_the_data_element(retrieval_run, tmp_path):
    name = "</script><script>document.title='pwned'</script>"
    write_to_folder(prepare_submission(retrieval_run, allow_partial=True, claim=SystemClaim(name=name)),
                    tmp_path / "results")
    page = render_page(load_board(tmp_path / "results"), "results")
    assert page.count("</script>") == 2  # (the data element's and the script's own)
    assert "\\u003c/script\\u003e" in page
    assert json.loads(embedded_json({"name": name}))["name"] == name


def test_a_copied_bundle_under_another_name_is_refused_and_the_first_stays(results, answered_run):
    folder, bundle, _ = results
    copy = write_to_folder(prepare_submission(answered_run, claim=SystemClaim(name="My Copy", paradigm="graph")),
                           folder)
    edit_json(copy / "submission.json", lambda m: m.update(submitted_at="2099-01-01T00:00:00+00:00"))
    board = load_board(folder)
    assert [row.system for row in board.rows if row.kind == "run"] == ["BM25 RAG"]
    assert any("a copy of" in reason and str(bundle.relative_to(folder)) in reason for reason in board.left_out)


def test_coverage_is_counted_from_the_samples_when_verified(results, dataset_dir):
    folder, bundle, _ = results
    edit_json(bundle / "submission.json", lambda m: m["coverage"].update(questions=1, of_questions=1))
    claimed = [row for row in load_board(folder).rows if row.kind == "run"]
    assert claimed[0].coverage == "1 of 1 questions"  # (hash-checked only: as submitted)
    (run,) = [row for row in load_board(folder, verify_with=dataset_dir).rows if row.kind == "run"]
    assert run.coverage != "1 of 1 questions" and run.coverage.endswith("questions") and run.complete
