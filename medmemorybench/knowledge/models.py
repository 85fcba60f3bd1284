"""Typed models of the clinical knowledge base, one per YAML record kind.

Every model forbids unknown keys: the knowledge base is hand-written data and a typo must fail loudly.
Cross-references (drug -> class, condition -> lab ...) are checked by `knowledge.validate`.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

Frequency = Literal[
    "once_daily",
    "twice_daily",
    "three_times_daily",
    "four_times_daily",
    "at_bedtime",
    "weekly",
    "every_2_weeks",
    "every_4_weeks",
    "every_8_weeks",
    "every_6_months",
    "yearly",
    "as_needed",
    "nightly_device",
]
"""Closed vocabulary of dosing frequencies; `DOSES_PER_DAY` gives the daily administrations of each."""

DOSES_PER_DAY: dict[str, float] = {
    "once_daily": 1,
    "twice_daily": 2,
    "three_times_daily": 3,
    "four_times_daily": 4,
    "at_bedtime": 1,
    "weekly": 1 / 7,
    "every_2_weeks": 1 / 14,
    "every_4_weeks": 1 / 28,
    "every_8_weeks": 1 / 56,
    "every_6_months": 1 / 182,
    "yearly": 1 / 365,
    "as_needed": 1,
    "nightly_device": 1,
}

FormKind = Literal[
    "tablet",
    "capsule",
    "liquid",
    "injection",
    "infusion",
    "patch",
    "inhaler",
    "nebulizer",
    "nasal_spray",
    "cream",
    "gel",
    "drops",
    "suppository",
    "granules",
    "device",
]

KNOWN_UNITS: frozenset[str] = frozenset(
    {
        # dose units
        "mg", "mcg", "g", "units", "mL", "mg/24h", "mcg/h", "cmH2O", "MBq", "application", "puff",
        # lab and vital units
        "%", "mmol/L", "mmol/mol", "mg/dL", "g/dL", "g/L", "mg/L", "ng/mL", "pg/mL", "pmol/L", "nmol/L",
        "µmol/L", "µg/L", "U/L", "IU/L", "mIU/L", "IU/mL", "mL/min/1.73m²", "mg/g", "mg/mmol",
        "×10⁹/L", "×10¹²/L", "mm/h", "mmHg", "bpm", "kg", "kg/m²", "cm", "°C", "breaths/min", "L",
        "% predicted", "events/h", "points", "T-score", "g/cm²", "ratio", "seconds", "score", "U/mL",
        "dB/m", "kPa", "µg/g", "mIU/mL", "mU/L",
    }
)
"""Units the knowledge base may use; anything else is a typo until added here on purpose."""


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Text(_Record):
    """A phrase in every language the benchmark renders."""

    en: str = Field(min_length=1)
    """English."""
    zh: str = Field(min_length=1)
    """Simplified Chinese."""


class Code(_Record):
    """A code in a terminology (ICD-11, LOINC, ATC)."""

    system: Literal["ICD-11", "LOINC", "ATC", "SNOMED", "RxNorm"]
    """The code system."""
    code: str = Field(min_length=1)
    """The code itself."""
    display: str = Field(min_length=1)
    """The system's display name."""


# --- catalogue: labs, drug classes, drugs ---------------------------------------------------------


class Lab(_Record):
    """A lab test or vital sign that can be measured and remembered."""

    key: str
    """Identifier used by conditions and relatives."""
    kind: Literal["lab", "vital", "score", "imaging"]
    """What sort of measurement this is."""
    name: Text
    """Clinical name."""
    lay: Text
    """How a patient says it."""
    loinc: str | None = None
    """LOINC code where one exists (NNNNN-N)."""
    unit: str
    """Unit every value is given in."""
    reference: tuple[float, float]
    """Normal range (low, high) for an adult."""
    plausible: tuple[float, float]
    """Range outside which a value is physiologically implausible; simulated values are clamped here."""
    decimals: int = Field(ge=0, le=3)
    """Decimals a value is reported with."""
    source: str
    """Where the reference range comes from."""


