"""A drug on its indication's own dose ladder, and the warning told at its start, over 1,000 seeded patients (the
seed-79 read, P0014 E030: sulfasalazine for colitis at the arthritis ladder's 1 g twice a day, warned of hepatotoxicity
only). Each rule also has a crafted violation that its check must catch.

Failure messages start with the rule's name in brackets (the names `docs/simulation.md` lists).
"""

from __future__ import annotations

import pytest

from medmemorybench.render.conversation import SessionRenderer
from medmemorybench.render.templates import load_templates
from medmemorybench.simulate.models import MedicationFact
from tests.simulate.clinical import check
from tests.simulate.use_dosing_check import (
    add_on_after_top_dose_violations,
    indication_dose_ladder_violations,
    start_warning_violations,
    warned_starts,
)


def _sulfasalazine_for_colitis(years):  # noqa: ANN001, ANN202
    return next(y for y in years if any(f.drug == "sulfasalazine" and f.step == "aminosalicylate_induction"
                                        for e in y.events for f in e.facts if isinstance(f, MedicationFact)))


def said_at_warned_starts(kb, year, lang: str):  # noqa: ANN001, ANN201
    """(visit, language, session text) of each visit starting a drug with a start warning; the other visits only move
    the renderer on."""
    visits = {e.event_id for e, _ in warned_starts(kb, year)}
    if not visits:
        return []
    renderer, out = SessionRenderer(kb, load_templates(lang), year), []
    for event in year.events:
        if event.event_id in visits:
            out.append((event, lang, " ".join(turn.text for turn in renderer.render(event).turns)))
        else:
            renderer.ctx.advance(event)
    return out


def test_indication_dose_ladder_sulfasalazine_for_colitis_on_the_colitis_ladder(kb, years):
    check([v for year in years for v in indication_dose_ladder_violations(kb, year)])
    _sulfasalazine_for_colitis(years)  # (exercised)


def test_indication_dose_ladder_catches_the_arthritis_dose_for_colitis(kb, years):
    # (the seed-79 read: 1 g twice a day, the arthritis ladder's top, for active colitis)
    year = _sulfasalazine_for_colitis(years)
    assert not indication_dose_ladder_violations(kb, year)
    events = [e.model_copy(update={"facts": [
        f.model_copy(update={"dose": 1000.0, "frequency": "twice_daily"})
        if isinstance(f, MedicationFact) and f.drug == "sulfasalazine" else f for f in e.facts]}) for e in year.events]
    found = indication_dose_ladder_violations(kb, year.model_copy(update={"events": events}))
    assert found and found[0].startswith("[indication_dose_ladder]") and "twice_daily (2000 a day)" in found[0]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_start_warning_told_sulfasalazine_start_names_sore_throat_fever_bruising(kb, years, lang):
    check([v for year in years for v in start_warning_violations(kb, year, said_at_warned_starts(kb, year, lang))])
    assert said_at_warned_starts(kb, _sulfasalazine_for_colitis(years), lang)  # (exercised)


def test_start_warning_told_catches_a_start_warning_only_of_hepatotoxicity(kb, years):
    # (the seed-79 read, S030: "Keep an eye out for hepatotoxicity")
    year = _sulfasalazine_for_colitis(years)
    said = said_at_warned_starts(kb, year, "en")
    assert not start_warning_violations(kb, year, said)
    crafted = [(e, lang, "Keep an eye out for hepatotoxicity; if it happens, phone the surgery.")
               for e, lang, _ in said]
    found = start_warning_violations(kb, year, crafted)
    assert found and found[0].startswith("[start_warning_told]") and "sore throat" in found[0]


def _add_on_beside(years):  # noqa: ANN001, ANN202
    """A year and visit starting blood-pressure control beside a RAS blocker taken in diabetic kidney disease."""
    for year in years:
        for event in year.events:
            if not any(isinstance(f, MedicationFact) and f.action == "start" and f.step == "bp_control"
                       for f in event.facts):
                continue
            ras = [f for e in year.events[: event.index - 1] for f in e.facts
                   if isinstance(f, MedicationFact) and f.step == "ras_blockade"]
            if ras and ras[-1].action != "stop":
                return year, event
    raise AssertionError("no year adds blood-pressure control beside a RAS blocker")


def test_add_on_after_top_dose_ras_blocker_at_its_top_before_amlodipine(kb, years):
    check([v for year in years for v in add_on_after_top_dose_violations(kb, year)])
    _add_on_beside(years)  # (exercised)


def test_add_on_after_top_dose_catches_amlodipine_beside_lisinopril_at_its_start(kb, years):
    # (the seed-79 read, P0009 E040: amlodipine added while lisinopril stayed at 5 mg)
    year, event = _add_on_beside(years)
    assert not add_on_after_top_dose_violations(kb, year)

    def at_start(fact):  # noqa: ANN001, ANN202
        if not (isinstance(fact, MedicationFact) and fact.step == "ras_blockade" and fact.action != "stop"):
            return fact
        start = kb.drugs[fact.drug].dose.start
        return fact.model_copy(update={"dose": start, "action": "start" if fact.action == "start" else "continue",
                                       "reason": fact.reason if fact.action == "start" else "unchanged"})

    events = [e.model_copy(update={"facts": [at_start(f) for f in e.facts]}) if e.index < event.index else e
              for e in year.events]
    found = add_on_after_top_dose_violations(kb, year.model_copy(update={"events": events}))
    assert found and found[0].startswith("[add_on_after_top_dose]") and event.event_id in found[0]
