"""Labs that are parts of another lab's total, over 1,000 seeded patients (the seed-61 read, P0007 E054: an absolute
neutrophil count of 6.4 beside a white cell count of 4.6, called normal): in one visit's results a part stays below
its total, and the parts of one total together too. A crafted violation shows the check catches it.

Failure messages start with the rule's name in brackets (the names `docs/simulation.md` lists).
"""

from __future__ import annotations

from medmemorybench.simulate.models import LabFact
from tests.simulate.clinical import check, first_event
from tests.simulate.coupled_labs_check import TOTALS, coupled_lab_violations


def _both(total: str, part: str):  # noqa: ANN202
    def has(event) -> bool:  # noqa: ANN001
        labs = {f.lab for f in event.facts if isinstance(f, LabFact)}
        return {total, part} <= labs
    return has


def test_parts_stay_below_their_total(years):
    check([v for year in years for v in coupled_lab_violations(year)])
    first_event(years, _both("wbc", "neutrophils"))  # (exercised)


def test_a_differential_above_its_total_is_caught(years):
    year, event = first_event(years, _both("wbc", "neutrophils"))
    assert not coupled_lab_violations(year)
    wbc = next(f.value for f in event.facts if isinstance(f, LabFact) and f.lab == "wbc")
    broken = year.model_copy(update={"events": [e.model_copy(update={"facts": [
        f.model_copy(update={"value": wbc + 1.8}) if isinstance(f, LabFact) and f.lab == "neutrophils" else f
        for f in e.facts]}) if e is event else e for e in year.events]})
    found = coupled_lab_violations(broken)
    assert any(v.startswith("[coupled_labs]") and event.event_id in v and "neutrophils" in v for v in found)


def test_the_knowledge_base_declares_the_checks_pairs(kb):
    """The simulator couples what the knowledge base declares (`Lab.part_of`); the check reads its own list: they
    name the same pairs."""
    declared = {(lab.part_of.total, lab.key) for lab in kb.labs.values() if lab.part_of is not None}
    assert declared == {(total, part) for total, parts in TOTALS.items() for part in parts}
