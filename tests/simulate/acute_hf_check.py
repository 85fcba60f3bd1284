"""Independent reading of acute decompensated heart failure with a low oxygen: an emergency, never a routine visit.

Each function returns violation messages (empty: the year passes) and reads only the record and the knowledge base,
never the engine's state. The rule (its name as `docs/simulation.md` lists it):

- `decompensation_admitted`: a heart-failure patient (ICD-11 BD1x) with an SpO2 at or below 90 % (2021 ESC HF
  guideline, acute HF: oxygen and hospital care below 90 %; BTS 2017 emergency oxygen guideline: below 92 % on air
  needs urgent assessment), or told acute decompensated heart failure (BD10), is admitted the same day with the
  in-hospital plan said (ambulance on oxygen, IV loop diuretic: `acute_hf_admission`); within 21 days of the
  admission (a week on the ward, then NICE NG106's two weeks), a review rechecks weight, potassium and eGFR
  (NICE NG106: U&E after a diuretic change) and reviews the loop diuretic (raised, or kept with why: its top dose, or
  a caution that holds it; "stable" is no review, because it decompensated on that dose). The seed-37 read (P0004
  E043: SpO2 89 % with oral furosemide and "I'll sort the appointment at the desk") and the seed-47 read (P0004
  E052: "take a taxi", "Nothing changes with furosemide", no weight or U&E).
"""

from __future__ import annotations

from medmemorybench.knowledge.base import KnowledgeBase
from medmemorybench.simulate.models import (
    AdviceFact,
    CareYear,
    ComplicationFact,
    DiagnosisFact,
    Event,
    LabFact,
    MedicationFact,
    SettingFact,
)
from tests.simulate.clinical import days_between, fail

SPO2_ADMIT_AT = 90.0
"""At or below: hypoxic (2021 ESC HF guideline, acute HF)."""
HEART_FAILURE_BLOCK = "BD1"
"""ICD-11 heart failure (BD10 acute, BD11 left ventricular failure)."""
ACUTE_HF = "BD10"
IN_HOSPITAL_PLAN = "acute_hf_admission"
"""Advice that says the plan: ambulance on oxygen, IV loop diuretic, daily weight and U&E."""
REVIEW_WITHIN_DAYS = 21
"""From the admission: about a week on the ward (National Heart Failure Audit), then NICE NG106's follow-up within
2 weeks of discharge (ESC 2021 acute HF: 1-2 weeks); the knowledge base's `after_discharge` is checked against it."""
REVIEW_LABS = ("weight", "potassium", "egfr")
REVIEWED_KEPT = {"top_dose", "raise_held"}
"""Reasons a loop diuretic kept at its dose after an admission counts as reviewed."""


def is_heart_failure(kb: KnowledgeBase, year: CareYear) -> bool:
    return kb.conditions[year.persona.condition].icd11.code.startswith(HEART_FAILURE_BLOCK)


def hypoxic_decompensation(kb: KnowledgeBase, event: Event) -> bool:
    """SpO2 at or below the threshold, or acute decompensated heart failure diagnosed, at this visit."""
    low = any(isinstance(f, LabFact) and f.lab == "spo2" and f.value <= SPO2_ADMIT_AT for f in event.facts)
    acute = any(isinstance(f, DiagnosisFact) and f.icd11.startswith(ACUTE_HF) for f in event.facts)
    return low or acute and any(isinstance(f, ComplicationFact) for f in event.facts)


def _reviews_loop_diuretic(kb: KnowledgeBase, event: Event) -> bool:
    return any(isinstance(f, MedicationFact) and kb.drugs[f.drug].drug_class == "loop_diuretic"
               and (f.action in ("increase", "decrease", "stop", "start")
                    or f.action == "continue" and f.reason in REVIEWED_KEPT) for f in event.facts)


def decompensation_violations(kb: KnowledgeBase, year: CareYear) -> list[str]:
    """`decompensation_admitted`."""
    if not is_heart_failure(kb, year):
        return []
    out = []
    for i, event in enumerate(year.events):
        if not hypoxic_decompensation(kb, event):
            continue
        if not any(isinstance(f, SettingFact) and f.setting == "admission" for f in event.facts):
            out.append(fail("decompensation_admitted", year, event, "hypoxic decompensation not admitted that day"))
        if not any(isinstance(f, AdviceFact) and f.advice == IN_HOSPITAL_PLAN for f in event.facts):
            out.append(fail("decompensation_admitted", year, event, "no in-hospital plan (ambulance on oxygen, IV "
                            "loop diuretic) said"))
        after = [e for e in year.events[i + 1:] if 0 < days_between(event.date, e.date) <= REVIEW_WITHIN_DAYS]
        measured = {f.lab for e in after for f in e.facts if isinstance(f, LabFact)}
        missing = [lab for lab in REVIEW_LABS if lab not in measured]
        if missing:
            out.append(fail("decompensation_admitted", year, event, f"no {', '.join(missing)} within "
                            f"{REVIEW_WITHIN_DAYS} days after the admission"))
        if not any(_reviews_loop_diuretic(kb, e) for e in after):
            out.append(fail("decompensation_admitted", year, event, "loop diuretic dose not reviewed within "
                            f"{REVIEW_WITHIN_DAYS} days after the admission"))
    return out
