"""LongMemEval's judge: its pinned answer-check prompts (xiaowu0162/LongMemEval `src/evaluation/evaluate_qa.py`,
`get_anscheck_prompt` at d6dc8b50), temperature 0, 10 tokens, verdict 'yes' in the reply, through a fake backbone."""

from __future__ import annotations

import hashlib

import pytest

from medmemorybench.errors import InputError
from medmemorybench.models.base import Completion
from medmemorybench.resources import prompts_dir
from medmemorybench.scoring.longmemeval import load_longmemeval_prompts, longmemeval_judge_many, template_key
from tests.scoring.fakes import FakeBackbone

PINNED = {  # SHA-256 of the template files: an edit changes LongMemEval's measure, so it must fail here
    "abstention": "6fe3207c092eca131d680ac968ecbf8ab9c6a839d7a082174d6c74e17a8a53ec",
    "default": "49832d40f4437936f45f90fc04ce7f2dadec3542ed644bfd2ea61a332ec85454",
    "knowledge-update": "e8583c3ed7daeb8da79f8bb87d243443e5541df631ac6922cda030b33ae6464b",
    "single-session-preference": "0d06b89e2ca8ebd0605ca30caabd0415763c9d9e08b0cbef4e8c976cf2265a0c",
    "temporal-reasoning": "09211cc19788128390a9a7653158f705083f013671d945a0f23d910c5d7dda69",
}


def question(kind: str, abstention: bool = False) -> dict:
    return {"query_id": "Q1", "question": "Where did I go?", "answer": "Lisbon", "abstain": abstention,
            "template": f"longmemeval.{kind}{'.abstention' if abstention else ''}"}


def test_the_templates_are_the_pinned_files():
    for key, digest in PINNED.items():
        text = (prompts_dir() / "judge" / "longmemeval" / f"{key}.jinja").read_bytes()
        assert hashlib.sha256(text).hexdigest() == digest, key
        assert load_longmemeval_prompts()[key].sha256 == digest


@pytest.mark.parametrize(("kind", "abstention", "key"), [
    ("single-session-user", False, "default"), ("single-session-assistant", False, "default"),
    ("multi-session", False, "default"), ("temporal-reasoning", False, "temporal-reasoning"),
    ("knowledge-update", False, "knowledge-update"), ("single-session-preference", False, "single-session-preference"),
    ("multi-session", True, "abstention"), ("temporal-reasoning", True, "abstention"),
])
def test_each_question_type_gets_its_template(kind, abstention, key):
    assert template_key(question(kind, abstention)) == key


def test_the_request_is_their_prompt_as_one_user_message_at_temperature_0():
    judge = FakeBackbone(["yes"])
    longmemeval_judge_many([question("single-session-user")], ["You went to Lisbon."], judge)
    [request] = judge.batches[0]
    assert request.temperature == 0.0 and request.max_tokens == 10 and request.response_schema is None
    assert [m["role"] for m in request.messages] == ["user"]
    content = request.messages[0]["content"]
    assert content.startswith("I will give you a question, a correct answer, and a response from a model. ")
    # (their string, with its space before the blank line, and no newline at the end)
    assert "answer no. \n\nQuestion: Where did I go?\n\nCorrect Answer: Lisbon\n\nModel Response: You went to " \
           "Lisbon.\n\nIs the model response correct? Answer yes or no only." in content
    assert content.endswith("Answer yes or no only.") and "{#" not in content


def test_the_verdict_is_whether_yes_occurs_in_the_reply_and_all_go_in_one_batch():
    judge = FakeBackbone(["Yes.", "no", "No, not yes", "The answer is correct"])
    scores = longmemeval_judge_many([question("multi-session")] * 4, ["a", "b", "c", "d"], judge)
    # their rule is a substring test: "No, not yes" holds 'yes'; "correct" without 'yes' is a no
    assert [s.value for s in scores] == [1.0, 0.0, 1.0, 0.0] and len(judge.batches) == 1
    assert scores[0].metadata["judge_template"] == "judge/longmemeval/default.jinja"
    assert scores[0].metadata["judge_template_sha256"] == PINNED["default"]
    assert scores[0].metadata["judge_model"] == "fake-judge-1" and scores[0].metadata["judge_reply"] == "Yes."


def test_a_judge_error_or_an_empty_reply_is_an_error_never_a_verdict():
    judge = FakeBackbone([Completion(error="timeout"), "  "])
    scores = longmemeval_judge_many([question("knowledge-update")] * 2, ["a", "b"], judge)
    assert [(s.value, s.status) for s in scores] == [(None, "error"), (None, "error")]
    assert "timeout" in scores[0].explanation


def test_the_abstention_template_reads_the_explanation():
    judge = FakeBackbone(["yes"])
    longmemeval_judge_many([question("multi-session", abstention=True)], ["I don't know."], judge)
    content = judge.batches[0][0].messages[0]["content"]
    assert "an unanswerable question, an explanation" in content and "Explanation: Lisbon" in content


def test_a_missing_template_is_one_line(tmp_path):
    with pytest.raises(InputError, match="default.jinja: judge template missing"):
        load_longmemeval_prompts(tmp_path)


def test_a_question_that_is_not_longmemevals_is_refused():
    with pytest.raises(ValueError, match="not a LongMemEval question"):
        template_key({"query_id": "P0001-C010-EEM1", "template": "eem.dose"})
