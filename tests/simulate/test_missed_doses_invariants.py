"""Missed doses that are a danger in themselves, over 1,000 seeded patients (the seed-47 read, P0015 E061: a week of
skipped propranolol in congenital long QT, a month after suicidal ideation, answered "restart as usual"): a
beta-blocker missed in long QT gets an ECG and the adherence talk that visit, and any lapse after suicidal ideation a
safety check with the PHQ-9 and the question of who holds the medicines. The seed-61 read adds refill requests
answered with a repeat prescription, missed levodopa and warfarin answered as a critical lapse, and lapses the
readings and the patient's own words bear out; the seed-89 read, lithium missed in bipolar disorder answered with a
relapse check, a restart and a level within the week. Each rule also has crafted violations that its check must catch.

Failure messages start with the rule's name in brackets (the names `docs/simulation.md` lists).
"""

from __future__ import annotations

import re
from datetime import date, timedelta

import pytest

from medmemorybench.render.acts import Act, DrugName
from medmemorybench.render.conversation import SessionRenderer
from medmemorybench.render.templates import load_templates
from medmemorybench.simulate.models import AdherenceFact, AdviceFact, LabFact, MedicationFact, RefillFact
from tests.simulate.clinical import check, first_event
from tests.simulate.missed_doses_check import (
    AFTER_IDEATION_ADVICE,
    BIPOLAR,
    CRITICAL,
    LITHIUM_ADVICE,
    LONG_QT,
    LONG_QT_ADVICE,
    adherence_claim_violations,
    lapse_held_lab_violations,
    lapse_unread_violations,
    missed_after_ideation_violations,
    missed_beta_blocker_violations,
    missed_critical_violations,
    missed_lithium_violations,
    moves_phq9,
    refill_violations,
)
from tests.simulate.said_check import could_say


def _edit(year, event, drop):  # noqa: ANN001, ANN202
    """The year with the facts `drop` picks taken out of one visit."""
    return year.model_copy(update={"events": [e.model_copy(update={"facts": [f for f in e.facts if not drop(f)]})
                                              if e is event else e for e in year.events]})


def _lapse_with(advice: str):  # noqa: ANN202
    return lambda e: any(isinstance(f, AdherenceFact) for f in e.facts) and any(
        isinstance(f, AdviceFact) and f.advice == advice for f in e.facts)


def test_missed_beta_blocker_long_qt_gets_an_ecg_and_the_adherence_talk(kb, years):
    check([v for year in years for v in missed_beta_blocker_violations(kb, year)])
    first_event([y for y in years if LONG_QT in y.persona.histories], _lapse_with(LONG_QT_ADVICE))  # (exercised)


def test_missed_doses_after_suicidal_ideation_get_a_safety_check(kb, years):
    check([v for year in years for v in missed_after_ideation_violations(kb, year)])
    first_event(years, _lapse_with(AFTER_IDEATION_ADVICE))  # (exercised)


def test_restart_as_usual_in_long_qt_is_caught(kb, years):
    year, event = first_event([y for y in years if LONG_QT in y.persona.histories], _lapse_with(LONG_QT_ADVICE))
    assert not missed_beta_blocker_violations(kb, year)
    broken = _edit(year, event, lambda f: isinstance(f, LabFact) and f.lab == "qtc"
                   or isinstance(f, AdviceFact) and f.advice == LONG_QT_ADVICE)
    found = [v for v in missed_beta_blocker_violations(kb, broken) if event.event_id in v]
    assert any(v.startswith("[missed_beta_blocker_long_qt]") and "no ECG" in v for v in found)
    assert any("without the adherence talk" in v for v in found)


def test_a_lapse_after_suicidal_ideation_without_a_safety_check_is_caught(kb, years):
    # (a lapse of a drug the PHQ-9 does not follow: propranolol, as in the seed-47 read)
    year, event = next((y, e) for y in years for e in y.events if _lapse_with(AFTER_IDEATION_ADVICE)(e)
                       and not moves_phq9(kb, y, next(f.drug for f in e.facts if isinstance(f, AdherenceFact))))
    assert not missed_after_ideation_violations(kb, year)
    index = year.events.index(event)
    stripped = year.model_copy(update={"events": [
        e.model_copy(update={"facts": [f for f in e.facts if not (
            isinstance(f, AdviceFact) and f.advice == AFTER_IDEATION_ADVICE
            or isinstance(f, LabFact) and f.lab == "phq9")]}) if i <= index else e
        for i, e in enumerate(year.events)]})
    found = [v for v in missed_after_ideation_violations(kb, stripped) if event.event_id in v]
    assert any(v.startswith("[missed_doses_after_suicidal_ideation]") and "who holds the medicines" in v for v in found)
    assert any("no PHQ-9" in v for v in found)


