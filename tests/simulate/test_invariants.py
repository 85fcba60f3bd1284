"""Clinical and causal invariants of the simulator, checked over 200 seeded patients (every condition 10x)."""

from __future__ import annotations

from collections import Counter
from datetime import date

import pytest

from medmemorybench.knowledge import default_knowledge
from medmemorybench.simulate import simulate_patient, state_on
from medmemorybench.simulate.models import TRAP_CATEGORIES, EconomicFact, LabFact, MedicationFact
from medmemorybench.simulate.safety import Constraint, forbidden_by
from medmemorybench.simulate.summary import causal_chains
from medmemorybench.simulate.timeline import lab_series, regimen_changes

N_SEEDS_PER_CONDITION = 10


@pytest.fixture(scope="module")
def kb():
    return default_knowledge()


@pytest.fixture(scope="module")
def years(kb):
    # 200 patients: each roster condition under 10 different seeds.
    return [simulate_patient(kb, seed, index) for seed in range(N_SEEDS_PER_CONDITION) for index in range(20)]


def _constraints(year):
    out = []
    for trap in year.persona.traps:
        budget = trap.fact.monthly_budget_usd if isinstance(trap.fact, EconomicFact) else None
        out.append(Constraint(trap.category, trap.option, budget))
    return out


def test_two_hundred_patients_cover_every_condition(years):
    assert len(years) == 200
    assert set(Counter(y.persona.condition for y in years).values()) == {N_SEEDS_PER_CONDITION}


def test_six_traps_one_per_category_each_in_real_conflict(years):
    for year in years:
        traps = year.persona.traps
        assert [t.category for t in traps] == list(TRAP_CATEGORIES)
        for trap in traps:
            assert trap.forbidden_drugs or trap.undermined_advice, (year.persona.persona_id, trap.category)


def test_traps_are_disclosed_in_phase_one_before_any_care_drug(years):
    for year in years:
        disclosed = {tuple(f for f in e.facts) : e for e in year.events if e.kind == "trap_disclosure"}
        for trap in year.persona.traps:
            event = disclosed.get((trap.fact,))
            assert event is not None and event.phase == 1, (year.persona.persona_id, trap.category)


def test_care_never_gives_what_a_trap_forbids(kb, years):
    for year in years:
        constraints = _constraints(year)
        history = {t.option for t in year.persona.traps if t.category == "medication_history"}
        for event in year.events:
            for fact in event.facts:
                if not isinstance(fact, MedicationFact) or fact.action == "stop" or fact.drug in history:
                    continue
                for constraint in constraints:
                    assert fact.drug not in forbidden_by(kb, constraint), (
                        year.persona.persona_id, event.event_id, fact.drug, constraint)


def test_doses_stay_within_the_knowledge_base_range(kb, years):
    for year in years:
        for event in year.events:
            for fact in event.facts:
                if isinstance(fact, MedicationFact):
                    spec = kb.drugs[fact.drug].dose
                    assert spec.start <= fact.dose <= spec.max, (event.event_id, fact)
                    assert fact.unit == spec.unit


def test_causes_precede_effects(years):
    for year in years:
        index_of = {e.event_id: e.index for e in year.events}
        for event in year.events:
            for cause in event.triggered_by:
                assert index_of[cause] < event.index, (event.event_id, cause)


def test_year_is_100_dated_encounters_in_five_phases(years):
    for year in years:
        dates = [date.fromisoformat(e.date) for e in year.events]
        assert len(dates) == 100
        assert dates == sorted(set(dates)), "dates must be strictly increasing"
        assert dates[0] >= date(2024, 1, 1) and dates[-1] <= date(2024, 12, 31)
        assert Counter(e.phase for e in year.events) == {1: 20, 2: 20, 3: 20, 4: 20, 5: 20}
        assert all(e.facts for e in year.events)


def test_each_year_has_three_regimen_changes(years):
    for year in years:
        assert len(regimen_changes(year)) >= 3, year.persona.persona_id


def test_two_monitored_labs_measured_five_times_and_moving(kb, years):
    for year in years:
        condition = kb.conditions[year.persona.condition]
        moving = 0
        for mon in condition.monitored:
            values = [v for _, v in lab_series(year, mon.lab)]
            if len(values) >= 5 and len(set(values)) >= 3:
                moving += 1
        assert moving >= 2, year.persona.persona_id


def test_treatment_brings_the_first_lab_toward_its_treated_range(kb, years):
    for year in years:
        mon = kb.conditions[year.persona.condition].monitored[0]
        diagnosis = next(e for e in year.events if e.kind == "diagnosis")
        at_diagnosis = next(f.value for f in diagnosis.facts if isinstance(f, LabFact) and f.lab == mon.lab)
        last = lab_series(year, mon.lab)[-1][1]

        def distance(value: float, low: float = mon.treated[0], high: float = mon.treated[1]) -> float:
            return 0.0 if low <= value <= high else min(abs(value - low), abs(value - high))

        if distance(at_diagnosis) > 0:
            assert distance(last) < distance(at_diagnosis), (year.persona.persona_id, mon.lab, at_diagnosis, last)


def test_an_adverse_or_complication_chain_spans_three_events_and_two_weeks(years):
    for year in years:
        kinds = {e.event_id: e.kind for e in year.events}
        chains = [c for c in causal_chains(year)
                  if c.span_days >= 14 and any(kinds[i] in ("adverse_event", "complication") for i in c.event_ids)]
        assert chains, year.persona.persona_id


def test_no_two_active_drugs_share_a_class(kb, years):
    for year in years:
        for event in year.events:
            meds = state_on(year, event.date).medications
            classes = [kb.drugs[d].drug_class for d in meds]
            assert len(classes) == len(set(classes)), (event.event_id, sorted(meds))


def test_misdiagnosis_in_phase_one_is_ruled_out_at_diagnosis(years):
    for year in years:
        mis = next(e for e in year.events if e.kind == "misdiagnosis")
        diagnosis = next(e for e in year.events if e.kind == "diagnosis")
        assert mis.phase == 1 and diagnosis.phase == 2
        suspected = next(f for f in mis.facts if f.type == "diagnosis")
        assert any(f.type == "diagnosis" and f.status == "ruled_out" and f.icd11 == suspected.icd11
                   for f in diagnosis.facts)


def test_family_resembles_the_patient(kb, years):
    for year in years:
        family = year.persona.family
        assert 2 <= len(family) <= 4
        patient_classes = {kb.drugs[d].drug_class
                           for e in year.events for f in e.facts if isinstance(f, MedicationFact) for d in [f.drug]}
        monitored = {m.lab for m in kb.conditions[year.persona.condition].monitored}
        for relative in family:
            assert {kb.drugs[d.drug].drug_class for d in relative.drugs} & patient_classes
            assert {lab.lab for lab in relative.labs} <= monitored
