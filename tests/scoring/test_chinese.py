"""Chinese answers: dates, units, numerals and frequencies in Chinese forms, yes/no, abstention, overlap by
character."""

from __future__ import annotations

import pytest

from medmemorybench.scoring._dates import find_dates
from medmemorybench.scoring._endorse import polarity
from medmemorybench.scoring._match import contains_term
from medmemorybench.scoring.abstention import is_abstention
from medmemorybench.scoring.multiple_choice import parse_choices
from medmemorybench.scoring.text_overlap import rouge_l_tokens, tokenize


@pytest.mark.parametrize(("answer", "gold"), [
    ("一天两次，每次一千五百毫克", "1500 mg"),
    ("每天2次", "每日两次"),
    ("糖化血红蛋白7.2%", "7.2 %"),
    ("二甲双胍五百毫克", "500 mg"),
    ("呼吸频率13次/分钟", "13 次/分"),
    ("13 breaths/min", "13 次/分"),
    ("心率76次每分", "76 bpm"),
])
def test_chinese_numerals_units_and_frequencies_match_the_gold(answer, gold):
    assert contains_term(answer, gold)


def test_a_longer_number_is_still_not_a_match():
    # "17.2 %" holds "7.2 %" as text but is another value
    assert not contains_term("结果是17.2 %", "7.2 %")
    assert not contains_term("每日十二次", "每日两次")


def test_chinese_dates_are_read_with_and_without_a_year():
    assert [(d.year, d.month, d.day) for d in find_dates("是2024年3月12日开始的")] == [(2024, 3, 12)]
    assert [(d.month, d.day) for d in find_dates("3月12号")] == [(3, 12)]


@pytest.mark.parametrize(("answer", "side"), [
    ("可以，您可以用。", "yes"), ("不可以，您对它过敏。", "no"), ("不建议您用。", "no"),
    ("可以，但是要查肝功能。", None),
    # a time or person word before the side (a capable reader's "now you no longer need to spray it daily")
    ("现在不用天天喷了。疗程30天已经用完了。", "no"), ("目前还不需要加药。", "no"), ("您可以继续用。", "yes"),
    ("现在可以，但是要查肝功能。", None), ("现在要继续每天喷。", None),
    # a reassurance first is no "no"
    ("不用担心，可以吃。", "yes"), ("您别担心，您可以继续用。", "yes"), ("Don't worry, you can take it.", "yes"),
    ("Don't take it: you are allergic.", "no")])
def test_chinese_yes_and_no_openings(answer, side):
    assert polarity(answer) == side


def test_chinese_abstention_and_letters():
    assert is_abstention("这不在我的就诊记录里。") and is_abstention("记录中没有相关信息")
    assert not is_abstention("是2024-03-12。")
    assert parse_choices("答案是A、C", ["A. 甲", "B. 乙", "C. 丙", "D. 丁"]) == frozenset("AC")


def test_overlap_counts_chinese_characters():
    assert tokenize("二甲双胍 500 mg") == ["二", "甲", "双", "胍", "500", "mg"]
    assert rouge_l_tokens(tokenize("开始用二甲双胍"), tokenize("二甲双胍开始用")) == pytest.approx(4 / 7)