# --- missed_lithium_bipolar (the seed-89 read) ------------------------------------------------------------------


def test_missed_lithium_in_bipolar_disorder_gets_a_relapse_check_restart_and_level(kb, years):
    check([v for year in years for v in missed_lithium_violations(kb, year)])
    first_event([y for y in years if BIPOLAR in y.persona.histories], _lapse_with(LITHIUM_ADVICE))  # (exercised)


def test_a_lithium_gap_answered_with_a_routine_is_caught(kb, years):
    year, event = first_event([y for y in years if BIPOLAR in y.persona.histories and date.fromisoformat(
        y.events[-1].date) > date(2024, 12, 20)], _lapse_with(LITHIUM_ADVICE))
    assert not missed_lithium_violations(kb, year)
    told = date.fromisoformat(event.date)
    index = year.events.index(event)
    # (the seed-89 E069: no advice, no restart, no PHQ-9 in the fortnight, the next level 22 days later)
    broken = year.model_copy(update={"events": [e.model_copy(update={"facts": [f for f in e.facts if not (
        e is event and (isinstance(f, AdviceFact) and f.advice == LITHIUM_ADVICE
                        or isinstance(f, MedicationFact) and f.drug == "lithium")
        or isinstance(f, LabFact) and f.lab == "phq9" and i <= index
        or isinstance(f, LabFact) and f.lab == "lithium_level"
        and told < date.fromisoformat(e.date) <= told + timedelta(days=7))]}) for i, e in enumerate(year.events)]})
    found = [v for v in missed_lithium_violations(kb, broken) if event.event_id in v]
    assert any(v.startswith("[missed_lithium_bipolar]") and "no relapse check" in v for v in found)
    assert any("no PHQ-9" in v for v in found)
    assert any("not restarted" in v for v in found)
    assert any("no lithium level within 7 days" in v for v in found)


# --- refill_answered ----------------------------------------------------------------------------------------------

ASKS_FOR_MORE = {
    "en": re.compile(r"nearly run out|need more|running low|nearly out|almost out|repeat prescription for"),
    "zh": re.compile(r"快吃完|再开|续开|快没了|剩得不多"),
}
"""Words that ask for more of a drug, in each language."""
REFILL_ACTS = {"ack.refill", "fact.medication.repeat", "fact.refill"}
"""The request, its acknowledgement and its answer."""


def _refill(event) -> bool:  # noqa: ANN001
    return any(isinstance(f, RefillFact) for f in event.facts)


def test_refill_requests_get_a_repeat_prescription(years):
    check([v for year in years for v in refill_violations(year)])
    first_event(years, _refill)  # (exercised)


def test_an_unanswered_refill_is_caught(years):
    year, event = first_event(years, _refill)
    assert not refill_violations(year)
    drug = next(f.drug for f in event.facts if isinstance(f, RefillFact))
    unanswered = _edit(year, event, lambda f: isinstance(f, MedicationFact) and f.drug == drug)
    assert any(v.startswith("[refill_answered]") and "no prescription" in v for v in refill_violations(unanswered))
    kept = year.model_copy(update={"events": [e.model_copy(update={"facts": [
        f.model_copy(update={"reason": "stable"}) if isinstance(f, MedicationFact) and f.drug == drug else f
        for f in e.facts]}) if e is event else e for e in year.events]})
    assert any("no repeat prescription" in v for v in refill_violations(kept))


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_only_a_refill_fact_asks_for_more(lang):
    """No act but a refill request's own (`fact.refill`, said only with a `RefillFact`, and the repeat prescription
    that answers it) speaks of more of a drug: the seed-61 "I'll need more of the carbidopa/levodopa" was an opening
    line with no fact behind it."""
    templates = load_templates(lang)
    voiced = {k for k in templates.parsed if ASKS_FOR_MORE[lang].search(could_say(templates, k))}
    assert "fact.refill" in voiced
    assert voiced <= REFILL_ACTS, f"asks for more with no refill fact behind it: {sorted(voiced - REFILL_ACTS)}"


# --- missed_critical_drug -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("advice", [advice for advice, _ in CRITICAL.values()])
def test_missed_critical_drugs_are_cared_for_that_visit(kb, years, advice):
    check([v for year in years for v in missed_critical_violations(kb, year)])
    first_event(years, _lapse_with(advice))  # (exercised: levodopa and warfarin each)


