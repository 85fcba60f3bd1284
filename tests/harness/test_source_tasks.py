"""The tasks `locomo`, `longmemeval_s` and `longmemeval_oracle` end to end on the fixture imports: `correct` is the
source's own measure, our measures stay beside it, a LongMemEval task without a judge is unscored (never 0), and a
task on a dataset it makes no sense on is one line, exit 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from medmemorybench.errors import InputError
from medmemorybench.harness.runner import check_sources
from medmemorybench.harness.tasks import resolve_tasks
from medmemorybench.importers import import_locomo, import_longmemeval
from medmemorybench.report import cross_benchmark_table, load_summary, metric_table
from medmemorybench.report.benchmarks import unscored_notes
from tests.harness.conftest import RecordingBackbone, dataset_questions, run, run_config
from tests.helpers import run_cli
from tests.scoring.fakes import FakeBackbone

FIXTURES = Path(__file__).parents[1] / "importers" / "fixtures"


@pytest.fixture(scope="module")
def imports(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("imports")
    import_locomo(FIXTURES / "locomo_tiny.json", root / "locomo", placement="end")
    import_longmemeval(FIXTURES / "longmemeval_tiny.json", root / "lme", "s")
    return {"locomo": root / "locomo" / "medmemorybench", "longmemeval": root / "lme" / "medmemorybench"}


def gold_replies(folder: Path) -> RecordingBackbone:
    """A model that answers every question with its gold (category 5: the option LoCoMo counts right)."""
    golds = {q["question"]: q["answer"] for q in dataset_questions(folder)}
    return RecordingBackbone(lambda request: next(a for q, a in golds.items() if q in request.messages[-1]["content"]))


def samples(tmp_path: Path) -> list[dict]:
    return [json.loads(line) for line in (tmp_path / "run" / "samples.jsonl").read_text().splitlines()]


def test_locomo_scores_with_locomos_f1_and_keeps_ours_beside_it(imports, tmp_path):
    run(run_config(imports["locomo"], tmp_path, tasks=["locomo"], memory="long_context"),
        gold_replies(imports["locomo"]))
    rows = samples(tmp_path)
    assert rows and all(s["scores"]["correct"]["metadata"]["scorer"] == "locomo_f1" for s in rows)
    # the gold against itself is 1.0 in every category (category 5: "Not mentioned in the conversation")
    assert {s["scores"]["locomo_f1"]["metadata"]["category"]: s["correct"] for s in rows} == \
        {1: 1.0, 2: 1.0, 3: 1.0, 4: 1.0, 5: 1.0}
    assert any(s["recall_at_k"] is not None for s in rows)
    assert any("exact_match" in s["scores"] for s in rows)  # (our type's scorer, under its own name)
    summary = load_summary(tmp_path / "run")
    assert summary["tasks"]["locomo"]["scoring"] == "locomo" and summary["header"]["dataset_source"]["name"] == "locomo"
    header, table = metric_table([summary], "correct")
    assert "locomo" in header[1] and any(r[0] == "EEM · LoCoMo cat 4 single-hop" for r in table)


def test_the_category_5_prompt_offers_the_two_options_in_the_order_the_scorer_reads(imports, tmp_path):
    backbone = RecordingBackbone("(a)")
    run(run_config(imports["locomo"], tmp_path, tasks=["locomo"], memory="long_context"), backbone)
    adversarial = [s for s in samples(tmp_path) if s["query_type"] == "ABS"]
    prompts = [r.messages[-1]["content"] for batch in backbone.batches for r in batch if "Select the correct" in
               r.messages[-1]["content"]]
    assert len(prompts) == len(adversarial) == 2
    for sample in adversarial:
        prompt = next(p for p in prompts if sample["question"] in p)
        first = prompt.index("(a) Not mentioned in the conversation") if "(a) Not mentioned" in prompt else -1
        assert sample["correct"] == (1.0 if first >= 0 else 0.0)


def test_longmemeval_without_a_judge_is_unscored_never_zero_nor_our_rubric(imports, tmp_path):
    run(run_config(imports["longmemeval"], tmp_path, tasks=["longmemeval_s"], memory="bm25"),
        gold_replies(imports["longmemeval"]))
    rows = samples(tmp_path)
    assert rows and all(s["correct"] is None and s["status"] == "scored" for s in rows)
    assert all(s["scores"]["correct"]["status"] == "unscored" for s in rows)
    summary = load_summary(tmp_path / "run")
    task = summary["tasks"]["longmemeval_s"]
    assert "correct" not in task["metrics"] and task["unscored"]["correct"]["n"] == len(rows)
    assert "recall_at_k" in task["metrics"] and summary["n_errors"] == 0
    assert "run with --judge" in unscored_notes([summary])[0]


def test_longmemeval_with_a_judge_asks_its_prompts_for_every_answer_in_one_batch(imports, tmp_path):
    judge = FakeBackbone(["Yes"] * 10)
    run(run_config(imports["longmemeval"], tmp_path, tasks=["longmemeval_s"], memory="bm25"),
        gold_replies(imports["longmemeval"]), judge=judge)
    rows = samples(tmp_path)
    assert all(s["correct"] == 1.0 and s["judge"]["judge_template"].startswith("judge/longmemeval/") for s in rows)
    sent = [r for batch in judge.batches for r in batch]
    assert len(sent) == len(rows) and all(r.max_tokens == 10 for r in sent)  # (ABS, SUA, MCD: every type judged)
    header = json.loads((tmp_path / "run" / "run.json").read_text())
    assert header["judge"]["longmemeval_prompts"]["judge/longmemeval/abstention.jinja"]


def test_the_cross_benchmark_table_puts_each_benchmark_in_its_own_column(imports, tmp_path):
    run(run_config(imports["locomo"], tmp_path / "a", tasks=["locomo"], memory="bm25"), gold_replies(imports["locomo"]))
    run(run_config(imports["longmemeval"], tmp_path / "b", tasks=["longmemeval_s"], memory="bm25"),
        gold_replies(imports["longmemeval"]))
    summaries = [load_summary(tmp_path / "a" / "run"), load_summary(tmp_path / "b" / "run")]
    header, rows = cross_benchmark_table(summaries)
    # (the fixture is no published LoCoMo file: its column says so)
    assert header == ["memory / backbone", "LoCoMo (unpublished copy)\nlocomo", "LongMemEval s\nlongmemeval_s"]
    assert rows[0][1].startswith("100.0") and rows[0][2] == "unscored (no judge)"


def test_a_task_on_a_dataset_it_makes_no_sense_on_is_refused(imports, tmp_path):
    def refused(task: str, folder: Path) -> str:
        with pytest.raises(InputError) as caught:
            check_sources(folder, resolve_tasks([task]))
        return str(caught.value)

    assert "is an import of LongMemEval" in refused("locomo", imports["longmemeval"])
    assert "'oracle' file" in refused("longmemeval_oracle", imports["longmemeval"])
    assert "run --tasks longmemeval_s" in refused("longmemeval_oracle", imports["longmemeval"])
    assert "asks MQ questions" in refused("medmemorybench_efficient_mq", imports["locomo"])
    ours = tmp_path / "ours"  # a build without `stats.source`: MedMemoryBench's own
    ours.mkdir()
    (ours / "medmemorybench.json").write_text(json.dumps({"stats": {}}))
    assert "is a MedMemoryBench build" in refused("longmemeval_s", ours)
    check_sources(imports["locomo"], resolve_tasks(["locomo", "medmemorybench_efficient"]))  # (these make sense)


def test_bad_input_is_one_line_exit_2(imports, tmp_path):
    for args in (["--tasks", "locomo", "--dataset_path", str(imports["longmemeval"])],
                 ["--tasks", "longmemeval_s", "--dataset_path", str(imports["longmemeval"]), "--judge", "none"]):
        done = run_cli("run", *args, "--memory", "bm25", "--model", "none", "--output_path", str(tmp_path / "r"))
        assert done.returncode == 2 and "Traceback" not in done.stderr
        assert len(done.stderr.strip().splitlines()) == 1, done.stderr
