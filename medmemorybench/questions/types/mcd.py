"""MCD, multi-hop clinical deduction: why something happened, answered by the causal chain of visits that led
to it (2-5 hops over at least a week), each step told from its structured facts."""

from __future__ import annotations

import random
from collections.abc import Collection
from datetime import date, timedelta

from medmemorybench.knowledge.findings import LANGUAGES
from medmemorybench.normalize import normalize_text
from medmemorybench.questions.facts import Draft, FactFinder
from medmemorybench.questions.models import GoldFact
from medmemorybench.questions.spec import QuestionType, register
from medmemorybench.questions.types.mcd_links import CHANGES, drug_moves, is_causal_link, lab_drugs, rests_on
from medmemorybench.questions.types.sua import switched
from medmemorybench.render.fields import text_of
from medmemorybench.scoring.facts import (
    KEY_GROUP,
    RECORD_GROUP,
    RIVAL_GROUP,
    TAKEN_GROUP,
    WHY_GROUP,
    Fact,
    unit_kind,
    value_kinds,
)
from medmemorybench.simulate.models import (
    AdherenceFact,
    AdverseFact,
    AvoidedFact,
    ComplicationFact,
    DiagnosisFact,
    Event,
    LabFact,
    MedicationFact,
    SymptomFact,
    TestFact,
)

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


MAX_STEPS = 5
"""A chain's steps at most (2-4 hops)."""


def proximate_chain(by_id: dict[str, Event], event: Event) -> list[Event]:
    """The chain that led to `event`, each step back its most recent trigger (the nearest cause: the drug raised before
    a lab moved, the symptoms told just before a course was given, rather than the longest way round), at most
    `MAX_STEPS` steps, in date order."""
    chain = [event]
    while len(chain) < MAX_STEPS and chain[0].triggered_by:
        chain.insert(0, max((by_id[t] for t in chain[0].triggered_by), key=lambda e: e.index))
    return chain


def make(finder: FactFinder, checkpoint: int, rng: random.Random) -> list[Draft]:
    by_id = {e.event_id: e for e in finder.events}
    record = _Record(finder, checkpoint)
    withdrawn = finder.withdrawn(checkpoint)  # (a first thought the record ruled out by now: the gold says so)
    drafts = []
    for end in finder.upto(checkpoint):
        nodes = proximate_chain(by_id, end)
        if len(nodes) < 3:
            continue
        phrasing = _template(finder, nodes)
        if phrasing is None:
            continue
        template, fields = phrasing
        key = f"chain:{template}:{sorted(fields.items())}"
        lab = _chain_lab(finder, nodes, template)
        if template == "mcd.why_lab_change":  # (what moved it since the reading before, not the way to the first)
            assert lab is not None
            window = lab_window(finder, end, lab)
            if window is None:
                continue
            nodes = window
        told_nodes = _with_reasons(finder, _causal_steps(finder, nodes, template, lab), checkpoint)
        if template == "mcd.why_lab_change":
            if untold_moves(finder, nodes, told_nodes, lab):
                continue  # (a gold that leaves out a change credits the wrong cause: no question beats a wrong one)
        else:  # (a lab window's visits each moved the lab: its links are causal by construction)
            told_nodes = _causal_suffix(finder, told_nodes)
        if len(told_nodes) < 3 or (date.fromisoformat(told_nodes[-1].date)
                                   - date.fromisoformat(told_nodes[0].date)).days < MIN_SPAN_DAYS:
            continue
        steps = [finder.event_text(n, lab, withdrawn) for n in told_nodes]
        if not all(steps) or len(set(steps)) < len(steps):
            continue
        answer = finder.say("mcd", "then").join(step.rstrip(".。") for step in steps)
        answer = answer[0].upper() + answer[1:] + finder.say("mcd", "end")
        # a key fact is what the gold itself states (a lab value at a visit that also changed drugs is not told), in
        # whatever case the sentence gave it ("Depression in dementia was found" states "depression in dementia")
        told = normalize_text(answer)
        keys = list(dict.fromkeys(k for k in (node_key(finder, n, lab) for n in told_nodes)
                                  if k and normalize_text(k) in told))[:4]
        if template == "mcd.why_lab_change":  # (its month, or its date where the record has another reading then)
            readings = [e for e, f in record.measured if f.lab == lab]
            fields = {"lab_lay": fields["lab_lay"], "when": finder.when(end, readings)}
        drafts.append(Draft("MCD", template, fields, answer, told_nodes, keys, key, kind=template,
                            chain=list(zip(steps, told_nodes, strict=True)),
                            chain_facts=_chain_facts(finder, told_nodes, _subject_drug(finder, nodes, template),
                                                     record)))
    return drafts


