"""A result said to need acting on is acted on, over rendered years in both languages (`acted_check.py`), with a
crafted violation the check must catch."""

from __future__ import annotations

import pytest

from medmemorybench.render.conversation import SessionRenderer
from medmemorybench.render.templates import load_templates
from medmemorybench.simulate.models import MedicationFact
from tests.simulate.acted_check import result_acted_on_when_said
from tests.simulate.clinical import check

SAMPLE = 20
"""Years rendered per language (one of each roster condition: the first seed)."""


@pytest.fixture(scope="module")
def rendered(kb, years):
    out = {}
    for lang in ("en", "zh"):
        templates = load_templates(lang)
        out[lang] = []
        for year in years[:SAMPLE]:
            renderer = SessionRenderer(kb, templates, year)
            out[lang].append((year, [(e, " ".join(t.text for t in renderer.render(e).turns)) for e in year.events]))
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