class DrugClass(_Record):
    """A pharmacological class; allergies, interactions and contraindications may name whole classes."""

    key: str
    """Identifier."""
    name: Text
    """Class name."""
    atc_prefix: str | None = None
    """ATC code prefix of the class, where one exists."""


class DoseForm(_Record):
    """One way a drug is supplied."""

    form: FormKind
    """Dose form."""
    strength: float | None = Field(default=None, gt=0)
    """Strength of one unit in the drug's dose unit, where meaningful."""
    size: Literal["small", "large"] | None = None
    """Physical size of a tablet or capsule (large = hard to swallow)."""


class DoseSpec(_Record):
    """Standard dosing: where treatment starts, how it is titrated, and its ceiling."""

    unit: str
    """Dose unit."""
    start: float = Field(gt=0)
    """Usual starting dose."""
    step: float = Field(ge=0)
    """Usual titration step (0: not titrated)."""
    max: float = Field(gt=0)
    """Maximum dose."""
    frequency: Frequency
    """Usual frequency."""
    source: str
    """Guideline or label the numbers come from."""

    @model_validator(mode="after")
    def _ordered(self) -> DoseSpec:
        if self.start > self.max:
            raise ValueError(f"start dose {self.start} exceeds max {self.max}")
        return self


class AdverseEffect(_Record):
    """A known adverse effect a simulated patient may develop on the drug."""

    key: str
    """Identifier."""
    name: Text
    """Clinical name."""
    lay: Text
    """How a patient describes it."""
    lab: str | None = None
    """Lab that shows it, if any (a lab key)."""
    lab_delta: float | None = None
    """How much that lab moves when the effect occurs (signed, lab units)."""


class Drug(_Record):
    """A drug (or device therapy) the care plan may prescribe."""

    key: str
    """Identifier (snake_case generic name)."""
    name: Text
    """Generic name."""
    atc: str | None = None
    """ATC code (None only for devices)."""
    drug_class: str
    """A drug-class key."""
    forms: list[DoseForm] = Field(min_length=1)
    """Available dose forms."""
    dose: DoseSpec
    """Standard dosing."""
    monthly_cost_usd: float = Field(ge=0)
    """Typical monthly out-of-pocket cost without insurance (USD)."""
    chronic_use: bool = False
    """Whether people commonly take it long-term (eligible as a medication-history trap)."""
    adverse_effects: list[AdverseEffect] = Field(default_factory=list)
    """Adverse effects the simulator may give a patient on this drug."""
    source: str
    """Label or guideline the facts come from."""


# --- safety rules -------------------------------------------------------------------------------


class AllergyGroup(_Record):
    """Agents a patient may be allergic to, and every drug that cross-reacts with them."""

    key: str
    """Identifier."""
    name: Text
    """Name of the allergy ("sulfonamide allergy")."""
    agents: list[Text] = Field(min_length=1)
    """What the patient reacted to, as they would name it."""
    reactions: list[Text] = Field(min_length=1)
    """Reactions the patient may report."""
    classes: list[str] = Field(default_factory=list)
    """Drug classes that are unsafe with this allergy (cross-reactivity included)."""
    drugs: list[str] = Field(default_factory=list)
    """Individual drugs that are unsafe with this allergy."""
    source: str
    """Where the cross-reactivity comes from."""


class HistoryCondition(_Record):
    """A past or coexisting disease that may contraindicate drugs."""

    key: str
    """Identifier."""
    name: Text
    """Clinical name."""
    lay: Text
    """How a patient says it."""
    icd11: str
    """ICD-11 code."""


class Contraindication(_Record):
    """Drug–disease contraindication: with this history, these drugs are not given."""

    history: str
    """A history-condition key."""
    classes: list[str] = Field(default_factory=list)
    """Forbidden drug classes."""
    drugs: list[str] = Field(default_factory=list)
    """Forbidden drugs."""
    reason: Text
    """Why."""
    source: str
    """Guideline or label."""