class _Record:
    """What the patient's record holds by the checkpoint, read once for all its chains: the drugs ever taken and the
    values measured."""

    def __init__(self, finder: FactFinder, checkpoint: int) -> None:
        self.taken = {f.drug for _, f in finder.facts(checkpoint, MedicationFact)}  # type: ignore[union-attr]
        self.measured: list[tuple[Event, LabFact]] = finder.facts(checkpoint, LabFact)  # type: ignore[assignment]


def _chain_facts(finder: FactFinder, nodes: list[Event], subject: str | None, record: _Record) -> list[list[GoldFact]]:
    """Each step's facts (`_step_facts`); a step that started a drug also holds its rivals (`RIVAL_GROUP`): the other
    candidates of the care step or illness course it was chosen from, except any drug the patient ever took by then,
    so that an answer telling another treatment as given is not a told chain; the last step also holds the record's
    values in the chain's units (`_record_values`) and every drug taken by the checkpoint (`TAKEN_GROUP`)."""
    facts = [_step_facts(finder, n, subject, why=_is_reason(finder, n, nodes)) for n in nodes]
    named = {f.drug for n in nodes for f in n.facts if isinstance(f, (MedicationFact, AvoidedFact, AdverseFact))}
    for position, node in enumerate(nodes):
        starts = [f for f in node.facts if isinstance(f, MedicationFact) and f.action in ("start", "administer")]
        rivals = dict.fromkeys(d for f in starts for d in _candidates(finder, f.step)
                               if d not in record.taken | named)
        facts[position] += [finder.drug_fact(d, group=RIVAL_GROUP) for d in rivals]
    # (a finding's values in every language: the scorer reads "CRB-65 score of 0" as a bare number, "CRB-65评分0分" as
    # points, and every language holds the same record values)
    findings = [Fact(text_of(f.finding, language), "finding") for n in nodes for f in n.facts
                if isinstance(f, TestFact) for language in LANGUAGES]
    facts[-1] += _record_values(finder, nodes, record, value_kinds(findings))
    # (every drug taken by the checkpoint: an answer telling another as given tells a treatment never had)
    facts[-1] += [finder.drug_fact(d, group=TAKEN_GROUP) for d in sorted(record.taken)]
    return facts


def _record_values(finder: FactFinder, nodes: list[Event], record: _Record, kinds: set[str]) -> list[GoldFact]:
    """Every value the record has by the checkpoint of the kinds the chain's visits measured or its findings state
    (`RECORD_GROUP`; `kinds`: "ALT 72 U/L" of a liver panel, so the ALT of another visit is the record's), each with
    the days it was measured: an answer that also tells the score at diagnosis quotes the record, one that tells a
    value never measured does not. Chosen from the structured values, so every language holds the same; by the
    unit's kind, as the scorer compares them (a chain in "% predicted" holds the SpO2's "%" too)."""
    kinds = kinds | {unit_kind(f.unit) for n in nodes for f in n.facts if isinstance(f, LabFact)}
    days: dict[tuple[str, float, str], list[str]] = {}
    values: dict[tuple[str, float, str], LabFact] = {}
    for event, f in record.measured:
        if unit_kind(f.unit) in kinds:
            values.setdefault((f.lab, f.value, f.unit), f)
            days.setdefault((f.lab, f.value, f.unit), []).append(event.date)
    return [GoldFact(text=finder.lab_value(f), kind="quantity", aliases=list(dict.fromkeys(days[key])),
                     group=RECORD_GROUP) for key, f in values.items()]


def _candidates(finder: FactFinder, step: str | None) -> list[str]:
    """The drugs a care step (or an illness's course, `illness:<key>`) offers."""
    if step and step.startswith("illness:"):
        return finder.kb.illnesses[step.split(":", 1)[1]].step.drug_keys
    return next((s.drug_keys for s in finder.condition.care_path if s.key == step), [])


