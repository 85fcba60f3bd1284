"""Independent reading of a thiopurine's start and blood tests (the seed-73 read, P0014 E042: azathioprine started with
no TPMT two days after sulfasalazine took the white count to 2.9, and no count or liver test after its rises to 100
and 150 mg).

Each function returns violation messages (empty: the year passes) and reads only the record and the knowledge base,
never the engine's state. The rules (their names as `docs/simulation.md` lists them):

- `thiopurine_start_checks`: a thiopurine (azathioprine, mercaptopurine, tioguanine) is started only with a TPMT
  activity on record at or before that visit (CPIC 2018; BSG 2019; BNF), and with a white count taken that visit or in
  the week before that is not below 3.5 x10^9/L, the latest on record included (not started on a count another drug
  took down that no repeat has shown recovered).
- `thiopurine_counts_after_change`: after a thiopurine's start or dose change the white count and the ALT are taken
  again within a week, or at the first visit after it (no blood is taken between visits), plus the lab's shortest
  measuring interval where a result was just taken (BSG 2019: FBC and LFT after each change); after a start, again
  within a week of each of those while the next falls inside the first 4 weeks (BNF azathioprine: FBC and LFT weekly
  for the first 4 weeks). The three-monthly ceiling after that is `monitoring_due` (`monitoring_check.py`).
- `thiopurine_dosed_on_tpmt`: with a TPMT activity on record below the normal range (intermediate) a thiopurine is
  started at no more than half its usual starting dose and never given above half its usual ceiling a day; with one
  below the intermediate range (absent) it is not given at all (CPIC 2018; BSG 2019; BNF).
"""

from __future__ import annotations

from medmemorybench.knowledge.base import KnowledgeBase
from medmemorybench.knowledge.models import DOSES_PER_DAY
from medmemorybench.simulate.models import CareYear, Event, LabFact, MedicationFact
from tests.simulate.clinical import days_between, fail, given, latest_value
from tests.simulate.monitoring_check import _check_by, _interval, taking_spans

THIOPURINE_ATC = ("L04AX01", "L01BB02", "L01BB03")
"""Azathioprine, mercaptopurine, tioguanine (ATC)."""
TPMT = "tpmt_activity"
WBC = "wbc"
WBC_LOW = 3.5
"""White count a thiopurine is withheld below (BSR 2017 DMARD monitoring; BSG 2019)."""
COUNT_FRESH_DAYS = 7
"""A count from the week before the start stands for the start's own (it cannot be repeated sooner)."""
AFTER_CHANGE = (WBC, "alt")
RECHECK_DAYS = 7
"""BNF: weekly in the first month, and after each dose change."""
WEEKLY_DAYS = 28
"""BNF azathioprine: FBC and LFT weekly for the first 4 weeks after the start."""
TPMT_NORMAL_FROM = 15.1
"""Mayo Clinic Laboratories TPMT: normal activity 15.1-26.4 U/mL RBC, intermediate 6.3-15.0, low below 6.3."""
TPMT_ABSENT_BELOW = 6.3
REDUCED_SHARE = 0.5
"""CPIC 2018: intermediate activity, 30-80 % of the normal dose; BSG 2019: half the dose."""


def _is_thiopurine(kb: KnowledgeBase, drug: str) -> bool:
    return kb.drugs[drug].atc in THIOPURINE_ATC


def _labs_until(year: CareYear, event: Event, lab: str) -> list[tuple[Event, float]]:
    """Results of `lab` up to and including `event`, oldest first."""
    return [
        (e, f.value) for e in year.events[: event.index + 1] for f in e.facts if isinstance(f, LabFact) and f.lab == lab
    ]


