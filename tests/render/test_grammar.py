"""The phrase grammar: parsing, seeded expansion, and the orthography that joins phrases and values."""

from __future__ import annotations

import random

import pytest

from medmemorybench.render.grammar import (
    Alt,
    Grammar,
    GrammarSyntaxError,
    Ref,
    fill,
    finish,
    parse,
    tidy,
    top_level_text,
)


def test_choices_options_and_references_parse_into_nodes():
    assert parse("a [b|c [d|]] <name> {slot}") == ("a ", Alt((("b",), ("c ", Alt((("d",), ())),))), " ", Ref("name"),
                                                   " {slot}")


@pytest.mark.parametrize("bad", ["[open", "close]", "a | b"])
def test_unbalanced_brackets_and_stray_bars_are_errors(bad):
    with pytest.raises(GrammarSyntaxError):
        parse(bad)


def test_expansion_is_seeded_and_covers_every_option():
    grammar = Grammar({"who": [parse("[she|he]")]})
    seq = parse("<who> [came|went] [in|]")
    first = [grammar.expand(seq, random.Random(7)) for _ in range(3)]
    assert first == [grammar.expand(seq, random.Random(7)) for _ in range(3)]
    seen = {grammar.expand(seq, random.Random(i)) for i in range(200)}
    assert seen == {f"{w} {v} {o}" for w in ("she", "he") for v in ("came", "went") for o in ("in", "")}


def test_required_text_is_only_what_every_expansion_says():
    assert "{value} {unit}" in top_level_text(parse("is {value} {unit} [today|]"))
    assert "{value} {unit}" not in top_level_text(parse("is [{value} {unit}|fine]"))


def test_values_are_filled_in_last_and_never_parsed():
    # a value holding brackets or braces stays as it is
    assert fill("took {drug}", {"drug": "x [a|b] {y}"}) == "took x [a|b] {y}"


def test_english_tidy_and_finish():
    assert tidy("so ,  the result .  it is fine", "en") == "So, the result. It is fine"
    # eGFR keeps its case at a sentence start; a value opening a later sentence gets its capital, but a value's own
    # "C. difficile" is not recapitalised
    assert finish("eGFR was 54. previous stroke at 85", "en") == "eGFR was 54. Previous stroke at 85"
    assert finish("toxin: C. difficile negative..", "en") == "Toxin: C. difficile negative."
    assert finish("I'm a accountant, a one-off", "en") == "I'm an accountant, a one-off"


def test_chinese_tidy_drops_spaces_between_characters_but_not_inside_values():
    assert tidy("您的 血糖 是 {value} {unit} ， 偏高 。", "zh") == "您的血糖是{value} {unit}，偏高。"
    assert finish(fill("结果是{value} {unit}。。", {"value": "7.2", "unit": "%"}), "zh") == "结果是7.2 %。"