_DIAGNOSES = ("suspected", "confirmed", "acute", "complication")
"""Diagnosis statuses a step tells (a diagnosis ruled out is what the next one says)."""
_LAST_STEP = {
    "mcd.why_diagnosis": (DiagnosisFact,), "mcd.why_tests": (TestFact,), "mcd.why_adverse": (AdverseFact,),
    "mcd.why_back": (SymptomFact,), "mcd.why_lab_change": (LabFact,), "mcd.why_lapse": (LabFact,),
    "mcd.why_first_thought": (DiagnosisFact, MedicationFact),
}
"""What a chain's last step tells, by the question: what was asked about (the diagnosis, not the drugs started at
that visit); a question about a drug change keeps the change and why another drug was passed over for it."""


def _keeps(finder: FactFinder, fact: object, event: Event, later: list[Event], context: dict) -> bool:
    """Whether a chain step tells this fact of its visit (see `_causal_steps`)."""
    trap = next((t for t in finder.traps if t.fact == fact), None)
    if trap is not None:
        return trap.category in context["avoided_later"] or (event.kind == "trap_disclosure" and bool(later))
    if isinstance(fact, SymptomFact):  # (what the next step was decided on: the symptoms a diagnosis was made on)
        return (context["illness_symptoms"] is None or fact.symptom in context["illness_symptoms"]) \
            and (not later or rests_on(finder, fact, event, later[0]))
    if isinstance(fact, (AdverseFact, AdherenceFact)):
        return True
    if isinstance(fact, DiagnosisFact):
        return fact.status in _DIAGNOSES
    if isinstance(fact, TestFact):
        return context["diagnosis_ahead"] or not later
    if isinstance(fact, LabFact):
        # (the lab the question is about, or a reading the next step was decided on: the raised blood pressure a
        # wrong "essential hypertension" was made on, not an ALT measured the same week)
        return fact.lab == context["lab"] or (bool(later) and rests_on(finder, fact, event, later[0]))
    if isinstance(fact, MedicationFact):
        subject = context["subject"]
        if fact.reason == "long_term" or (fact.action == "continue" and later):
            return False  # (a drug carried on unchanged is no step, but where the chain ends: how a lapse was met)
        return fact.drug in context["later_drugs"] or fact.drug == subject or (not later and subject is None) \
            or fact.drug in context["movers"]  # (a lab that moved: the changes to the drugs that move it are why)
    if isinstance(fact, AvoidedFact):
        return fact.instead == context["subject"] and any(t.category in fact.traps for t in finder.traps)
    return False


def _causal_steps(finder: FactFinder, nodes: list[Event], template: str, lab: str | None) -> list[Event]:
    """The chain's visits, each with only the facts that led on to the next step or answer the question; a visit
    left with none is no step of the chain (a routine eGFR is not why a sore throat was treated).

    Kept: diagnoses, adverse effects and missed doses; a symptom or lab the next step was decided on (`rests_on`) or
    the lab the question is about; a test where a diagnosis follows; a drug change whose drug the chain goes on
    with (a later step changes it, blames it or finds it missed) or the one the question asks about; a drug passed
    over for that one, with the told fact that barred it. The last step tells what the question asks (`_LAST_STEP`)."""
    context = {"subject": _subject_drug(finder, nodes, template), "lab": lab,
               "movers": lab_drugs(finder, lab) if lab is not None else set(),
               "illness_symptoms": _illness_symptoms(finder, nodes) if template == "mcd.course_of_illness" else None}
    ends_at = {"mcd.why_switch": "switch", "mcd.why_complication": "complication"}.get(template)
    if ends_at is not None:  # (what followed the switch or the complication is not why it happened)
        nodes = nodes[:max(i for i, n in enumerate(nodes) if n.kind == ends_at) + 1]
    if template == "mcd.course_of_illness":  # (what followed the illness' last visit, the check after its course, is
        # no part of how it was handled: a complication of the chronic condition found weeks later)
        illness = finder.illness_of(next(n for n in nodes if n.kind == "acute_illness"))
        nodes = nodes[:max(i for i, n in enumerate(nodes) if finder.illness_of(n) == illness) + 1]
    told: list[Event] = []
    blamed: set[tuple[str, str]] = set()
    for position, event in enumerate(nodes):
        later = nodes[position + 1:]
        context["later_drugs"] = {getattr(f, "drug", None) for n in later for f in n.facts
                                  if isinstance(f, (MedicationFact, AdverseFact, AdherenceFact))}
        context["avoided_later"] = {c for n in later for f in n.facts if isinstance(f, AvoidedFact) for c in f.traps}
        context["diagnosis_ahead"] = any(isinstance(f, DiagnosisFact) and f.status in _DIAGNOSES
                                         for n in nodes[position:] for f in n.facts)
        kept = [f for f in event.facts if _keeps(finder, f, event, later, context)
                and not (isinstance(f, AdverseFact) and (f.drug, f.effect) in blamed)]  # (told once, when first seen)
        blamed |= {(f.drug, f.effect) for f in kept if isinstance(f, AdverseFact)}
        if not later and template in _LAST_STEP:
            kept = [f for f in kept if isinstance(f, _LAST_STEP[template])
                    and (not isinstance(f, LabFact) or f.lab == lab)]
        if kept:
            told.append(event.model_copy(update={"facts": kept}))
    return _told_reasons_only(finder, told)


