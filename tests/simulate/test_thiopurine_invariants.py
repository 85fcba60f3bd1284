"""A thiopurine's start and blood tests over 1,000 seeded patients (the seed-73 read, P0014 E042: azathioprine with no
TPMT two days after sulfasalazine's leukopenia, WBC 2.9, and no count or ALT after its rises): TPMT and a white count
not low before the start, the count and the ALT again within a week of each change and weekly through the first 4
weeks after the start, and the dose set by the TPMT activity. Each rule also has crafted violations that its check
must catch.

Failure messages start with the rule's name in brackets (the names `docs/simulation.md` lists).
"""

from __future__ import annotations

from medmemorybench.simulate.models import LabFact, MedicationFact
from tests.simulate.clinical import check, days_between, first_event
from tests.simulate.thiopurine_check import (
    TPMT,
    WBC,
    counts_after_change_violations,
    dosed_on_tpmt_violations,
    start_check_violations,
)


def _started(years, action: str = "start"):  # noqa: ANN001, ANN202
    return first_event(
        years,
        lambda e: any(
            isinstance(f, MedicationFact) and f.drug == "azathioprine" and f.action == action for f in e.facts
        ),
    )


def test_thiopurine_start_checks_tpmt_and_a_white_count_not_low_before_every_start(kb, years):
    check([v for year in years for v in start_check_violations(kb, year)])
    _started(years)  # (exercised)


def test_thiopurine_counts_after_change_a_count_and_alt_within_a_week_of_each_start_and_change(kb, years):
    check([v for year in years for v in counts_after_change_violations(kb, year)])
    _started(years, "increase")  # (exercised)


def test_a_start_with_no_tpmt_and_on_a_low_white_count_is_caught(kb, years):
    # (the seed-73 read: started two days after a white count of 2.9, with no TPMT)
    year, event = _started(years)
    assert not start_check_violations(kb, year)
    earlier = year.events[: event.index + 1]
    events = [
        e.model_copy(update={"facts": [f for f in e.facts if not (isinstance(f, LabFact) and f.lab == TPMT)]})
        for e in earlier
    ]
    low = events[-1].model_copy(update={"facts": [*events[-1].facts, LabFact(lab=WBC, value=2.9, unit="×10⁹/L")]})
    crafted = year.model_copy(update={"events": [*events[:-1], low, *year.events[event.index + 1 :]]})
    found = [v for v in start_check_violations(kb, crafted) if event.event_id in v]
    assert any("no TPMT on record" in v for v in found)
    assert any("white count of 2.9" in v for v in found)


def test_a_start_with_no_recent_white_count_is_caught(kb, years):
    year, event = _started(years)
    events = [
        e.model_copy(update={"facts": [f for f in e.facts if not (isinstance(f, LabFact) and f.lab == WBC)]})
        if 0 <= event.index - e.index < 10
        else e
        for e in year.events
    ]
    found = [v for v in start_check_violations(kb, year.model_copy(update={"events": events})) if event.event_id in v]
    assert any("no white count that visit or in the 7 days before" in v for v in found)


def test_a_dose_rise_with_no_count_or_alt_after_it_is_caught(kb, years):
    # (the seed-73 read: azathioprine 100 -> 150 mg, then no white count or ALT for the rest of the year)
    year, event = _started(years, "increase")
    assert not counts_after_change_violations(kb, year)
    later = [
        e.model_copy(update={"facts": [f for f in e.facts if not (isinstance(f, LabFact) and f.lab in (WBC, "alt"))]})
        if e.index > event.index
        else e
        for e in year.events
    ]
    found = [
        v for v in counts_after_change_violations(kb, year.model_copy(update={"events": later})) if event.event_id in v
    ]
    assert any("no wbc by" in v for v in found) and any("no alt by" in v for v in found)


def test_thiopurine_dosed_on_tpmt_half_dose_with_intermediate_activity_none_with_absent(kb, years):
    check([v for year in years for v in dosed_on_tpmt_violations(kb, year)])
    _started(years)  # (exercised)


def _with_tpmt(year, value: float):  # noqa: ANN001, ANN202
    """The year with every TPMT result set to `value`."""
    events = [e.model_copy(update={"facts": [f.model_copy(update={"value": value})
                                             if isinstance(f, LabFact) and f.lab == TPMT else f for f in e.facts]})
              for e in year.events]
    return year.model_copy(update={"events": events})


def test_a_full_dose_with_intermediate_tpmt_and_any_dose_with_absent_tpmt_is_caught(kb, years):
    # (CPIC 2018: intermediate activity, a reduced dose; absent, another drug)
    year, event = _started(years)
    start = next(f for f in event.facts if isinstance(f, MedicationFact) and f.action == "start")
    assert start.dose > 25, "the crafted start must be at the usual dose"
    found = [v for v in dosed_on_tpmt_violations(kb, _with_tpmt(year, 11.0)) if event.event_id in v]
    assert any("above half the usual start, 25" in v for v in found)
    found = [v for v in dosed_on_tpmt_violations(kb, _with_tpmt(year, 2.0)) if event.event_id in v]
    assert any("absent activity" in v for v in found)
    year, event = _started(years, "increase")
    found = [v for v in dosed_on_tpmt_violations(kb, _with_tpmt(year, 11.0)) if event.event_id in v]
    assert any("above half the usual ceiling, 75 a day" in v for v in found)


def _first_count_after(year, event):  # noqa: ANN001, ANN202
    return next((e for e in year.events if e.index > event.index
                 and any(isinstance(f, LabFact) and f.lab == WBC for f in e.facts)), None)


def test_a_start_with_counts_in_its_first_week_only_is_caught(kb, years):
    # (BNF azathioprine: FBC and LFT weekly for the first 4 weeks, not once)
    year, event = next(
        (y, e) for y in years for e in y.events
        if any(isinstance(f, MedicationFact) and f.drug == "azathioprine" and f.action == "start" for f in e.facts)
        and (c := _first_count_after(y, e)) is not None and days_between(e.date, c.date) <= 14
        and days_between(e.date, y.events[-1].date) > 60
    )
    assert not counts_after_change_violations(kb, year)
    first = _first_count_after(year, event)
    later = [
        e.model_copy(update={"facts": [f for f in e.facts if not (isinstance(f, LabFact) and f.lab == WBC)]})
        if e.index > first.index and days_between(event.date, e.date) <= 35
        else e
        for e in year.events
    ]
    found = [
        v for v in counts_after_change_violations(kb, year.model_copy(update={"events": later})) if event.event_id in v
    ]
    assert any("no wbc by" in v and f"after the one on {first.date}" in v for v in found)