class Interaction(_Record):
    """A major drug–drug interaction between anything in `a` and anything in `b` (drug or class keys)."""

    a: list[str] = Field(min_length=1)
    """Drug or class keys on one side."""
    b: list[str] = Field(min_length=1)
    """Drug or class keys on the other side."""
    severity: Literal["major", "moderate"]
    """Severity."""
    effect: Text
    """What happens."""
    source: str
    """Reference."""


class Advice(_Record):
    """A piece of lifestyle or diet advice a doctor gives."""

    key: str
    """Identifier."""
    text: Text
    """The advice."""


class DietHabit(_Record):
    """An eating or drinking habit that conflicts with drugs or with advice."""

    key: str
    """Identifier."""
    text: Text
    """How the patient describes the habit."""
    conflicts_with: list[str] = Field(default_factory=list)
    """Drug or class keys the habit makes unsafe or ineffective."""
    undermines_advice: list[str] = Field(default_factory=list)
    """Advice keys the habit works against."""
    reason: Text
    """Why it conflicts."""
    source: str
    """Reference."""


class MedicationPreference(_Record):
    """A dose-form or administration constraint the patient has."""

    key: str
    """Identifier."""
    text: Text
    """How the patient describes it."""
    excludes_forms: list[FormKind] = Field(default_factory=list)
    """Dose forms the patient cannot use."""
    excludes_sizes: list[Literal["small", "large"]] = Field(default_factory=list)
    """Tablet/capsule sizes the patient cannot swallow."""
    max_doses_per_day: float | None = None
    """Most administrations a day the patient can manage."""


class EconomicProfile(_Record):
    """An insurance/income situation that caps what the patient can pay for drugs each month."""

    key: str
    """Identifier."""
    text: Text
    """Description; `{budget}` is replaced by the monthly budget in USD."""
    monthly_budget_usd: tuple[int, int]
    """Range the patient's monthly drug budget is drawn from (USD)."""
    source: str
    """Where the figures come from."""


# --- conditions ---------------------------------------------------------------------------------


class Symptom(_Record):
    """A presenting symptom."""

    key: str
    """Identifier."""
    name: Text
    """Clinical term."""
    lay: Text
    """Patient's words."""


class Misdiagnosis(_Record):
    """A plausible wrong diagnosis made in phase 1."""

    name: Text
    """What the patient was first told they had."""
    icd11: str
    """ICD-11 code of the wrong diagnosis."""
    drug: str | None = None
    """Drug given for it, if any (a drug key)."""


class DiagnosticTest(_Record):
    """A test that establishes the diagnosis."""

    key: str
    """Identifier."""
    name: Text
    """Name of the test."""
    loinc: str | None = None
    """LOINC code where one exists."""
    finding: Text
    """What it shows in this disease."""


class Monitored(_Record):
    """A lab or vital the disease moves, and where treatment brings it."""

    lab: str
    """A lab key."""
    onset: tuple[float, float]
    """Range of the first (pre-diagnosis) value."""
    untreated: tuple[float, float]
    """Range at diagnosis, untreated."""
    treated: tuple[float, float]
    """Range treatment brings it to."""
    source: str
    """Where the figures come from."""


class CareStep(_Record):
    """A step of the care path: the guideline's candidates in order of preference."""

    key: str
    """Identifier (unique within the condition)."""
    role: Literal["first_line", "step_up", "add_on", "symptomatic"]
    """Where in the path it sits."""
    phase: int = Field(ge=2, le=5)
    """Phase it is started in."""
    candidates: list[str] = Field(min_length=2)
    """Drug keys, most preferred first; the care plan takes the first this patient may have."""


class Complication(_Record):
    """A complication of the disease and how it is treated."""

    key: str
    """Identifier."""
    name: Text
    """Clinical name."""
    lay: Text
    """Patient's words."""
    icd11: str
    """ICD-11 code."""
    lab: str
    """Monitored lab (key) that shows it."""
    lab_delta: float
    """Signed change of that lab when it appears."""
    treatment: str
    """Care-step key that treats it."""


