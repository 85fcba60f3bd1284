"""EEM, entity exact match: one exact value the patient was told (a dose, a drug, a lab value, a finding,
a side effect, an allergen). Lab values are asked by what happened at the visit, by month or as the first
reading; only a capped share names the visit's date."""

from __future__ import annotations

import random
import re
from collections import Counter

from medmemorybench.questions.facts import Draft, FactFinder
from medmemorybench.questions.models import GoldFact
from medmemorybench.questions.spec import QuestionType, register
from medmemorybench.simulate.models import (
    WITHDRAWN,
    AdverseFact,
    DiagnosisFact,
    Event,
    LabFact,
    MedicationFact,
    TestFact,
)

DISCLOSED_ASKED = ("disease_history", "lifestyle_economic", "medication_history", "medication_preference",
                   "diet_preference")
"""Trap facts asked back as told (the allergy has its own phrasing); a preference or a habit is scored by its gist
(`gists.yaml`), so "you said you can't swallow big tablets" states "I gag on big pills"."""


def make(finder: FactFinder, checkpoint: int, rng: random.Random) -> list[Draft]:
    drafts: list[Draft] = []
    for event, fact in finder.first_starts(checkpoint):
        assert isinstance(fact, MedicationFact)
        if fact.reason == "long_term" or fact.action != "start":
            continue
        dose, name = finder.dose(fact), finder.drug(fact.drug)
        drafts.append(Draft("EEM", "eem.start_dose", {"drug": name}, dose, [event], [dose], f"start_dose:{fact.drug}",
                            kind="dose", aliases=[dose.replace(" ", "")], facts=[finder.quantity_fact(dose)]))
        if fact.reason == "first_line":
            drafts.append(Draft("EEM", "eem.first_line_drug", {"condition_lay": finder.condition_lay()}, name,
                                [event], [name], "first_line_drug", kind="drug", facts=[finder.drug_fact(fact.drug)]))
    for event, fact in finder.facts(checkpoint, MedicationFact):
        assert isinstance(fact, MedicationFact)
        if fact.action == "start" and fact.reason.startswith("illness:"):
            illness = finder.kb.illnesses[fact.reason.partition(":")[2]]
            name = finder.drug(fact.drug)
            drafts.append(Draft("EEM", "eem.illness_drug", {"illness": finder.illness_lay(illness)}, name, [event],
                                [name], f"illness_drug:{illness.key}", kind="drug",
                                facts=[finder.drug_fact(fact.drug)]))
        if fact.action == "increase" and fact.previous_dose is not None:
            dose = finder.dose(fact)
            fields = {"drug": finder.drug(fact.drug), "previous_dose": finder.format_number(fact.previous_dose),
                      "unit": finder.words.unit(fact.unit)}
            drafts.append(Draft("EEM", "eem.raised_dose", fields, dose, [event], [dose], f"raised:{event.event_id}",
                                kind="dose", aliases=[dose.replace(" ", "")], facts=[finder.quantity_fact(dose)]))
    for trap, event in finder.disclosed(checkpoint):
        if trap.category in DISCLOSED_ASKED:
            detail = finder.trap_detail(trap)
            facts = [finder.trap_fact(trap)]
            if trap.category == "disease_history":
                # "which past illness did I tell you about?": the one a long-standing drug is taken for is right too
                facts = [finder.trap_fact(trap, group="told"), *_told_indications(finder, checkpoint)]
            drafts.append(Draft("EEM", f"eem.{trap.category}", {}, detail, [event], [detail], f"told:{trap.category}",
                                kind="disclosed", trap_category=trap.category, facts=facts))
    diagnoses = finder.facts(checkpoint, DiagnosisFact)
    ruled_out = any(f.status in WITHDRAWN for _, f in diagnoses)  # type: ignore[union-attr]
    new_in_month = Counter(finder.month_of(e) for e, f in diagnoses
                           if f.status in ("confirmed", "complication", "acute"))  # type: ignore[union-attr]
    for event, fact in diagnoses:
        assert isinstance(fact, DiagnosisFact)
        name = finder.t(fact.name)
        if fact.status == "suspected" and ruled_out:  # ("before it was changed": once it has been)
            drafts.append(Draft("EEM", "eem.first_thought", {}, name, [event], [name], "first_thought",
                                kind="diagnosis", facts=[finder.diagnosis_fact(fact.name, fact.icd11)]))
        elif fact.status == "complication" and new_in_month[finder.month_of(event)] == 1:  # (one new problem)
            drafts.append(Draft("EEM", "eem.complication_in_month", {"month": finder.month_of(event)}, name, [event],
                                [name], f"complication:{fact.icd11}:{finder.month_of(event)}", kind="diagnosis",
                                facts=[finder.diagnosis_fact(fact.name, fact.icd11, coded=False)]))
    drafts += _labs(finder, checkpoint)
    tests = finder.facts(checkpoint, TestFact)
    done = Counter(f.test for _, f in tests)  # type: ignore[union-attr]
    for event, fact in tests:
        assert isinstance(fact, TestFact)
        if done[fact.test] > 1 or _measured_again(finder, fact, event, checkpoint):
            continue  # ("what did the test show?" names one result only if it was done once)
        finding = finder.t(fact.finding)
        drafts.append(Draft("EEM", "eem.test_finding", {"test": finder.t(fact.name)}, finding, [event], [finding],
                            f"test:{fact.test}", kind="finding", facts=[finder.finding_fact(fact)]))
    for event, fact in finder.facts(checkpoint, AdverseFact):
        assert isinstance(fact, AdverseFact)
        name = finder.effect_name(fact)
        effect = next(e for e in finder.kb.drugs[fact.drug].adverse_effects if e.key == fact.effect)
        drafts.append(Draft("EEM", "eem.adverse_effect", {"drug": finder.drug(fact.drug)}, name, [event], [name],
                            f"adverse:{fact.drug}", kind="effect",
                            aliases=[finder.t(effect.lay)], facts=[finder.effect_fact(fact)]))
    for trap, event in finder.disclosed(checkpoint):
        if trap.category == "allergy":
            agent = finder.trap_detail(trap)
            drafts.append(Draft("EEM", "eem.allergen", {}, agent, [event], [agent], "allergen", kind="allergen",
                                trap_category="allergy", facts=[finder.trap_fact(trap)]))
    return drafts


