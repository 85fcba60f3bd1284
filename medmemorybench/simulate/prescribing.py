"""Writing a prescription for a care step on a day: the drug, its formulation, dose and regimen, and why not the others.

The step's candidates are tried in order of preference; each is checked against every rule that binds
the patient that day (`safety.verdict`). The first allowed one is given; each preferred candidate that
a rule barred becomes an `AvoidedFact` naming every rule (and trap) that barred it, and each caution on
the chosen drug becomes a `CautionFact`. Candidates the patient already takes, whose therapy group
(`KnowledgeBase.therapy_group`) they already take, or a one-off already given this year are skipped:
that is duplication, not safety.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from medmemorybench.knowledge.base import KnowledgeBase
from medmemorybench.knowledge.models import DOSES_PER_DAY, CareStep, DoseForm, DoseSpec, Regimen
from medmemorybench.simulate.models import AvoidedFact, CautionFact, Fact, MedicationFact
from medmemorybench.simulate.safety import Patient, Verdict, is_long_term, suits_preferences, verdict


@dataclass(frozen=True)
class Prescription:
    """A drug chosen for a step, ready to be started."""

    drug: str
    step: str | None
    dose: float
    unit: str
    frequency: str
    regimen: Regimen
    course_days: int | None
    release: str
    verdict: Verdict
    avoided: tuple[AvoidedFact, ...]

    def facts(self, reason: str, indication: str) -> list[Fact]:
        """The medication fact, what was avoided, and the cautions the doctor gives."""
        action = "administer" if self.regimen == "one_off" else "start"
        frequency = "once" if self.regimen == "one_off" else self.frequency
        start = MedicationFact(drug=self.drug, action=action, dose=self.dose, unit=self.unit, frequency=frequency,
                               reason=reason, indication=indication, step=self.step,
                               course_days=self.course_days if self.regimen == "course" else None,
                               release=self.release)  # type: ignore[arg-type]
        cautions = [CautionFact(drug=self.drug, rule=c.rule, trap=c.trap) for c in self.verdict.cautions]
        return [start, *self.avoided, *cautions]


def prescribe(kb: KnowledgeBase, drug_key: str, patient: Patient, step: CareStep | None = None,
              result: Verdict | None = None, avoided: tuple[AvoidedFact, ...] = ()) -> Prescription | None:
    """A prescription of `drug_key` (for `step`, with its use-specific dosing), or None if a rule bars it."""
    result = result or verdict(kb, drug_key, patient)
    if not result.is_allowed or result.formulation is None:
        return None
    drug = kb.drugs[drug_key]
    candidate = step.candidate(drug_key) if step and drug_key in step.drug_keys else None
    form, spec = formulation = _for_use(result, candidate.dose if candidate else None)
    if candidate and candidate.dosing and result.doses((form, candidate.dosing)) \
            and suits_preferences(kb, patient, drug_key, (form, candidate.dosing)):  # (its use's ladder, under the cap)
        form, spec = formulation = form, candidate.dosing
    doses = result.doses(formulation)
    own_dosing = form.dose is None  # (the use's dose replaces the drug's own: prednisolone 40 mg for a burst)
    dose = candidate.dose if candidate and candidate.dose and own_dosing \
        else next((d for d in doses if candidate and candidate.dose and d >= candidate.dose - 1e-9), doses[0])
    per_day = DOSES_PER_DAY[spec.frequency]
    if result.max_daily_dose is not None and dose * per_day > result.max_daily_dose + 1e-9:
        dose = max(d for d in doses if d <= dose)
    if result.start_dose is not None and result.start_dose < dose:
        dose = result.start_dose
    regimen = (candidate.regimen if candidate and candidate.regimen else None) or drug.regimen
    course_days = (candidate.course_days if candidate and candidate.course_days else None) or drug.course_days
    return Prescription(drug_key, step.key if step else None, dose, spec.unit, spec.frequency, regimen,
                        course_days if regimen == "course" else None, form.release, result, avoided)


def _for_use(result: Verdict, dose: float | None) -> tuple[DoseForm, DoseSpec]:
    """The formulation a use with a dose of its own is given in: the first the patient can take, under the cap, that
    holds that dose a time (amoxicillin for pneumonia at an eGFR under 30: 500 mg every 12 hours, not the 250 mg kept
    for mild infections); the first one where none does or the use has no dose of its own."""
    assert result.formulation is not None
    if dose is None:
        return result.formulation
    return next((f for f in result.options if (f[0].dose is None and _fits(result, f, dose))
                 or any(d >= dose - 1e-9 for d in result.doses(f))), result.formulation)


def _fits(result: Verdict, formulation: tuple[DoseForm, DoseSpec], dose: float) -> bool:
    """Whether `dose` a time, taken as the formulation says, is within the cap."""
    cap = result.max_daily_dose
    return cap is None or dose * DOSES_PER_DAY[formulation[1].frequency] <= cap + 1e-9


def choose_for_step(kb: KnowledgeBase, step: CareStep, patient: Patient, exclude: set[str] = frozenset()  # type: ignore[assignment]
                    ) -> Prescription | None:
    """The first candidate of `step` every rule allows, with the barred preferred ones as avoided facts; for a
    course, a patient who can manage only so many doses a day of anything (`course_dose_limit`) gets the first
    allowed candidate with no caution that fits that, else the one taken least often. A caution outranks the fit:
    a once-a-day tablet the rules caution for this patient (clarithromycin in heart failure, beside amlodipine) is
    not chosen over a candidate they do not caution (the seed-47 read), only over none. A candidate a history of
    the patient cautions against (`contraindication:<history>`: venlafaxine in long QT syndrome) is chosen
    only where no later candidate is allowed without one (the seed-79 read)."""
    taken_groups = {kb.therapy_group(d) for d in patient.taking}
    limit = course_dose_limit(kb, patient)
    barred: list[tuple[str, Verdict]] = []
    # (cautioned; doses a day beyond the limit, or 0; order; drug; verdict; how many barred before it)
    allowed: list[tuple[bool, float, int, str, Verdict, int]] = []
    for order, drug_key in enumerate(step.drug_keys):
        if drug_key in exclude or drug_key in patient.taking or drug_key in patient.given_once \
                or kb.therapy_group(drug_key) in taken_groups:
            continue
        regimen = step.candidate(drug_key).regimen
        result = verdict(kb, drug_key, patient, regimen)
        if not result.is_allowed:
            barred.append((drug_key, result))
            continue
        if limit is None or is_long_term(kb, drug_key, regimen):
            weighed = any(c.rule.startswith("contraindication:") for c in result.cautions)
            allowed.append((weighed, 0, order, drug_key, result, len(barred)))
            if not weighed:
                break
            continue
        result = _least_often(result)
        assert result.formulation is not None
        per_day = DOSES_PER_DAY[result.formulation[1].frequency]
        cautioned = bool(result.cautions)
        allowed.append((cautioned, 0 if per_day <= limit else per_day, order, drug_key, result, len(barred)))
        if per_day <= limit and not cautioned:
            break
    if not allowed:
        return None
    _, _, _, drug_key, result, before = min(allowed, key=lambda a: a[:3])
    avoided = tuple(AvoidedFact(drug=d, traps=v.traps, rules=[b.rule for b in v.blocks], instead=drug_key)
                    for d, v in barred[:before])
    return prescribe(kb, drug_key, patient, step, result, avoided)


def course_dose_limit(kb: KnowledgeBase, patient: Patient) -> float | None:
    """The most doses a day a patient manages, from a preference that binds only long-term drugs (a once-a-day
    blister pack: a course is given beside it, fitted to it where the step has a candidate that fits, NICE NG5 and
    the seed-37 read: penicillin V four times a day to a patient who "can only take things once a day")."""
    limits = [kb.preferences[c.option].max_doses_per_day for c in patient.constraints
              if c.category == "medication_preference" and kb.preferences[c.option].long_term_only]
    return min((x for x in limits if x is not None), default=None)


def _least_often(result: Verdict) -> Verdict:
    """The verdict with the formulation taken fewest times a day first (clarithromycin's once-daily tablet)."""
    if not result.options:
        return result
    options = tuple(sorted(result.options, key=lambda f: DOSES_PER_DAY[f[1].frequency]))
    return replace(result, formulation=options[0], options=options)


def ladder_of(kb: KnowledgeBase, drug_key: str, release: str, frequency: str) -> DoseSpec:
    """The dosing of the formulation a patient is on (matched by release and frequency, then a use's own ladder by its
    frequency, `Candidate.dosing`; the drug's own where a kidney rule spaced its doses out, `safety.spacing_of`: the
    same doses, taken less often)."""
    drug = kb.drugs[drug_key]
    return next((spec for form, spec in drug.formulations() if form.release == release and spec.frequency == frequency),
                next((spec for spec in kb.use_dosings.get(drug_key, ()) if spec.frequency == frequency), drug.dose))


def next_dose(kb: KnowledgeBase, drug_key: str, dose: float, patient: Patient, release: str, frequency: str
              ) -> float | None:
    """The next dose up the ladder of the formulation being taken that the rules allow (None: top, or capped)."""
    result = verdict(kb, drug_key, patient)
    if not result.is_allowed:
        return None
    spec = ladder_of(kb, drug_key, release, frequency)
    per_day = DOSES_PER_DAY[frequency]
    higher = [d for d in spec.doses() if d > dose + 1e-9
              and (result.max_daily_dose is None or d * per_day <= result.max_daily_dose + 1e-9)]
    return higher[0] if higher else None
