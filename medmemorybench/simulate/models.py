"""The ground truth's records: persona, traps, family, typed facts, events and the care year.

These are language-free: facts hold knowledge-base keys and numbers, never rendered sentences
(names that have no key, like a misdiagnosis, carry their `Text` in every language).
"""

from __future__ import annotations

from typing import Annotated, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field

from medmemorybench.knowledge.models import Text

TrapCategory = Literal[
    "allergy",
    "medication_history",
    "disease_history",
    "medication_preference",
    "diet_preference",
    "lifestyle_economic",
]
TRAP_CATEGORIES: tuple[TrapCategory, ...] = get_args(TrapCategory)

EventKind = Literal[
    "symptom_report",
    "trap_disclosure",
    "lab_check",
    "misdiagnosis",
    "diagnostic_test",
    "diagnosis",
    "prescription",
    "dose_change",
    "switch",
    "adverse_event",
    "complication",
    "lifestyle",
    "psychological",
    "follow_up",
    "medication_review",
    "correction",
    "acute_illness",
]
EVENT_KINDS: tuple[EventKind, ...] = get_args(EventKind)

MedicationAction = Literal["start", "increase", "decrease", "stop", "continue", "administer", "correct"]


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


# --- typed facts ---------------------------------------------------------------------------------


class SymptomFact(_Record):
    """The patient reports a symptom."""

    type: Literal["symptom"] = "symptom"
    symptom: str
    """Symptom key of the condition, an adverse-effect/complication key, or `<illness>.<symptom>` for an
    intercurrent illness."""
    name: Text
    """Clinical name."""
    lay: Text
    """The patient's words."""


class LabFact(_Record):
    """A measured lab or vital value."""

    type: Literal["lab"] = "lab"
    lab: str
    """Lab key."""
    value: float
    """Value, rounded to the lab's decimals."""
    unit: str
    """Unit."""
    target: tuple[float, float] | None = None
    """The range the result is judged against where a drug the patient takes sets one (INR 2-3 on warfarin,
    lithium 0.4-1.0 mmol/L); None: the lab's reference range."""
    goal: float | None = None
    """The level a condition on record sets for it, where no drug sets a range (`Lab.goals`: HbA1c under 7.0 % in
    diabetes): the result is judged against it, not the reference range."""


class DiagnosisFact(_Record):
    """A diagnosis made, confirmed, or withdrawn."""

    type: Literal["diagnosis"] = "diagnosis"
    name: Text
    """What was diagnosed."""
    icd11: str
    """ICD-11 code."""
    status: Literal["suspected", "confirmed", "ruled_out", "revised", "complication", "acute"]
    """Status of the diagnosis (`acute`: an intercurrent illness; `revised`: a working diagnosis withdrawn whose
    finding is real and part of the true condition, hypertension in HFpEF; `ruled_out`: one the results exclude)."""


WITHDRAWN = ("ruled_out", "revised")
"""Diagnosis statuses that withdraw a working diagnosis (the next diagnosis says what it was)."""


class TestFact(_Record):
    """A diagnostic test and what it showed."""

    type: Literal["test"] = "test"
    test: str
    """Diagnostic-test key of the condition; for an intercurrent illness `illness:<key>` (what showed it),
    `illness:<key>:first` (the examination before self-care) or `illness:<key>:review` (the check after its course)."""
    name: Text
    """Test name."""
    finding: Text
    """Result: the knowledge base's finding filled with this patient's values at this visit (`simulate/findings.py`)."""


class MedicationFact(_Record):
    """A change (or confirmation) of one drug of the regimen."""

    type: Literal["medication"] = "medication"
    drug: str
    """Drug key."""
    action: MedicationAction
    """What was done."""
    dose: float
    """Dose after the action (for stop: the dose that was stopped)."""
    unit: str
    """Dose unit."""
    frequency: str
    """Frequency after the action."""
    previous_dose: float | None = None
    """Dose before an increase, a decrease or a patient's correction."""
    reason: str
    """Why, as a code: first_line, titration, step_up, add_on, symptomatic, complication:<key>,
    adverse_effect:<key>, toxicity:<kind>, misdiagnosis, diagnosis_revised, still_needed (a misdiagnosis' drug kept at
    the revision for a lab still above target), long_term, adherence, stable (continued, every marker its step
    moves on track), unchanged (continued while a marker it moves is not: `Monitored.is_on_track`),
    co_prescription, prevention (a history's treatment started before a drug its caution names: isoniazid before
    immunosuppression in latent TB, `Contraindication.treat_first`), treats_history (a misdiagnosis' drug kept at
    the revision because it treats a history on record: propranolol in long QT), course_completed,
    patient_correction, repeat (a repeat prescription at the dose taken: the
    answer to a refill request, `RefillFact`, or the restart with a supply in hand after a critical drug was missed,
    `MissedDoseCare.restart`), replaced_by:<drug>, maintenance (back to the
    maintenance drug after an induction course), restart (the next maintenance drug after the condition's last
    control drug stopped or its course ended, `Condition.restart`), illness:<key> (a course for an intercurrent
    illness),
    blood_count_normal / blood_count_low (held for a red flag's same-day count: given back, or stopped),
    raise_held (kept at its dose: a result a caution watches is past `no_increase_above`), nothing_to_augment
    (an augmenting drug stopped with nothing left of the step it adds to), top_dose (kept at the review after an
    admission: no higher rung is allowed), no_next_step (kept at its top dose with its marker short of goal at its
    response check and no next step open: `next_step_for`)."""
    indication: str | None = None
    """What it treats, on record before it starts: condition:<key>, complication:<key>, lab:<key>,
    history:<key>, misdiagnosis:<icd11>, with:<drug> (given alongside another drug), illness:<key>."""
    step: str | None = None
    """Care-step key it belongs to."""
    course_days: int | None = None
    """For a course: its length in days (the drug ends after it)."""
    release: Literal["immediate", "extended"] = "immediate"
    """Formulation given (extended release where the patient needs once-daily dosing, say)."""


