"""SUA, state update: the latest version of something that changed (a lab measured again, a dose changed or
corrected, a drug replaced by another)."""

from __future__ import annotations

import random

from medmemorybench.questions.facts import Draft, FactFinder
from medmemorybench.questions.spec import QuestionType, register
from medmemorybench.simulate.models import Event, LabFact, MedicationFact
from medmemorybench.simulate.timeline import state_on


def make(finder: FactFinder, checkpoint: int, rng: random.Random) -> list[Draft]:
    drafts: list[Draft] = []
    upto = finder.upto(checkpoint)
    if not upto:
        return drafts
    series: dict[str, list[tuple[Event, LabFact]]] = {}
    for event, fact in finder.facts(checkpoint, LabFact):
        series.setdefault(fact.lab, []).append((event, fact))  # type: ignore[union-attr, arg-type]
    for lab, points in series.items():
        if len(points) >= 2 and points[-1][1].value != points[0][1].value:
            event, fact = points[-1]
            value = finder.lab_value(fact)
            drafts.append(Draft("SUA", "sua.latest_lab", {"lab_lay": finder.lab_lay(lab)}, value, [event], [value],
                                f"latest:{lab}:{event.event_id}", kind="lab",
                                aliases=[value.replace(" ", "")], facts=[finder.lab_fact(fact)]))
    state = state_on(finder.year, upto[-1].date)
    by_date = {e.date: e for e in upto}
    changes: dict[str, int] = {}
    for _, fact in finder.facts(checkpoint, MedicationFact):
        if fact.action in ("increase", "decrease", "correct"):  # type: ignore[union-attr]
            changes[fact.drug] = changes.get(fact.drug, 0) + 1  # type: ignore[union-attr]
    for drug, dose in state.medications.items():
        event = by_date.get(dose.since)
        if event is None or event.kind == "trap_disclosure" or not changes.get(drug):
            continue  # only a dose that changed is a state update
        value = finder.dose_text(dose.dose, dose.unit)
        drafts.append(Draft("SUA", "sua.current_dose", {"drug": finder.drug(drug)}, value, [event], [value],
                            f"dose:{drug}:{dose.since}", kind="dose",
                            aliases=[value.replace(" ", "")], facts=[finder.quantity_fact(value)]))
    for event in upto:
        if event.kind == "switch":
            start, stop, stopped_in = switched(finder, event)
            if stop is None or stopped_in is None:
                continue
            name = finder.drug(start.drug)
            drafts.append(Draft("SUA", "sua.replacement", {"drug": finder.drug(stop.drug)}, name,
                                [stopped_in, event], [name], f"replacement:{event.event_id}", kind="replacement",
                                facts=[finder.drug_fact(start.drug)]))
    return drafts


def switched(finder: FactFinder, event: Event) -> tuple[MedicationFact, MedicationFact | None, Event | None]:
    """A switch's new drug, and the drug it replaces with the visit where that was stopped."""
    start = next(f for f in event.facts if isinstance(f, MedicationFact) and f.action in ("start", "administer"))
    for earlier in reversed([e for e in finder.events if e.index <= event.index]):
        stop = next((f for f in earlier.facts if isinstance(f, MedicationFact) and f.action == "stop"
                     and f.step == start.step and f.reason == start.reason), None)
        if stop is not None:
            return start, stop, earlier
    return start, None, None


register(QuestionType(
    code="SUA", name="state update", order=3, make=make, quota=1, judged=True,
    rubric="the latest value or dose (an earlier one is wrong), or that the drug was stopped",
))