def _told_reasons_only(finder: FactFinder, steps: list[Event]) -> list[Event]:
    """The steps without a disclosure no later step tells a drug was passed over for (a reason for nothing the answer
    says), but at the visit it was told; a step left with nothing is dropped."""
    out: list[Event] = []
    for position, step in enumerate(steps):
        cited = {c for later in steps[position + 1:] for f in later.facts if isinstance(f, AvoidedFact)
                 for c in f.traps}
        kept = [f for f in step.facts if step.kind == "trap_disclosure"
                or not any(t.fact == f and t.category not in cited for t in finder.traps)]
        if kept:
            out.append(step.model_copy(update={"facts": kept}))
    return out


def _causal_suffix(finder: FactFinder, steps: list[Event]) -> list[Event]:
    """The chain from after its last link that is not causal (`is_causal_link`: no fact the step before told is what
    the next step's decision rests on; a visit's trigger is only what prompted it), with the visits that told why a
    drug kept in it was passed over (a reason step links to the step that cites it, not to the next visit)."""
    main = [s for s in steps if not _is_reason(finder, s, steps)]
    start = len(main) - 1
    while start > 0 and is_causal_link(finder, main[start - 1], main[start]):
        start -= 1
    kept = main[start:]
    cited = {c for s in kept for f in s.facts if isinstance(f, AvoidedFact) for c in f.traps}
    return [s for s in steps if s in kept or (s not in main and _is_reason(finder, s, steps)
                                             and any(t.fact in s.facts and t.category in cited for t in finder.traps))]


def _is_reason(finder: FactFinder, step: Event, steps: list[Event]) -> bool:
    """Whether a step only tells facts that a later step passed a drug over for (why this drug and not the usual one:
    what "why was I given what I got?" asks)."""
    later = steps[steps.index(step) + 1:]
    cited = {c for s in later for f in s.facts if isinstance(f, AvoidedFact) for c in f.traps}
    told = [t for t in finder.traps if t.fact in step.facts]
    return bool(told) and len(told) == len(step.facts) and all(t.category in cited for t in told)


def _with_reasons(finder: FactFinder, steps: list[Event], checkpoint: int) -> list[Event]:
    """The chain with, before the step that passed a drug over, the visits where the facts that barred it were told
    (why this drug and not the usual one), as far as there is room."""
    cited = {c for step in steps for f in step.facts if isinstance(f, AvoidedFact) for c in f.traps}
    told = {e.event_id for e in steps}
    extra = []
    for trap in finder.traps:
        event = finder.disclosure(trap)
        if trap.category in cited and event is not None and event.index <= checkpoint and event.event_id not in told:
            extra.append(event.model_copy(update={"facts": [trap.fact]}))
    extra = extra[:MAX_STEPS - len(steps)]
    return sorted([*steps, *extra], key=lambda e: e.index)


def _illness_symptoms(finder: FactFinder, nodes: list[Event]) -> set[str]:
    """The symptoms of the acute illness a chain is about (the chronic condition's are no step of its course)."""
    illness = next(finder.illness_of(n) for n in nodes if n.kind == "acute_illness")
    return {f"{illness.key}.{s.key}" for s in illness.symptoms} if illness else set()


