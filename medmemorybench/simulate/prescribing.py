"""Writing a prescription for a care step on a day: the drug, its formulation, dose and regimen, and why not the others.

The step's candidates are tried in order of preference; each is checked against every rule that binds
the patient that day (`safety.verdict`). The first allowed one is given; each preferred candidate that
a rule barred becomes an `AvoidedFact` naming every rule (and trap) that barred it, and each caution on
the chosen drug becomes a `CautionFact`. Candidates the patient already takes, whose therapy group
(`KnowledgeBase.therapy_group`) they already take, or a one-off already given this year are skipped:
that is duplication, not safety.
"""

from __future__ import annotations

from dataclasses import dataclass

from medmemorybench.knowledge.base import KnowledgeBase
from medmemorybench.knowledge.models import DOSES_PER_DAY, CareStep, DoseSpec, Regimen
from medmemorybench.simulate.models import AvoidedFact, CautionFact, Fact, MedicationFact
from medmemorybench.simulate.safety import Patient, Verdict, verdict


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
    form, spec = result.formulation
    doses = result.doses()
    dose = candidate.dose if candidate and candidate.dose else doses[0]
    per_day = DOSES_PER_DAY[spec.frequency]
    if result.max_daily_dose is not None and dose * per_day > result.max_daily_dose + 1e-9:
        dose = max(d for d in doses if d <= dose)
    if result.start_dose is not None and result.start_dose < dose:
        dose = result.start_dose
    regimen = (candidate.regimen if candidate and candidate.regimen else None) or drug.regimen
    course_days = (candidate.course_days if candidate and candidate.course_days else None) or drug.course_days
    return Prescription(drug_key, step.key if step else None, dose, spec.unit, spec.frequency, regimen,
                        course_days if regimen == "course" else None, form.release, result, avoided)


def choose_for_step(kb: KnowledgeBase, step: CareStep, patient: Patient, exclude: set[str] = frozenset()  # type: ignore[assignment]
                    ) -> Prescription | None:
    """The first candidate of `step` every rule allows, with the barred preferred ones as avoided facts."""
    taken_groups = {kb.therapy_group(d) for d in patient.taking}
    barred: list[tuple[str, Verdict]] = []
    for drug_key in step.drug_keys:
        if drug_key in exclude or drug_key in patient.taking or drug_key in patient.given_once \
                or kb.therapy_group(drug_key) in taken_groups:
            continue
        result = verdict(kb, drug_key, patient, step.candidate(drug_key).regimen)
        if not result.is_allowed:
            barred.append((drug_key, result))
            continue
        avoided = tuple(AvoidedFact(drug=d, traps=v.traps, rules=[b.rule for b in v.blocks], instead=drug_key)
                        for d, v in barred)
        return prescribe(kb, drug_key, patient, step, result, avoided)
    return None


def ladder_of(kb: KnowledgeBase, drug_key: str, release: str, frequency: str) -> DoseSpec:
    """The dosing of the formulation a patient is on (matched by release and frequency)."""
    drug = kb.drugs[drug_key]
    return next((spec for form, spec in drug.formulations() if form.release == release and spec.frequency == frequency),
                drug.dose)


def next_dose(kb: KnowledgeBase, drug_key: str, dose: float, patient: Patient, release: str, frequency: str
              ) -> float | None:
    """The next dose up the ladder of the formulation being taken that the rules allow (None: top, or capped)."""
    result = verdict(kb, drug_key, patient)
    if not result.is_allowed:
        return None
    spec = ladder_of(kb, drug_key, release, frequency)
    per_day = DOSES_PER_DAY[spec.frequency]
    higher = [d for d in spec.doses() if d > dose + 1e-9
              and (result.max_daily_dose is None or d * per_day <= result.max_daily_dose + 1e-9)]
    return higher[0] if higher else None
