"""An independent reading of sick-day advice (the seed-79 read, issue 27: community-acquired pneumonia on metformin,
losartan and lithium, and no word on pausing them or on lithium toxicity).

The function returns violation messages (empty: the year passes) and reads only the record, never the engine's state
or the knowledge base's own rule (the drugs and words below are the guidelines', restated here). The rule (its name as
`docs/simulation.md` lists it):

- `sick_day_advice`: a visit at which an acute illness with a fever, vomiting or diarrhoea is told (an intercurrent
  illness's symptom named so) in a patient taking, on record, metformin, an ACE inhibitor, an ARB (or ARNI), a
  diuretic, an SGLT2 inhibitor or an NSAID gives sick-day advice (pause while unwell and unable to keep fluids
  down, restart 24-48 hours after eating and drinking normally), and in one taking lithium the advice on its toxicity
  (NICE NG203 and CKS; Think Kidneys / UK Renal Association 2018 sick day guidance, SADMANS; KDIGO 2024; NICE CG185
  and the lithium SmPC). A chronic condition's own symptom (lupus's low-grade fever, colitis's diarrhoea) is no
  acute illness and is left out.
"""

from __future__ import annotations

from medmemorybench.knowledge.base import KnowledgeBase
from medmemorybench.simulate.models import AdviceFact, CareYear, MedicationFact, SymptomFact
from tests.simulate.clinical import fail, taken_on

DEHYDRATING_WORDS = ("fever", "vomit", "diarrh")
"""What an acute illness's symptom is named with when it dehydrates (Think Kidneys 2018: vomiting, diarrhoea, fevers
with sweats and shaking)."""
PAUSED_CLASSES = ("biguanide", "ace_inhibitor", "arb", "arni", "thiazide_diuretic", "loop_diuretic",
                  "mineralocorticoid_antagonist", "sglt2_inhibitor", "nsaid", "cox2_inhibitor")
"""SADMANS less the sulfonylureas (NICE NG203, Think Kidneys 2018): the drugs paused on sick days."""
WATCHED_DRUGS = ("lithium",)
"""A drug whose level dehydration raises (NICE CG185; Priadel SmPC 4.4)."""
PAUSE_ADVICE, WATCH_ADVICE = "sick_day_rules", "sick_day_lithium"


def sick_day_violations(kb: KnowledgeBase, year: CareYear) -> list[str]:
    """`sick_day_advice`: every visit telling a dehydrating acute illness."""
    paused = kb.expand(list(PAUSED_CLASSES))
    history = {t.option for t in year.persona.traps if t.category == "medication_history"}
    out = []
    for event in year.events:
        told = [f for f in event.facts if isinstance(f, SymptomFact) and "." in f.symptom
                and any(w in f.name.en.lower() for w in DEHYDRATING_WORDS)]
        if not told:
            continue
        # (on record: the patient's own long-term drug only once a visit has named it)
        named = {f.drug for e in year.events[:event.index - 1] for f in e.facts if isinstance(f, MedicationFact)}
        taken = {d for d in taken_on(year, event) if d not in history or d in named}
        advised = {f.advice for f in event.facts if isinstance(f, AdviceFact)}
        for drugs, advice in ((taken & paused, PAUSE_ADVICE), (taken & set(WATCHED_DRUGS), WATCH_ADVICE)):
            if drugs and advice not in advised:
                out.append(fail("sick_day_advice", year, event,
                                f"'{told[0].name.en}' on {', '.join(sorted(drugs))} without {advice}"))
    return out