def _subject_drug(finder: FactFinder, nodes: list[Event], template: str) -> str | None:
    """The drug a chain's question is about (the one changed at its last visit, or the one blamed), if any."""
    last = nodes[-1]
    if template == "mcd.course_of_illness":  # (what was given for it)
        return next((f.drug for n in nodes for f in n.facts if isinstance(f, MedicationFact)
                     and f.reason.startswith("illness:") and f.action in ("start", "administer")), None)
    if template == "mcd.why_adverse":
        return next((f.drug for f in last.facts if isinstance(f, AdverseFact)), None)
    if template == "mcd.why_switch":
        start, _, _ = switched(finder, next(n for n in nodes if n.kind == "switch"))
        return start.drug
    if template in CHANGE_TEMPLATES.values():
        return next((f.drug for f in last.facts if isinstance(f, MedicationFact) and f.action in CHANGE_TEMPLATES),
                    None)
    return None


def _step_facts(finder: FactFinder, event: Event, subject: str | None, why: bool = False) -> list[GoldFact]:
    """What shows an answer told a step: any one of its facts, each in its own forms; where the step changed the drug
    the question is about, that drug (`KEY_GROUP`: "what was I given" is not told by the diagnosis alone); a step
    that tells why a drug was passed over is one the answer must tell (`WHY_GROUP`)."""
    out: list[GoldFact] = []
    for fact in event.facts:
        trap = next((t for t in finder.traps if t.fact == fact), None)
        if trap is not None:
            out.append(finder.trap_fact(trap, group=WHY_GROUP if why else ""))
        elif isinstance(fact, SymptomFact):
            out.append(finder.symptom_fact(fact))
        elif isinstance(fact, DiagnosisFact):
            out.append(finder.diagnosis_fact(fact.name, fact.icd11, coded=fact.status != "complication"))
        elif isinstance(fact, TestFact):
            out.append(finder.finding_fact(fact))
        elif isinstance(fact, LabFact):
            out.append(finder.lab_fact(fact))
        elif isinstance(fact, MedicationFact) and fact.drug == subject:
            out.append(finder.drug_fact(fact.drug, group=KEY_GROUP))
        elif isinstance(fact, (MedicationFact, AdverseFact, AvoidedFact)):
            out.append(finder.drug_fact(fact.drug))
            if isinstance(fact, AdverseFact):
                out.append(finder.effect_fact(fact))
        elif isinstance(fact, AdherenceFact):
            out.append(finder.quantity_fact(finder.say("mcd", "missed_days", days=str(fact.missed_days))))
    return list({(f.text, f.kind): f for f in out}.values())


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
        # (the month keys the question: its wording says the month or the date, `FactFinder.when`)
        return "mcd.why_lab_change", {"lab_lay": finder.lab_lay(lab), "month": finder.month_of(last)}
    return None


def _chain_lab(finder: FactFinder, nodes: list[Event], template: str) -> str | None:
    """The lab a chain's question is about: the one that moved (a lab change) or slipped (a lapse)."""
    if template == "mcd.why_lab_change":
        return _moved_lab(finder, nodes)
    if template == "mcd.why_lapse":
        check = next(n for n in nodes if n.kind == "lab_check")
        return next(f.lab for f in check.facts if isinstance(f, LabFact))
    return None


def _moved_lab(finder: FactFinder, nodes: list[Event]) -> str | None:
    """A lab the chain's last visit measured that an earlier visit of the chain measured too, at another value than
    the record's reading before this one (what "different" is against: the last value, not the chain's first), and
    that was measured only once in that month (so "checked in <month>" names the one result)."""
    last = nodes[-1]
    for fact in last.facts:
        if not isinstance(fact, LabFact):
            continue
        earlier = [f for n in nodes[:-1] for f in n.facts if isinstance(f, LabFact) and f.lab == fact.lab]
        same_month = [e for e, f in finder.facts(last.index, LabFact) if f.lab == fact.lab  # type: ignore[union-attr]
                      and finder.month_of(e) == finder.month_of(last)]
        before = _reading_before(finder, last, fact.lab)
        if earlier and before is not None and before[1].value != fact.value and len(same_month) == 1:
            return fact.lab
    return None


