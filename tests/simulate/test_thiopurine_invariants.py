"""A thiopurine's start and blood tests over 1,000 seeded patients (the seed-73 read, P0014 E042: azathioprine with no
TPMT two days after sulfasalazine's leukopenia, WBC 2.9, and no count or ALT after its rises): TPMT and a white count
not low before the start, the count and the ALT again within a week of each change. Each rule also has crafted
violations that its check must catch.

Failure messages start with the rule's name in brackets (the names `docs/simulation.md` lists).
"""

from __future__ import annotations

from medmemorybench.simulate.models import LabFact, MedicationFact
from tests.simulate.clinical import check, first_event
from tests.simulate.thiopurine_check import (
    TPMT,
    WBC,
    counts_after_change_violations,
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
