"""What the renderer knows at each visit: the care year so far, read from the ground truth, language-free.

A consultation refers to what came before ("since you raised the dose in March", "the same pain as in
February", "the scan", "back after the course of doxycycline") and to what comes next (the next visit, the
tests then due). `YearContext` keeps that running state as the visits are rendered in order, and
`VisitFacts` sorts one event's facts by who states them and what they are.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, timedelta

from medmemorybench.knowledge.base import KnowledgeBase
from medmemorybench.simulate.models import (
    WITHDRAWN,
    AdherenceFact,
    AdverseFact,
    AdviceFact,
    AllergyFact,
    AvoidedFact,
    CareYear,
    CautionFact,
    ComplicationFact,
    DiagnosisFact,
    DietFact,
    EconomicFact,
    Event,
    HistoryFact,
    LabFact,
    MedicationFact,
    PreferenceFact,
    RefillFact,
    SettingFact,
    StressorFact,
    SymptomFact,
    TestFact,
)

SETTLE_DAYS = 28
"""Days before the effect of a drug that moves no marker of the condition is spoken of as settled in."""
PATIENT_FACTS = (SymptomFact, AllergyFact, HistoryFact, PreferenceFact, DietFact, EconomicFact, StressorFact,
                 AdherenceFact, RefillFact)
"""Facts the patient tells (the doctor acknowledges them)."""


def is_patient_medication(fact: object) -> bool:
    """A drug the patient tells the doctor about (one they already take, or a dose they set right)."""
    return isinstance(fact, MedicationFact) and (fact.reason == "long_term" or fact.action == "correct")


@dataclass
class VisitFacts:
    """One event's facts, sorted by who states them and what they are."""

    told: list = field(default_factory=list)
    """What the patient tells, in order (symptoms, disclosures, their own drugs, missed doses)."""
    labs: list[LabFact] = field(default_factory=list)
    findings: list = field(default_factory=list)
    """Tests, diagnoses, adverse effects, complication findings (what the doctor explains)."""
    decisions: list = field(default_factory=list)
    """Prescriptions and their reasons (avoided, caution), advice, the level of care."""

    @classmethod
    def of(cls, event: Event) -> VisitFacts:
        out = cls()
        for fact in event.facts:
            if isinstance(fact, PATIENT_FACTS) or is_patient_medication(fact):
                out.told.append(fact)
            elif isinstance(fact, LabFact):
                out.labs.append(fact)
            elif isinstance(fact, TestFact | DiagnosisFact | AdverseFact | ComplicationFact):
                out.findings.append(fact)
            elif isinstance(fact, MedicationFact | AvoidedFact | CautionFact | AdviceFact | SettingFact):
                out.decisions.append(fact)
            else:
                raise TypeError(f"no place in a consultation for fact {type(fact).__name__}")
        return out

    @property
    def prescriptions(self) -> list[MedicationFact]:
        return [f for f in self.decisions if isinstance(f, MedicationFact)]

    @property
    def is_urgent(self) -> bool:
        """Emergency care or a hospital admission was decided."""
        return any(isinstance(f, SettingFact) and f.setting != "outpatient" for f in self.decisions)

    @property
    def is_admission(self) -> bool:
        """A hospital admission was decided: the patient goes in today, not home to a pharmacy or the desk."""
        return any(isinstance(f, SettingFact) and f.setting == "admission" for f in self.decisions)


@dataclass
class Taking:
    """A drug the patient is on, and since when it stands as it is."""

    fact: MedicationFact
    started: str
    changed: str
    until: str | None = None
    since_before: bool = False
    """Taken since before the year (on record at its start, `long_term`): never spoken of as new to the patient."""


