"""The selective score: constant systems (always abstain, always answer, one fixed reply) lose to a memory."""

from __future__ import annotations

import pytest

from medmemorybench.questions.spec import paper_codes
from medmemorybench.scoring import aggregate, score_answer, selective_score
from tests.scoring.rows import abstain, eem, mq

ABSTENTION = "That is not in my records."
MADE_UP = "It was 999 units on 2023-01-01."


@pytest.mark.parametrize(("question", "prediction", "correct", "expected"), [
    (eem(), "500 mg", True, 1.0),
    (eem(), "1000 mg", False, -1.0),
    (eem(), ABSTENTION, False, 0.0),
    (eem(), "", False, -1.0),  # a blank is not an abstention
    (abstain(), ABSTENTION, True, 1.0),
    (abstain(), "Your score was 26 points.", False, -1.0),
])
def test_selective_values(question, prediction, correct, expected):
    assert selective_score(question, prediction, correct).value == expected


def test_a_hedged_guess_is_scored_as_the_answer_it_commits_to():
    # "I'm not sure, but ..." before every answer must not turn the -1s into 0: a guess is an answer
    assert score_answer(eem("500 mg"), "I'm not sure, maybe 500 mg.")["selective"].value == 1.0
    assert score_answer(eem("500 mg"), "I'm not sure, maybe 1000 mg.")["selective"].value == -1.0
    assert score_answer(eem("500 mg"), "I'm not sure: 500 mg or 1000 mg.")["selective"].value == -1.0


def test_unscored_correctness_leaves_it_unscored():
    score = selective_score(eem(), "500 mg", None)
    assert score.value is None and score.status == "error"
    assert selective_score(eem(), ABSTENTION, None).value == 0.0  # abstaining needs no verdict


def test_echo_costs_one():
    assert selective_score(abstain(), ABSTENTION, True, echo=True).value == -1.0


def test_score_answer_carries_selective():
    assert score_answer(mq(["A", "B", "D"]), "A, B, D")["selective"].value == 1.0
    assert score_answer(mq(["A", "B", "D"]), "A")["selective"].value == -1.0
    assert score_answer(abstain(), "I don't know.")["selective"].value == 1.0


@pytest.fixture(scope="module")
def questions(generated_questions) -> list[dict]:
    return [q.model_dump() for q in generated_questions]


def _wrong(question: dict) -> str:
    if question["query_type"] == "MQ":  # every option the gold leaves out, or the first one
        letters = [o[0] for o in question["options"] if o[0] not in question["correct_options"]]
        return ", ".join(letters or ["A"])
    return question.get("common_wrong_answer") or MADE_UP


def _memory(question: dict, index: int) -> str:
    """Finds 3 answers in 5, guesses 1 of the others wrongly and abstains on the last; on ABS it abstains 4 in 5."""
    if question["abstain"]:
        return MADE_UP if index % 5 == 0 else ABSTENTION
    return {0: _wrong(question), 1: ABSTENTION}.get(index % 5, question["answer"])


def _always_answer(question: dict, index: int) -> str:
    """The same 3 in 5 found, a guess on everything else: never abstains."""
    if question["abstain"]:
        return MADE_UP
    return _wrong(question) if index % 5 in (0, 1) else question["answer"]


SYSTEMS = {
    "memory": _memory,
    "always_answer": _always_answer,
    "always_abstain": lambda question, index: ABSTENTION,
    "constant_no": lambda question, index: "No, that would not be suitable.",
    "empty": lambda question, index: "",
}


def _summary(questions: list[dict], system) -> tuple[float, float, dict[str, float]]:
    seen: dict[str, int] = {}
    rows = []
    for q in questions:
        index = seen[q["query_type"]] = seen.get(q["query_type"], -1) + 1  # a type's own count: 3 in 5 of each
        rows.append({"query_type": q["query_type"], "mode": "mixed", "checkpoint": q["checkpoint"],
                     "value": score_answer(q, system(q, index))["selective"].value})
    result = aggregate(rows, by=("query_type",))
    return result.macro[0].mean, result.overall[0].mean, {g.key["query_type"]: g.mean for g in result.groups}


def test_constant_systems_lose_to_a_memory(questions):
    scores = {name: _summary(questions, system) for name, system in SYSTEMS.items()}
    memory_macro, memory_overall, _ = scores["memory"]
    for name in ("always_answer", "always_abstain", "constant_no", "empty"):
        macro, overall, _ = scores[name]
        assert memory_macro > macro, name
        assert memory_overall > overall, name


def test_always_abstaining_scores_zero_on_answerable_types(questions):
    macro, _, by_type = _summary(questions, SYSTEMS["always_abstain"])
    assert macro == 0.0
    assert {t: by_type[t] for t in paper_codes()} == dict.fromkeys(paper_codes(), 0.0)
    assert by_type["ABS"] == 1.0


def test_always_answering_pays_for_every_guess(questions):
    _, _, by_type = _summary(questions, SYSTEMS["always_answer"])
    assert by_type["ABS"] == -1.0
    assert all(by_type[t] < 1.0 for t in paper_codes())
