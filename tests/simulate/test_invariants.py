"""Clinical and causal invariants of the simulator, checked over 200 seeded patients (every condition 10x)."""

from __future__ import annotations

from collections import Counter
from datetime import date

import pytest

from medmemorybench.simulate import state_on
from medmemorybench.simulate.models import TRAP_CATEGORIES, WITHDRAWN, EconomicFact, LabFact, MedicationFact
from medmemorybench.simulate.safety import Constraint, forbidden_by
from medmemorybench.simulate.summary import causal_chains
from medmemorybench.simulate.timeline import lab_series, regimen_changes
from tests.simulate.clinical import dose_overrides, formulations_given

N_SEEDS_PER_CONDITION = 10


@pytest.fixture(scope="module")
def years(years):
    """200 patients, each roster condition under 10 different seeds: the first ten seeds of the shared 1,000-patient
    cohort (made once, `tests/simulate/conftest.py`), not simulated again."""
    return years[:N_SEEDS_PER_CONDITION * 20]


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
        for trap in year.persona.traps:
            # told at a visit of its own or in passing at another phase-1 visit
            event = next((e for e in year.events if trap.fact in e.facts), None)
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
                    if constraint.category == "lifestyle_economic" and fact.course_days:
                        continue  # (a budget caps what is paid month after month; a course is paid once)
                    assert fact.drug not in forbidden_by(kb, constraint), (
                        year.persona.persona_id, event.event_id, fact.drug, constraint)


def test_doses_stay_within_the_knowledge_base_range(kb, years):
    for year in years:
        for event in year.events:
            for fact in event.facts:
                if isinstance(fact, MedicationFact):
                    specs = [spec for _, spec in formulations_given(kb, fact)]
                    overrides = dose_overrides(kb, fact.drug)
                    assert any(s.start * 0.75 <= fact.dose <= s.max for s in specs) or fact.dose in overrides, fact
                    assert fact.unit in {s.unit for s in specs}


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
        # five phases in order; each boundary moved from an even split by up to a fifth of a phase (4 encounters)
        phases = [e.phase for e in year.events]
        assert phases == sorted(phases) and set(phases) == {1, 2, 3, 4, 5}
        boundaries = [sum(1 for p in phases if p <= k) for k in range(1, 5)]
        assert all(abs(b - 20 * k) <= 4 for k, b in enumerate(boundaries, start=1)), boundaries
        assert all(e.facts for e in year.events)


