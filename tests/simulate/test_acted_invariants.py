"""What a visit says is done is what the year does, over rendered years in both languages (`acted_check.py`): a result
said to need acting on is acted on; a drug taken as needed is not reviewed as a finished course; a visit that brings a
complaint does not open on having none; a drug taken since before the year is not spoken of as new. Each with a crafted
violation the check must catch."""

from __future__ import annotations

import pytest

from medmemorybench.render.conversation import SessionRenderer
from medmemorybench.render.templates import load_templates
from medmemorybench.simulate.models import MedicationFact, SymptomFact, TestFact
from tests.simulate.acted_check import (
    as_needed_review_no_course,
    complaint_not_denied,
    long_held,
    long_held_not_new,
    result_acted_on_when_said,
)
from tests.simulate.clinical import check

SAMPLE = 20
"""Years rendered per language (one of each roster condition: the first seed)."""
AS_NEEDED_SAMPLE = 10
"""Years with an illness treated by a drug taken as needed, rendered per language."""


def _render(kb, years, lang: str):  # noqa: ANN001, ANN202
    templates = load_templates(lang)
    out = []
    for year in years:
        renderer = SessionRenderer(kb, templates, year)
        out.append((year, [(e, " ".join(t.text for t in renderer.render(e).turns)) for e in year.events]))
    return out


def _names(kb, year, lang: str):  # noqa: ANN001, ANN202
    """A drug key's name as said in `lang` (the renderer's naming, which the check does not judge)."""
    return SessionRenderer(kb, load_templates(lang), year).facts.drug


def _as_needed_course(year) -> bool:  # noqa: ANN001
    return any(isinstance(f, MedicationFact) and f.action == "start" and f.frequency == "as_needed" and f.course_days
               and f.reason.startswith("illness:") for e in year.events for f in e.facts)


@pytest.fixture(scope="module")
def rendered(kb, years):
    return {lang: _render(kb, years[:SAMPLE], lang) for lang in ("en", "zh")}


@pytest.fixture(scope="module")
def as_needed(kb, years, rendered):
    """(a year both samples hold, several of the first seed's, is taken as `rendered` said it: each year is rendered
    on its own, so the words are the same)"""
    chosen = [y for y in years if _as_needed_course(y)][:AS_NEEDED_SAMPLE]
    assert len(chosen) == AS_NEEDED_SAMPLE
    out = {}
    for lang in ("en", "zh"):
        done = {id(year): said for year, said in rendered[lang]}
        out[lang] = [(y, done[id(y)]) if id(y) in done else _render(kb, [y], lang)[0] for y in chosen]
    return out


def test_result_acted_on_when_said(rendered):
    check([f for lang, years in rendered.items() for year, said in years
           for f in result_acted_on_when_said(year, said, lang)])


def test_result_acted_on_when_said_catches_a_crafted_violation(rendered):
    """The seed-73 read's P0009 S086 sentence, said at a visit that keeps every medicine, is caught in either
    language; said at a visit that starts or raises one, it is not."""
    year, said = rendered["en"][0]
    kept = next((e, t) for e, t in said if not any(isinstance(f, MedicationFact) and f.action != "continue"
                                                    for f in e.facts))
    changed = next((e, t) for e, t in said if any(isinstance(f, MedicationFact) and f.action in ("start", "increase")
                                                   for f in e.facts))
    sentence = "2.26 mmol/L is over the 1.80 mmol/L we aim for with your condition, so we need to act on it."
    failures = result_acted_on_when_said(year, [(kept[0], f"{kept[1]} {sentence}")], "en")
    assert failures and failures[0].startswith("[result_acted_on_when_said]") and kept[0].event_id in failures[0]
    assert not result_acted_on_when_said(year, [(changed[0], f"{changed[1]} {sentence}")], "en")
    assert result_acted_on_when_said(year, [(kept[0], "2.26超过了您这个病要求的1.80 mmol/L，需要处理。")], "zh")


def test_as_needed_review_no_course(as_needed):
    check([f for lang, years in as_needed.items() for year, said in years
           for f in as_needed_review_no_course(year, said, lang)])


def test_as_needed_review_no_course_catches_a_crafted_violation(as_needed):
    """The seed-73 read's "Finished it, the whole course" said at the review visits of these years is caught (at the
    reviews after a drug taken as needed)."""
    caught = []
    for year, said in as_needed["en"]:
        for index, (event, text) in enumerate(said):
            if any(isinstance(f, TestFact) and f.test.endswith(":review") for f in event.facts):
                crafted = [*said[:index], (event, f"{text} Finished it, the whole course."), *said[index + 1:]]
                caught += as_needed_review_no_course(year, crafted, "en")
    assert caught and all(f.startswith("[as_needed_review_no_course]") for f in caught)


def test_complaint_not_denied(rendered):
    check([f for lang, years in rendered.items() for year, said in years
           for f in complaint_not_denied(year, said, lang)])


def test_complaint_not_denied_catches_a_crafted_violation(rendered):
    """The seed-73 read's opener (P0004 S005) said at a visit that tells a symptom is caught in either language; said
    at a routine visit that tells none, it is not."""
    opener = {"en": "Nothing urgent, I'm just keeping my appointment.", "zh": "没什么急事，按约来复查。"}
    for lang, years in rendered.items():
        year, said = next((y, s) for y, s in years if any(isinstance(f, SymptomFact) for e, _ in s for f in e.facts))
        event, text = next((e, t) for e, t in said if any(isinstance(f, SymptomFact) for f in e.facts))
        failures = complaint_not_denied(year, [(event, f"{opener[lang]} {text}")], lang)
        assert failures and failures[0].startswith("[complaint_not_denied]") and event.event_id in failures[0]
        routine = next((e, t) for e, t in said if e.kind == "follow_up" and not any(isinstance(f, SymptomFact)
                                                                                   for f in e.facts))
        assert not complaint_not_denied(year, [(routine[0], f"{opener[lang]} {routine[1]}")], lang)


def test_long_held_not_new(kb, rendered):
    assert any(long_held(year, said[-1][0]) for year, said in rendered["en"])
    check([f for lang, years in rendered.items() for year, said in years
           for f in long_held_not_new(year, said, lang, _names(kb, year, lang))])


def test_long_held_not_new_catches_a_crafted_violation(kb, rendered):
    """The seed-73 read's question (P0014 S023) about a drug on record before the year is caught in either language;
    about a drug started in the year, it is not."""
    question = {"en": "Have you noticed anything since starting the {name}, anything unusual?",
                "zh": "好像没有。刚吃{name}那几天有点恶心，后来就好了。"}
    for lang, years in rendered.items():
        year, said, new = next((y, s, f.drug) for y, s in years if long_held(y, s[-1][0]) for e, _ in s
                               for f in e.facts if isinstance(f, MedicationFact) and f.action == "start"
                               and f.reason != "long_term" and f.drug not in long_held(y, s[-1][0]))
        event, text = said[-1]
        names = _names(kb, year, lang)
        drug = sorted(long_held(year, event))[0]
        failures = long_held_not_new(year, [(event, f"{text} {question[lang].format(name=names(drug))}")], lang, names)
        assert failures and failures[0].startswith("[long_held_not_new]") and event.event_id in failures[0]
        assert not long_held_not_new(year, [(event, question[lang].format(name=names(new)))], lang, names)
