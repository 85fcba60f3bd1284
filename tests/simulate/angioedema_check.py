"""Independent reading of angioedema on a drug: an emergency-advice event (NICE CKS angioedema; the seed-73 read,
P0009 E045: lips and tongue swelling every day for two weeks on lisinopril, the drug stopped with no examination, no
safety net and a review nine days later).

The rule (its name as `docs/simulation.md` lists it):

- `angioedema_emergency_advice`: the visit where a drug's angioedema is told takes the breathing rate and the oxygen
  saturation (the airway and breathing examined), stops the drug, and says the emergency safety net: 999 or A&E at
  once if the tongue or throat swells or breathing or swallowing is hard, never the drug again.

It returns violation messages (empty: the year passes) and reads only the record, never the engine's state.
"""

from __future__ import annotations

from medmemorybench.knowledge.base import KnowledgeBase
from medmemorybench.simulate.models import AdverseFact, AdviceFact, CareYear, LabFact, MedicationFact
from tests.simulate.clinical import fail

ANGIOEDEMA = "angioedema"
"""The adverse effect's key."""
EMERGENCY_ADVICE = "angioedema_emergency"
"""The advice that says the examination and the 999/A&E safety net."""
AIRWAY_SIGNS = ("respiratory_rate", "spo2")
"""What the airway and breathing examination records."""


def angioedema_violations(kb: KnowledgeBase, year: CareYear) -> list[str]:
    """`angioedema_emergency_advice`."""
    out = []
    for event in year.events:
        for fact in event.facts:
            if not (isinstance(fact, AdverseFact) and fact.effect == ANGIOEDEMA):
                continue
            measured = {f.lab for f in event.facts if isinstance(f, LabFact)}
            if missing := [lab for lab in AIRWAY_SIGNS if lab not in measured]:
                out.append(
                    fail(
                        "angioedema_emergency_advice",
                        year,
                        event,
                        f"angioedema on {fact.drug} told with no {', '.join(missing)} that visit",
                    )
                )
            if not any(isinstance(f, AdviceFact) and f.advice == EMERGENCY_ADVICE for f in event.facts):
                out.append(
                    fail(
                        "angioedema_emergency_advice",
                        year,
                        event,
                        f"angioedema on {fact.drug} told without the emergency safety net",
                    )
                )
            if not any(
                isinstance(f, MedicationFact) and f.drug == fact.drug and f.action == "stop" for f in event.facts
            ):
                out.append(
                    fail(
                        "angioedema_emergency_advice",
                        year,
                        event,
                        f"angioedema on {fact.drug} told and {fact.drug} not stopped that visit",
                    )
                )
    return out