def test_years_change_the_regimen_after_the_first_prescription(years):
    # Dose changes, switches and later steps started: what state-update questions are about. A patient whose
    # traps leave one drug per step may see none (Graves disease treated by radioiodine alone; an osteoporosis
    # drug stopped for a clot with nothing else allowed): nine in ten years change, the median year three times.
    counts = []
    for year in years:
        first = next(e.index for e in year.events if any(
            isinstance(f, MedicationFact) and f.reason == "first_line" for f in e.facts))
        later_starts = [e for e in year.events if e.index > first and any(
            isinstance(f, MedicationFact) and f.action in ("start", "administer") for f in e.facts)]
        counts.append(len(regimen_changes(year)) + len(later_starts))
    assert sum(c >= 1 for c in counts) >= 0.9 * len(counts), f"{sum(c == 0 for c in counts)} years with no change"
    assert sorted(counts)[len(counts) // 2] >= 3, f"median {sorted(counts)[len(counts) // 2]} regimen changes"


def test_monitored_labs_are_measured_often_and_move(kb, years):
    # nearly every year follows a lab it can ask about, and most follow two (slow labs are measured yearly; a
    # controlled patient's pain score can sit at 3 all year, and a stable one's checks space out to 90 days)
    one = two = 0
    for year in years:
        condition = kb.conditions[year.persona.condition]
        moving = 0
        for mon in condition.monitored:
            values = [v for _, v in lab_series(year, mon.lab)]
            if len(values) >= 5 and len(set(values)) >= 3:
                moving += 1
        one += moving >= 1
        two += moving >= 2
    assert one >= 0.99 * len(years), f"{one} of {len(years)} years follow a moving lab"
    assert two >= 0.95 * len(years), f"{two} of {len(years)} years follow two moving labs"


def test_treatment_brings_the_first_lab_toward_its_treated_range(kb, years):
    # The value treatment is judged against is the one the diagnosis rested on (the work-up's, on or before the
    # diagnosis day), not the first one after it: a marker too slow to repeat at the diagnosis visit (MDS-UPDRS every
    # 28 days) is next measured on treatment, and a year whose drug worked by then would drop out as "never out of
    # range" (weekly agonist titration took 5 such Parkinson's years out of seeds 0-9 under the old reading).
    treated = improved = ended_closer = 0
    for year in years:
        mon = kb.conditions[year.persona.condition].monitored[0]
        diagnosis = next(e for e in year.events if e.kind == "diagnosis")
        full = lab_series(year, mon.lab)
        before = [v for d, v in full if d <= diagnosis.date]
        series = [(d, v) for d, v in full if d > diagnosis.date]
        if not before or not series:
            continue  # a yearly test (a DXA, an MRI volume) is not repeated within the year
        at_diagnosis, last = before[-1], series[-1][1]

        def distance(value: float, low: float = mon.treated[0], high: float = mon.treated[1]) -> float:
            return 0.0 if low <= value <= high else min(abs(value - low), abs(value - high))

        if distance(at_diagnosis) > 0:
            treated += 1
            improved += min(distance(v) for _, v in series) < distance(at_diagnosis)
            ended_closer += distance(last) < distance(at_diagnosis)
    # Treatment works: nearly every year gets closer to target (97 % measured on seeds 0-9). Where it ends is
    # another matter: a flare, a lapse or a drug stopped for an adverse effect with nothing allowed in its place can
    # undo it (91 % end closer on seeds 0-9, 90 % over the 1,000 patients).
    assert improved >= 0.95 * treated, f"{improved} of {treated} years ever get closer to the treated range"
    assert ended_closer >= 0.85 * treated, f"{ended_closer} of {treated} years end closer to the treated range"


def test_an_adverse_or_complication_chain_spans_three_events_and_two_weeks(years):
    # (a year has none when its complication cannot be treated safely and its drugs' only possible effects are
    # nuisances with nothing safe to switch to: a physician keeps the only safe drug, so no effect is drawn)
    with_chain = 0
    for year in years:
        kinds = {e.event_id: e.kind for e in year.events}
        chains = [c for c in causal_chains(year)
                  if c.span_days >= 14 and any(kinds[i] in ("adverse_event", "complication") for i in c.event_ids)]
        with_chain += bool(chains)
    assert with_chain >= 0.92 * len(years), f"{with_chain} of {len(years)} years have such a chain"


def test_no_two_active_drugs_duplicate_a_therapy(kb, years):
    # (a selective and a non-selective beta-blocker, an ACE inhibitor with an ARB: drug_classes.yaml `group`)
    for year in years:
        for event in year.events:
            meds = state_on(year, event.date).medications
            groups = [kb.therapy_group(d) for d in meds]
            assert len(groups) == len(set(groups)), (event.event_id, sorted(meds))


def test_misdiagnosis_in_phase_one_is_withdrawn_at_diagnosis(years):
    for year in years:
        mis = next(e for e in year.events if e.kind == "misdiagnosis")
        diagnosis = next(e for e in year.events if e.kind == "diagnosis")
        assert mis.phase == 1 and diagnosis.phase == 2
        suspected = next(f for f in mis.facts if f.type == "diagnosis")
        assert any(f.type == "diagnosis" and f.status in WITHDRAWN and f.icd11 == suspected.icd11
                   for f in diagnosis.facts)


def test_families_hold_confusers_through_real_overlap(kb, years):
    # relatives have their own conditions; resemblance comes from shared drug classes or lab names
    resembling = 0
    for year in years:
        family = year.persona.family
        assert 2 <= len(family) <= 4
        patient_classes = {kb.drugs[f.drug].drug_class for e in year.events for f in e.facts
                           if isinstance(f, MedicationFact)}
        patient_labs = {f.lab for e in year.events for f in e.facts if isinstance(f, LabFact)}
        resembling += any({kb.drugs[d.drug].drug_class for d in r.drugs} & patient_classes
                          or {lab.lab for lab in r.labs} & patient_labs for r in family)
    assert resembling >= 0.8 * len(years), f"only {resembling} of {len(years)} families share a class or a lab"
