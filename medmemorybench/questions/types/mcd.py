"""MCD, multi-hop clinical deduction: why something happened, answered by the causal chain of visits that led
to it (2-5 hops over at least a week), each step told from its structured facts."""

from __future__ import annotations

import random

from medmemorybench.normalize import normalize_text
from medmemorybench.questions.facts import Draft, FactFinder
from medmemorybench.questions.spec import QuestionType, register
from medmemorybench.questions.types.sua import switched
from medmemorybench.simulate.models import (
    AdherenceFact,
    AdverseFact,
    AvoidedFact,
    DiagnosisFact,
    Event,
    LabFact,
    MedicationFact,
    SymptomFact,
    TestFact,
)
from medmemorybench.simulate.summary import causal_chains

MIN_SPAN_DAYS = 7
"""A chain spans at least a week: its visits are separate consultations, not one visit and its paperwork."""


def node_key(finder: FactFinder, event: Event, lab: str | None = None) -> str | None:
    """The one short string a chain node's patient-specific data comes down to (`lab`: the value of that lab
    first, for a chain about how it moved)."""
    measured = next((f for f in event.facts if isinstance(f, LabFact) and f.lab == lab), None)
    if measured is not None:
        return finder.lab_value(measured)
    for fact in event.facts:
        if isinstance(fact, AdverseFact):
            return finder.effect_name(fact)
        if isinstance(fact, DiagnosisFact) and fact.status == "complication":
            return finder.t(fact.name)
        if isinstance(fact, AdherenceFact):
            return str(fact.missed_days)
        if (trap := next((t for t in finder.traps if t.fact == fact), None)) is not None:
            return finder.trap_detail(trap)
        if isinstance(fact, MedicationFact) and fact.action in CHANGE_TEMPLATES:
            return finder.drug(fact.drug)
    # (what a test showed, or what the patient told: a step's own data, which no other question's wording states)
    test = next((f for f in event.facts if isinstance(f, TestFact)), None)
    if test is not None:
        return finder.t(test.finding)
    symptom = next((f for f in event.facts if isinstance(f, SymptomFact)), None)
    if symptom is not None:
        return finder.t(symptom.name)
    lab = next((f for f in event.facts if isinstance(f, LabFact)), None)
    return finder.lab_value(lab) if lab is not None else None


def make(finder: FactFinder, checkpoint: int, rng: random.Random) -> list[Draft]:
    by_id = {e.event_id: e for e in finder.events}
    drafts = []
    for chain in causal_chains(finder.year, maximal_only=False):
        nodes = [by_id[i] for i in chain.event_ids]
        if nodes[-1].index > checkpoint or chain.span_days < MIN_SPAN_DAYS or len({n.date for n in nodes}) < 2:
            continue
        nodes = nodes[-5:]  # 2-5 hops
        phrasing = _template(finder, nodes)
        if phrasing is None:
            continue
        template, fields = phrasing
        lab = _moved_lab(finder, nodes) if template == "mcd.why_lab_change" else None
        told_nodes = [_causal_view(finder, nodes, i) for i in range(len(nodes))]
        steps = [finder.event_text(n, lab) for n in told_nodes]
        if not all(steps):
            continue
        answer = finder.say("mcd", "then").join(step.rstrip(".。") for step in steps)
        answer = answer[0].upper() + answer[1:] + finder.say("mcd", "end")
        # a key fact is what the gold itself states (a lab value at a visit that also changed drugs is not told), in
        # whatever case the sentence gave it ("Depression in dementia was found" states "depression in dementia")
        told = normalize_text(answer)
        keys = list(dict.fromkeys(k for k in (node_key(finder, n, lab) for n in told_nodes)
                                  if k and normalize_text(k) in told))[:4]
        drafts.append(Draft("MCD", template, fields, answer, nodes, keys, f"chain:{template}:{sorted(fields.items())}",
                            kind=template, chain=list(zip(steps, nodes, strict=True))))
    return drafts


def _causal_view(finder: FactFinder, nodes: list[Event], position: int) -> Event:
    """A chain's node as its step is told: without the disclosures that visit only happened to hold (a budget or an
    allergy mentioned at the visit about the first symptoms is not why the symptoms were treated), but for those of
    a disclosure visit and those a later step avoided a drug for."""
    event = nodes[position]
    if event.kind == "trap_disclosure":
        return event
    avoided = {c for n in nodes[position:] for f in n.facts if isinstance(f, AvoidedFact) for c in f.traps}
    incidental = [t.fact for t in finder.traps if t.category not in avoided]
    return event.model_copy(update={"facts": [f for f in event.facts if f not in incidental]})


