"""Typed models of the clinical knowledge base, one per YAML record kind.

Every model forbids unknown keys: the knowledge base is hand-written data and a typo must fail loudly.
Cross-references (drug -> class, condition -> lab ...) are checked by `knowledge.validate`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

if TYPE_CHECKING:  # (base.py imports this module)
    from medmemorybench.knowledge.base import KnowledgeBase

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
    "once",
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
    "once": 0,
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
    "pressurised_inhaler",
    "dry_powder_inhaler",
    "soft_mist_inhaler",
    "nebulizer",
    "nasal_spray",
    "cream",
    "gel",
    "drops",
    "suppository",
    "granules",
    "device",
]

Toxicity = Literal[
    "hepatotoxic",
    "nephrotoxic",
    "myelotoxic",
    "qt_prolonging",
    "hyperkalaemic",
    "hypoglycaemic",
    "bleeding",
    "serotonergic",
    "anticholinergic",
    "sedating",
    "bradycardic",
    "hypotensive",
    "fluid_retaining",
    "gi_ulcerogenic",
    "immunosuppressive",
    "teratogenic",
    "psychotomimetic",
    "angioedema",
]
"""Closed vocabulary of harms a drug can do; an adverse effect of one kind makes every drug of that kind avoided
from then on (a patient whose methotrexate raised their liver enzymes is not switched to leflunomide)."""

OccupationTrait = Literal[
    "working", "retired", "shift_work", "desk", "outdoor", "rural", "drives_all_day", "operates_machinery",
    "remote_site", "app_delivery", "employee", "manual", "clinical",
]
"""What an occupation implies about a patient's days: in work or retired (exactly one), shifts, a desk, outdoor or
rural work, and what some trap texts say of the job (driving all day, driving or operating machinery, a remote
site, a delivery app); `employee`: someone else's staff (a boss to answer to: not a farmer, a restaurant owner, a
self-employed hairdresser or an app courier); `manual`: work with the hands in a trade or a workshop; `clinical`:
hands-on care of patients (a nurse handles needles all day)."""

AdherenceAid = Literal["blister_pack", "pill_box", "phone_alarm", "calendar", "routine", "household_member"]
"""How a patient keeps to their medicines (people.yaml `adherence`): the pharmacy's once-a-day blister pack, a pill
box they fill, an alarm on their phone, ticking a calendar, a place in the daily routine (by the kettle), or a member
of the household who sorts or reminds."""


Regimen = Literal["chronic", "course", "one_off"]
"""How a drug is given: taken until stopped, for a fixed course (antibiotics, steroid bursts), or administered once
(radioiodine, a joint injection)."""

KNOWN_UNITS: frozenset[str] = frozenset(
    {
        # dose units
        "mg", "mcg", "g", "units", "mL", "mg/24h", "mcg/h", "cmH2O", "MBq", "application", "puff",
        # lab and vital units
        "%", "mmol/L", "mmol/mol", "mg/dL", "g/dL", "g/L", "mg/L", "ng/mL", "pg/mL", "pmol/L", "nmol/L",
        "µmol/L", "µg/L", "U/L", "IU/L", "mIU/L", "IU/mL", "mL/min/1.73m²", "mg/g", "mg/mmol",
        "×10⁹/L", "×10¹²/L", "mm/h", "mmHg", "bpm", "kg", "kg/m²", "cm", "°C", "breaths/min", "L",
        "% predicted", "events/h", "points", "SD", "g/cm²", "ratio", "seconds", "score", "U/mL",
        "dB/m", "kPa", "µg/g", "mIU/mL", "mU/L", "ms",
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


class ToldText(Text):
    """A phrase a patient tells of their past (an allergy's agent or reaction), marked where it says a needle was
    used: a patient who faints at needles tells it only as `phobic` says (the trap is never contradicted)."""

    by_needle: bool = False
    """The phrase says the patient had an injection, a shot or a drip ("Remicade (infliximab) infusions")."""
    phobic: Text | None = None
    """How a patient who faints at needles tells it: how they got through it ("given lying down"); None: they do
    not."""

    def plain(self) -> Text:
        """The phrase as a record states it."""
        return Text(en=self.en, zh=self.zh)

    def told(self, needle_phobic: bool) -> Text | None:
        """The words of this patient (None: not theirs to tell)."""
        if needle_phobic and self.by_needle:
            return self.phobic
        return self.plain()


class Code(_Record):
    """A code in a terminology (ICD-11, LOINC, ATC)."""

    system: Literal["ICD-11", "LOINC", "ATC", "SNOMED", "RxNorm"]
    """The code system."""
    code: str = Field(min_length=1)
    """The code itself."""
    display: str = Field(min_length=1)
    """The system's display name."""


# --- catalogue: labs, drug classes, drugs ---------------------------------------------------------


NOISE_TRUNCATION = 2.0
"""A measurement's noise is cut at this many standard deviations (its `cv`), so that changes stay bounded."""


class Kinetics(_Record):
    """How fast a lab can change and how often it is measured: what keeps simulated values physiological."""

    response_days: float = Field(gt=0)
    """Days after a change in what drives it (a drug, a dose, a flare, missed doses) before the value reliably
    shows the change: the guideline's recheck interval (HbA1c ~90, free T4 ~35, blood pressure ~14, CRP ~3).
    Simulated values approach a new level with a time constant of `response_days / 2`."""
    min_interval_days: int = Field(ge=1)
    """Shortest interval between two measurements in real care (1: can be taken at any visit)."""
    cv: float = Field(ge=0, le=0.5)
    """Coefficient of variation of a single measurement (within-person biological plus analytical), a fraction."""
    source: str
    """Where the figures come from."""

    @property
    def spread(self) -> float:
        """The largest share of its true value a single measurement's noise can move a result by."""
        return NOISE_TRUNCATION * self.cv


class ToTarget(_Record):
    """A lab treated to a target: a drug judged by it is stepped up while it stays above the goal (blood pressure)."""

    readings: int = Field(ge=1)
    """Consecutive readings above the goal, each showing the present dose (the lab's response time after the drug's
    last change), that call for the next step."""
    within_days: int = Field(ge=1)
    """Days from the last of them by which the next step is taken (the next review)."""
    source: str
    """Where the rule comes from."""


class PartOf(_Record):
    """A lab that is one part of another's total (the neutrophils of the white cell count, LDL of total cholesterol):
    in one sample it never exceeds its share of the total, and the parts of a total never add up to more than it."""

    total: str
    """Lab key of the total (same unit)."""
    share: tuple[float, float]
    """Its usual share of the total in health (low, high): a value nothing drives is drawn at a share in it of the
    total's."""
    max_share: float = Field(gt=0, le=1)
    """The largest share of the total it can be in one sample."""
    source: str
    """Where the shares come from."""


class LabGoal(_Record):
    """A level a condition sets for a lab: once the condition is on record, a result is judged against it rather than
    against the reference range of people without it (an HbA1c of 7.6 % in diabetes is above the 7.0 % aimed for,
    not "above normal"; the seed-53 read)."""

    conditions: list[str] = Field(min_length=1)
    """Condition or history-condition keys that set it (the first goal of the lab that one of them names applies)."""
    below: float
    """The level treatment keeps the lab at or under."""
    source: str
    """The guideline that sets it."""


class PopulationBand(_Record):
    """A share of people whose inherited value of a lab lies in a band (TPMT: intermediate activity, about 1 in 10)."""

    range: tuple[float, float]
    """Values drawn in it."""
    share: float = Field(gt=0, le=1)
    """Share of people in it."""


class Lab(_Record):
    """A lab test or vital sign that can be measured and remembered."""

    key: str
    """Identifier used by conditions and relatives."""
    kind: Literal["lab", "vital", "score", "imaging"]
    """What sort of measurement this is."""
    specimen: Literal["blood", "urine", "stool", "breath", "sleep_study", "ecg"] = "blood"
    """What a `lab` is measured on (a consultation speaks of "the blood test", "the urine sample", "the breathing
    test"); ignored for the other kinds."""
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
    kinetics: Kinetics | None = None
    """Response time, measuring interval and noise (required; `None` only while the base is being filled)."""
    routine: bool = False
    """Taken at any visit of any patient (blood pressure, heart rate, weight)."""
    to_target: ToTarget | None = None
    """Treated to a target by stepping up the drug judged by it (`ToTarget`); None: its drugs follow their own
    response checks only."""
    harm_below: float | None = None
    """The level a drug harm that lowers this lab takes it below, to be called one (leukopenia: WBC < 3.5);
    None: the effect's own `lab_delta` is the whole change."""
    harm_above: float | None = None
    """The level a drug harm that raises this lab takes it above (hyperkalaemia: potassium > 5.5)."""
    harm_care: HarmCare | None = None
    """What a value past a harm level calls for (`HarmCare`, `is_past_harm`: sodium below 130, its symptoms asked and
    the sodium repeated until back in range); None: the drug's own adverse-effect handling is all."""
    positive_at: float | None = None
    """(A screening questionnaire.) A score at or above this is a positive screen (PHQ-9 >= 10: a likely depressive
    episode); one below it shows no condition the questionnaire screens for."""
    part_of: PartOf | None = None
    """The total it is a part of (`PartOf`): coupled to it sample by sample."""
    without_drug: float | None = None
    """(A drug level.) Its value with none of the drug taken (lithium: below the assay's floor): where it drifts back
    to while doses are missed; None: a value drawn in the reference range."""
    grades: Grading | None = None
    """The words a finding uses for a value's grade (`{grade:<lab>}`: "severe", "moderately increased
    albuminuria (A2)"), where the lab has a graded reading."""
    goals: list[LabGoal] = Field(default_factory=list)
    """Levels conditions set for it, the most lenient first where one patient could have two (a past severe
    hypoglycaemia's HbA1c under 8.0 % before diabetes' 7.0 %)."""
    judged: bool = True
    """False: no reference range a value is judged against (body weight, whose meaning is the BMI it gives and its
    change; WHO); `reference` then only bounds the simulation."""
    decline: LabDecline | None = None
    """(A score.) The fall from the patient's highest value on record that is acted on at once (`LabDecline`)."""
    day_to_day: DayToDay | None = None
    """(Body weight.) How far a reading taken within a few days of the one before can stray from it beyond what the
    body truly did: a reading's noise is not independent of yesterday's."""
    population: list[PopulationBand] = Field(default_factory=list)
    """(An inherited level.) The bands a patient's own value is drawn from, by their shares (summing to 1); empty:
    drawn inside the reference range."""
    known_from: list[str] = Field(default_factory=list)
    """History-condition keys whose patients' result is known without the test (HBsAg in a hepatitis B carrier):
    a screen before a drug (`StartChecks.once`) does not take it for them."""
    source: str
    """Where the reference range comes from."""

    def goal_for(self, conditions: set[str]) -> float | None:
        """The level the first goal any of `conditions` sets (None: judged against the reference range)."""
        return next((goal.below for goal in self.goals if conditions & set(goal.conditions)), None)

    def is_past_harm(self, value: float) -> bool:
        """Whether a value is past a harm level that lies beyond the reference range (sodium below 130, not 135;
        potassium above 5.5, not 5.0): a harm level at the range's own limit (TSH 4.0) makes a value no more than
        high or low."""
        low, high = self.reference
        return (self.harm_below is not None and self.harm_below < low and value < self.harm_below) or (
            self.harm_above is not None and self.harm_above > high and value > self.harm_above)


class LabDecline(_Record):
    """A fall of a score that is a finding in itself (a MoCA 3 points down in Parkinson's disease): acted on the visit
    it shows, whatever the range the value still sits in, in a patient whose condition does not treat the score
    (`Condition.treats`: in Alzheimer disease the care path answers it)."""

    points: float = Field(gt=0)
    """A value at least this far below the highest one on record is a decline."""
    advice: str
    """Advice key (diet.yaml `advice`) said that visit: what is reviewed and who it is referred to. Said once for a
    decline from a peak; a new, higher peak starts another."""
    source: str
    """Why this fall matters (the guideline or validation study)."""


class DayToDay(_Record):
    """The day-to-day swing of a reading (body weight: food, fluid and clothes) about its true change."""

    days: int = Field(ge=1)
    """Readings at most this many days apart are bound to each other."""
    amount: float = Field(gt=0)
    """The most, in the lab's unit, one such reading moves from the one before beyond the true change."""
    source: str
    """Where the figures come from."""


class Grade(_Record):
    """One band of a graded lab: the values below `below` (and at or above the band before it)."""

    below: float | None = None
    """Upper bound of the band, exclusive; None for the last (open) band."""
    text: Text
    """What a finding says of a value in the band ("moderate", "GOLD 2")."""


class Grading(_Record):
    """The bands of a lab's graded reading, lowest first (each `below` higher than the one before; the last open)."""

    bands: list[Grade] = Field(min_length=2)
    """Bands in increasing order."""
    source: str
    """Where the cut-offs come from."""

    @model_validator(mode="after")
    def _ordered(self) -> Grading:
        bounds = [band.below for band in self.bands]
        if bounds[-1] is not None or any(b is None for b in bounds[:-1]):
            raise ValueError("every band but the last needs 'below'; the last is open")
        if any(a >= b for a, b in zip(bounds[:-2], bounds[1:-1], strict=True)):  # type: ignore[operator]
            raise ValueError(f"band bounds {bounds[:-1]} are not increasing")
        return self

    def text_of(self, value: float) -> Text:
        """The band `value` falls in."""
        return next(band.text for band in self.bands if band.below is None or value < band.below)


class UnitWords(_Record):
    """How a unit is said in each language where it is not said as the knowledge base writes it ("" says a bare
    number: "INR 2.6", "E/e' 14.2")."""

    en: str | None = None
    """English (None: as written)."""
    zh: str | None = None
    """Simplified Chinese (None: as written)."""


class DrawnValue(_Record):
    """A quantity a finding states that no lab of the base follows (an echocardiographic pulmonary pressure, a
    Kellgren-Lawrence grade): one value drawn per patient, seeded, in a range (`{drawn:<name>}` in the finding)."""

    range: tuple[float, float]
    """Low and high (for a woman, unless `female` is given)."""
    female: tuple[float, float] | None = None
    """Low and high for a woman, where the normal limits differ by sex (LV mass index)."""
    decimals: int = Field(default=0, ge=0, le=3)
    """Decimals the value is stated with."""
    offset_from: str | None = None
    """A lab the quantity follows: the value stated is that lab's value measured at the visit plus the drawn offset
    (a daytime ambulatory pressure a few mmHg under the clinic reading), so the two never disagree in kind."""
    source: str
    """Where the range comes from."""


class ScoreCriterion(_Record):
    """One item of a clinical score, worth one point when met. Exactly one kind: a lab past a threshold
    (`lab` with `at_least`/`above`/`at_most`/`below`), any of several criteria (`any`), the patient's age
    (`age_at_least`), a symptom told in this episode (`symptom`), an episode seen within some days of its
    first symptoms (`onset_within_days`), or a sign the finding itself states (`stated`)."""

    lab: str | None = None
    """Lab key measured at the visit."""
    at_least: float | None = None
    above: float | None = None
    at_most: float | None = None
    below: float | None = None
    any: list[ScoreCriterion] = Field(default_factory=list)
    """Met when one of these is."""
    age_at_least: int | None = None
    """Met when the patient is this old or older."""
    symptom: str | None = None
    """Met when the episode's symptoms include this key."""
    onset_within_days: int | None = None
    """Met when the visit is at most this many days after the episode's first symptoms were told."""
    stated: str | None = None
    """A sign the finding states as present (always met: the finding says so), named for the reader."""

    @model_validator(mode="after")
    def _one_kind(self) -> ScoreCriterion:
        kinds = [self.lab is not None, bool(self.any), self.age_at_least is not None, self.symptom is not None,
                 self.onset_within_days is not None, self.stated is not None]
        if sum(kinds) != 1:
            raise ValueError("a criterion is exactly one of lab, any, age_at_least, symptom, onset_within_days, "
                             "stated")
        bounds = [self.at_least, self.above, self.at_most, self.below]
        if (self.lab is not None) != (sum(b is not None for b in bounds) == 1):
            raise ValueError("a lab criterion takes exactly one of at_least, above, at_most, below (and only it)")
        return self

    @property
    def labs(self) -> list[str]:
        """The labs this criterion reads."""
        return ([self.lab] if self.lab else []) + [lab for c in self.any for lab in c.labs]


class Score(_Record):
    """A clinical score a finding states (`{score:<key>}`), computed from the patient at the visit: each criterion
    met adds one point (CRB-65, FeverPAIN)."""

    key: str
    """Identifier."""
    name: Text
    """Its name."""
    criteria: list[ScoreCriterion] = Field(min_length=1)
    """One point each."""
    source: str
    """Where the criteria come from."""

    @property
    def labs(self) -> list[str]:
        """The labs the score reads (measured at the visit it is stated at)."""
        return list(dict.fromkeys(lab for c in self.criteria for lab in c.labs))


class DrugClass(_Record):
    """A pharmacological class; allergies, interactions and contraindications may name whole classes."""

    key: str
    """Identifier."""
    name: Text
    """Class name."""
    atc_prefix: str | None = None
    """ATC code prefix of the class, where one exists."""
    group: str | None = None
    """Therapeutic group: drugs of classes in one group are not taken together (a selective and a non-selective
    beta-blocker; an ACE inhibitor and an ARB). None: the class is its own group."""
    same_job: bool = True
    """Whether its drugs do one job, so that a second beside one taken is a duplicate (amlodipine and nifedipine).
    False for a class that gathers what replaces different things (iron, calcium and potassium are all mineral
    supplements): calcium carbonate does not do ferrous sulfate's job, and no gold may say so."""


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
    titration_days: int | None = Field(default=None, ge=1)
    """Shortest interval between two dose increases (required when `step` > 0)."""
    ladder: list[float] | None = None
    """The doses per administration a prescriber actually uses, ascending, when they are not evenly spaced
    (atorvastatin 10, 20, 40, 80); replaces start + n*step. Its first and last entries are `start` and `max`."""
    target: float | None = None
    """The dose the label has a patient titrated up to on a schedule, as tolerated, whatever the labs show
    (methotrexate 20 mg weekly, donepezil 10 mg after 4-6 weeks); None: titrated on results only."""
    to_effect: bool = False
    """The label titrates it to effect while the symptoms it treats persist (a dopamine agonist: weekly steps to the
    effective range, then on response): every result of its care step's marker short of goal, taken once the last
    dose change can show, books the next step, not only the check booked after a change."""
    source: str
    """Guideline or label the numbers come from."""

    @model_validator(mode="after")
    def _ordered(self) -> DoseSpec:
        if self.start > self.max:
            raise ValueError(f"start dose {self.start} exceeds max {self.max}")
        if self.ladder is not None:
            if self.ladder != sorted(set(self.ladder)) or not self.ladder:
                raise ValueError(f"ladder {self.ladder} must be strictly ascending")
            if self.ladder[0] != self.start or self.ladder[-1] != self.max:
                raise ValueError(f"ladder {self.ladder} must run from start {self.start} to max {self.max}")
        if self.target is not None and self.target not in self.doses():
            raise ValueError(f"target {self.target} is not a dose of the ladder {self.doses()}")
        if self.target is not None and self.titration_days is None:
            raise ValueError("a target dose needs titration_days")
        return self

    def doses(self) -> list[float]:
        """Every dose per administration on the titration ladder, ascending."""
        if self.ladder is not None:
            return list(self.ladder)
        if self.step <= 0:
            return [self.start]
        out, dose = [], self.start
        while dose <= self.max + 1e-9:
            out.append(round(dose, 3))
            dose += self.step
        return out


class DoseForm(_Record):
    """One way a drug is supplied."""

    form: FormKind
    """Dose form."""
    strength: float | None = Field(default=None, gt=0)
    """Strength of one unit in the drug's dose unit, where meaningful."""
    size: Literal["small", "large"] | None = None
    """Physical size of a tablet or capsule (large = hard to swallow)."""
    release: Literal["immediate", "extended"] = "immediate"
    """Immediate or extended (modified) release."""
    dose: DoseSpec | None = None
    """This formulation's own dosing when it differs from the drug's (an extended-release tablet taken once
    a day); None: the drug's `dose`."""
    capped_only: bool = False
    """A reduced regimen for a dose cap (amoxicillin 250-500 mg every 12 hours below creatinine clearance 30): given
    only where a patient rule caps the dose, never as a convenient regimen for normal kidneys."""


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
    onset_days: tuple[int, int] = (7, 90)
    """When after starting the drug the effect usually appears (days)."""
    toxicity: Toxicity | None = None
    """The kind of harm it is; once it has happened (and the drug was stopped for it), every drug with that
    toxicity is avoided."""
    management: Literal["stop", "reduce", "measures"] | None = None
    """What a prescriber does: stop the drug, or lower the dose (stopping only at the lowest dose), or `measures`:
    the non-drug measures of its `advice` first, the dose lowered a rung where it can be, and the drug never stopped
    for it (levodopa's orthostatic hypotension: NICE NG71). None: lower it for a dose-related harm (`DOSE_RELATED`:
    low blood sugar, a slow pulse, low pressure, high potassium, drowsiness), stop it otherwise."""
    advice: str | None = None
    """Advice key (diet.yaml `advice`) given the day it is acted on (sleep attacks: no driving until they stop)."""
    workup: list[str] = Field(default_factory=list)
    """Labs taken the day it is told beside its own `lab` (paracetamol's liver injury: the INR, the clotting the liver
    makes and warfarin's own check; NICE CKS paracetamol poisoning)."""
    warning: Text | None = None
    """The signs a patient is told at the start to report at once, where the label asks for that (sulfasalazine's blood
    dyscrasia: a sore throat, fever, mouth ulcers or unexplained bruising); the start's safety-net names them before
    any other effect. None: not a start warning of its own."""
    idiosyncratic: bool = False
    """An idiosyncratic reaction of this drug (sulfasalazine's blood dyscrasia: the sulfapyridine moiety's, not a
    dose-related marrow suppression): it bars the drug, not every drug that can do the same harm another way."""

    @property
    def bars_kind(self) -> Toxicity | None:
        """The kind of harm every drug of which is avoided once the drug is stopped for it (see `toxicity`)."""
        return None if self.idiosyncratic else self.toxicity

    @property
    def is_dose_related(self) -> bool:
        """Whether a lower dose is the answer (see `management`)."""
        if self.management is not None:
            return self.management in ("reduce", "measures")
        return self.toxicity in DOSE_RELATED

    @property
    def keeps_drug(self) -> bool:
        """Whether the drug goes on at its lowest dose, with the measures, rather than stop (see `management`)."""
        return self.management == "measures"

    @property
    def is_serious(self) -> bool:
        """Whether the drug is stopped for it even when nothing else can take its place (see `SERIOUS_EFFECTS`)."""
        return self.key in SERIOUS_EFFECTS or (self.toxicity is not None and not self.is_dose_related)


DOSE_RELATED: frozenset[str] = frozenset({"hypoglycaemic", "bradycardic", "hypotensive", "hyperkalaemic", "sedating"})
"""Harms that follow the dose: managed by lowering it (ADA 2024 hypoglycaemia, ESC heart-failure titration)."""

SERIOUS_EFFECTS: frozenset[str] = frozenset({
    "akathisia", "anca_vasculitis", "angioedema", "aspirin_bronchospasm", "bronchospasm", "bullous_pemphigoid",
    "c_difficile", "cardiovascular_events", "digoxin_toxicity", "drug_induced_lupus", "hemorrhagic_cystitis",
    "hepatotoxicity", "hit", "hypersensitivity", "hyponatraemia", "hyponatremia", "impulse_control",
    "iodine_thyrotoxicosis", "myopathy", "neuropsychiatric", "neutropenia", "osteonecrosis_jaw",
    "ovarian_hyperstimulation", "pancreatitis", "paradoxical_colitis", "prerenal_aki", "priapism", "pulmonary_toxicity",
    "retinopathy", "seizure", "severe_cutaneous_reaction", "severe_rash", "sleep_attacks", "tendinopathy", "thrombosis",
    "vte",
})
"""Effects (by key) whose labels say to stop the drug whatever else can be given: anaphylactoid, organ, clotting
and neurological harms (the US labels' Warnings and Precautions, "discontinue"). Akathisia on an antipsychotic
augmenting an antidepressant is acted on the visit it is told, never left a week: it is the commonest harm of
adjunctive aripiprazole and brexpiprazole and a restlessness that raises the risk of suicide (Abilify US label 6.1,
Rexulti US label 6.1; BNF antipsychotics, extrapyramidal symptoms: reduce the dose or stop; NICE CG90 1.9.1.5:
agitation and akathisia early in treatment reviewed promptly; the seed-61 read). An effect with a toxicity that is
not dose-related is serious as well."""


class Monitoring(_Record):
    """A lab a drug needs checked while it is taken."""

    lab: str
    """Lab key."""
    every_days: int = Field(ge=1)
    """Interval between checks in the first year of treatment."""
    on_treatment: tuple[float, float] | None = None
    """The range the drug holds the lab in at a steady dose (warfarin: INR 2-3), where it sets it."""
    recheck_days: int | None = Field(default=None, ge=1)
    """Days within which the lab is checked again after anything that moves it: the drug started or its dose
    changed, an interacting drug started, missed doses, an acute illness or an adverse event, or a result outside
    `on_treatment` (warfarin: INR within 3-5 days; lithium: a level after 1 week). None: only every `every_days`."""
    recheck_until_days: int | None = Field(default=None, ge=1)
    """After a start, each recheck taken books the next one `recheck_days` on, while that one falls within this
    many days of the start (azathioprine: the count and liver tests weekly for the first 4 weeks, BNF)."""
    source: str
    """Label or guideline."""


class MissedDoseCare(_Record):
    """What missed doses call for beyond getting back on track, where a disease makes the lapse itself a danger: the
    labs taken the visit it is told and what is said there."""

    drugs: list[str] = Field(default_factory=list)
    """Drug or class keys whose missed doses it is about (a beta-blocker in long QT syndrome); empty: any drug."""
    labs: list[str] = Field(default_factory=list)
    """Lab keys measured that visit (the QTc; the PHQ-9)."""
    advice: str
    """Advice key (diet.yaml `advice`) said that visit."""
    restart: bool = False
    """The drug is restarted that visit at the dose it was taken at, with a repeat prescription so a supply is in
    hand (levodopa, warfarin: running out is itself the danger; NICE NG71, BSH 2011)."""
    recheck: bool = False
    """The missed drug's levels that need rechecks (`Monitoring.recheck_days`) are taken again inside that window
    after the restart, at a visit booked for them where none falls there (lithium: a 12-hour level 5-7 days after
    restarting, NICE CG185 1.10.6; the seed-89 read: the next level 22 days on)."""
    source: str
    """Guideline."""


class FallWorkup(_Record):
    """What a fall of a lab found while a drug is taken calls for that day beyond its own treatment: anaemia on an
    anticoagulant may be a bleed, so the INR (warfarin), the pulse and the blood pressure are taken and the bleeding is
    assessed the day it is found (the seed-89 read: iron deficiency anaemia named on warfarin, haemoglobin 130 -> 113
    g/L in 17 days, answered with oral iron alone)."""

    lab: str
    """Lab key whose fall it answers (haemoglobin)."""
    labs: list[str] = Field(min_length=1)
    """Lab keys measured that day."""
    advice: str
    """Advice key (diet.yaml `advice`) said that day: the bleeding asked about and when to come in at once."""
    source: str
    """Guideline."""


class StartChecks(_Record):
    """What a drug is started on only once it is on record: a test done once before the first dose (TPMT before a
    thiopurine) and a blood count not low (a thiopurine is not started while a count another drug took down has not
    recovered)."""

    once: list[str] = Field(min_length=1)
    """Lab keys measured before the first start (taken that day where none is on record): TPMT, and the screen
    before immunosuppression (hepatitis B and C, chickenpox immunity; BSG 2019, ECCO 2021)."""
    course_days_over: int | None = Field(default=None, ge=1)
    """For a drug also given as a short course: only a course longer than this (or a long-term start) waits for
    the checks (prednisolone: a course over two weeks is immunosuppressive, a five-day burst is not; ECCO 2021)."""
    not_low: list[str] = Field(default_factory=list)
    """Lab keys measured the day it starts (or within their shortest interval before) and at or above their
    `harm_below`: the start waits for a count that can be repeated, and for one that has recovered."""
    source: str
    """Label or guideline."""


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
    releases: list[str] = Field(default_factory=list)
    """Drug keys of the active moieties it is a prodrug of (sulfasalazine is split in the colon into mesalamine,
    5-ASA, and sulfapyridine): every rule, caution and interaction that names a moiety names this drug too
    (`KnowledgeBase.expand`), and it carries the moiety's toxicities."""
    forms: list[DoseForm] = Field(min_length=1)
    """Available dose forms."""
    dose: DoseSpec
    """Standard dosing."""
    monthly_cost_usd: float = Field(ge=0)
    """Typical monthly out-of-pocket cost without insurance (USD)."""
    chronic_use: bool = False
    """Whether people commonly take it long-term (eligible as a medication-history trap)."""
    regimen: Regimen = "chronic"
    """Taken until stopped, given as a course, or administered once (a care step may say otherwise)."""
    course_days: int | None = Field(default=None, ge=1)
    """Usual length of a course (required for course drugs)."""
    wanes_days: int | None = Field(default=None, ge=0)
    """Days after the last dose before its effect fades (about five half-lives, longer where the effect
    outlasts the drug); a lapse shorter than this changes nothing measurable. Required for chronic drugs."""
    monitoring: list[Monitoring] = Field(default_factory=list)
    """Labs to check while it is taken (methotrexate: liver enzymes and blood count)."""
    co_prescribe: list[str] = Field(default_factory=list)
    """Drug keys always started with it (methotrexate: folic acid), and stopped when it ends: stopped, or its course
    run out (`co_prescription_ends_with_drug`)."""
    before_start: StartChecks | None = None
    """Tests a start waits for (azathioprine: TPMT, and a white count that is not low)."""
    toxicities: list[Toxicity] = Field(default_factory=list)
    """Kinds of harm it can do (a patient who had that harm from another drug is not given it)."""
    adverse_effects: list[AdverseEffect] = Field(default_factory=list)
    """Adverse effects the simulator may give a patient on this drug."""
    start_advice: str | None = None
    """Advice key (diet.yaml `advice`) said the day it is started: a label's warning every patient is given (a
    dopamine agonist: falling asleep without warning, no driving or machinery when drowsy)."""
    missed_doses: list[MissedDoseCare] = Field(default_factory=list)
    """What missed doses of it call for in anyone who takes it (`drugs` left empty): levodopa stopped abruptly
    (parkinsonism-hyperpyrexia, akinetic crisis), warfarin (a clot while the INR is low)."""
    fall_workup: list[FallWorkup] = Field(default_factory=list)
    """What a fall of a lab found while it is taken calls for that day (anaemia on an anticoagulant: a bleed until
    shown otherwise)."""
    source: str
    """Label or guideline the facts come from."""

    def formulations(self) -> list[tuple[DoseForm, DoseSpec]]:
        """Every dose form with the dosing it is taken at."""
        return [(form, form.dose or self.dose) for form in self.forms]


# --- safety rules -------------------------------------------------------------------------------


class AllergyCaution(_Record):
    """Drugs an allergy or intolerance does not bar but a prescriber weighs: given with what the patient is told."""

    drugs: list[str] = Field(min_length=1)
    """Drug or class keys given only with the warning."""
    reason: Text
    """What the patient is told: the risk, and what to do if it comes (the safety net)."""
    source: str
    """Where the cross-reactivity figure and the advice come from."""


class AllergyGroup(_Record):
    """Agents a patient may be allergic to, and every drug that cross-reacts with them."""

    key: str
    """Identifier."""
    name: Text
    """Name of the allergy ("sulfonamide allergy")."""
    agents: list[ToldText] = Field(min_length=1)
    """What the patient reacted to, as they would name it."""
    reactions: list[ToldText] = Field(min_length=1)
    """Reactions the patient may report."""
    reaction_type: Literal["immediate", "delayed", "severe_cutaneous", "organ_specific", "intolerance"] | None = None
    """What kind of reaction it is: immediate (IgE: hives, angioedema, anaphylaxis), delayed (rash days later),
    severe cutaneous (SJS/TEN, DRESS), organ-specific (agranulocytosis, HIT), or a non-immune intolerance.
    Required."""
    classes: list[str] = Field(default_factory=list)
    """Drug classes that are unsafe with this allergy (cross-reactivity included)."""
    drugs: list[str] = Field(default_factory=list)
    """Individual drugs that are unsafe with this allergy."""
    caution: AllergyCaution | None = None
    """Drugs whose cross-reactivity is low but real: given, with a warning and its safety net (an ARB after ACE
    inhibitor angioedema)."""
    from_harm: Toxicity | None = None
    """A kind of harm that, had during the year on a drug this group bars, is this reaction too: its `caution` then
    binds as if the reaction had been told (angioedema on lisinopril: an ARB only with the warning; the drugs it bars
    are barred by the harm itself, `Drug.toxicities`)."""
    source: str
    """Where the cross-reactivity comes from."""

    def told(self, needle_phobic: bool) -> tuple[list[Text], list[Text]]:
        """The agents and reactions a patient may tell, in their words: one who faints at needles tells a needle
        only as they got through it, or not at all (an empty list: this allergy cannot be theirs)."""
        agents = [t for t in (a.told(needle_phobic) for a in self.agents) if t is not None]
        reactions = [t for t in (r.told(needle_phobic) for r in self.reactions) if t is not None]
        return agents, reactions


class LabRange(_Record):
    """A lab and the range a value is drawn from."""

    lab: str
    """Lab key."""
    range: tuple[float, float]
    """Low and high."""
    source: str | None = None
    """Where the range comes from (required where a finding states the value: a diagnostic test's or a
    complication's `labs`)."""


class HarmWorkup(_Record):
    """Labs taken the day a harm is told in a patient with a history that can cause it instead of the drug."""

    effects: list[str] = Field(min_length=1)
    """Adverse-effect keys (a drug's `adverse_effects`) the harm is told as."""
    labs: list[str] = Field(min_length=1)
    """Lab keys measured that day."""
    named_drugs: bool = False
    """Also for a patient without the history who takes a drug one of the history's rules names (a QT-prolonging
    drug: the same fit may be torsades)."""
    source: str
    """Guideline."""


class HistoryBaseline(_Record):
    """Labs taken the first visit a history is on record (an ECG when a conduction disorder is told)."""

    labs: list[str] = Field(min_length=1)
    """Lab keys measured that visit."""
    source: str
    """Guideline."""


class HistoryTarget(_Record):
    """A value a past disease is treated to whatever the main condition (after a stroke, a clinic systolic below 130
    mmHg, NICE NG136 and AHA/ASA 2021): once the history is on record and the last `readings` readings are all past
    it, with no drug of the candidates' classes taken, one is started by `within_days` (`history_target`,
    docs/simulation.md). Left to the main condition where a step of its care moves the lab."""

    lab: str
    """Lab key."""
    above: float
    """A reading above this is past the target."""
    readings: int = Field(default=2, ge=1)
    """Readings in a row, the latest included, past the target that call for a drug."""
    within_days: int = Field(ge=1)
    """Days from the visit that made the readings repeated (or told the history, if later) to the drug's start."""
    candidates: list[str] = Field(min_length=2)
    """Drugs, most preferred first; a drug of any of their classes taken holds the target's care."""
    treated: tuple[float, float]
    """Where a drug started for it brings the lab."""
    advice: str
    """Advice key said with the start: the target and why (diet.yaml `advice`)."""
    no_drug_advice: str
    """Advice key said where the rules allow none of the candidates: why not, and who carries it on."""
    source: str
    """Guideline."""

    def step(self, history: str, candidates: list[str] | None = None) -> CareStep:
        """The treatment as a care step, for the prescriber (`prescribing.choose_for_step`), its candidates in
        another order where given."""
        return CareStep(key=f"history:{history}", role="add_on", phase=2, candidates=candidates or self.candidates,
                        targets={self.lab: self.treated})


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
    sex: Literal["any", "female", "male"] = "any"
    """Who can have it."""
    age: tuple[int, int] = (18, 100)
    """Ages at which an adult plausibly has it."""
    treatments: list[str] = Field(default_factory=list)
    """Standard long-term drugs for it, most usual first (a patient's long-term drug, a relative's drugs)."""
    labs: list[LabRange] = Field(default_factory=list)
    """Labs typical of it and their usual values under treatment (a relative's results)."""
    egfr: tuple[float, float] | None = None
    """Kidney function (eGFR, mL/min/1.73m²) it implies, where it does."""
    incompatible: list[str] = Field(default_factory=list)
    """Main conditions or other histories it cannot be on record beside (a past HFrEF in a patient diagnosed
    with HFpEF; hypothyroidism before Graves disease); checked both ways."""
    baseline: HistoryBaseline | None = None
    """Labs taken the first visit the doctor knows of it, told or as what a long-term drug is for (an ECG in a
    conduction disorder or long QT syndrome; the seed-53 read: AV block told in January and no ECG all year)."""
    harm_workup: list[HarmWorkup] = Field(default_factory=list)
    """Harms that may be this disease showing itself, with the labs taken the day one is told (a fit in long QT
    syndrome may be torsades de pointes: an ECG and the electrolytes)."""
    missed_doses: list[MissedDoseCare] = Field(default_factory=list)
    """What missed doses of a drug it is treated with call for (a beta-blocker in long QT syndrome protects against
    arrhythmia: an ECG and the adherence talk the day a lapse is told)."""
    treat_to: list[HistoryTarget] = Field(default_factory=list)
    """Values it is treated to, whatever the main condition (after a stroke: systolic below 130 mmHg)."""


class TreatFirst(_Record):
    """A treatment a history needs started before a drug a caution names (latent tuberculosis: preventive treatment
    before immunosuppression), unless it is taken or was given already."""

    drugs: list[str] = Field(min_length=1)
    """Started the same visit, before the drug (its own `co_prescribe` with it: pyridoxine beside isoniazid)."""
    min_daily_dose: dict[str, float] = Field(default_factory=dict)
    """Per drug named here: a start below this daily dose needs none (prednisolone below 15 mg a day)."""
    min_days: int | None = Field(default=None, ge=1)
    """A course shorter than this needs none (a five-day steroid burst); long-term drugs always do."""
    source: str
    """Guideline."""


class Contraindication(_Record):
    """Drug–disease contraindication: with this history (or main condition), these drugs are not given."""

    history: str
    """A history-condition key, or a condition key (the rule then binds every patient with that condition)."""
    classes: list[str] = Field(default_factory=list)
    """Forbidden drug classes."""
    drugs: list[str] = Field(default_factory=list)
    """Forbidden drugs."""
    level: Literal["contraindicated", "caution"] = "contraindicated"
    """A bar (never given) or a caution the doctor weighs and mentions."""
    monitoring: list[str] = Field(default_factory=list)
    """For a caution: labs measured the day a drug it names is started and again within `recheck_days` (an ECG
    before and after a QT-prolonging drug in long QT syndrome)."""
    recheck_days: int | None = Field(default=None, ge=1)
    """Days within which the `monitoring` labs are repeated after the start."""
    no_increase_above: float | None = None
    """For a caution with `monitoring`: a dose it names is not raised while the latest result of its first
    monitoring lab is above this (a QT-prolonging drug at a QTc past 470 ms)."""
    not_low_before: list[str] = Field(default_factory=list)
    """For a caution: labs measured the day a drug it names is started (or still fresh), none of which may be below
    its reference range for the start (potassium and magnesium before a QT-prolonging drug in long QT syndrome: low
    ones add to the risk of torsades and are corrected first)."""
    every_days: int | None = Field(default=None, ge=1)
    """For a caution with `monitoring`: while a drug it names is taken, its labs are repeated at least this often
    (the QTc on a QT-prolonging drug in long QT syndrome at each three-monthly review)."""
    recheck_on_rise: bool = False
    """For a caution with `monitoring`: a result above the one before it, while a drug it names is taken, is repeated
    within `recheck_days` (a QTc rising on the drug)."""
    treat_first: TreatFirst | None = None
    """For a caution: what is started before a drug it names (isoniazid before a steroid course or a thiopurine in
    latent tuberculosis)."""
    reason: Text
    """Why."""
    source: str
    """Guideline or label."""


class PartnerEffect(_Record):
    """What an interaction does with some of its members in particular (drug or class keys of either side)."""

    partners: list[str] = Field(min_length=1)
    effect: Text


class Interaction(_Record):
    """A major drug–drug interaction between anything in `a` and anything in `b` (drug or class keys)."""

    a: list[str] = Field(min_length=1)
    """Drug or class keys on one side."""
    b: list[str] = Field(min_length=1)
    """Drug or class keys on the other side."""
    severity: Literal["major", "moderate"]
    """Severity."""
    action: Literal["avoid", "caution"] | None = None
    """What a prescriber does: never combine (avoid) or combine with monitoring or a dose change (caution).
    Required."""
    effect: Text
    """What happens."""
    by_partner: list[PartnerEffect] = []
    """What happens with particular members, where `effect` speaks of several (a doctor tells a patient on
    propranolol about bronchospasm, not about what allopurinol does to theophylline)."""
    source: str
    """Reference."""


class AdviceInstead(_Record):
    """Where a piece of general advice is unsafe, what is said in its place."""

    advice: str
    """Advice key said instead (stopping alcohol completely)."""
    conditions: list[str] = Field(default_factory=list)
    """Condition or history-condition keys: any of them on record makes the general advice unsafe."""
    traits: list[OccupationTrait] = Field(default_factory=list)
    """Occupation traits: a job with any of them makes the general advice too little (a sedating drug's warning to
    someone who drives or works machinery for a living)."""
    source: str
    """Reference."""

    @model_validator(mode="after")
    def _names_a_cause(self) -> AdviceInstead:
        if not self.conditions and not self.traits:
            raise ValueError("instead: give conditions or traits (what makes the general advice unsafe)")
        return self


class Advice(_Record):
    """A piece of lifestyle or diet advice a doctor gives."""

    key: str
    """Identifier."""
    text: Text
    """The advice."""
    smokers_only: bool = False
    """Given only to a patient who smokes now (stopping smoking)."""
    min_bmi: float | None = None
    """Given only where the body-mass index on record is at least this (weight loss: overweight, BMI 25+)."""
    safety: bool = False
    """What a harm or a risk calls for (no driving, a safety plan, stopping a habit): said plainly, never wrapped as
    lifestyle encouragement ("small steps count", "better than medicine")."""
    instead: AdviceInstead | None = None
    """Where this advice is unsafe, what is said in its place (the general alcohol limit in cirrhosis: none at all,
    EASL 2018 and AASLD 2019)."""
    needle: Literal["given", "self"] | None = None
    """It asks for a needle: one a nurse gives (vaccines) or one the patient uses (finger-prick testing); a patient
    who faints at needles is told how it will be managed (`MedicationPreference.needle_care`)."""
    on_start: Toxicity | None = None
    """Said the day a drug with this harm is started (a sedating drug: drowsiness, no driving or machinery while it
    lasts), where the drug has no warning of its own (`Drug.start_advice`); what it says `instead` (the warning for a
    job of driving or machinery) is said even beside the drug's own."""


class HabitStop(_Record):
    """When a habit on record must be stopped: the first visit where the doctor knows of it and of a risk it meets."""

    advice: str
    """Advice key (`advice` in diet.yaml) the doctor gives that visit: stop it, and why."""
    taking: list[str] = Field(default_factory=list)
    """Drug or class keys: any of them taken (started that visit, or known to be taken) is the risk."""
    egfr_below: float | None = None
    """An eGFR on record below this is the risk (kidney disease)."""
    conditions: list[str] = Field(default_factory=list)
    """Condition or history-condition keys: any of them on record is the risk."""
    source: str
    """Reference."""


class BriefIntervention(_Record):
    """Very brief advice on a habit that harms whatever drugs are taken (smoking, drinking above the low-risk limit):
    said the first visit the doctor knows of it, and again at a later visit, never at every visit."""

    advice: str
    """Advice key (`advice` in diet.yaml): the risk in a sentence, the advice to stop or cut down, and the help offered
    (a prescription, a referral)."""
    review_after_days: int = Field(gt=0)
    """Said again at the first visit at least this many days after it was last said."""
    source: str
    """Reference."""


class DietHabit(_Record):
    """An eating or drinking habit that conflicts with drugs or with advice."""

    key: str
    """Identifier."""
    text: Text
    """How the patient describes the habit."""
    conflicts_with: list[str] = Field(default_factory=list)
    """Drug or class keys the habit makes unsafe or ineffective: not given while the habit lasts."""
    cautions: list[str] = Field(default_factory=list)
    """Drug or class keys the habit calls for a warning or a timing change with, but does not rule out."""
    undermines_advice: list[str] = Field(default_factory=list)
    """Advice keys the habit works against."""
    stop: HabitStop | None = None
    """When the habit becomes a danger and the doctor asks the patient to give it up (a potassium salt substitute
    beside an ARB or with CKD)."""
    brief_intervention: BriefIntervention | None = None
    """The brief intervention the habit calls for whatever else is on record (drinking above the low-risk limit)."""
    meals: str | None = None
    """The everyday eating (`meals` in diet.yaml) the habit is: the patient's for the year, in place of one drawn
    (three high-protein meals a day are not "toast, cooking for one"). None: the habit says nothing of meals."""
    reason: Text
    """Why it conflicts."""
    source: str
    """Reference."""


class MealPattern(_Record):
    """How a patient eats day to day (diet.yaml `meals`), said wherever they speak of their meals."""

    key: str
    """Identifier."""
    text: Text
    """The eating in a phrase, said after "so it's" or "mostly" ("lots of rice and bread")."""
    drawn: bool = True
    """Drawn for a patient whose diet habit says nothing of meals; False: only a habit's (`DietHabit.meals`)."""
    excludes_lifestyles: list[str] = Field(default_factory=list)
    """Lifestyles (people.yaml) whose day the meals deny: "nothing all day, then one big meal in the evening" is never
    said by a patient who "eats out almost every lunch" (the seed-73 read, P0007 and P0009)."""


class NeedleCare(_Record):
    """How needle procedures are done for a patient who faints at needles (blood-injection-injury phobia)."""

    source: str
    """Guidance followed (lying down, topical anaesthetic, a familiar nurse, applied tension, therapy offered)."""


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
    excludes_drugs: list[str] = Field(default_factory=list)
    """Drug or class keys whose way of being taken the patient cannot manage (an oral bisphosphonate's
    half hour upright and fasting)."""
    excludes_toxicities: list[Toxicity] = Field(default_factory=list)
    """Kinds of effect the patient cannot have (a machine operator: nothing sedating)."""
    age: tuple[int, int] = (18, 100)
    """Ages of a patient who could say it (a shift worker, a bus driver: working age)."""
    long_term_only: bool = False
    """It binds only drugs taken month after month: a pharmacy's once-a-day blister pack holds the regular
    medicines, and a week's antibiotic is given beside it."""
    requires: list[OccupationTrait] = Field(default_factory=list)
    """Traits the patient's occupation must have for the text to be true of them ("I drive all day for work":
    `drives_all_day`); the occupation is drawn after the traps, among those that have them all."""
    excludes: list[OccupationTrait] = Field(default_factory=list)
    """Traits the patient's occupation must not have for the text to be true of them (one who faints at needles is
    no nurse: `clinical`)."""
    lives_alone: bool = False
    """The text says the patient lives on their own: they have no spouse among their relatives."""
    adherence_aid: AdherenceAid | None = None
    """The aid the text says the patient keeps to their medicines with (the pharmacy's blister pack): theirs for the
    year, in place of one drawn (people.yaml `adherence`)."""
    needle_care: NeedleCare | None = None
    """The text is a blood-injection-injury phobia: every needle procedure the year holds is done as this says, and
    told so (at the first blood draw once it is known, and at each needle test or needle advice)."""


class EconomicProfile(_Record):
    """An insurance/income situation that caps what the patient can pay for drugs each month."""

    key: str
    """Identifier."""
    text: Text
    """Description; `{budget}` is replaced by the monthly budget in USD."""
    monthly_budget_usd: tuple[int, int]
    """Range the patient's monthly drug budget is drawn from (USD)."""
    min_blood_test_interval_days: int | None = None
    """A time limit: blood can be taken no more often than this, so drugs whose monitoring needs a blood test
    sooner are ruled out (the budget then need not bite on its own)."""
    excludes_forms: list[FormKind] = Field(default_factory=list)
    """A time limit: forms that need a clinic visit to be given (infusions) the patient cannot attend."""
    age: tuple[int, int] = (18, 100)
    """Ages of a patient in this situation (a US pensioner on Medicare is 65+; a gig worker is of working age)."""
    requires: list[OccupationTrait] = Field(default_factory=list)
    """Traits the patient's occupation must have for the text to be true of them (a fixed pension: `retired`)."""
    insured: bool = True
    """Whether the patient has health insurance (False: "no health insurance", so no talk of co-pays:
    `Stressor.insured`)."""
    source: str
    """Where the figures come from."""


class RiskFactors(_Record):
    """Things of a patient that each add to one harm's risk (what lowers the seizure threshold bupropion lowers
    further), counted: a rule binds where at least `at_least` of them are present."""

    conditions: list[str] = Field(default_factory=list)
    """Condition or history-condition keys (a past stroke)."""
    habits: list[str] = Field(default_factory=list)
    """Diet habit keys (diet.yaml `habits`: heavy nightly drinking)."""
    taking: list[str] = Field(default_factory=list)
    """Drug or class keys being taken (a drug that lowers the threshold too, or one that raises the drug's level);
    each drug taken counts once."""
    egfr_below: float | None = None
    """Kidney function (the latest eGFR) below which one more factor counts (bupropion's metabolites accumulate in
    severe renal impairment, as clopidogrel raises its level)."""
    at_least: int = Field(ge=1)
    """How many of them bind the rule."""


class RuleWhen(_Record):
    """Which patients a patient rule binds; every field given must hold."""

    min_age: int | None = None
    """Age at or above which it applies."""
    max_age: int | None = None
    """Age at or below which it applies."""
    sex: Literal["female", "male"] | None = None
    """The sex it applies to."""
    egfr_below: float | None = None
    """Kidney function (eGFR) below which it applies."""
    conditions: list[str] = Field(default_factory=list)
    """Condition or history-condition keys: it applies to a patient with any of them."""
    risk_factors: RiskFactors | None = None
    """Risk factors it applies at, counted (`RiskFactors.at_least`)."""
    lab_below: dict[str, float] = Field(default_factory=dict)
    """Lab key -> level: it applies once a result of that lab below the level is on record (TPMT activity: an
    intermediate activity halves a thiopurine's dose, an absent one bars it; CPIC 2018)."""


class PatientRule(_Record):
    """A prescribing rule that binds some patients beyond their six trap facts (age, kidneys, sex, diseases, risk
    factors counted)."""

    key: str
    """Identifier (named in `show` and in failures)."""
    when: RuleWhen
    """Who it binds."""
    drugs: list[str] = Field(min_length=1)
    """Drug or class keys it is about."""
    level: Literal["avoid", "caution", "max_dose", "start_dose"]
    """Never given, given with a warning, given only up to `max_daily_dose`, or started at `start_dose` and
    titrated from there (warfarin at 80 or over)."""
    max_daily_dose: float | None = None
    """For `max_dose`: most a day, in the drug's dose unit."""
    start_dose: float | None = Field(default=None, gt=0)
    """For `start_dose`: the dose per administration a new start begins at, in the drug's dose unit."""
    monitoring: list[str] = Field(default_factory=list)
    """For a `caution`: labs measured the day a drug it names is started and again within `recheck_days`, and after
    each dose increase (sodium with a diuretic or an SSRI at 65 or over: the Beers caution says so)."""
    recheck_days: int | None = Field(default=None, ge=1)
    """Days within which the `monitoring` labs are repeated."""
    frequency: Frequency | None = None
    """For `max_dose`: how often the drug is taken at most, where the label spaces the doses out as well as capping
    them (pramipexole: twice a day at creatinine clearance 30-50, once a day below 30); a formulation taken more
    often is given at this frequency, on the same doses. None: as the formulation says."""
    release: Literal["immediate", "extended"] | None = None
    """For `avoid`: only this release of the drug (pramipexole's extended-release tablet below eGFR 30; the
    immediate-release one is given under the dose cap); the drug is barred only where no other form is usable."""
    reason: Text
    """Why."""
    source: str
    """Guideline (Beers 2023, KDIGO, labels...)."""


class RenalBaseline(_Record):
    """Kidney function of a patient without kidney disease, by age band."""

    max_age: int
    """Upper age of the band."""
    egfr: tuple[float, float]
    """Range eGFR is drawn from (mL/min/1.73m²)."""
    source: str
    """Reference."""


class MoodReferral(_Record):
    """What a positive mood screen is referred to, by how high the score is (and by a condition on record)."""

    at: float
    """The score from which it applies."""
    conditions: list[str] = Field(default_factory=list)
    """Condition or history-condition keys on record it is for (none: anyone); one naming a condition goes before one
    that does not."""
    advice: str
    """Advice key said: the referral, with what it offers."""


class MoodStrain(_Record):
    """How strain a patient voices moves the questionnaire where their condition does not follow it."""

    delta: tuple[float, float]
    """Points it adds (drawn): a few weeks of strain told as feeling low, flat or in tears scores in the mild to
    moderate range, not as a patient with no complaint."""
    built_days: int = Field(ge=0)
    """Days before the visit it has built up over ("a rough few weeks"), where no score on record is more recent."""
    lasts_days: tuple[int, int]
    """Days it lasts from then (drawn)."""
    at_least: float = 0
    """The score a visit that voices it reads at least, beyond any measurement's noise (PHQ-9 5, the mild band: "I've
    felt flat, I've stopped seeing friends" never scores as minimal and is never read out as normal, the seed-61
    read); the drawn push is raised to reach it where the weeks since the last score leave too little time."""
    source: str


class MoodScreen(_Record):
    """When the doctor assesses mood with the questionnaire the base has, and what a positive screen calls for."""

    lab: str
    """The questionnaire's lab key (PHQ-9); its `positive_at` is the threshold, its `min_interval_days` its recall
    period (a score of the last two weeks stands for a visit's own)."""
    voiced_kinds: list[str]
    """Visit kinds where the patient voices low mood, strain or feeling down: assessed that visit."""
    symptoms: list[str]
    """Symptom or complication keys that are low mood or loss of interest: assessed the visit they are told."""
    review_conditions: list[str]
    """Condition or history-condition keys whose review visits assess mood with a score."""
    review_kinds: list[str]
    """Visit kinds that review the condition."""
    risk_complications: list[str]
    """Complications that are thoughts of self-harm: a positive screen with one on record gets `crisis_advice`."""
    safety_net_advice: str
    """Advice key for a positive screen with no thoughts of self-harm on record: the self-harm question asked, a safety
    net, and the review."""
    crisis_advice: str
    """Advice key where thoughts of self-harm are on record."""
    follow_up_days: int
    """A positive screen is seen again with a new score this many days on (the first visit from then): no sooner than
    the questionnaire's recall period allows a new score."""
    referrals: list[MoodReferral] = Field(min_length=1)
    """What a positive screen is referred to, by score: said at the first positive screen of an episode (since the last
    negative one), and again where a higher score calls for another."""
    strain: MoodStrain
    """How voiced strain moves the score of a patient whose condition does not follow it."""
    source: str

    def referral(self, score: float, conditions: set[str]) -> MoodReferral | None:
        """The referral a score calls for with these conditions on record: one naming a condition on record first, else
        the highest band reached (None: below every band)."""
        reached = [r for r in self.referrals if score >= r.at and (not r.conditions or set(r.conditions) & conditions)]
        return max(reached, key=lambda r: (bool(r.conditions), r.at), default=None)


# --- conditions ---------------------------------------------------------------------------------


class HarmCare(_Record):
    """What a lab value past its harm level calls for, whatever lowered or raised it (a drug stopped or not): the
    symptoms it can cause asked about that visit, and the lab repeated until it is back in its reference range."""

    advice: str
    """Advice key (`advice` in diet.yaml) said the visit a value past the harm level is first found (an episode
    ends when the lab is back in its reference range)."""
    recheck_days: int = Field(ge=1)
    """The lab is measured again at the first visit this many days or more after a value outside its reference range
    that follows a harmful one, until one is back inside it."""
    source: str
    """Reference."""


class DrugRedFlag(_Record):
    """What a symptom means in a patient taking a drug that can do a harm it is the first sign of (a fever or a sore
    throat on a drug that can take the white cells away): acted on the day it is told."""

    toxicity: Toxicity
    """Drugs of this toxicity (`Drug.toxicities`, or an adverse effect's) are the ones it warns of."""
    effects: list[str] = Field(default_factory=list)
    """Adverse-effect keys that make a drug one it warns of too (tocilizumab's neutropenia, not marrow toxicity)."""
    labs: list[str] = Field(min_length=1)
    """Labs measured that same day (the full blood count with its neutrophils); the drug is held until they are
    known, given back when none is below its `harm_below`, stopped when one is."""
    advice: str
    """Advice key said that visit: why the count, and what to do if it happens again."""
    recheck_days: int = Field(ge=1)
    """A count below its `harm_below` (or a drug stopped for the harm before one was) is repeated, every lab, this
    many days on, and again until none is below its reference range: a low count is followed until it recovers."""
    recovering_advice: str
    """Advice key said where the symptom is told with no such drug taken but the count not yet shown to recover (a
    drug stopped for a low white count weeks ago, no count since): the count is taken that day all the same."""
    source: str
    """Reference."""

    def warns_of(self, drug: Drug) -> bool:
        """Whether a patient taking `drug` who tells this symptom is acted on that day."""
        return self.toxicity in drug.toxicities or any(
            e.toxicity == self.toxicity or e.key in self.effects for e in drug.adverse_effects)

    def is_harm(self, drug: Drug, effect: str) -> bool:
        """Whether `drug`'s adverse effect `effect` is the harm this flag warns of (a stop for it opens a recheck)."""
        return effect in self.effects or any(e.key == effect and e.toxicity == self.toxicity
                                             for e in drug.adverse_effects)


class WeightLost(_Record):
    """The weight a symptom that tells of weight loss stands for: lost over the weeks before it is first told, and
    regained once the condition is treated (its first care step)."""

    share: tuple[float, float]
    """Range of the share of body weight lost (drawn once)."""
    over_days: int = Field(ge=1)
    """Days over which it was lost before the symptom is first told (never before the last weighing)."""
    source: str
    """Where the figures come from."""


class SickDay(_Record):
    """(An intercurrent illness's symptom.) A dehydrating illness told (a fever, vomiting or diarrhoea): a patient
    taking a drug that dehydration turns harmful is told that visit to pause it while unwell and unable to keep fluids
    down and to restart it 24-48 hours after eating and drinking normally, and one taking a drug whose level
    dehydration raises what toxicity to watch for (the seed-79 read, P0009 E046: pneumonia on metformin, losartan and
    lithium with no sick-day advice)."""

    pause: list[str] = Field(min_length=1)
    """Drug or class keys paused on sick days (`KnowledgeBase.expand`)."""
    advice: str
    """Advice key said where one of them is taken."""
    watch: list[str] = Field(default_factory=list)
    """Drug or class keys whose toxicity is watched for (lithium)."""
    watch_advice: str | None = None
    """Advice key said where one of those is taken."""
    source: str
    """Reference."""

    @model_validator(mode="after")
    def _watch_said(self) -> SickDay:
        if bool(self.watch) != (self.watch_advice is not None):
            raise ValueError("watch and watch_advice go together")
        return self


class Symptom(_Record):
    """A presenting symptom."""

    key: str
    """Identifier."""
    name: Text
    """Clinical term."""
    lay: Text
    """Patient's words."""
    specific: bool = False
    """Points to the true diagnosis (goitre in Graves disease): never reported before the turning point."""
    red_flag_step: str | None = None
    """A care step this symptom, told from the turning point on, calls for at that visit (orthopnoea or 2 kg in a
    week in heart failure: the diuretic started or raised; ESC 2021 heart-failure guideline): a congestion sign is
    never just noted."""
    drug_red_flag: DrugRedFlag | None = None
    """(An intercurrent illness's.) The drug harm it can be the first sign of, acted on the day it is told."""
    sick_day: SickDay | None = None
    """(An intercurrent illness's.) It tells of a dehydrating illness: sick-day advice that visit."""
    at_examination: bool = False
    """(An intercurrent illness's.) Told only at the visit that examines and treats the illness, never at the first
    one that tries self-care: fever with pain on breathing in is not sent home with cough advice (NICE NG120)."""
    weight_lost: WeightLost | None = None
    """(A condition's.) The symptom tells of weight loss ("my clothes are loose"): the weights measured around it
    fall by this much (the seed-61 read: weight loss told beside a year of stable weights)."""


class Misdiagnosis(_Record):
    """A plausible wrong diagnosis made in phase 1."""

    name: Text
    """What the patient was first told they had."""
    icd11: str
    """ICD-11 code of the wrong diagnosis."""
    drug: str | None = None
    """Drug given for it, if any (a drug key)."""
    kept_for: str | None = None
    """A lab its drug treats in the true condition too (an antihypertensive given for "essential hypertension" in
    diabetic kidney disease: systolic_bp): at the revision the drug is kept, for that lab, while the lab is above the
    threshold of the care step that treats it, not stopped because the diagnosis changed."""
    findings: list[LabRange] = Field(default_factory=list)
    """Results that made it look right, measured at the visit where it is made (none diagnostic of the true
    condition)."""
    screened_with: list[str] = Field(default_factory=list)
    """Screening questionnaires of the true condition taken before it is made (a PHQ-9 before fatigue, poor sleep or
    strain are called burn-out: NICE NG222 1.2); each an `emerges` lab of the condition, so it reads below the
    screen's threshold then."""


class DiagnosticTest(_Record):
    """A test that establishes the diagnosis."""

    key: str
    """Identifier."""
    name: Text
    """Name of the test."""
    loinc: str | None = None
    """LOINC code where one exists."""
    finding: Text
    """What it shows in this patient: a template over the values of the visit (`knowledge/findings.py`:
    `{lab:<key>}` the value measured there with its unit, `{value:<key>}` the bare number, `{grade:<key>}` its
    grade, `{drawn:<name>}` a value of `drawn`, `{score:<key>}` a score of scores.yaml)."""
    labs: list[LabRange] = Field(default_factory=list)
    """Labs the condition does not follow that the test measures, with the range this disease puts them in (the
    value is drawn there unless the lab already has a value of its own, as a misdiagnosis' findings are)."""
    drawn: dict[str, DrawnValue] = Field(default_factory=dict)
    """Quantities the finding states that no lab follows, drawn once per patient."""
    gives: str | None = None
    """A drug key the test gives a dose of (a levodopa challenge: carbidopa/levodopa); it is not done on a patient
    any rule bars that drug for (narrow-angle glaucoma, the seed-37 read), and another test takes its place."""
    needle: bool = False
    """It takes blood or passes a needle (a venous sample, a cannula for sedation or a tracer, a biopsy, a lumbar
    puncture): a patient who faints at needles is told how it was managed."""
    advice: str | None = None
    """Advice key (`advice` in diet.yaml) its finding calls for, given the visit it is stated: a PHQ-9 whose item 9
    (thoughts of death) scores, a suicide-risk assessment and a safety plan that day (NICE NG222 1.3, NG225)."""


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
    diagnostic: bool = False
    """An abnormal value reveals the true diagnosis: first measured at the diagnostic work-up, never in the
    misdiagnosis phase."""
    emerges: bool = False
    """(A diagnostic screening questionnaire, `Lab.positive_at`.) The episode declares itself: the score holds its
    onset value, below the screen's threshold, until the misdiagnosis is made (the symptoms building: the somatic
    items score, the core ones not yet), rises to its untreated value from the next day, and the turning point waits
    until it is past the threshold. A screen in the misdiagnosis phase (`Misdiagnosis.screened_with`) reads below it,
    and the one taken when the core symptoms are told, at the turning point, above it."""
    named: tuple[float, float] | None = None
    """The band the condition's name states for this lab (moderately active colitis: a total Mayo score of 6-10): from
    the turning point to the diagnosis its readings are drawn in it, so the reading the diagnosis stands on lies in it
    (the seed-61 read: Mayo 5, the mild band, beside "moderately active"). The untreated range lies in it."""
    source: str
    """Where the figures come from."""

    @model_validator(mode="after")
    def _untreated_named(self) -> Monitored:
        if self.named is not None and not (self.named[0] <= self.untreated[0] <= self.untreated[1] <= self.named[1]):
            raise ValueError(f"{self.lab}: untreated {self.untreated} is not inside the named band {self.named}")
        return self

    def is_on_track(self, value: float, previous: float | None, cv: float,
                    goal: tuple[float, float] | None = None, to_target: bool = False) -> bool:
        """Whether a reading bears out "it's working": inside the range treatment aims for (`goal`, default
        `treated`) and no further toward the untreated range than the reading before by more than one
        measurement's variation (`cv`, a share of that reading: an MDS-UPDRS of 20 after 15 is in range but
        worse), or outside it but nearer than the reading before (a PHQ-9 of 11 after 15), except for a lab treated to
        a target (`to_target`, `Lab.to_target`: blood pressure), which is on track only inside it (154 mmHg after 165
        is nearer, not controlled: the seed-61 read)."""
        low, high = goal or self.treated
        rising = sum(self.untreated) > sum(self.treated)  # (the disease pushes it up: HbA1c, a symptom score)

        def off(v: float) -> float:
            return max(low - v, v - high, 0.0)

        if previous is None or (to_target and off(value) > 0):
            return off(value) == 0
        worse = (value - previous if rising else previous - value) > cv * abs(previous)
        return (off(value) == 0 and not worse) or off(value) < off(previous)


class Indication(_Record):
    """What must be on record before a care step starts; nothing set: the confirmed diagnosis."""

    complication: str | None = None
    """A complication key of the condition: the step treats it."""
    lab: str | None = None
    """A lab key whose latest value must cross `above` or `below`."""
    above: float | None = None
    """Threshold the lab must exceed."""
    below: float | None = None
    """Threshold the lab must fall under."""

    @model_validator(mode="after")
    def _one_kind(self) -> Indication:
        if self.complication and self.lab:
            raise ValueError("an indication names a complication or a lab, not both")
        if self.lab and (self.above is None) == (self.below is None):
            raise ValueError("a lab indication needs exactly one of above / below")
        if not self.lab and (self.above is not None or self.below is not None):
            raise ValueError("above / below need a lab")
        return self


class Taper(_Record):
    """A course's dose lowered on a schedule: by `step` every `every_days` from the start (prednisolone 40 mg for
    8 weeks: 5 mg a week; BSG 2019)."""

    step: float = Field(gt=0)
    """Dose per administration taken off at each step."""
    every_days: int = Field(ge=1)
    """Days between steps."""

    def dose_on(self, start_dose: float, days_in: int) -> float:
        """The dose `days_in` days after the start (never below one step)."""
        return max(self.step, start_dose - self.step * (days_in // self.every_days))


class Candidate(_Record):
    """A drug a care step may give, with what this use changes about its usual dosing."""

    drug: str
    """Drug key."""
    dose: float | None = Field(default=None, gt=0)
    """Dose per administration for this use (a steroid burst: prednisolone 40 mg); None: the drug's start."""
    dosing: DoseSpec | None = None
    """This use's own dose ladder where the indication's differs from the label's usual one (sulfasalazine for
    ulcerative colitis: 500 mg four times a day up to 1 g four times a day, not the arthritis ladder of 500 mg to 1 g
    twice a day): started at its `start` and titrated on it. Its frequency tells it from the drug's formulations,
    which is how a dose already taken finds its ladder (`prescribing.ladder_of`). None: the drug's own."""
    regimen: Regimen | None = None
    """Regimen for this use; None: the drug's own."""
    course_days: int | None = Field(default=None, ge=1)
    """Course length for this use; None: the drug's own."""
    replaces: list[str] = Field(default_factory=list)
    """Drugs or drug classes it takes the place of: started for this step, it stops them (cyclophosphamide for a
    flare on mycophenolate is a switch, never a combination); empty: it is given beside what is running."""
    taper: Taper | None = None
    """How a course longer than three weeks is stepped down (BNF: a steroid given for over three weeks is
    withdrawn gradually)."""


def _as_candidates(value: object) -> object:
    """Candidates as written: a bare drug key stands for a candidate with the drug's own dosing."""
    if isinstance(value, list):
        return [{"drug": item} if isinstance(item, str) else item for item in value]
    return value


class CareStep(_Record):
    """A step of the care path: the guideline's candidates in order of preference."""

    key: str
    """Identifier (unique within the condition)."""
    role: Literal["first_line", "step_up", "add_on", "symptomatic"]
    """Where in the path it sits."""
    phase: int = Field(ge=2, le=5)
    """Phase it is started in."""
    candidates: list[Candidate] = Field(min_length=2)
    """Drugs, most preferred first (a drug key, or a mapping for a use-specific dose or regimen); the care plan
    takes the first this patient may have."""
    purpose: Text | None = None
    """What it is for, in a patient's words ("to slow the heart down"); required."""
    indication: Indication = Field(default_factory=Indication)
    """What must be on record before it starts."""
    moves: list[str] = Field(default_factory=list)
    """Monitored labs its drug brings toward their treated range."""
    targets: dict[str, tuple[float, float]] = Field(default_factory=dict)
    """Labs it drives to a range of its own instead (radioiodine: free T4 low, TSH high), overriding earlier steps."""
    titrate_on: str | None = None
    """The lab whose result decides a dose increase (default: the first of `moves`)."""
    adds_to: str | None = None
    """The step whose drug this one is added to (augmentation adds to the antidepressant): it starts and is kept
    only while a drug of that step is taken, and stops when none is left."""
    after_top_of: str | None = None
    """A step whose drug, where one is taken, is raised to the highest dose the rules allow before this one starts
    (KDIGO 2022/2024: in albuminuric diabetic kidney disease the ACE inhibitor or ARB is titrated to the maximum
    tolerated dose before another antihypertensive is added): an indication met while it can still rise books its
    next dose instead. None: started on its indication alone."""
    while_short_of_goal: bool = False
    """Its drug is started (a switch after a harm included) only while the disease is short of its goal on the step's
    `titrate_on` lab: an augmenting drug stopped for a harm at a PHQ-9 of 4 is not replaced (the seed-61 read)."""

    @field_validator("candidates", mode="before")
    @classmethod
    def _candidate_mappings(cls, value: object) -> object:
        return _as_candidates(value)

    @property
    def marker(self) -> str | None:
        """The lab the step is judged on: its `titrate_on`, else the first lab it moves (None: it moves none)."""
        return self.titrate_on or (self.moves[0] if self.moves else None)

    @property
    def drug_keys(self) -> list[str]:
        """The candidates' drug keys, in order."""
        return [c.drug for c in self.candidates]

    def candidate(self, drug: str) -> Candidate:
        """The candidate entry of `drug`."""
        return next(c for c in self.candidates if c.drug == drug)


class AfterDischarge(_Record):
    """The first review after a hospital admission: within days, these labs rechecked and the running drug of
    each care step in `dose_review` reviewed (raised a rung, or kept with the reason it is not raised)."""

    ward_days: int = Field(ge=1)
    """Days on the ward: the review is the first visit from then (UK National Heart Failure Audit: median stay
    about a week)."""
    within_days: int = Field(ge=1)
    """Days after discharge by which the review is due."""
    labs: list[str] = Field(min_length=1)
    dose_review: list[str] = Field(min_length=1)
    source: str


class Progression(_Record):
    """A complication that is a disease's progression read on a graded lab, drawn only as KDIGO 2024 CKD 2.1 calls
    one: a worse category with a fall of at least a quarter from the baseline (the year's first value on record), and
    lasting (a sustained decline: its push is never resolved at the visit). A smaller fall, or one within the same
    category, is no complication at all: it is a result read out and rechecked, never a diagnosis, a symptom the
    patient tells or "a new problem to treat" (the seed-79 read, P0009 E045: eGFR 74 -> 61 at G2 named "a fall in
    eGFR that is not a progression", then back to 72 and 79). The complication's `lab_delta` is the largest push it
    may take; the push drawn is the smallest that shows the progression at its visit (`visits._progression_push`)."""

    fall: float = Field(gt=0, lt=1)
    """Share below the baseline (the year's first value on record) the value must fall, beside a worse band."""
    acute_illness_days: int = Field(ge=0)
    """Days after an acute illness's last visit in which a fall is not drawn as a progression (nor while it runs): a
    fall then is an acute kidney injury, whatever its size (the seed-89 read, P0009 E056)."""
    source: str
    """Guideline."""

    def holds(self, grading: Grading, baseline: float, value: float) -> bool:
        """Whether `value` is a progression from `baseline`: a worse band (lower, for a falling lab) and the fall."""
        band = [b.below is None or value < b.below for b in grading.bands].index(True)
        before = [b.below is None or baseline < b.below for b in grading.bands].index(True)
        return band < before and value <= baseline * (1 - self.fall)

    def ceiling(self, grading: Grading, baseline: float) -> float | None:
        """The value a progression from `baseline` must fall below (the worse band's top, or the fall, whichever is
        lower); None where no band is worse."""
        before = [b.below is None or baseline < b.below for b in grading.bands].index(True)
        if before == 0:
            return None
        top = grading.bands[before - 1].below
        assert top is not None
        return min(top, baseline * (1 - self.fall))


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
    acute: bool = False
    """Needs treatment at once (pneumonia, atrial fibrillation); otherwise found and treated at routine visits."""
    felt: bool = True
    """The patient notices it and tells it; False: found on a result alone (a fall in eGFR), never a symptom told
    before the result is read (the seed-79 read: "my kidney function dipping a little" volunteered as a symptom)."""
    lab: str | None = None
    """Monitored lab (key) that shows it, if one does."""
    lab_delta: float | None = None
    """Signed change of that lab when it appears (with a `progression`: the largest change it may take)."""
    finding: Text | None = None
    """What examination or imaging shows: a template as a diagnostic test's `finding`, filled with the values of
    the visit that finds it."""
    labs: list[LabRange] = Field(default_factory=list)
    """Labs the condition does not follow that the finding names, with the range the complication puts them in."""
    drawn: dict[str, DrawnValue] = Field(default_factory=dict)
    """Quantities the finding states that no lab follows, drawn once per patient."""
    needle: bool = False
    """Finding it passes a needle (a joint aspirated): a patient who faints at needles is told how it was managed."""
    setting: Literal["outpatient", "emergency", "admission"] = "outpatient"
    """Where it is managed: the severity-appropriate level of care."""
    treatment: list[str] = Field(default_factory=list)
    """Care-step keys started (or intensified) for it, in order; empty only where its care is its `advice` and
    `setting` (suicidal thoughts: the crisis team and a safety plan, no drug started for them)."""
    treat_within_days: int = Field(default=14, ge=0)
    """Latest day after it is found by which treatment has started (0: the same visit)."""
    escalation: list[str] = Field(default_factory=list)
    """Care-step keys added later if it does not settle (rescue therapy)."""
    escalate_after_days: int | None = Field(default=None, ge=1)
    """Days after the first treatment when escalation is given."""
    forbids: list[str] = Field(default_factory=list)
    """Drug or class keys unsafe from then on (acute kidney injury: NSAIDs)."""
    advice: str | None = None
    """Advice key (diet.yaml `advice`) given the day it is found (suicidal thoughts: a safety plan and the crisis
    team the same day; nearly blacking out on standing: no driving, and none at work for a professional driver)."""
    workup: list[str] = Field(default_factory=list)
    """Labs taken the day it is found beside its own (pre-syncope: an ECG, NICE CG109)."""
    only_if: Indication | None = None
    """A result that must be on record for it to happen (thyrotoxic atrial fibrillation: free T4 still high)."""
    after_discharge: AfterDischarge | None = None
    """The review an admission calls for (acute decompensated heart failure: diuretic dose, weight, U&E)."""
    progression: Progression | None = None
    """It is a progression of the disease read on `lab`: drawn only where KDIGO would call it one, and lasting (see
    `Progression`)."""
    missed_doses: list[MissedDoseCare] = Field(default_factory=list)
    """What missed doses told after it call for (after suicidal ideation: mood and safety asked again, and who holds
    the medicines)."""

    @field_validator("treatment", mode="before")
    @classmethod
    def _one_or_many(cls, value: object) -> object:
        return [value] if isinstance(value, str) else value

    @model_validator(mode="after")
    def _shown_somehow(self) -> Complication:
        if (self.lab is None) != (self.lab_delta is None):
            raise ValueError("lab and lab_delta go together")
        if self.lab is None and self.finding is None:
            raise ValueError("a complication needs a lab (with lab_delta) or a finding")
        if self.escalation and self.escalate_after_days is None:
            raise ValueError("escalation needs escalate_after_days")
        if not self.treatment and self.advice is None:
            raise ValueError("a complication with no treatment step needs the advice that is its care")
        if self.progression is not None and self.lab is None:
            raise ValueError("progression needs the lab it is read on")
        if not self.felt and self.lab is None:
            raise ValueError("a complication not felt is found on its lab, which it needs")
        return self


class AlarmFeatures(_Record):
    """What on record makes an illness's uncomplicated course wrong for the patient (reflux with weight loss or
    anaemia: urgent endoscopy, not a PPI course; the seed-53 read): the illness is then not caught as such."""

    symptoms: list[str] = Field(default_factory=list)
    """Symptom keys (the last part of a `SymptomFact.symptom`) told before, of any condition."""
    weight_fall: float | None = None
    """A fall of the weight on record by at least this share from the year's highest."""
    labs_low: list[str] = Field(default_factory=list)
    """Labs whose latest value is below the reference range."""
    source: str
    """Guideline."""


class IllnessRedFlag(_Record):
    """Who a first episode of an illness is a red flag in, not the illness (a new headache on an anticoagulant, after
    cancer, with the immune system suppressed, or after 50 is a bleed, a metastasis or an infection until shown
    otherwise): examined and referred for urgent imaging the day it is told, never diagnosed or treated as the
    illness."""

    risk_factors: RiskFactors
    """What makes it one (conditions or histories, drugs or classes taken); `at_least` of them."""
    min_age: int | None = None
    """Age at or above which it is one whatever else."""
    advice: str
    """Advice key said: why, the examination done and the urgent referral."""
    source: str
    """Guideline."""

    def holds(self, kb: KnowledgeBase, age: int, conditions: set[str], taking: set[str]) -> bool:
        """Whether a patient of this age, with these conditions or histories, taking these drugs, has the flag."""
        if self.min_age is not None and age >= self.min_age:
            return True
        factors = self.risk_factors
        return len(set(factors.conditions) & conditions) + len(kb.expand(factors.taking) & taking) >= factors.at_least


class FirstLook(_Record):
    """What an acute illness's first visit examines and measures before self-care is advised (a productive cough: the
    chest listened to, and temperature, pulse, breathing rate and oxygen saturation taken), so "self-care" rests on a
    recorded examination, never on "I'd like to examine you" alone."""

    test: Text
    """The examination done."""
    finding: Text
    """What it shows: a template naming the observations taken (`{lab:<key>}`), filled with the visit's values."""
    source: str
    """Guideline."""


class Illness(_Record):
    """An acute illness a patient may catch during the year (intercurrent.yaml): tried with self-care first, then
    treated with a short course chosen against every rule that binds the patient, then reviewed."""

    key: str
    """Identifier."""
    name: Text
    """Clinical name."""
    lay: Text
    """Patient's words for it ("a chest infection")."""
    icd11: str
    """ICD-11 code."""
    sex: Literal["any", "female", "male"] = "any"
    """Who the guideline followed covers."""
    age: tuple[int, int] = (18, 120)
    """Ages at which it is diagnosed as such (a first migraine after 50 is investigated instead)."""
    symptoms: list[Symptom] = Field(min_length=1)
    """What the patient reports."""
    self_care: str
    """Advice key: what is tried first."""
    first_look: FirstLook | None = None
    """The examination and observations recorded at the visit that advises self-care (its `TestFact` is
    `illness:<key>:first`)."""
    self_care_days: tuple[int, int] | None = None
    """Days of self-care before a course (at least, and at most: drawn), where the finding needs more time than the
    simulator's default (a headache diary kept 8 weeks before migraine is named: ICHD-3 needs 5 attacks); None: the
    default (`visits.SELF_CARE_DAYS`)."""
    red_flag: IllnessRedFlag | None = None
    """Who its first symptoms are a red flag in (answered that day, the illness never named): see `IllnessRedFlag`."""
    test: Text
    """The examination or test that shows it."""
    finding: Text
    """What that shows: a template as a diagnostic test's `finding` (`{days:onset}`: days since the symptoms were
    first told)."""
    review: Text
    """The check after the course."""
    outcome: Text
    """What that check finds (the infection cleared, the attacks settling within hours of a dose): a template."""
    drawn: dict[str, DrawnValue] = Field(default_factory=dict)
    """Quantities the finding or outcome states that no lab follows, drawn once per patient."""
    purpose: Text
    """What the course is for, in the patient's words ("to clear my chest infection")."""
    candidates: list[Candidate] = Field(min_length=2)
    """Drugs, most preferred first, each a course (a mapping gives this use's dose, regimen or course length)."""
    alarm: AlarmFeatures | None = None
    """Features on record that rule its course out (its finding says there are none)."""
    recurrent: bool = False
    """A long-term or relapsing illness (episodic migraine, perennial rhinitis, reflux disease): its diagnosis is said
    as one that comes back, never as "a short-lived illness" that "should clear" (the seed-61 read)."""
    source: str
    """Guideline(s) followed."""

    @field_validator("candidates", mode="before")
    @classmethod
    def _candidate_mappings(cls, value: object) -> object:
        return _as_candidates(value)

    @property
    def step(self) -> CareStep:
        """The treatment as a care step, for the prescriber (`prescribing.choose_for_step`)."""
        return CareStep(key=f"illness:{self.key}", role="symptomatic", phase=2, candidates=self.candidates,
                        purpose=self.purpose)


class Stressor(_Record):
    """A psychological or social strain of phase 4."""

    key: str
    """Identifier."""
    text: Text
    """How the patient describes it."""
    requires: list[OccupationTrait] = Field(default_factory=list)
    """Traits the patient's occupation must have for the text to be true of them ("my boss noticed": `working`);
    a strain whose text does not fit the patient is never brought up."""
    excludes: list[OccupationTrait] = Field(default_factory=list)
    """Traits that make the text untrue ("client dinners" for a night-shift guard: `shift_work`)."""
    family: list[str] = Field(default_factory=list)
    """Relations (`relatives.yaml`) of which the patient must have one for the text to be true of them ("my partner
    has dementia": a wife or a husband)."""
    without_family: list[str] = Field(default_factory=list)
    """Relations of which the patient must have none: a life event that ended them ("my marriage ended": no wife or
    husband anywhere in the year)."""
    lives_alone: bool = False
    """Said only by a patient who lives on their own ("the flat is silent")."""
    after_admission: bool = False
    """Said only once a hospital admission is on record ("after the last admission I panic every time my ankles
    swell": the seed-53 read heard it seven weeks before the first admission)."""
    insured: bool = False
    """Said only by a patient with health insurance ("the co-pays are eating my savings": one without pays full price,
    the seed-61 read; `EconomicProfile.insured`)."""
    age: tuple[int, int] = (18, 100)
    """Ages of a patient it is true of ("I had to retire early": before the pension age)."""


class DiseaseGroup(_Record):
    """One of the ten disease groups of the roster (two subtypes each)."""

    key: Literal[
        "diabetes", "cardiovascular", "respiratory", "neurological", "renal",
        "rheumatic_autoimmune", "digestive", "mental_health", "musculoskeletal", "endocrine",
    ]
    """Group identifier."""
    name: Text
    """Group name."""


class Restart(_Record):
    """How soon the disease's care goes on after its last control drug ends (stopped, or a course or taper finished):
    by `within_days`, the next maintenance step starts (ECCO 2022 and BSG 2019 in ulcerative colitis; Euro-Lupus
    in lupus nephritis). See `docs/simulation.md`, `restart_after_stop`."""

    within_days: int = Field(ge=1)
    """Days after the last control drug ends by which the next maintenance drug is started."""
    steps: list[str] = Field(min_length=1)
    """Care-step keys whose drugs control the disease (a drug of one of them taken: the disease is treated), in the
    order the restart tries them; the restart starts a long-term candidate, never a course (a maintenance drug)."""
    advice: str | None = None
    """Advice key (`advice` in diet.yaml) given with the restart: the care beside the drug that the guideline puts
    next once a first treatment has failed (depression: high-intensity psychological therapy, NICE NG222)."""
    referral: str | None = None
    """Advice key given in place of the drug where the rules allow none of the steps' long-term candidates (each
    barred by an allergy, a history, a drug taken or a harm): the specialist care the disease goes on under, said
    with why (depression: the community mental health team, NICE NG222). None: the restart waits for a drug."""
    source: str
    """The guideline the limit comes from."""


class WeightAlarm(_Record):
    """A weight gain that is a congestion sign in a condition (heart failure): the visit that weighs it remarks it as
    the condition's sign and acts on it as the sign told (its `red_flag_step` started or raised at once), measures
    renal function and potassium, and books an early review; never a gain "within the normal range"."""

    gain: float = Field(gt=0)
    """Kilograms above the lowest weight on record within `within_days` that set it off (more than)."""
    within_days: int = Field(ge=1)
    """How far back that weight may lie."""
    sign: str
    """The condition's symptom (key) recorded for it; its `red_flag_step` is the answer."""
    labs: list[str] = Field(min_length=1)
    """Measured that visit (the diuretic's effect on the kidneys and potassium)."""
    review_days: int = Field(ge=1)
    """The early review: at most this many days on (a visit is booked)."""
    examination: FirstLook
    """What the visit examines and measures for congestion, at the weight's alarm and at every congestion sign told
    (a symptom with a `red_flag_step`: ankle swelling, breathlessness, orthopnoea), beside the diuretic's answer."""
    source: str
    """Guideline."""


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
    eligible_age: tuple[int, int] | None = None
    """Ages at which anyone (a relative, say) can have it; default: `age`."""
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
    counselling_advice: str | None = None
    """Advice key the doctor gives after a lapse in adherence (default: the last of `lifestyle_advice`)."""
    diagnosis_advice: str | None = None
    """Advice key the doctor gives at the diagnosis visit, whatever else is done (Parkinson's: driving and the
    licensing authority, NICE NG71)."""
    restart: Restart | None = None
    """How soon care goes on after the last control drug ends; None: no limit the guideline followed sets."""
    weight_alarm: WeightAlarm | None = None
    """A weight gain that is a congestion sign (see `WeightAlarm`); None: weight is no sign of this disease."""
    source: str
    """Guideline(s) the condition follows."""

    def goal(self, lab: str, step: CareStep | None = None) -> tuple[float, float]:
        """The range treatment aims `lab` at: the step's own target where it has one, else the treated range."""
        if step is not None and lab in step.targets:
            return step.targets[lab]
        return next(m.treated for m in self.monitored if m.lab == lab)

    def is_short_of_goal(self, lab: str, value: float, step: CareStep | None = None) -> bool:
        """Whether a value is still on the disease's side of its goal (above it for a lab the disease raises, below
        it for one it lowers): the one reading of "not controlled" that the engine's step-ups and the
        `untreated_after_stop` check both use."""
        low, high = self.goal(lab, step)
        monitored = next(m for m in self.monitored if m.lab == lab)
        rising = sum(monitored.untreated) > sum(monitored.treated)
        return value > high if rising else value < low

    def treats(self, lab: str) -> bool:
        """Whether a care step of the condition moves `lab` (its fall is then the disease's own course, answered by the
        care path's titration and step-ups: a MoCA in Alzheimer disease, not in Parkinson's disease)."""
        return any(lab in (*s.moves, *s.targets, s.titrate_on) for s in self.care_path)

    @property
    def activity_labs(self) -> list[str]:
        """The labs that say whether the disease is active: the marker each control step (`restart.steps`) is
        titrated on (colitis: Mayo score, faecal calprotectin)."""
        steps = [s for s in self.care_path if self.restart is not None and s.key in self.restart.steps]
        return list(dict.fromkeys(s.marker for s in steps if s.marker is not None))

    def is_active(self, latest: dict[str, float]) -> bool:
        """Whether the disease is active on these latest values (lab -> value): any activity lab short of goal."""
        return any(self.is_short_of_goal(lab, latest[lab]) for lab in self.activity_labs if lab in latest)

    @field_validator("care_path")
    @classmethod
    def _has_first_line(cls, steps: list[CareStep]) -> list[CareStep]:
        roles = [s.role for s in steps]
        if "first_line" not in roles:
            raise ValueError("care_path needs a step with role first_line")
        if "step_up" not in roles:
            raise ValueError("care_path needs a step with role step_up")
        return steps


# --- code verification --------------------------------------------------------------------------


class CodeCheck(_Record):
    """The result of checking one terminology code against an authoritative list (code_checks.yaml)."""

    system: Literal["ICD-11", "LOINC"]
    """Terminology."""
    code: str
    """The code."""
    status: Literal["verified", "unverified", "corrected"]
    """Found with the meaning used / not found in any list available offline / was wrong and was replaced."""
    display: str | None = None
    """The list's title for the code."""
    checked_against: str | None = None
    """Which list (repository and path, or package and version)."""
    used_in: list[str] = Field(default_factory=list)
    """Where the knowledge base uses it (file:field)."""
    correct: str | None = None
    """For a corrected code: what replaced it."""
    correct_display: str | None = None
    """For a corrected code: the replacement's title."""
    note: str | None = None
    """What a reader should know (a more specific child code, a convention)."""


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
    lives_with: Literal["always", "may", "never"]
    """Whether such a relative shares the patient's home: a spouse always (one who lives alone has none), a parent,
    parent-in-law or adult child may, a sibling, aunt or uncle keeps a home of their own."""


class HouseholdRules(_Record):
    """Who lives with the patient and who does the cooking, drawn once per persona (people.yaml `household`)."""

    joins_probability: float = Field(ge=0, le=1)
    """Chance that one relative who may share the home (`RelativeTemplate.lives_with: may`) lives with the patient."""
    patient_cooks_probability: float = Field(ge=0, le=1)
    """Chance that the patient does the cooking where someone at home could."""
    able_age: tuple[int, int]
    """Ages at which a relative does things for the patient: the household's cooking, sorting their tablets, driving
    them in."""
    able_excludes: list[str] = Field(default_factory=list)
    """Conditions (condition or history keys) that take those tasks out of a relative's hands."""
    source: str
    """Where the living arrangements and the limits on what a relative does come from."""


class AdherenceRules(_Record):
    """How a patient keeps to their medicines, drawn once per persona (people.yaml `adherence`)."""

    own_aids: list[AdherenceAid] = Field(min_length=1)
    """Aids a patient keeps by themselves, drawn among where no household member helps."""
    helper_probability: float = Field(ge=0, le=1)
    """Chance that a member of the household able to do it sorts the tablets or reminds, where there is one."""
    source: str
    """Where the aids and the helper come from."""


class NamesByLanguage(_Record):
    """Names to draw from, per language."""

    en: list[str] = Field(min_length=5)
    """English names."""
    zh: list[str] = Field(min_length=5)
    """Chinese names."""


class Occupation(_Record):
    """An occupation a patient can have (people.yaml)."""

    key: str
    """Identifier."""
    text: Text
    """The occupation in a phrase."""
    age: tuple[int, int]
    """Ages of a patient who has it (working occupations end near the US state pension age of 67)."""
    traits: list[OccupationTrait] = Field(min_length=1)
    """What it implies; exactly one of `working` and `retired`."""
    max_encounters: int | None = None
    """The most regular encounters a year the job's roster leaves room for (a fly-in fly-out site worker is home a
    third of the year); not drawn for a longer year. None: no limit."""


class Lifestyle(_Record):
    """A lifestyle phrase, with whom it fits (people.yaml)."""

    key: str
    """Identifier."""
    text: Text
    """The lifestyle in a phrase."""
    requires: list[OccupationTrait] = Field(default_factory=list)
    """Traits the patient's occupation must have ("irregular meals because of shift work": `shift_work`)."""
    excludes: list[OccupationTrait] = Field(default_factory=list)
    """Traits the patient's occupation must not have (a farmer does not eat out every lunch: `rural`)."""
    age: tuple[int, int] = (18, 100)
    """Ages of a patient it fits (caring for grandchildren: 50+)."""
    smoker: bool = False
    """It says the patient smokes now: drawn for smokers only, and every smoker has it."""
    day: Text
    """The phrase in the patient's own account of a day ("I have the grandchildren on weekdays"): every account of
    their day says it, so the lifestyle on record is the one they live."""
    brief_intervention: BriefIntervention | None = None
    """The brief intervention the lifestyle calls for (smoking: very brief advice from the first visit)."""


class People(_Record):
    """What the persona generator draws names, jobs and habits from (people.yaml)."""

    given_names: dict[Literal["female", "male"], NamesByLanguage]
    """Given names by sex."""
    surnames: NamesByLanguage
    """Family names."""
    occupations: list[Occupation] = Field(min_length=5)
    """Occupations, each with the ages and working life it implies."""
    lifestyles: list[Lifestyle] = Field(min_length=5)
    """Lifestyles in a phrase, each with the occupations and ages it fits."""
    height_cm: dict[Literal["female", "male"], tuple[float, float]]
    """Adult height by sex: (mean, standard deviation) in cm; a patient's height is drawn once from it."""
    bmi: tuple[float, float]
    """Range a patient's body-mass index is drawn from where the condition does not set it (kg/m²)."""
    smoking_prevalence: float = Field(ge=0, le=1)
    """Share of patients who smoke now (they, and only they, have the lifestyle with `smoker: true`)."""
    household: HouseholdRules
    """Who lives with the patient and who cooks."""
    adherence: AdherenceRules
    """How a patient keeps to their medicines."""
    source: str
    """Where the heights, the BMI range and the smoking prevalence come from."""


# --- scoring gists ------------------------------------------------------------------------------

GistKind = Literal["allergy_groups", "medication_preferences", "habits", "economic_profiles", "symptoms"]
"""The kinds of fact a patient tells in their own words, named as the sections their keys come from (symptoms: a
condition's or an intercurrent illness's symptom key)."""
GIST_KINDS: tuple[str, ...] = get_args(GistKind)


class Gist(_Record):
    """What an answer must mention to have stated one disclosed fact: per language, concept groups of words; the
    fact is stated when every group has one of its words in the answer (matching rule: gists.yaml)."""

    en: list[list[str]] = Field(default_factory=list)
    """English concept groups."""
    zh: list[list[str]] = Field(default_factory=list)
    """Chinese concept groups."""


class Gists(_Record):
    """The gist of every fact a patient discloses in their own words (gists.yaml); for scoring, never shown."""

    allergy_groups: dict[str, Gist] = Field(default_factory=dict)
    """By allergy-group key."""
    medication_preferences: dict[str, Gist] = Field(default_factory=dict)
    """By medication-preference key."""
    habits: dict[str, Gist] = Field(default_factory=dict)
    """By diet-habit key."""
    economic_profiles: dict[str, Gist] = Field(default_factory=dict)
    """By economic-profile key."""
    symptoms: dict[str, Gist] = Field(default_factory=dict)
    """By symptom key of a condition or an intercurrent illness ("getting up at night to pee" states nocturia)."""

    def of(self, kind: GistKind, key: str, language: Literal["en", "zh"]) -> list[list[str]]:
        """The concept groups an answer must each touch to state a fact.

        Args:
            kind: The section the fact's key comes from (one of `GIST_KINDS`).
            key: The allergy group, medication preference, habit, economic profile or symptom.
            language: `en` or `zh`.

        Returns:
            One list of words per concept group (a copy).

        Raises:
            KeyError: Naming the unknown kind, key or language.
        """
        if kind not in GIST_KINDS:
            raise KeyError(f"unknown gist kind '{kind}'; the kinds are {', '.join(GIST_KINDS)}")
        entries: dict[str, Gist] = getattr(self, kind)
        if key not in entries:
            raise KeyError(f"gists.yaml: {kind}: no gist for '{key}'")
        if language not in ("en", "zh"):
            raise KeyError(f"unknown language '{language}'; gists are in en and zh")
        return [list(group) for group in getattr(entries[key], language)]


# --- accepted other names -----------------------------------------------------------------------


class AliasNames(_Record):
    """Other names of one thing a correct answer may use, per language; both lists written, empty when none."""

    en: list[str]
    """English: brand names, the other INN/USAN spelling, abbreviations, synonyms."""
    zh: list[str]
    """Chinese: generic-name variants, trade names, abbreviations, synonyms."""


class AliasSection(_Record):
    """One section of aliases.yaml: where its names come from, and the names by key."""

    source: str
    """Where the names come from (labels, formularies, coding lists)."""
    names: dict[str, AliasNames]
    """By drug, lab or history key; by ICD-11 code for diagnoses."""


class Aliases(_Record):
    """Accepted other names of drugs, labs and diagnoses (aliases.yaml); for scoring answers, never shown.

    A scorer accepts a record's own `name` and these (which repeat a bracketed part of the name that is a name on
    its own: "acetaminophen" of "paracetamol (acetaminophen)").
    """

    drugs: AliasSection
    """By drug key (every drug has an entry)."""
    labs: AliasSection
    """By lab key (every lab has an entry)."""
    diagnoses: AliasSection
    """By ICD-11 code of a condition, complication, misdiagnosis or intercurrent illness (only codes with names)."""
    history: AliasSection
    """By history-condition key (every history condition has an entry)."""

    def drug(self, key: str, language: Literal["en", "zh"]) -> list[str]:
        """Other names of the drug `key` in `language` (a copy; empty when none)."""
        return _alias_names(self.drugs, key, language)

    def lab(self, key: str, language: Literal["en", "zh"]) -> list[str]:
        """Other names of the lab `key` in `language` (a copy; empty when none)."""
        return _alias_names(self.labs, key, language)

    def diagnosis(self, icd11: str, language: Literal["en", "zh"]) -> list[str]:
        """Other names of the diagnosis coded `icd11` in `language` (a copy; empty when none).

        The names are those of the code's ICD-11 category: a complication that reuses its disease's code (a flare
        of ulcerative colitis under DD71) is not named by them.
        """
        return _alias_names(self.diagnoses, icd11, language)

    def history_condition(self, key: str, language: Literal["en", "zh"]) -> list[str]:
        """Other names of the history condition `key` in `language` (a copy; empty when none)."""
        return _alias_names(self.history, key, language)


def _alias_names(section: AliasSection, key: str, language: str) -> list[str]:
    if language not in ("en", "zh"):
        raise KeyError(f"unknown language '{language}'; aliases are in en and zh")
    entry = section.names.get(key)
    return [] if entry is None else list(getattr(entry, language))