def _measured_again(finder: FactFinder, fact: TestFact, event: Event, checkpoint: int) -> bool:
    """Whether a lab the test's finding states was measured at another visit by the checkpoint (TSH-receptor
    antibodies checked again in August: "what did the test show?" has two answers)."""
    test = next((t for t in finder.condition.diagnostic_tests if t.key == fact.test), None)
    labs = set(re.findall(r"\{(?:lab|value|grade):(\w+)\}", test.finding.en)) if test else set()
    return any(e.event_id != event.event_id and f.lab in labs for e, f in finder.facts(checkpoint, LabFact))


def _told_indications(finder: FactFinder, checkpoint: int) -> list[GoldFact]:
    """The past illnesses the patient told as what a long-standing drug is taken for, by the checkpoint."""
    out = []
    for trap, _ in finder.disclosed(checkpoint):
        key = (trap.indication or "").removeprefix("history:")
        if trap.category == "medication_history" and key in finder.kb.history_conditions:
            name = finder.t(finder.kb.history_conditions[key].name)
            out.append(finder.name_fact(name, finder.kb.aliases.history_condition(key, finder.lang), group="told"))
    return out


def _labs(finder: FactFinder, checkpoint: int) -> list[Draft]:
    """Lab values, each referred to in the way that names exactly one measurement."""
    drafts: list[Draft] = []
    series: dict[str, list] = {}
    for event, fact in finder.facts(checkpoint, LabFact):
        series.setdefault(fact.lab, []).append((event, fact))  # type: ignore[union-attr]
    anchors = finder.anchors(checkpoint)
    for lab, points in series.items():
        lay = finder.lab_lay(lab)

        def draft(template: str, fields: dict, event, fact, extra=(), names_date=False,  # noqa: ANN001
                  lab: str = lab, lay: str = lay) -> Draft:
            value = finder.lab_value(fact)
            return Draft("EEM", template, {"lab_lay": lay, **fields}, value, [event, *extra], [value],
                         f"lab:{lab}:{event.event_id}", kind="lab", names_date=names_date,
                         aliases=[value.replace(" ", "")], facts=[finder.lab_fact(fact)])

        first_event, first_fact = points[0]
        drafts.append(draft("eem.lab_first", {}, first_event, first_fact))
        by_month: dict[str, list] = {}
        for event, fact in points:
            by_month.setdefault(finder.month_of(event), []).append((event, fact))
        for month, hits in by_month.items():
            if len(hits) == 1:
                drafts.append(draft("eem.lab_in_month", {"month": month}, *hits[0]))
        for key, (phrase, anchor) in anchors.items():
            at = [(e, f) for e, f in points if e.event_id == anchor.event_id]
            before = [(e, f) for e, f in points if e.index < anchor.index]
            if at:
                drafts.append(draft("eem.lab_at_anchor", {"anchor": phrase}, *at[0]))
            elif before and key != "first":
                drafts.append(draft("eem.lab_before_anchor", {"anchor": phrase}, *before[-1], extra=[anchor]))
        for event, fact in points:
            drafts.append(draft("eem.lab_on_date", {"date": event.date}, event, fact, names_date=True))
    return drafts


register(QuestionType(
    code="EEM", name="entity exact match", order=1, make=make, quota=2, scorers=("exact_match",),
    kind_cap=0.4,
))