def _template(finder: FactFinder, nodes: list[Event]) -> tuple[str, dict[str, str]] | None:
    """The phrasing for a chain, chosen by what it ends in; None for chains not worth asking about."""
    kinds = [n.kind for n in nodes]
    if "acute_illness" in kinds:
        illness = finder.illness_of(nodes[kinds.index("acute_illness")])
        assert illness is not None
        return "mcd.course_of_illness", {"illness": finder.illness_lay(illness)}
    if "switch" in kinds:
        start, stop, _ = switched(finder, nodes[kinds.index("switch")])
        if stop is None:
            return None
        return "mcd.why_switch", {"drug": finder.drug(stop.drug), "replacement": finder.drug(start.drug)}
    if "complication" in kinds:
        diagnosis = next(f for f in nodes[kinds.index("complication")].facts if isinstance(f, DiagnosisFact))
        return "mcd.why_complication", {"complication": finder.t(diagnosis.name)}
    lapse_lab = next((n for n in nodes if n.kind == "lab_check"), None)
    if any(isinstance(f, AdherenceFact) for n in nodes for f in n.facts) and lapse_lab is not None:
        lab = next(f for f in lapse_lab.facts if isinstance(f, LabFact))
        return "mcd.why_lapse", {"lab_lay": finder.lab_lay(lab.lab)}
    last = nodes[-1]
    if last.kind in RETURN_KINDS and any(n.kind == "misdiagnosis" and n.event_id in last.triggered_by for n in nodes):
        return "mcd.why_back", {}
    if last.kind == "diagnosis":
        return "mcd.why_diagnosis", {"condition_lay": finder.condition_lay()}
    changed = next((f for f in last.facts if isinstance(f, MedicationFact) and f.action in CHANGE_TEMPLATES), None)
    if changed is not None:
        return CHANGE_TEMPLATES[changed.action], {"drug": finder.drug(changed.drug)}
    if last.kind == "misdiagnosis":
        return "mcd.why_first_thought", {}
    if last.kind == "diagnostic_test":
        return "mcd.why_tests", {"condition_lay": finder.condition_lay()}
    adverse = next((f for f in last.facts if isinstance(f, AdverseFact)), None)
    if last.kind == "adverse_event" and adverse is not None:
        return "mcd.why_adverse", {"effect": finder.effect_name(adverse), "drug": finder.drug(adverse.drug)}
    lab = _moved_lab(finder, nodes) if last.kind == "lab_check" else None
    if lab is not None:
        return "mcd.why_lab_change", {"lab_lay": finder.lab_lay(lab), "month": finder.month_of(last)}
    return None


def _moved_lab(finder: FactFinder, nodes: list[Event]) -> str | None:
    """A lab the chain's last visit measured that an earlier visit of the chain measured at another value, and that
    was measured only once in that month (so "checked in <month>" names the one result)."""
    last = nodes[-1]
    for fact in last.facts:
        if not isinstance(fact, LabFact):
            continue
        earlier = [f for n in nodes[:-1] for f in n.facts if isinstance(f, LabFact) and f.lab == fact.lab]
        same_month = [e for e, f in finder.facts(last.index, LabFact) if f.lab == fact.lab  # type: ignore[union-attr]
                      and finder.month_of(e) == finder.month_of(last)]
        if earlier and earlier[-1].value != fact.value and len(same_month) == 1:
            return fact.lab
    return None


RETURN_KINDS = ("symptom_report", "follow_up")
"""Kinds of the visit a patient came back to when the first diagnosis' treatment had not helped (the chain's
answer: the first symptoms, what was first thought and given, what was still wrong): the first care year's two
months hold few other chains of a week or more."""

CHANGE_TEMPLATES = {"start": "mcd.why_start", "administer": "mcd.why_start", "increase": "mcd.why_increase",
                    "decrease": "mcd.why_decrease", "stop": "mcd.why_stop"}
"""The phrasing of a chain that ends in a change to a drug, by the change."""


register(QuestionType(
    code="MCD", name="multi-hop clinical deduction", order=6, make=make, quota=2, every=20, judged=True,
    rubric="the chain of events in order, each link with the patient's own value, drug or finding",
))
