"""TLA, temporal localization: when something happened (a start, a stop, a dose change, the diagnosis, a
complication), or what happened at a dated visit (capped: naming a date is a metadata lookup)."""

from __future__ import annotations

import random

from medmemorybench.questions.facts import Draft, FactFinder, date_aliases
from medmemorybench.questions.spec import QuestionType, register
from medmemorybench.simulate.models import DiagnosisFact, LabFact, MedicationFact, SymptomFact


def make(finder: FactFinder, checkpoint: int, rng: random.Random) -> list[Draft]:
    drafts: list[Draft] = []

    def when(template: str, fields: dict, event, fact_key: str, kind: str, facts=None) -> None:  # noqa: ANN001
        drafts.append(Draft("TLA", template, fields, event.date, [event], [event.date], fact_key, kind=kind,
                            aliases=date_aliases(event.date, finder.phrasing),
                            facts=facts or [finder.date_fact(event.date)]))

    first_seen: dict[str, tuple] = {}
    for event, fact in finder.facts(checkpoint, LabFact):
        first_seen.setdefault(f"lab:{fact.lab}", (event, "tla.first_lab_date", {"lab_lay": finder.lab_lay(fact.lab)}))  # type: ignore[union-attr]
    for event, fact in finder.facts(checkpoint, SymptomFact):
        first_seen.setdefault(f"symptom:{fact.symptom}", (event, "tla.first_symptom_date",  # type: ignore[union-attr]
                                                          {"symptom_told": finder.told(fact.lay)}))  # type: ignore[union-attr]
    for key, (event, template, fields) in first_seen.items():
        when(template, fields, event, f"first_date:{key}", key.partition(":")[0])
    for event, fact in finder.first_starts(checkpoint):
        if fact.reason != "long_term":
            when("tla.start_date", {"drug": finder.drug(fact.drug)}, event, f"start_date:{fact.drug}", "start",
                 facts=finder.start_date_facts(event))
    stops = [(e, f) for e, f in finder.facts(checkpoint, MedicationFact) if f.action == "stop"]  # type: ignore[union-attr]
    stopped_once = [d for d in {f.drug for _, f in stops} if sum(f.drug == d for _, f in stops) == 1]
    for event, fact in stops:
        if fact.drug in stopped_once:
            when("tla.stop_date", {"drug": finder.drug(fact.drug)}, event, f"stop_date:{fact.drug}", "stop")
    increases = [(e, f) for e, f in finder.facts(checkpoint, MedicationFact)
                 if f.action == "increase" and f.previous_dose is not None]  # type: ignore[union-attr]
    for event, fact in increases:
        fields = {"drug": finder.drug(fact.drug), "previous_dose": finder.format_number(fact.previous_dose),
                  "unit": finder.words.unit(fact.unit)}
        when("tla.dose_change_date", fields, event, f"increase:{event.event_id}", "dose_change")
    complications = [f.icd11 for e in finder.upto(checkpoint) for f in e.facts
                     if isinstance(f, DiagnosisFact) and f.status == "complication"]
    for event in finder.upto(checkpoint):
        for fact in event.facts:
            if isinstance(fact, DiagnosisFact) and fact.status == "confirmed":
                when("tla.diagnosis_date", {"condition_lay": finder.condition_lay()}, event, "diagnosis_date",
                     "diagnosis")
            elif isinstance(fact, DiagnosisFact) and fact.status == "acute" and (ill := finder.illness_of(event)):
                when("tla.illness_date", {"illness": finder.illness_lay(ill)}, event, f"illness_date:{ill.key}",
                     "illness")
            elif isinstance(fact, DiagnosisFact) and fact.status == "complication" \
                    and complications.count(fact.icd11) == 1:
                when("tla.complication_date", {"complication": finder.t(fact.name)}, event,
                     f"complication_date:{fact.icd11}", "complication")
        if event.kind in ("prescription", "dose_change", "switch"):
            meds = [f for f in event.facts if isinstance(f, MedicationFact) and f.reason != "long_term"]
            if not meds:
                continue
            answer = finder.event_text(event.model_copy(update={"facts": meds}))
            keys = [finder.drug(meds[0].drug), finder.dose(meds[-1])]
            # (what changed: the first drug by name and the last change's dose, as the key facts; every dose changed
            # that day is a right dose to name)
            facts = [finder.drug_fact(meds[0].drug)]
            doses = [finder.dose(m) for m in meds if m.action != "stop"]
            facts += [finder.quantity_fact(d, required=d == doses[-1]) for d in dict.fromkeys(doses)]
            drafts.append(Draft("TLA", "tla.event_on_date", {"date": event.date}, answer, [event], keys,
                                f"event:{event.event_id}", kind="event", names_date=True, facts=facts))
    return drafts


register(QuestionType(
    code="TLA", name="temporal localization", order=2, make=make, quota=2, judged=True,
    rubric="the date (any format) or, for a dated visit, what was changed that day",
))