def start_check_violations(kb: KnowledgeBase, year: CareYear) -> list[str]:
    """`thiopurine_start_checks`."""
    out = []
    for event in year.events:
        for fact in event.facts:
            if not (isinstance(fact, MedicationFact) and fact.action == "start" and _is_thiopurine(kb, fact.drug)):
                continue
            if not _labs_until(year, event, TPMT):
                out.append(fail("thiopurine_start_checks", year, event, f"{fact.drug} started with no TPMT on record"))
            counts = _labs_until(year, event, WBC)
            recent = [(e, v) for e, v in counts if days_between(e.date, event.date) < COUNT_FRESH_DAYS]
            if not recent:
                out.append(
                    fail(
                        "thiopurine_start_checks",
                        year,
                        event,
                        f"{fact.drug} started with no white count that visit or in the {COUNT_FRESH_DAYS} days before",
                    )
                )
            elif counts[-1][1] < WBC_LOW:
                out.append(
                    fail(
                        "thiopurine_start_checks",
                        year,
                        event,
                        f"{fact.drug} started on a white count of "
                        f"{counts[-1][1]:g} ({counts[-1][0].date}), under {WBC_LOW:g}",
                    )
                )
    return out


def counts_after_change_violations(kb: KnowledgeBase, year: CareYear) -> list[str]:
    """`thiopurine_counts_after_change`."""
    out = []
    spans = taking_spans(year)
    for event in year.events:
        for fact in event.facts:
            if not (
                isinstance(fact, MedicationFact)
                and fact.action in ("start", "increase", "decrease")
                and _is_thiopurine(kb, fact.drug)
            ):
                continue
            for lab in AFTER_CHANGE:
                missed = _missed_recheck(kb, year, event, fact, lab, spans.get(fact.drug, []))
                if missed is not None:
                    out.append(fail("thiopurine_counts_after_change", year, event, missed))
    return out


def _missed_recheck(kb: KnowledgeBase, year: CareYear, event: Event, fact: MedicationFact, lab: str,
                    spans: list[tuple[str, str | None]]) -> str | None:
    """The recheck of `lab` the change at `event` lacks (after a start, each week's through the first 4), or None."""
    measured = [e for e in year.events for f in e.facts if isinstance(f, LabFact) and f.lab == lab]
    ends = [end for start, end in spans if start <= event.date]
    anchor = event.date
    while True:
        last_day = _check_by(year, anchor, RECHECK_DAYS, _interval(kb, lab))
        if last_day is None:
            return None  # (the year ends before the check falls due)
        if ends and ends[-1] is not None and ends[-1] <= last_day:
            return None  # (stopped before its check was due)
        window = days_between(anchor, last_day)
        taken = [e for e in measured if 0 < days_between(anchor, e.date) <= window]
        if not taken:
            since = "" if anchor == event.date else f" after the one on {anchor}"
            return f"{fact.action} {fact.drug}: no {lab} by {last_day} ({window} days{since})"
        anchor = taken[0].date
        if fact.action != "start" or days_between(event.date, anchor) + RECHECK_DAYS > WEEKLY_DAYS:
            return None


def dosed_on_tpmt_violations(kb: KnowledgeBase, year: CareYear) -> list[str]:
    """`thiopurine_dosed_on_tpmt`."""
    out = []
    for event, fact in given(year):
        if not _is_thiopurine(kb, fact.drug) or fact.reason == "long_term":
            continue
        tpmt = latest_value(year, event, TPMT)
        if tpmt is None or tpmt >= TPMT_NORMAL_FROM:
            continue
        dose = kb.drugs[fact.drug].dose
        start, ceiling = dose.start * REDUCED_SHARE, dose.max * REDUCED_SHARE
        given_as = f"{fact.drug} {fact.dose:g} {fact.unit} {fact.frequency} ({fact.action}) with a TPMT of {tpmt:g}"
        if tpmt < TPMT_ABSENT_BELOW:
            detail = f"{given_as}: absent activity, none at all"
        elif fact.action == "start" and fact.dose > start + 1e-9:
            detail = f"{given_as}: started above half the usual start, {start:g}"
        elif fact.dose * DOSES_PER_DAY[fact.frequency] > ceiling + 1e-9:
            detail = f"{given_as}: above half the usual ceiling, {ceiling:g} a day"
        else:
            continue
        out.append(fail("thiopurine_dosed_on_tpmt", year, event, detail))
    return out
