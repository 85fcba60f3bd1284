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
  measuring interval where a result was just taken (BNF: FBC weekly for the first 4 weeks; BSG 2019: FBC and LFT after
  each change). The three-monthly ceiling after that is `monitoring_due` (`monitoring_check.py`).
"""

from __future__ import annotations

from medmemorybench.knowledge.base import KnowledgeBase
from medmemorybench.simulate.models import CareYear, Event, LabFact, MedicationFact
from tests.simulate.clinical import days_between, fail
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
                last_day = _check_by(year, event.date, RECHECK_DAYS, _interval(kb, lab))
                if last_day is None:
                    continue  # (the year ends before the check falls due)
                window = days_between(event.date, last_day)
                ends = [end for start, end in spans.get(fact.drug, []) if start <= event.date]
                if ends and ends[-1] is not None and ends[-1] <= last_day:
                    continue  # (stopped before its check was due)
                measured = [e for e in year.events for f in e.facts if isinstance(f, LabFact) and f.lab == lab]
                if not any(0 < days_between(event.date, e.date) <= window for e in measured):
                    out.append(
                        fail(
                            "thiopurine_counts_after_change",
                            year,
                            event,
                            f"{fact.action} {fact.drug}: no {lab} by {last_day} ({window} days)",
                        )
                    )
    return out