@pytest.mark.parametrize("advice", [advice for advice, _ in CRITICAL.values()])
def test_a_critical_lapse_answered_with_a_pill_box_is_caught(kb, years, advice):
    year, event = first_event(years, _lapse_with(advice))
    assert not missed_critical_violations(kb, year)
    labs = next(labs for a, labs in CRITICAL.values() if a == advice)
    drug = next(f.drug for f in event.facts if isinstance(f, AdherenceFact))
    broken = _edit(year, event, lambda f: isinstance(f, AdviceFact) and f.advice == advice
                   or isinstance(f, LabFact) and f.lab in labs or isinstance(f, MedicationFact) and f.drug == drug)
    found = [v for v in missed_critical_violations(kb, broken) if event.event_id in v]
    assert any(v.startswith("[missed_critical_drug]") and "safety net" in v for v in found)
    assert all(any(f"no {lab}" in v for v in found) for lab in labs)
    assert any("not restarted" in v for v in found)


# --- lapse_unread and lapse_shows_on_held_lab -----------------------------------------------------------------------


def _warfarin_lapse(e) -> bool:  # noqa: ANN001
    return any(isinstance(f, AdherenceFact) and f.drug == "warfarin" for f in e.facts)


def _with_reading(year, before, on: date, fact):  # noqa: ANN001, ANN202
    """The year with a visit on `on` holding `fact`, placed before the visit `before`."""
    index = year.events.index(before)
    visit = before.model_copy(update={"event_id": before.event_id + "R", "date": on.isoformat(), "facts": [fact]})
    return year.model_copy(update={"events": [*year.events[:index], visit, *year.events[index:]]})


def test_no_reading_falls_inside_a_lapse_before_it_is_told(kb, years):
    check([v for year in years for v in lapse_unread_violations(kb, year)])


def test_a_reading_inside_a_lapse_is_caught(kb, years):
    year, event = first_event(years, _warfarin_lapse)
    assert not lapse_unread_violations(kb, year)
    on = date.fromisoformat(event.date) - timedelta(days=1)
    inside = _with_reading(year, event, on, LabFact(lab="inr", value=2.2, unit="", target=(2.0, 3.0)))
    assert any(v.startswith("[lapse_unread]") and "inr 2.2" in v for v in lapse_unread_violations(kb, inside))


def test_a_lapse_shows_on_the_lab_its_drug_holds(kb, years):
    check([v for year in years for v in lapse_held_lab_violations(kb, year)])


def test_an_inr_in_range_after_days_without_warfarin_is_caught(kb, years):
    year, event = first_event(years, _warfarin_lapse)
    assert not lapse_held_lab_violations(kb, year)
    # (three weeks missed, and that visit's INR in range, as the seed-61 INR 2.4 the day after nine days without it)
    shown = _edit(year, event, lambda f: isinstance(f, LabFact) and f.lab == "inr")
    shown = shown.model_copy(update={"events": [e.model_copy(update={"facts": [
        f.model_copy(update={"missed_days": 21}) if isinstance(f, AdherenceFact) else f for f in e.facts]
        + [LabFact(lab="inr", value=2.4, unit="", target=(2.0, 3.0))]}) if e.event_id == event.event_id else e
        for e in shown.events]})
    found = lapse_held_lab_violations(kb, shown)
    assert any(v.startswith("[lapse_shows_on_held_lab]") and "inr 2.4" in v for v in found)


# --- no_adherence_claim_in_lapse ----------------------------------------------------------------------------------


def _planned(kb, year, templates):  # noqa: ANN001, ANN202
    renderer = SessionRenderer(kb, templates, year)
    out = []
    for event in year.events:
        out.append((event, [act for beat in renderer.plan(event) for act in beat]))
        renderer.ctx.advance(event)
    return out


def test_no_adherence_claim_inside_a_lapse(kb, years):
    templates = load_templates("en")  # (the plan is language-free)
    lapsed = [y for y in years if any(isinstance(f, AdherenceFact) for e in y.events for f in e.facts)]
    check([v for year in lapsed for v in adherence_claim_violations(year, _planned(kb, year, templates))])


def test_an_adherence_claim_inside_a_lapse_is_caught(years):
    year, event = first_event(years, _warfarin_lapse)
    assert not adherence_claim_violations(year, [])
    claim = Act("patient", "ans.adherence.ok", {"drug": DrugName("warfarin")})
    inside = date.fromisoformat(event.date) - timedelta(days=1)
    earlier = event.model_copy(update={"event_id": "X", "date": inside.isoformat()})
    found = adherence_claim_violations(year, [(earlier, [claim])])
    assert any(v.startswith("[no_adherence_claim_in_lapse]") for v in found)
