"""Echoes: an answer that copies the prompt or the records is neither an abstention nor an answer.

The prompts are the project's own templates (`prompts/qa/`), rendered as the harness renders them, and
the records are a simulated patient's sessions as a memory indexes them (`render.models.session_text`).
"""

from __future__ import annotations

import re

import pytest
from jinja2 import FileSystemLoader, StrictUndefined
from jinja2.sandbox import SandboxedEnvironment

from medmemorybench.render.models import session_text
from medmemorybench.resources import prompts_dir
from medmemorybench.scoring import (
    hallucinated,
    is_abstention,
    is_echo,
    score_answer,
    score_answers,
    trap_outcome,
)
from tests.scoring.fakes import FakeBackbone
from tests.scoring.rows import abstain, ig, tla

ABSTENTION = "That is not in my records."


@pytest.fixture(scope="module")
def records(generated_patients) -> list[str]:
    return [session_text(s) for s in generated_patients[0].regular[:5]]


@pytest.fixture(scope="module")
def prompts(records: list[str]) -> list[str]:
    env = SandboxedEnvironment(loader=FileSystemLoader(str(prompts_dir())), undefined=StrictUndefined)
    memory = [{"dates": [f"2024-01-0{i + 1}"], "text": text, "session_ids": [f"S{i}"]}
              for i, text in enumerate(records)]
    system = env.get_template("qa/system.jinja").render(as_of="2024-02-11").strip()
    user = env.get_template("qa/tla.jinja").render(question=tla(), memory=memory, as_of="2024-02-11").strip()
    return [system, user]


def test_honest_short_abstention_is_no_echo(prompts, records):
    # the system prompt holds this very sentence: saying what one was told to say is not an echo
    assert not is_echo(ABSTENTION, prompts, records)
    assert is_abstention(ABSTENTION, echo=is_echo(ABSTENTION, prompts, records))


def test_abstention_in_own_words_is_no_echo(prompts, records):
    answer = "I'm sorry, but that is not in my records of your consultations."
    assert not is_echo(answer, prompts, records)


def test_repeating_the_system_prompt_is_an_echo(prompts, records):
    # SmolLM2-135M-Instruct's own answer to EEM, SUA and ABS prompts with the `none` memory, verbatim:
    # the whole instruction paragraph, "That is not in my records." included
    answer = prompts[0]
    assert ABSTENTION in answer and is_abstention(answer)
    assert is_echo(answer, prompts, records)
    assert not is_abstention(answer, echo=True)


def test_repeating_the_abstention_instruction_is_an_echo(prompts, records):
    answer = 'If your records do not contain what is asked, say "That is not in my records." rather than guessing.'
    assert is_echo(answer, prompts, records)


def test_repeating_the_question_instruction_is_an_echo(prompts, records):
    answer = "If a date is asked, answer with the date as YYYY-MM-DD; if an event is asked, name the drug."
    assert is_echo(answer, prompts, records)


def test_dumping_the_records_is_an_echo(prompts, records):
    assert is_echo("\n".join(records[:2]), prompts, records)


def test_framed_quote_of_one_record_sentence_is_no_echo(prompts, records):
    # (one sentence of a doctor's line: a line can hold a greeting and several sentences, which quoted whole is a dump)
    sentence = next(s for line in records[0].splitlines() if line.startswith("Doctor:")
                    for s in re.split(r"(?<=[.?!])\s+", line.split(": ", 1)[1]) if len(s.split()) > 12)
    assert not is_echo(f"On that visit you were told: {sentence}", prompts, records)
    # records passed apart from the prompt: a bare quote of one sentence is an extractive answer
    assert not is_echo(sentence, prompts, records)


def test_one_long_chinese_finding_quoted_with_its_date_is_no_echo():
    # (seed 83's ceiling, P0005-C060-EEM1: the gold's own finding, every character a token, copied with its date)
    finding = ("胸部未闻及局灶体征（无湿啰音及支气管呼吸音）；"
               "体温36.6 °C，脉搏60 次/分，呼吸频率15 次/分，血氧饱和度95 %")
    records = [f"医生：我给您听了听胸部，也量了生命体征。{finding}。没有肺炎的迹象。\n患者：那就好，谢谢医生。"]
    assert not is_echo(f"{finding}（2024-03-10）。", [], records)
    # two sentences of it and the patient's line: a dump
    assert is_echo(records[0], [], records)


def test_repetitive_own_answer_is_no_echo(prompts, records):
    # SmolLM2-135M-Instruct's answer to a TLA prompt with records: degenerate, but its own words
    answer = "\n".join(f"{i}. The first kidney function test was on 2024-01-06." for i in range(1, 7))
    assert not is_echo(answer, prompts, records)


def test_own_answer_is_no_echo(prompts, records):
    assert not is_echo("You started metformin on 4 March 2024, at 500 mg twice a day.", prompts, records)


def test_no_prompts_no_echo():
    assert not is_echo("You started metformin on 4 March 2024, at 500 mg twice a day, after your visit.")


def test_echo_is_scored_wrong_and_flagged(prompts):
    scores = score_answer(abstain(), prompts[0], echo=True)
    assert scores["correct"].value == 0.0
    assert scores["correct"].metadata["echo"] is True
    assert scores["correct"].metadata["value_without_echo"] == 1.0  # it would have passed as an abstention
    assert scores["selective"].value == -1.0
    assert all(score.value in (0.0, -1.0) for score in scores.values())


def test_echo_is_a_hallucination_not_an_abstention(prompts):
    assert hallucinated(abstain(), prompts[0], correct=False, recall=None, echo=True) is True
    assert hallucinated(abstain(), prompts[0], correct=False, recall=None) is False  # what it was before


def test_echo_is_no_trap_answer(prompts):
    assert trap_outcome(ig(), prompts[0], echo=True) == "abstained"


def test_judge_is_not_asked_about_an_echo(prompts):
    def judge(question, prediction):
        raise AssertionError("an echo is not judged")

    assert score_answer(tla(), prompts[1], judge=judge, echo=True)["correct"].value == 0.0
    backbone = FakeBackbone(['{"correct": true, "reason": ""}'])
    results = score_answers([tla(), tla()], [prompts[1], "4 March 2024"], judge_backbone=backbone,
                            echoes=[True, False])
    assert len(backbone.batches[0]) == 1
    assert [r["correct"].value for r in results] == [0.0, 1.0]


def test_echo_flags_must_match_the_answers():
    with pytest.raises(ValueError, match="echo flags"):
        score_answers([tla()], ["x"], echoes=[True, False])