def _reading_before(finder: FactFinder, event: Event, lab: str) -> tuple[Event, LabFact] | None:
    """The record's last reading of `lab` before `event`'s visit, if any."""
    readings = [(e, f) for e, f in finder.facts(event.index - 1, LabFact) if f.lab == lab]  # type: ignore[union-attr]
    return readings[-1] if readings else None  # type: ignore[return-value]


_CHANGES = (*CHANGES, "correct")
"""Medication actions that change what a drug does to the labs: the decisions (`mcd_links.CHANGES`) and a dose
corrected to the one taken (a drug carried on is no change)."""


def lab_moves(finder: FactFinder, event: Event, lab: str, cited: Collection[str] = ()) -> list[object]:
    """The facts of a visit that moved `lab`: a change to a drug that moves it (`drug_moves`), missed doses of one
    (`lab_drugs`), an adverse effect or a complication shown on that lab, and a complication `cited` (keys) as the
    reason for such a change (`_cited`: the admission a diuretic was raised for)."""
    out: list[object] = []
    for fact in event.facts:
        if isinstance(fact, MedicationFact):
            moved = fact.action in _CHANGES and drug_moves(finder, fact, lab)
        elif isinstance(fact, AdherenceFact):
            moved = fact.drug in lab_drugs(finder, lab)
        elif isinstance(fact, AdverseFact):
            moved = any(e.key == fact.effect and e.lab == lab for e in finder.kb.drugs[fact.drug].adverse_effects)
        elif isinstance(fact, ComplicationFact):
            moved = fact.complication in cited or any(c.key == fact.complication and c.lab == lab
                                                      for c in finder.condition.complications)
        else:
            moved = False
        if moved:
            out.append(fact)
    return out


def _cited(finder: FactFinder, events: list[Event], lab: str) -> set[str]:
    """The complications that a change among `events` to a drug moving `lab` was made for."""
    return {f.reason.split(":", 1)[1] for e in events for f in e.facts if isinstance(f, MedicationFact)
            and f.reason.startswith("complication:") and f.action in _CHANGES and drug_moves(finder, f, lab)}


def lab_window(finder: FactFinder, end: Event, lab: str) -> list[Event] | None:
    """The visits that tell why `lab` read what it did at `end`: the reading before, every visit between the two
    that moved the lab (`lab_moves`), and `end`, in date order. A change made within the lab's response time before
    the earlier reading (`Kinetics.response_days`: before a value reliably shows it) had not yet shown in it, so it
    counts too (a budesonide course started the day before a calprotectin). None where there is no reading before or
    it read the same, or where more visits moved it than a chain holds (`MAX_STEPS`)."""
    found = _reading_before(finder, end, lab)
    value = next(f.value for f in end.facts if isinstance(f, LabFact) and f.lab == lab)
    if found is None or found[1].value == value:
        return None
    before = found[0]
    kinetics = finder.kb.labs[lab].kinetics
    since = date.fromisoformat(before.date) - timedelta(days=kinetics.response_days if kinetics else 0)
    between = [e for e in finder.events if e.index < end.index and e is not before
               and date.fromisoformat(e.date) >= since]
    cited = _cited(finder, between, lab)
    moved = [e for e in between if lab_moves(finder, e, lab, cited)]
    if len(moved) + 2 > MAX_STEPS:
        return None
    return sorted([before, *moved, end], key=lambda e: e.index)


def untold_moves(finder: FactFinder, nodes: list[Event], told: list[Event], lab: str) -> list[object]:
    """The facts of a lab-change chain's visits before its last (`lab_window`) that moved the lab (`lab_moves`) but
    that no told step holds (a complication is told as its diagnosis), and the reading before if no step tells it:
    each is a cause, or the value compared with, that the gold would leave out."""
    kept = {step.event_id: step.facts for step in told}
    cited = _cited(finder, nodes, lab)
    before = _reading_before(finder, nodes[-1], lab)
    needed = [(before[0], before[1])] if before is not None else []
    needed += [(n, f) for n in nodes[:-1] for f in lab_moves(finder, n, lab, cited)]
    return [f for n, f in needed
            if not any(f == k or isinstance(f, ComplicationFact) and isinstance(k, DiagnosisFact)
                       and k.status == "complication" for k in kept.get(n.event_id, []))]


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
