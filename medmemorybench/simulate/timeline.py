"""The patient's state on any date, derived from the events: what state-update and safety answers rest on."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, timedelta

from medmemorybench.simulate.models import (
    WITHDRAWN,
    AdverseFact,
    AllergyFact,
    CareYear,
    ComplicationFact,
    DiagnosisFact,
    HistoryFact,
    LabFact,
    MedicationFact,
)


@dataclass(frozen=True)
class Dose:
    """A drug as currently taken."""

    dose: float
    unit: str
    frequency: str
    since: str
    """Date of the last change."""
    until: str | None = None
    """Last day of a course (the drug is no longer taken after it)."""


@dataclass(frozen=True)
class Reading:
    """A lab value and when it was measured."""

    value: float
    unit: str
    date: str


@dataclass
class PatientState:
    """What is true of the patient at the end of a given date."""

    date: str
    medications: dict[str, Dose] = field(default_factory=dict)
    labs: dict[str, Reading] = field(default_factory=dict)
    diagnoses: list[str] = field(default_factory=list)
    """ICD-11 codes of confirmed diagnoses and complications, in order made."""
    ruled_out: list[str] = field(default_factory=list)
    """ICD-11 codes of diagnoses withdrawn."""
    allergies: list[str] = field(default_factory=list)
    """Allergy-group keys."""
    history: list[str] = field(default_factory=list)
    """History-condition keys."""
    adverse_effects: list[tuple[str, str]] = field(default_factory=list)
    """(drug, effect) pairs experienced."""
    complications: list[str] = field(default_factory=list)
    """Complication keys."""
    administered: list[tuple[str, str]] = field(default_factory=list)
    """(drug, date) of one-off administrations (radioiodine, a joint injection): given, not taken."""


def course_end(start: str, course_days: int) -> str:
    """The last day of a course started on `start` (ISO dates)."""
    return (date.fromisoformat(start) + timedelta(days=course_days)).isoformat()


def _apply_medication(state: PatientState, fact: MedicationFact, on: str) -> None:
    if fact.action == "stop":
        state.medications.pop(fact.drug, None)
        return
    if fact.action == "administer":
        state.administered.append((fact.drug, on))
        return
    previous = state.medications.get(fact.drug)
    unchanged = previous is not None and previous.dose == fact.dose and fact.action == "continue"
    since = previous.since if unchanged and previous else on
    until = course_end(on, fact.course_days) if fact.action == "start" and fact.course_days else \
        (previous.until if previous else None)
    state.medications[fact.drug] = Dose(fact.dose, fact.unit, fact.frequency, since, until)


def state_on(year: CareYear, on: str) -> PatientState:
    """The patient's state at the end of `on` (an ISO date): regimen, latest labs, diagnoses."""
    state = PatientState(date=on)
    for event in year.events:
        if event.date > on:
            break
        for drug, dose in list(state.medications.items()):
            if dose.until is not None and event.date > dose.until:
                del state.medications[drug]
        for fact in event.facts:
            if isinstance(fact, MedicationFact):
                _apply_medication(state, fact, event.date)
            elif isinstance(fact, LabFact):
                state.labs[fact.lab] = Reading(fact.value, fact.unit, event.date)
            elif isinstance(fact, DiagnosisFact):
                if fact.status in ("confirmed", "complication") and fact.icd11 not in state.diagnoses:
                    state.diagnoses.append(fact.icd11)
                elif fact.status in WITHDRAWN:
                    state.ruled_out.append(fact.icd11)
            elif isinstance(fact, AllergyFact):
                state.allergies.append(fact.group)
            elif isinstance(fact, HistoryFact):
                state.history.append(fact.history)
            elif isinstance(fact, AdverseFact) and (fact.drug, fact.effect) not in state.adverse_effects:
                state.adverse_effects.append((fact.drug, fact.effect))
            elif isinstance(fact, ComplicationFact) and fact.complication not in state.complications:
                state.complications.append(fact.complication)
    for drug, dose in list(state.medications.items()):
        if dose.until is not None and on > dose.until:
            del state.medications[drug]
    return state


def lab_series(year: CareYear, lab: str) -> list[tuple[str, float]]:
    """Every (date, value) measured for `lab`, in order."""
    return [(e.date, f.value) for e in year.events for f in e.facts if isinstance(f, LabFact) and f.lab == lab]


def regimen_changes(year: CareYear) -> list[tuple[str, MedicationFact]]:
    """Dose changes and drug switches: (event id, fact) for every increase, decrease and switch start."""
    changes = []
    for event in year.events:
        for fact in event.facts:
            is_switch = event.kind == "switch" and getattr(fact, "action", None) in ("start", "administer")
            if isinstance(fact, MedicationFact) and (fact.action in ("increase", "decrease") or is_switch):
                changes.append((event.event_id, fact))
    return changes
