"""Orthostatic hypotension over 1,000 seeded patients (the seed-47 read, P0007 E056-E060: levodopa stopped for it on
one seated reading and replaced by pramipexole): every diagnosis of it and every drug judged for it rests on a fall from
lying to standing of at least 20 mmHg measured that visit, and levodopa is kept with the non-drug measures, not
stopped. Each rule also has crafted violations that its check must catch.

Failure messages start with the rule's name in brackets (the names `docs/simulation.md` lists).
"""

from __future__ import annotations

from medmemorybench.simulate.models import AdviceFact, LabFact, MedicationFact
from tests.simulate.clinical import check, first_event, with_event_facts
from tests.simulate.orthostatic_check import (
    FALL_AT_LEAST_MMHG,
    NON_DRUG_MEASURES,
    STANDING_FALL,
    levodopa_kept_violations,
    orthostatic_drop_violations,
)

KEPT = "adverse_effect:orthostatic_hypotension"


def _kept_levodopa(years):  # noqa: ANN001, ANN202
    """The first visit that keeps levodopa for its orthostatic hypotension."""
    return first_event(years, lambda e: any(isinstance(f, MedicationFact) and f.drug == "levodopa_carbidopa"
                                            and f.reason == KEPT for f in e.facts))


def test_orthostatic_drop_measured_every_judgement_of_orthostatic_hypotension_rests_on_a_standing_fall(kb, years):
    check([v for year in years for v in orthostatic_drop_violations(kb, year)])
    judged = [f.value for y in years for e in y.events for f in e.facts
              if isinstance(f, LabFact) and f.lab == STANDING_FALL]
    assert judged and min(judged) >= FALL_AT_LEAST_MMHG, "no orthostatic hypotension judged in 1,000 patients"


def test_levodopa_kept_for_orthostatic_hypotension_with_the_non_drug_measures(kb, years):
    check([v for year in years for v in levodopa_kept_violations(kb, year)])
    _kept_levodopa(years)  # (exercised)


def test_the_knowledge_base_threshold_is_the_checked_one(kb):
    assert kb.labs[STANDING_FALL].harm_above == FALL_AT_LEAST_MMHG


def test_orthostatic_hypotension_judged_on_a_seated_reading_is_caught(kb, years):
    # (the seed-47 read: "systolic 109 mmHg, which is normal" and levodopa stopped in the same visit)
    year, event = _kept_levodopa(years)
    assert not orthostatic_drop_violations(kb, year)
    seated = [f for f in event.facts if not (isinstance(f, LabFact) and f.lab == STANDING_FALL)]
    seated.append(LabFact(lab="systolic_bp", value=109, unit="mmHg"))
    found = [v for v in orthostatic_drop_violations(kb, with_event_facts(year, event, seated)) if event.event_id in v]
    assert any(v.startswith("[orthostatic_drop_measured]") and "no lying-to-standing fall" in v for v in found)


def test_a_standing_fall_short_of_20_mmhg_is_caught(kb, years):
    year, event = _kept_levodopa(years)
    small = [f.model_copy(update={"value": 12.0}) if isinstance(f, LabFact) and f.lab == STANDING_FALL else f
             for f in event.facts]
    found = [v for v in orthostatic_drop_violations(kb, with_event_facts(year, event, small)) if event.event_id in v]
    assert any("standing fall of 12 mmHg" in v for v in found)


def test_levodopa_stopped_for_orthostatic_hypotension_is_caught(kb, years):
    year, event = _kept_levodopa(years)
    assert not levodopa_kept_violations(kb, year)
    stopped = [f.model_copy(update={"action": "stop"}) if isinstance(f, MedicationFact) and f.reason == KEPT else f
               for f in event.facts if not (isinstance(f, AdviceFact) and f.advice == NON_DRUG_MEASURES)]
    found = [v for v in levodopa_kept_violations(kb, with_event_facts(year, event, stopped)) if event.event_id in v]
    assert any("stopped for orthostatic hypotension" in v for v in found)
    assert any("without the non-drug measures" in v for v in found)
