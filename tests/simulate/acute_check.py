"""Independent readings of what a harm told at a visit calls for that day, beyond acting on the drug.

Each function returns violation messages (empty: the year passes) and reads only the record and the knowledge base,
never the engine's state. The rules (names as `docs/simulation.md` lists them):

- `harm_workup_same_day`: a harm a history can cause in its own right (a fit in long QT syndrome may be torsades de
  pointes, not the drug's seizure), told by a patient with that history or taking a drug one of its rules names, has
  the history's work-up labs that day (`HistoryCondition.harm_workup`: an ECG, potassium and calcium; the seed-37 read:
  a "fit" on bupropion in congenital long QT put down to the drug with no ECG or electrolytes, the first ECG 8 days
  later).
"""

from __future__ import annotations

from medmemorybench.knowledge.base import KnowledgeBase
from medmemorybench.simulate.models import AdverseFact, CareYear, LabFact
from tests.simulate.clinical import fail
from tests.simulate.monitoring_check import _taken_on, taking_spans


def named_by(kb: KnowledgeBase, history: str) -> set[str]:
    """The drugs a contraindication or caution of `history` names."""
    return {d for r in kb.contraindications if r.history == history for d in kb.expand(r.drugs + r.classes)}


def harm_workup_violations(kb: KnowledgeBase, year: CareYear) -> list[str]:
    """`harm_workup_same_day`."""
    spans = taking_spans(year)
    out = []
    for history in kb.history_conditions.values():
        named = named_by(kb, history.key)
        for workup in history.harm_workup:
            for event in year.events:
                told = [f for f in event.facts if isinstance(f, AdverseFact) and f.effect in workup.effects]
                has = history.key in year.persona.histories or workup.named_drugs and any(
                    _taken_on(spans, drug, event.date) for drug in named)
                if not told or not has:
                    continue
                measured = {f.lab for f in event.facts if isinstance(f, LabFact)}
                missing = [lab for lab in workup.labs if lab not in measured]
                if missing:
                    out.append(fail("harm_workup_same_day", year, event, f"{told[0].effect} of {told[0].drug} told "
                                    f"with {history.key} (or a drug its rules name) and no {', '.join(missing)} "
                                    "that day"))
    return out