class AvoidedFact(_Record):
    """The doctor explains that the usual drug is not given, and why."""

    type: Literal["avoided"] = "avoided"
    drug: str
    """The drug standard care would have given."""
    traps: list[TrapCategory]
    """Every trap fact that rules it out (empty when only patient rules do)."""
    rules: list[str]
    """Every rule that rules it out (`allergy:<group>`, `interaction:<drug>+<ref>`, `rule:<patient rule>` ...)."""
    instead: str
    """The drug given instead."""


class CautionFact(_Record):
    """The doctor gives a drug and says what to watch because of a caution (not a bar)."""

    type: Literal["caution"] = "caution"
    drug: str
    """The drug given."""
    rule: str
    """The caution (`interaction:<drug>+<ref>`, `rule:<patient rule>`, `diet:<habit>`, `contraindication:<key>`)."""
    trap: TrapCategory | None = None
    """The trap fact it comes from, if one."""


class SettingFact(_Record):
    """Where an acute problem is managed."""

    type: Literal["setting"] = "setting"
    setting: Literal["outpatient", "emergency", "admission"]
    """Level of care."""
    reason: str
    """What it is for (complication:<key>)."""


class AllergyFact(_Record):
    """An allergy the patient discloses."""

    type: Literal["allergy"] = "allergy"
    group: str
    """Allergy-group key."""
    agent: Text
    """What they reacted to."""
    reaction: Text
    """How they reacted."""
    corrected_from: Text | None = None
    """When the patient corrects an earlier account: the reaction they described before."""


class HistoryFact(_Record):
    """A past or coexisting disease."""

    type: Literal["history"] = "history"
    history: str
    """History-condition key."""


class PreferenceFact(_Record):
    """A dose-form or administration constraint."""

    type: Literal["preference"] = "preference"
    preference: str
    """Medication-preference key."""


class DietFact(_Record):
    """An eating or drinking habit."""

    type: Literal["diet"] = "diet"
    habit: str
    """Diet-habit key."""


class EconomicFact(_Record):
    """A money or insurance limit."""

    type: Literal["economic"] = "economic"
    profile: str
    """Economic-profile key."""
    monthly_budget_usd: int
    """Most the patient can pay for medicines a month (USD)."""


class AdverseFact(_Record):
    """An adverse effect attributed to a drug."""

    type: Literal["adverse"] = "adverse"
    drug: str
    """Drug key."""
    effect: str
    """Adverse-effect key of that drug."""


class ComplicationFact(_Record):
    """A complication of the disease."""

    type: Literal["complication"] = "complication"
    complication: str
    """Complication key of the condition."""
    finding: Text | None = None
    """What the examination or imaging showed, filled with this visit's values (for a complication the knowledge
    base gives a finding; None otherwise)."""


class AdviceFact(_Record):
    """Lifestyle advice given."""

    type: Literal["advice"] = "advice"
    advice: str
    """Advice key."""


class StressorFact(_Record):
    """A psychological or social strain the patient reports."""

    type: Literal["stressor"] = "stressor"
    stressor: str
    """Stressor key of the condition."""


class AdherenceFact(_Record):
    """Doses the patient missed."""

    type: Literal["adherence"] = "adherence"
    drug: str
    """Drug key."""
    missed_days: int
    """Days of missed doses."""


class RefillFact(_Record):
    """The patient asks for more of a drug they take (they have nearly run out): the visit answers it with a repeat
    prescription (a `MedicationFact` of the drug, reason `repeat`, or the change made to it that visit)."""

    type: Literal["refill"] = "refill"
    drug: str
    """Drug key."""


Fact = Annotated[
    SymptomFact
    | LabFact
    | DiagnosisFact
    | TestFact
    | MedicationFact
    | AvoidedFact
    | CautionFact
    | SettingFact
    | AllergyFact
    | HistoryFact
    | PreferenceFact
    | DietFact
    | EconomicFact
    | AdverseFact
    | ComplicationFact
    | AdviceFact
    | StressorFact
    | AdherenceFact
    | RefillFact,
    Field(discriminator="type"),
]


# --- persona -------------------------------------------------------------------------------------


