"""Sample lines carry every measure with one echo flag per answer: selective, trap outcomes, no judge for echoes."""

from __future__ import annotations

import json

from medmemorybench.harness.results import read_samples
from medmemorybench.harness.samples import answer_echo
from medmemorybench.memory.base import MemoryItem, Retrieval
from medmemorybench.models.base import ChatRequest, Completion
from medmemorybench.questions.spec import judged_codes
from medmemorybench.scoring import wilson_interval
from tests.harness.conftest import JUDGE_SAYS_CORRECT, RecordingBackbone, echo_system_prompt, run, run_config

ABSTAIN = "That is not in my records."


def _run(dataset_dir, tmp_path, reply, judge):  # noqa: ANN001, ANN202
    config = run_config(dataset_dir, tmp_path, model="recording", memory="none", use_cache=False)
    run(config, RecordingBackbone(reply=reply), judge=judge)
    summary = json.loads((config.output_path / "summary.json").read_text())
    return read_samples(config.output_path / "samples.jsonl"), summary["tasks"]["medmemorybench_efficient"]


def _traps(samples: list[dict]) -> list[dict]:
    return [s for s in samples if s["trap_safe"] is not None]


def test_an_echo_of_the_system_prompt_is_wrong_everywhere_and_never_judged(dataset_dir, tmp_path):
    judge = RecordingBackbone(reply=JUDGE_SAYS_CORRECT)  # would make every judged answer correct
    samples, _ = _run(dataset_dir, tmp_path, echo_system_prompt, judge)
    assert samples and {s["status"] for s in samples} == {"scored"}
    for s in samples:
        assert s["echo"] is True and s["abstained"] == 0.0 and s["correct"] == 0.0 and s["selective"] == -1.0
        assert s["judge"] is None and s["scores"]["correct"]["metadata"]["echo"] is True
    assert sum(len(batch) for batch in judge.batches) == 0
    # the copied "That is not in my records." is no abstention, and an echo is no answer to a trap
    assert all(s["hallucinated"] == 1.0 for s in samples if s["query_type"] == "ABS")
    traps = _traps(samples)
    assert traps and all(s["trap_safe"] == 0.0 and s["trap_abstained"] == 1.0 for s in traps)


def test_always_abstaining_is_neither_safe_nor_rewarded(dataset_dir, tmp_path):
    judge = RecordingBackbone(reply=JUDGE_SAYS_CORRECT)
    samples, task = _run(dataset_dir, tmp_path, ABSTAIN, judge)
    assert all(s["echo"] is False and s["abstained"] == 1.0 for s in samples)
    judged = [s for s in samples if s["query_type"] in judged_codes()]
    assert sum(len(batch) for batch in judge.batches) == len(judged) > 0  # answers, unlike echoes, are judged
    traps = _traps(samples)
    assert {s["query_type"] for s in traps} == {"IG", "MQ"}
    assert all(s["trap_safe"] == 0.0 and s["trap_abstained"] == 1.0 for s in traps)
    assert all(s["selective"] == (1.0 if s["query_type"] == "ABS" else 0.0) for s in samples)

    by_type = {g["query_type"]: g for g in task["metrics"]["selective"]["by_type"]}
    assert set(by_type) == {s["query_type"] for s in samples}
    assert by_type["ABS"]["mean"] == 1.0 and all(g["mean"] == 0.0 for t, g in by_type.items() if t != "ABS")
    assert task["metrics"]["trap_abstained"]["overall"][0]["mean"] == 1.0
    # selective is a -1/0/+1 score: a bootstrap interval within [-1, 1], even where its values are all 0 or 1
    values = [s["selective"] for s in samples]
    overall = task["metrics"]["selective"]["overall"][0]
    assert (overall["ci_low"], overall["ci_high"]) != wilson_interval(sum(values), len(values))
    assert -1.0 <= overall["ci_low"] <= overall["mean"] <= overall["ci_high"] <= 1.0


def test_quoting_one_record_is_an_answer_and_repeating_the_prompt_is_an_echo():
    record = ("Doctor: we agreed you would take metformin 500 mg twice a day with meals, and we will check "
              "your HbA1c again in three months.")
    system = ('You are the personal physician of one patient. If your records do not contain what is asked, '
              'say "That is not in my records." rather than guessing.')
    request = ChatRequest(messages=[{"role": "system", "content": system},
                                    {"role": "user", "content": f"[1] {record}\nQuestion: what dose?"}])
    retrieval = Retrieval(items=[MemoryItem(text=record, session_ids=("P0001-S003",))])
    assert answer_echo(request, retrieval, Completion(text=record)) is False
    assert answer_echo(request, retrieval, Completion(text=system)) is True
    assert answer_echo(request, retrieval, Completion(error="HTTP 503")) is None
    assert answer_echo(None, retrieval, None) is None
