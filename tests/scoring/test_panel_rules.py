"""The rules the seed-21 panel's first reading asked for (docs/benchmarks.md): each with the answer that showed it."""

from __future__ import annotations

import pytest

from medmemorybench.scoring._endorse import declines
from medmemorybench.scoring._reading import read_answer
from medmemorybench.scoring._stance import polarity
from medmemorybench.scoring.abstention import is_abstention
from medmemorybench.scoring.facts import Fact, states
from medmemorybench.scoring.multiple_choice import parse_choices


@pytest.mark.parametrize(("answer", "side"), [
    ("要接着吃。12月30日那次诊断是非糜烂性胃食管反流病", "yes"),
    ("需要，请继续用。您现在每晚都要戴CPAP", "yes"),
    ("I'd steer clear of ibuprofen, I'm afraid. You're on warfarin", "no"),
    ("不需要了。", "no"),
    ("继续吃，但是要注意", None),
])
def test_a_side_taken_in_these_words_is_read(answer: str, side: str | None) -> None:
    assert polarity(answer) == side


@pytest.mark.parametrize(("answer", "letters"), [
    ("Of those four, only B, buspirone. Hydroxyzine (A) is out because you reacted to Atarax; quetiapine (C) and "
     "escitalopram (D) both prolong the QT.", {"B"}),
    ("在这四个里，只有B氯沙坦适合您。A依普利酮、C非奈利酮、D螺内酯都会让血钾升高。", {"B"}),
])
def test_the_only_option_named_first_is_the_choice(answer: str, letters: set[str]) -> None:
    options = ["A. hydroxyzine", "B. buspirone", "C. quetiapine", "D. escitalopram"] if "only" in answer else \
        ["A. 依普利酮", "B. 氯沙坦", "C. 非奈利酮", "D. 螺内酯"]
    assert parse_choices(answer, options) == frozenset(letters)


def test_a_chinese_refusal_in_other_words_abstains_and_a_dated_answer_does_not() -> None:
    assert is_abstention("我翻了您的就诊记录，没有看到阿莫西林克拉维酸钾的处方，所以也说不出是哪天开始用的。")
    assert not is_abstention("您是3月5日开始吃的阿莫西林，没有看到别的问题。", question="我哪天开始吃阿莫西林？",
                             asks_date=True)


def test_a_negated_harm_declines_nothing() -> None:
    assert not declines("Yes. Doxycycline would be a reasonable option, and doxycycline doesn't need a kidney dose "
                        "adjustment.", "doxycycline")
    assert declines("No, doxycycline isn't safe for you.", "doxycycline")
    assert declines("You shouldn't take doxycycline.", "doxycycline")


@pytest.mark.parametrize(("answer", "told"), [
    ("When I checked your sinuses after the clarithromycin, there was still some tenderness over both cheekbones, "
     "though your nose had cleared.", False),
    ("Your face was no longer tender and the nose was clear.", True),
    ("On 4 August both sinuses were tender; at the check after the course your cheeks were no longer tender and your "
     "nose was clear.", True),
    ("The facial tenderness had gone and your nose was clear.", True),
])
def test_a_finding_said_the_other_way_round_is_not_told(answer: str, told: bool) -> None:
    assert states(read_answer(answer), Fact("no facial tenderness and a clear nose", "finding")) is told