class Forbidden(_Record):
    """A drug standard care would give this patient that a trap fact rules out."""

    drug: str
    """Drug key."""
    step: str
    """Care step it is a candidate of (what it would have been given for)."""
    rule: str
    """The rule that forbids it (`allergy:<group>`, `interaction:<drug>+<ref>`, `contraindication:<history>`,
    `preference:<key>`, `diet:<habit>`, `budget:<usd>`)."""


class Trap(_Record):
    """A trap fact: disclosed early, in real conflict with standard care of this patient's disease."""

    category: TrapCategory
    """Which of the six kinds."""
    option: str
    """Knowledge-base key of the chosen option (allergy group, drug, history, preference, habit, profile)."""
    fact: Fact
    """The fact as disclosed."""
    forbidden: list[Forbidden]
    """Care-path drugs it rules out that the guideline would otherwise give (in order of preference)."""
    undermined_advice: list[str] = Field(default_factory=list)
    """Advice of the condition the habit works against (diet traps)."""
    indication: str | None = None
    """For a long-term drug: the history-condition key it is taken for."""

    @property
    def forbidden_drugs(self) -> list[str]:
        """The keys of the drugs it rules out, in order."""
        return [f.drug for f in self.forbidden]


class RelativeDrug(_Record):
    """A drug a relative takes."""

    drug: str
    """Drug key."""
    dose: float
    """Dose."""
    unit: str
    """Unit."""
    frequency: str
    """Frequency."""
    indication: str
    """The relative's condition or history key it is taken for."""


class Relative(_Record):
    """A family member the patient consults for (the confusers of family noise)."""

    relation: str
    """Relative-template key."""
    name: Text
    """First name."""
    sex: Literal["female", "male"]
    """Sex."""
    age: int
    """Age in 2024."""
    conditions: list[str]
    """Condition or history-condition keys."""
    drugs: list[RelativeDrug]
    """Their own conditions' standard drugs."""
    allergies: list[AllergyFact]
    """Their allergies."""
    labs: list[LabFact]
    """Their lab values (the patient's lab names, other values)."""


class Household(_Record):
    """Who the patient lives with and who does the cooking: drawn once per persona (`simulate/household.py`), and
    every rendering of home life reads it."""

    members: list[str] = Field(default_factory=list)
    """Relations (`relatives.yaml`) of the family who share the patient's home; empty: the patient lives alone."""
    cook: str | None = None
    """The member who does most of the cooking; None: the patient cooks."""
    adherence_aid: str | None = None
    """How the patient keeps to their medicines (`knowledge.models.AdherenceAid`), the same all year; None in records
    made before it was kept."""
    adherence_helper: str | None = None
    """The member who sorts the tablets or reminds, where the aid is `household_member`."""


class Persona(_Record):
    """One patient."""

    persona_id: str
    """Stable identifier ("P0001")."""
    condition: str
    """Condition key."""
    icd11: str
    """ICD-11 code of the condition."""
    name: Text
    """Full name."""
    sex: Literal["female", "male"]
    """Sex."""
    age: int
    """Age on 2024-01-01."""
    occupation: Text
    """Occupation."""
    lifestyle: Text
    """Lifestyle in a phrase."""
    occupation_key: str | None = None
    """Key of the occupation in people.yaml (its ages and traits); None in records made before it was kept."""
    lifestyle_key: str | None = None
    """Key of the lifestyle in people.yaml."""
    height_cm: float | None = None
    """Height, fixed for the year: every BMI on record is the weight beside it over its square."""
    smoker: bool | None = None
    """Smokes now (the lifestyle says so); stopping-smoking advice is given only then."""
    traps: list[Trap]
    """The six trap facts."""
    family: list[Relative]
    """Two to four relatives."""
    household: Household | None = None
    """Who lives with the patient, who cooks and who helps with the tablets; None in records made before it was
    kept."""
    meals: str | None = None
    """How the patient eats day to day (diet.yaml `meals`): a diet habit's own, else drawn; None in records made
    before it was kept."""

    @property
    def histories(self) -> list[str]:
        """History-condition keys the patient has: the disease-history trap and what the long-term drug is for."""
        out = [t.option for t in self.traps if t.category == "disease_history"]
        out += [t.indication for t in self.traps if t.indication and t.indication not in out]
        return out


class Event(_Record):
    """One regular encounter of the care year; each becomes one session."""

    event_id: str
    """Globally unique ("P0001-E017")."""
    index: int
    """1-based position in the year."""
    date: str
    """ISO date."""
    phase: int = Field(ge=1, le=5)
    """Phase of the year."""
    kind: EventKind
    """What happened."""
    facts: list[Fact] = Field(min_length=1)
    """What the encounter establishes."""
    triggered_by: list[str] = Field(default_factory=list)
    """Earlier event ids that caused it."""


class CareYear(_Record):
    """A patient's simulated year: the persona and the dated causal event graph."""

    schema_version: int = 2
    """Version of this record's shape."""
    seed: int
    """Global seed it was made with."""
    persona: Persona
    """The patient."""
    events: list[Event]
    """Encounters in date order."""
