"""`verify_run` accepts an honest run and refuses one whose summary, samples or header disagree with what
re-scoring its answers against the release gives, naming the file and the field."""

from __future__ import annotations

import json
import shutil

import pytest

from medmemorybench.errors import InputError
from medmemorybench.leaderboard import bundle as bundle_module
from medmemorybench.leaderboard import verify_run
from tests.leaderboard.conftest import WRONG, copy_run, edit_json, edit_samples


def test_an_honest_run_re_scores_to_its_own_summary(answered_run, dataset_dir):
    verified = verify_run(answered_run)
    submitted = json.loads((answered_run / "summary.json").read_text())
    assert json.loads(json.dumps(verified.summary["tasks"])) == submitted["tasks"]
    assert verified.coverage.is_complete and verified.coverage.patients == 3
    correct = [s["correct"] for s in verified.samples if s["query_type"] == "EEM"]
    assert 0 < sum(correct) < len(correct)  # (half the answers are the gold: a run with right and wrong answers)


def test_a_tampered_summary_is_refused(answered_run, tmp_path):
    run = copy_run(answered_run, tmp_path)
    edit_json(run / "summary.json", lambda s: s["tasks"]["medmemorybench_efficient"]["metrics"]["correct"]
              ["overall"][0].update(mean=0.99))
    with pytest.raises(InputError, match=r"summary\.json: tasks\.medmemorybench_efficient\.metrics\.correct"
                                         r"\.overall\[0\]\.mean is 0\.99"):
        verify_run(run)


def test_a_sample_whose_score_was_raised_is_refused_even_with_a_matching_summary(answered_run, tmp_path):
    run = copy_run(answered_run, tmp_path)

    def flip(samples: list[dict]) -> list[dict]:
        wrong = next(s for s in samples if s["output"] == WRONG and s["query_type"] == "EEM")
        wrong["correct"] = 1.0
        return samples

    edit_samples(run, flip)
    with pytest.raises(InputError, match=r"samples\.jsonl: line \d+ \(P\d+-C\d+-EEM\d\): correct is 1\.0, but the "
                                         r"answer re-scores to 0\.0"):
        verify_run(run)


@pytest.mark.parametrize(("change", "message"), [
    (lambda s: s[:-1], r"lacks 1 of the \d+ questions medmemorybench_mixed asked"),
    (lambda s: s + [s[0]], r"line \d+ \(P\d+-C010-\w+\): repeats the sample of line 1"),
    (lambda s: [{**s[0], "query_id": "P9999-C010-EEM1"}, *s[1:]], r"line 1 \(P9999-C010-EEM1\): not a question of "
                                                                    "the dataset"),
    (lambda s: [{**s[0], "task": "medmemorybench_other"}, *s[1:]], r"line 1: task 'medmemorybench_other' is not"),
    (lambda s: [{**s[0], "retrieval_query": "something else"}, *s[1:]], "retrieval_query"),
])
def test_samples_must_be_one_per_asked_question(answered_run, tmp_path, change, message):
    run = copy_run(answered_run, tmp_path)
    edit_samples(run, change)
    with pytest.raises(InputError, match=message):
        verify_run(run)


def test_an_answer_marked_not_an_echo_that_pastes_its_records_is_refused(answered_run, tmp_path):
    run = copy_run(answered_run, tmp_path)

    def paste(samples: list[dict]) -> list[dict]:
        sample = next(s for s in samples if len(s["retrieved"]) >= 2 and s["status"] == "scored")
        sample["output"] = "\n".join(item["text"] for item in sample["retrieved"][:2])
        return samples

    edit_samples(run, paste)
    with pytest.raises(InputError, match="echo: false, but the answer copies its retrieved records"):
        verify_run(run)


@pytest.mark.parametrize(("change", "message"), [
    (lambda h: h.update(dataset_fingerprint="0" * 64), r"run\.json: dataset_fingerprint 000000000000 is not the "
                                                        "release"),
    (lambda h: h["tasks"][0].update(version="0.9"), r"run\.json: tasks\[0\]\.version: '0\.9'"),
    (lambda h: h["tasks"][1]["prompts"].update({"qa/eem.jinja": "f" * 64}),
     r"run\.json: tasks\[1\]\.prompts\['qa/eem\.jinja'\]: the run's prompt differs"),
    (lambda h: h["tasks"][0].pop("prompts"), r"tasks\[0\]\.prompts: missing"),
    (lambda h: h["config"].update(limit="all"), r"run\.json: config\.limit"),
])
def test_the_header_must_name_this_release_and_these_tasks(answered_run, tmp_path, change, message):
    run = copy_run(answered_run, tmp_path)
    edit_json(run / "run.json", change)
    with pytest.raises(InputError, match=message):
        verify_run(run)


def test_an_edited_gold_folder_is_not_the_release(answered_run, dataset_dir, tmp_path):
    gold = tmp_path / "gold"
    shutil.copytree(dataset_dir, gold)
    meta = json.loads((gold / "medmemorybench.json").read_text())
    (gold / "questions" / "checkpoint_10.parquet").replace(gold / "questions" / "checkpoint_10.bak")
    shutil.copy(gold / "questions" / "checkpoint_20.parquet", gold / "questions" / "checkpoint_10.parquet")
    assert meta["fingerprint"]
    with pytest.raises(InputError, match="its rows do not match its own fingerprint"):
        verify_run(answered_run, gold)


def test_sizes_are_bounded(answered_run, tmp_path, monkeypatch):
    run = copy_run(answered_run, tmp_path)
    monkeypatch.setitem(bundle_module.MAX_BYTES, "samples.jsonl", 1000)
    with pytest.raises(InputError, match=r"samples\.jsonl: [\d,]+ bytes, over the 1,000 accepted"):
        verify_run(run)
    monkeypatch.setattr(bundle_module, "MAX_LINE_BYTES", 100)
    monkeypatch.setitem(bundle_module.MAX_BYTES, "samples.jsonl", 1 << 30)
    with pytest.raises(InputError, match=r"samples\.jsonl: line 1 is [\d,]+ bytes, over the 100 accepted"):
        verify_run(run)


def test_answers_added_to_a_retrieval_only_run_are_refused(retrieval_run, tmp_path):
    run = copy_run(retrieval_run, tmp_path)
    edit_samples(run, lambda s: [{**s[0], "status": "scored", "output": s[0]["gold"]}, *s[1:]])
    with pytest.raises(InputError, match=r"line 1 \(P\d+-C010-EEM1\): not a sample line \(ValueError: an answer in "
                                         "a run without a model"):
        verify_run(run)


def test_a_slice_covers_what_its_options_ask(retrieval_run):
    coverage = verify_run(retrieval_run).coverage
    assert (coverage.patients, coverage.of_patients, coverage.checkpoints) == (1, 3, [10, 20])
    assert not coverage.is_complete and 0 < coverage.questions < coverage.of_questions


def test_an_item_citing_a_session_not_yet_given_is_refused(answered_run, tmp_path):
    run = copy_run(answered_run, tmp_path)

    def cite_the_future(samples: list[dict]) -> list[dict]:
        first = next(s for s in samples if s["checkpoint"] == 10 and s["retrieved"])
        # (later sessions added to what it cited: its evidence was all given by then, so Recall@k is unchanged and
        # only the leakage guard can refuse it, whatever the build's first question retrieved)
        first["retrieved"][0]["session_ids"] += [f"{first['persona_id']}-S{n:03d}" for n in range(11, 101)]
        return samples

    edit_samples(run, cite_the_future)
    with pytest.raises(InputError, match="S011, a session the memory had not been given by checkpoint 10"):
        verify_run(run)