class YearContext:
    """The running state of a year as its visits are rendered in order (`advance` after each)."""

    def __init__(self, kb: KnowledgeBase, year: CareYear) -> None:
        self.kb, self.year = kb, year
        self.taking: dict[str, Taking] = {}
        self.lab_history: dict[str, list[tuple[str, float]]] = {}
        self.symptoms_seen: dict[str, str] = {}
        """Symptom key -> date first told."""
        self.diagnosed_on: str | None = None
        self.memorable: list[tuple[str, str, dict]] = []
        """(date, kind, details) of what a later visit may refer back to."""
        self.advice_given: dict[str, str] = {}
        """Advice key -> date first given."""
        self.last_course: MedicationFact | None = None
        """The last course given for an intercurrent illness (its review visit asks how it went)."""
        self.preferences_told: set[str] = set()
        """Medication preferences the patient has told (a needle phobia: needle procedures are told as managed)."""
        self.blood_drawn_known: bool = False
        """A blood test has been taken since a fainting needle phobia was told (the first is told as managed)."""
        self._dates = [e.date for e in year.events]
        self.lapses = [(f.drug, (date.fromisoformat(e.date) - timedelta(days=f.missed_days)).isoformat(), e.date)
                       for e in year.events for f in e.facts if isinstance(f, AdherenceFact)]
        """(drug, first day missed, the visit that tells it) of each lapse the year holds."""
        condition = kb.conditions[year.persona.condition]
        self.monitored = {m.lab: m for m in condition.monitored}
        self.steps = {step.key: step for step in condition.care_path}

    # --- questions a visit asks of the past ----------------------------------------------------------------

    def in_lapse(self, drug: str, on: str) -> bool:
        """Whether `on` falls in days of `drug` missed that the year tells at a later visit (the patient is not
        taking it then, and does not say they are: the seed-61 "All good, once a day" inside nine days without
        warfarin)."""
        return any(d == drug and first <= on < told for d, first, told in self.lapses)

    def current(self, on: str) -> list[Taking]:
        """What the patient takes on a date (courses that have ended left out), in the order started."""
        return [t for t in self.taking.values() if t.until is None or t.until >= on]

    def previous_lab(self, lab: str) -> tuple[str, float] | None:
        history = self.lab_history.get(lab)
        return history[-1] if history else None

    # --- what a marker bears out (credit and praise are said only when it does) --------------------------------

    def markers_of(self, drug: str) -> list[str]:
        """The monitored labs the care step of a drug being taken moves (none for a drug of no care step: a course
        for an intercurrent illness, a long-term drug of another condition)."""
        taking = self.taking.get(drug)
        step = self.steps.get(taking.fact.step) if taking is not None and taking.fact.step else None
        return [lab for lab in (*step.moves, *step.targets) if lab in self.monitored] if step is not None else []

    def is_on_track(self, lab: str, value: float, drug: str | None = None) -> bool:
        """Whether a reading bears out the treatment against the reading before it (`Monitored.is_on_track`, toward
        the range `drug`'s care step aims for where it sets one)."""
        previous = self.previous_lab(lab)
        taking = self.taking.get(drug) if drug is not None else None
        step = self.steps.get(taking.fact.step) if taking is not None and taking.fact.step else None
        kinetics = self.kb.labs[lab].kinetics
        return self.monitored[lab].is_on_track(value, previous[1] if previous else None,
                                               kinetics.cv if kinetics else 0.0,
                                               step.targets.get(lab) if step is not None else None,
                                               self.kb.labs[lab].to_target is not None)

    def settle_days(self, drug: str) -> int:
        """Days before a drug's effect can be judged: the longest response time of the markers it moves
        (`Kinetics.response_days`: HbA1c ~90, blood pressure ~14), `SETTLE_DAYS` for a drug that moves none."""
        days = [self.kb.labs[lab].kinetics.response_days for lab in self.markers_of(drug)
                if self.kb.labs[lab].kinetics is not None]
        return int(max(days)) if days else SETTLE_DAYS

    def is_working(self, drug: str, event: Event, since: str) -> bool:
        """Whether a visit may credit a drug started on `since` ("we started it on 12 April, and that's holding up"):
        a marker its care step moves was measured at this visit, every such reading is on track, and the drug has
        been taken since then long enough to show it."""
        markers = set(self.markers_of(drug))
        readings = [f for f in event.facts if isinstance(f, LabFact) and f.lab in markers]
        waited = (date.fromisoformat(event.date) - date.fromisoformat(since)).days
        return bool(readings) and waited >= self.settle_days(drug) \
            and all(self.is_on_track(f.lab, f.value, drug) for f in readings)

    def is_going_well(self, event: Event) -> bool:
        """Whether a visit may praise how the patient has done since the diagnosis: nothing new troubles them at
        this visit (a symptom, a side effect, a complication), and every marker of the condition measured so far
        is on track at its latest reading (the seed-53 read: "you've coped well" at a PHQ-9 of 17 after 15)."""
        if any(isinstance(f, SymptomFact | AdverseFact | ComplicationFact) for f in event.facts):
            return False
        today = {f.lab: f.value for f in event.facts if isinstance(f, LabFact) and f.lab in self.monitored}
        judged = [self.is_on_track(lab, value) for lab, value in today.items()]
        for lab, history in self.lab_history.items():
            if lab in self.monitored and lab not in today and history:
                before = history[-2][1] if len(history) > 1 else None
                kinetics = self.kb.labs[lab].kinetics
                judged.append(self.monitored[lab].is_on_track(history[-1][1], before,
                                                              kinetics.cv if kinetics else 0.0, None,
                                                              self.kb.labs[lab].to_target is not None))
        return bool(judged) and all(judged)

    def next_visit(self, event: Event) -> Event | None:
        following = self.year.events[event.index:]  # (events are numbered from 1)
        return following[0] if following else None

    def days_to_next(self, event: Event) -> int | None:
        upcoming = self.next_visit(event)
        if upcoming is None:
            return None
        return (date.fromisoformat(upcoming.date) - date.fromisoformat(event.date)).days

    # --- moving on --------------------------------------------------------------------------------------

    def advance(self, event: Event) -> None:
        """Take in what a visit established."""
        self.preferences_told.update(f.preference for f in event.facts if isinstance(f, PreferenceFact))
        if any(self.kb.preferences[p].needle_care is not None for p in self.preferences_told) and any(
                isinstance(f, LabFact) and self.kb.labs[f.lab].kind == "lab" and self.kb.labs[f.lab].specimen == "blood"
                for f in event.facts):
            self.blood_drawn_known = True
        for fact in event.facts:
            if isinstance(fact, MedicationFact):
                self._medication(fact, event.date)
            elif isinstance(fact, LabFact):
                self.lab_history.setdefault(fact.lab, []).append((event.date, fact.value))
            elif isinstance(fact, SymptomFact):
                self.symptoms_seen.setdefault(fact.symptom, event.date)
            elif isinstance(fact, AdviceFact):
                self.advice_given.setdefault(fact.advice, event.date)
            elif isinstance(fact, DiagnosisFact) and fact.status == "confirmed":
                self.diagnosed_on = self.diagnosed_on or event.date
                self.memorable.append((event.date, "diagnosis", {"name": fact.name}))
            elif isinstance(fact, DiagnosisFact) and fact.status == "complication":
                self.memorable.append((event.date, "diagnosis", {"name": fact.name}))
            elif isinstance(fact, DiagnosisFact) and fact.status in WITHDRAWN:
                # (a diagnosis since ruled out or revised is no longer one to look back on as found)
                self.memorable = [m for m in self.memorable if m[1] != "diagnosis" or m[2]["name"] != fact.name]

    def _medication(self, fact: MedicationFact, on: str) -> None:
        if fact.action == "stop":
            self.taking.pop(fact.drug, None)
            return
        if fact.action == "administer":
            return
        previous = self.taking.get(fact.drug)
        if previous is not None and previous.until is not None and previous.until < on:
            previous = None  # (a course that has ended: a new start begins a run of its own, not "since February")
        until = None
        if fact.action == "start" and fact.course_days:
            until = date.fromordinal(date.fromisoformat(on).toordinal() + fact.course_days).isoformat()
            if fact.reason.startswith("illness:"):
                self.last_course = fact
        elif previous is not None:
            until = previous.until
        started = previous.started if previous is not None else on
        changed = on if previous is None or previous.fact.dose != fact.dose else previous.changed
        since_before = previous.since_before if previous is not None else fact.reason == "long_term"
        self.taking[fact.drug] = Taking(fact, started, changed, until, since_before)
        if fact.action == "start" and fact.reason != "long_term":
            self.memorable.append((on, "start", {"drug": fact.drug}))
        elif fact.action in ("increase", "decrease"):
            self.memorable.append((on, "change", {"drug": fact.drug}))
