"""The `evaluate` metric module: loaded offline by path, and the same numbers as `medmemorybench run` gives for the
same answers."""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable

import pytest
from datasets import concatenate_datasets, load_dataset

import medmemorybench
from medmemorybench.dataset import BuildOptions, build_dataset, export_dataset
from medmemorybench.errors import InputError
from medmemorybench.harness.results import read_samples
from medmemorybench.integrations.evaluate_scores import SCORED, score_predictions
from medmemorybench.knowledge import default_knowledge
from medmemorybench.models.base import ChatRequest
from medmemorybench.render.templates import load_templates
from tests.harness.conftest import RecordingBackbone, run, run_config

evaluate = pytest.importorskip("evaluate")


def varied_answers(golds: dict[str, str]) -> Callable[[ChatRequest], str]:
    """Right, wrong, abstaining and echoing answers, so that every measure varies whatever the data: every third
    call gives the gold of the question its prompt asks (`golds`: question text -> gold), the others one of a fixed
    set chosen by the prompt."""
    calls = itertools.count()

    def answer(request: ChatRequest) -> str:
        prompt = request.messages[-1]["content"]
        gold = next((a for question, a in golds.items() if question in prompt), None)
        if next(calls) % 3 == 0 and gold is not None:
            return gold
        return ("That is not in my records.", "B", "A, C", request.messages[0]["content"], "metformin 500 mg",
                "2024-03-04")[len(prompt) % 6]

    return answer


@pytest.fixture(scope="module")
def run_and_questions(tmp_path_factory):
    root = tmp_path_factory.mktemp("metric")
    built = build_dataset(default_knowledge(), load_templates("en"),
                          BuildOptions(seed=8, personas=2, health_sessions=5, family_sessions=5))
    folder = export_dataset(built, root / "data")
    questions = concatenate_datasets(list(load_dataset(str(folder), "questions").values()))
    golds = {q["question"]: q["answer"] for q in questions}
    run(run_config(folder, root, limit=2, checkpoints=[10, 50, 100]), RecordingBackbone(varied_answers(golds)))
    samples = read_samples(root / "run" / "samples.jsonl")
    summary = json.loads((root / "run" / "summary.json").read_text())
    return samples, summary, questions


def test_metric_loads_offline_by_path_and_matches_the_run(run_and_questions):
    samples, summary, questions = run_and_questions
    metric = evaluate.load(medmemorybench.metric_path())
    scores = metric.compute(predictions=[s["output"] for s in samples], references=[s["query_id"] for s in samples],
                            questions=questions,
                            retrieved=[[item["session_ids"] for item in s["retrieved"]] for s in samples],
                            echo=[bool(s["echo"]) for s in samples])
    task = summary["tasks"]["medmemorybench_efficient"]["metrics"]
    assert scores["n"] == len(samples) > 20
    compared = 0
    for metric_name in SCORED:
        if metric_name not in task:
            continue
        for group in task[metric_name]["by_type"]:
            assert scores[metric_name][group["query_type"]] == pytest.approx(group["mean"]), metric_name
            compared += 1
        assert scores[metric_name]["all"] == pytest.approx(task[metric_name]["overall"][0]["mean"])
        assert scores[metric_name]["mean_over_types"] == pytest.approx(task[metric_name]["mean_over_types"][0]["mean"])
    assert compared >= 30
    assert 0 < scores["correct"]["all"] < 1 and any(s["echo"] for s in samples)  # (the answers do vary)


def test_without_retrieval_the_answer_scores_still_match(run_and_questions):
    samples, summary, questions = run_and_questions
    scores = score_predictions([s["output"] for s in samples], [s["query_id"] for s in samples], list(questions),
                               echo=[bool(s["echo"]) for s in samples])
    assert "recall_at_k" not in scores and "hallucinated" not in scores
    overall = summary["tasks"]["medmemorybench_efficient"]["metrics"]["correct"]["overall"][0]["mean"]
    assert scores["correct"]["all"] == pytest.approx(overall)


def test_bad_input_names_what_is_wrong(run_and_questions):
    _, _, questions = run_and_questions
    with pytest.raises(InputError, match=r"lengths differ \(predictions 2, references 1\)"):
        score_predictions(["a", "b"], ["q"], list(questions))
    with pytest.raises(InputError, match=r"references\[0\]: no question 'nope'"):
        score_predictions(["a"], ["nope"], list(questions))
    with pytest.raises(InputError, match="task: 'medmemorybench' is a group of 2 tasks"):
        score_predictions(["a"], [questions[0]["query_id"]], list(questions), task="medmemorybench")
