"""Independent readings of anaemia found in the record: on an anticoagulant it is a bleed until shown otherwise, and
iron deficiency is named on a ferritin (issue 27, the seed-89 read: "iron deficiency anaemia from chronic blood loss"
named on warfarin after haemoglobin 130 -> 113 g/L in 17 days, oral iron and routine follow-up alone, no INR, pulse,
blood pressure or ferritin ever).

Each function returns violation messages (empty: the year passes) and reads only the record and the knowledge base,
never the engine's state. The rules (names as `docs/simulation.md` lists them):

- `anaemia_on_anticoagulant_assessed`: a complication diagnosed, or a harm told, that lowers the haemoglobin, in a
  patient the record shows taking an anticoagulant (a vitamin K antagonist, a DOAC or a low-molecular-weight heparin),
  has the pulse and the blood pressure taken that day, the INR too on a vitamin K antagonist, and the bleeding asked
  about (NICE CKS Anticoagulation - oral; BSH 2011 warfarin guideline; BSG 2021 iron deficiency anaemia guideline).
- `iron_deficiency_confirmed_by_ferritin`: iron deficiency anaemia (ICD-11 3A00) is diagnosed only at a visit with a
  ferritin below 30 µg/L on record that day (BSG 2021: ferritin the most useful single marker, below 15 µg/L
  diagnostic, below 30 µg/L suggestive; ECCO 2015 anaemia in IBD: below 30 µg/L without inflammation).
"""

from __future__ import annotations

from medmemorybench.knowledge.base import KnowledgeBase
from medmemorybench.simulate.models import (
    AdverseFact,
    AdviceFact,
    CareYear,
    ComplicationFact,
    DiagnosisFact,
    LabFact,
    SymptomFact,
)
from tests.simulate.clinical import fail
from tests.simulate.monitoring_check import _taken_on, taking_spans

ANTICOAGULANTS = ("vitamin_k_antagonist", "doac", "low_molecular_weight_heparin")
"""Drug classes that make a fall in haemoglobin a possible bleed."""
VKA = "vitamin_k_antagonist"
"""The class whose anticoagulation the INR measures."""
BLEEDING_ADVICE = "anaemia_on_anticoagulant"
"""The advice that asks about the bleeding and says when to come in at once."""
FERRITIN_BELOW = 30.0
"""µg/L: the ferritin iron deficiency is named under (BSG 2021, ECCO 2015)."""


def _lowers_haemoglobin(lab: str | None, delta: float | None) -> bool:
    return lab == "hemoglobin" and delta is not None and delta < 0


def anaemia_on_anticoagulant_violations(kb: KnowledgeBase, year: CareYear) -> list[str]:
    """`anaemia_on_anticoagulant_assessed`."""
    spans = taking_spans(year)
    anticoagulants, vkas = kb.expand(list(ANTICOAGULANTS)), kb.expand([VKA])
    lowering = {c.key for c in kb.conditions[year.persona.condition].complications
                if _lowers_haemoglobin(c.lab, c.lab_delta)}
    out = []
    for event in year.events:
        told = {f.symptom for f in event.facts if isinstance(f, SymptomFact)}
        falls = [f"complication {f.complication}" for f in event.facts
                 if isinstance(f, ComplicationFact) and f.complication in lowering]
        falls += [f"{f.effect} of {f.drug}" for f in event.facts if isinstance(f, AdverseFact) and f.effect in told
                  for e in kb.drugs[f.drug].adverse_effects
                  if e.key == f.effect and _lowers_haemoglobin(e.lab, e.lab_delta)]
        taking = {d for d in anticoagulants if _taken_on(spans, d, event.date)}
        if not falls or not taking:
            continue
        measured = {f.lab for f in event.facts if isinstance(f, LabFact)}
        wanted = ["heart_rate", "systolic_bp", *(["inr"] if taking & vkas else [])]
        missing = [lab for lab in wanted if lab not in measured]
        if not any(isinstance(f, AdviceFact) and f.advice == BLEEDING_ADVICE for f in event.facts):
            missing.append("bleeding assessment")
        if missing:
            out.append(fail("anaemia_on_anticoagulant_assessed", year, event,
                            f"{falls[0]} on {', '.join(sorted(taking))} with no {', '.join(missing)} that day"))
    return out


def iron_deficiency_ferritin_violations(year: CareYear) -> list[str]:
    """`iron_deficiency_confirmed_by_ferritin`."""
    out = []
    for event in year.events:
        named = [f for f in event.facts if isinstance(f, DiagnosisFact) and f.icd11.startswith("3A00")
                 and f.status not in ("ruled_out", "suspected")]
        if not named:
            continue
        ferritin = [f.value for f in event.facts if isinstance(f, LabFact) and f.lab == "ferritin"]
        if not ferritin or min(ferritin) >= FERRITIN_BELOW:
            out.append(fail("iron_deficiency_confirmed_by_ferritin", year, event, f"{named[0].name.en} diagnosed with "
                            f"{'ferritin ' + str(min(ferritin)) if ferritin else 'no ferritin'} that day"))
    return out
