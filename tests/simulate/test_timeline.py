"""The state timeline answers 'which drugs at which doses, which latest labs, which diagnoses, on date D'."""

from __future__ import annotations

import pytest

from medmemorybench.knowledge import default_knowledge
from medmemorybench.simulate import simulate_patient, state_on
from medmemorybench.simulate.models import LabFact, MedicationFact


@pytest.fixture(scope="module")
def year():
    return simulate_patient(default_knowledge(), 0, 2)


def test_before_diagnosis_no_care_drug_and_no_confirmed_diagnosis(year):
    first = year.events[0]
    state = state_on(year, first.date)
    assert year.persona.icd11 not in state.diagnoses
    care_start = next(e for e in year.events if e.kind == "prescription")
    assert not [d for d in state.medications if d == care_start.facts[0].drug]


def test_prescription_and_dose_change_show_up_on_their_dates(year):
    change = next(e for e in year.events if e.kind == "dose_change")
    fact = next(f for f in change.facts if isinstance(f, MedicationFact))
    before = state_on(year, year.events[change.index - 2].date).medications[fact.drug]
    after = state_on(year, change.date).medications[fact.drug]
    assert before.dose == fact.previous_dose and after.dose == fact.dose and after.since == change.date


def test_latest_lab_is_the_last_measured(year):
    measured = [(e.date, f) for e in year.events for f in e.facts if isinstance(f, LabFact)]
    last_date, last_fact = measured[-1]
    state = state_on(year, year.events[-1].date)
    assert state.labs[last_fact.lab].value == last_fact.value
    assert state.labs[last_fact.lab].date == last_date


def test_diagnosis_confirmed_after_its_event(year):
    diagnosis = next(e for e in year.events if e.kind == "diagnosis")
    assert year.persona.icd11 in state_on(year, diagnosis.date).diagnoses
    assert year.persona.icd11 not in state_on(year, year.events[diagnosis.index - 2].date).diagnoses