class Stressor(_Record):
    """A psychological or social strain of phase 4."""

    key: str
    """Identifier."""
    text: Text
    """How the patient describes it."""


class DiseaseGroup(_Record):
    """One of the ten disease groups of the roster (two subtypes each)."""

    key: Literal[
        "diabetes", "cardiovascular", "respiratory", "neurological", "renal",
        "rheumatic_autoimmune", "digestive", "mental_health", "musculoskeletal", "endocrine",
    ]
    """Group identifier."""
    name: Text
    """Group name."""


class Condition(_Record):
    """A chronic disease subtype: a persona's care year is built from this."""

    key: str
    """Identifier (the file name without .yaml)."""
    roster: int = Field(ge=1)
    """Position in the default roster of 20."""
    group: DiseaseGroup
    """The disease group it belongs to."""
    icd11: Code
    """ICD-11 code of the subtype."""
    name: Text
    """Clinical name."""
    lay: Text
    """Patient's name for it."""
    sex: Literal["any", "female", "male"] = "any"
    """Who gets it."""
    age: tuple[int, int]
    """Age range of a patient."""
    symptoms: list[Symptom] = Field(min_length=3)
    """Presenting symptoms."""
    misdiagnoses: list[Misdiagnosis] = Field(min_length=1)
    """Plausible wrong diagnoses for phase 1."""
    diagnostic_tests: list[DiagnosticTest] = Field(min_length=1)
    """Tests that establish it."""
    monitored: list[Monitored] = Field(min_length=4)
    """Labs and vitals followed through the year."""
    care_path: list[CareStep] = Field(min_length=2)
    """Treatment steps."""
    complications: list[Complication] = Field(min_length=1)
    """Complications."""
    lifestyle_advice: list[str] = Field(min_length=2)
    """Advice keys."""
    stressors: list[Stressor] = Field(min_length=2)
    """Psychological/social strains."""
    source: str
    """Guideline(s) the condition follows."""

    @field_validator("care_path")
    @classmethod
    def _has_first_line(cls, steps: list[CareStep]) -> list[CareStep]:
        roles = [s.role for s in steps]
        if "first_line" not in roles:
            raise ValueError("care_path needs a step with role first_line")
        if "step_up" not in roles:
            raise ValueError("care_path needs a step with role step_up")
        return steps


# --- noise --------------------------------------------------------------------------------------


class Subtopic(_Record):
    """A health-consultation sub-topic: what an anonymous asker wants to know and the doctor's points."""

    key: str
    """Identifier."""
    questions: list[Text] = Field(min_length=2)
    """Ways the question is asked."""
    points: list[Text] = Field(min_length=2)
    """What the doctor explains."""


class Topic(_Record):
    """A health-knowledge topic for noise consultations."""

    key: str
    """Identifier."""
    name: Text
    """Topic name."""
    subtopics: list[Subtopic] = Field(min_length=2)
    """Its sub-topics."""


class RelativeTemplate(_Record):
    """A kind of relative a patient may consult for."""

    relation: str
    """Identifier (mother, father, ...)."""
    text: Text
    """How the patient refers to them ("my mother")."""
    sex: Literal["female", "male"]
    """Sex."""
    age_offset: tuple[int, int]
    """Their age minus the patient's (range)."""
    typical_conditions: list[str] = Field(min_length=1)
    """Condition or history-condition keys such a relative typically has."""


class NamesByLanguage(_Record):
    """Names to draw from, per language."""

    en: list[str] = Field(min_length=5)
    """English names."""
    zh: list[str] = Field(min_length=5)
    """Chinese names."""


class People(_Record):
    """What the persona generator draws names, jobs and habits from (people.yaml)."""

    given_names: dict[Literal["female", "male"], NamesByLanguage]
    """Given names by sex."""
    surnames: NamesByLanguage
    """Family names."""
    occupations: list[Text] = Field(min_length=5)
    """Occupations."""
    lifestyles: list[Text] = Field(min_length=5)
    """Lifestyles in a phrase."""
