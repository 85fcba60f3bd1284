"""The screen before immunosuppression over 1,000 seeded patients (the seed-73 read, P0014 E042: azathioprine with no
hepatitis B, hepatitis C or VZV serology; the seed-61 read: biologics and long steroid courses started unscreened):
HBsAg, anti-HBc, anti-HCV and VZV IgG on record, negative (immune), before every such start. The rule also has crafted
violations that its check must catch.

Failure messages start with the rule's name in brackets (the name `docs/simulation.md` lists).
"""

from __future__ import annotations

from medmemorybench.simulate.models import LabFact, MedicationFact
from tests.simulate.clinical import check, first_event
from tests.simulate.immunosuppression_check import SCREEN, VZV, is_screened_start, screen_violations


def _screened_start(kb, years, drug: str | None = None):  # noqa: ANN001, ANN202
    return first_event(years, lambda e: any(
        isinstance(f, MedicationFact) and is_screened_start(kb, f) and f.drug == (drug or f.drug) for f in e.facts))


def _without_screen(year, event):  # noqa: ANN001, ANN202
    """The year with every screening result up to and including `event` taken out."""
    events = [e.model_copy(update={"facts": [f for f in e.facts
                                             if not (isinstance(f, LabFact) and f.lab in (*SCREEN, VZV))]})
              if e.index <= event.index else e for e in year.events]
    return year.model_copy(update={"events": events})


def test_immunosuppression_screened_hepatitis_b_c_and_vzv_before_every_immunosuppressant_start(kb, years):
    check([v for year in years for v in screen_violations(kb, year)])
    _screened_start(kb, years, "azathioprine")  # (exercised: a thiopurine, and a long steroid course)
    _screened_start(kb, years, "prednisolone")


def test_a_start_with_no_screen_is_caught(kb, years):
    # (the seed-73 read: azathioprine started with no HBV, HCV or VZV serology)
    year, event = _screened_start(kb, years, "azathioprine")
    assert not screen_violations(kb, year)
    found = [v for v in screen_violations(kb, _without_screen(year, event)) if event.event_id in v]
    assert any("started with no" in v and "hcv_antibody" in v and "vzv_igg" in v for v in found)


def test_a_long_steroid_course_with_no_screen_is_caught_and_a_short_burst_is_not(kb, years):
    year, event = _screened_start(kb, years, "prednisolone")
    bare = _without_screen(year, event)
    assert any(event.event_id in v and "prednisolone started with no" in v for v in screen_violations(kb, bare))
    burst = [f.model_copy(update={"course_days": 5}) if isinstance(f, MedicationFact) and f.drug == "prednisolone"
             and f.action == "start" else f for f in event.facts]
    events = [e.model_copy(update={"facts": burst}) if e.index == event.index else e for e in bare.events]
    assert not [v for v in screen_violations(kb, bare.model_copy(update={"events": events})) if event.event_id in v]


def test_a_start_on_a_positive_screen_is_caught(kb, years):
    # (no positive-screen pathway is simulated: a start on a reactive HBsAg or no chickenpox immunity is unacted on)
    positive = {"hbsag": 250.0, VZV: 40.0}
    year, event = first_event(years, lambda e: any(
        isinstance(f, MedicationFact) and is_screened_start(kb, f) for f in e.facts) and set(positive) <= {
        f.lab for f in e.facts if isinstance(f, LabFact)})  # (a start that takes its own screen)
    facts = [f.model_copy(update={"value": positive[f.lab]}) if isinstance(f, LabFact) and f.lab in positive else f
             for f in event.facts]
    crafted = year.model_copy(update={"events": [e.model_copy(update={"facts": facts}) if e.index == event.index
                                                 else e for e in year.events]})
    found = [v for v in screen_violations(kb, crafted) if event.event_id in v]
    assert any("positive screen: hbsag 250" in v and "vzv_igg 40 (not immune)" in v for v in found)
