"""Candidate questions of each type, drawn from the structured ground truth (never from generated text).

Each maker returns `Draft`s valid at a checkpoint: every evidence event is at or before it. Gold
answers and key facts use the same surface-form functions as the renderer (`render.fields`).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import date

from medmemorybench.knowledge.base import KnowledgeBase
from medmemorybench.normalize import normalize_text
from medmemorybench.render.fields import dose_with_unit, format_number, lab_with_unit, text_of, trap_detail
from medmemorybench.simulate.describe import describe_event
from medmemorybench.simulate.models import (
    AdherenceFact,
    AdverseFact,
    AvoidedFact,
    CareYear,
    DiagnosisFact,
    Event,
    LabFact,
    MedicationFact,
    SymptomFact,
    TestFact,
    Trap,
)
from medmemorybench.simulate.safety import patient_of, verdict
from medmemorybench.simulate.summary import causal_chains
from medmemorybench.simulate.timeline import state_on

LETTERS = "ABCD"


@dataclass
class Draft:
    """A question before it gets its id and phrasing."""

    query_type: str
    template: str
    fields: dict[str, str]
    answer: str
    evidence: list[Event]
    key_facts: list[str]
    fact_key: str
    aliases: list[str] = field(default_factory=list)
    trap_category: str | None = None
    options: list[str] = field(default_factory=list)
    correct_options: list[str] = field(default_factory=list)
    chain: list[tuple[str, Event]] = field(default_factory=list)
    abstain: bool = False
    absent_fact: str | None = None
    common_wrong_answer: str | None = None


def date_aliases(iso: str) -> list[str]:
    """Other ways of writing a date a correct answer may use."""
    day = date.fromisoformat(iso)
    return [f"{day.day} {day:%B} {day.year}", f"{day:%B} {day.day}, {day.year}", f"{day:%Y/%m/%d}"]


class QuestionMaker:
    """Finds askable facts in one patient's year."""

    def __init__(self, kb: KnowledgeBase, year: CareYear, answers: dict, session_text: dict[str, str],
                 language: str = "en") -> None:
        self.kb, self.year, self.answers, self.lang = kb, year, answers, language
        self.events = year.events
        self.condition = kb.conditions[year.persona.condition]
        self.traps: list[Trap] = year.persona.traps
        self.patient = patient_of(year.persona)
        self.patient_text = normalize_text(" ".join(session_text.values()))

    # --- small helpers --------------------------------------------------------------------------

    def _t(self, text) -> str:  # noqa: ANN001
        return text_of(text, self.lang)

    def drug(self, key: str) -> str:
        return self._t(self.kb.drugs[key].name)

    def _lay(self, text) -> str:  # noqa: ANN001
        """A lay name ready to follow "my": leading "my", "the", "a" dropped."""
        phrase = self._t(text)
        for article in ("my ", "the ", "a ", "an "):
            if phrase.lower().startswith(article):
                return phrase[len(article):]
        return phrase

    def upto(self, checkpoint: int) -> list[Event]:
        return [e for e in self.events if e.index <= checkpoint]

    def _facts(self, checkpoint: int, kind: type) -> list[tuple[Event, object]]:
        return [(e, f) for e in self.upto(checkpoint) for f in e.facts if isinstance(f, kind)]

    def _first_starts(self, checkpoint: int) -> list[tuple[Event, MedicationFact]]:
        seen, out = set(), []
        for event, fact in self._facts(checkpoint, MedicationFact):
            if fact.action == "start" and fact.drug not in seen:
                seen.add(fact.drug)
                out.append((event, fact))
        return out

    def disclosure(self, trap: Trap) -> Event | None:
        """The visit where the trap fact was told (at a visit of its own, or in passing at another)."""
        return next((e for e in self.events if trap.fact in e.facts), None)

    def trap_detail(self, trap: Trap) -> str:
        """The short string that identifies a trap fact in the dialogue."""
        return trap_detail(self.kb, trap, self.lang)

    def trap_reason(self, trap: Trap) -> str:
        detail = self.trap_detail(trap)
        return {
            "allergy": f"your allergy to {detail}",
            "medication_history": f"the {detail} you already take",
            "disease_history": f"your history of {detail}",
            "medication_preference": f"what you told me: {detail}",
            "diet_preference": f"your habit: {detail}",
            "lifestyle_economic": f"your budget of {detail} a month",
        }[trap.category]

    # --- EEM ------------------------------------------------------------------------------------

    def eem(self, checkpoint: int) -> list[Draft]:
        drafts = []
        for event, fact in self._first_starts(checkpoint):
            if fact.reason == "long_term":
                continue
            dose = dose_with_unit(fact.dose, fact.unit)
            drafts.append(Draft("EEM", "eem.start_dose", {"drug": self.drug(fact.drug)}, dose, [event], [dose],
                                f"start_dose:{fact.drug}", aliases=[f"{format_number(fact.dose)}{fact.unit}"]))
            if fact.reason == "first_line":
                name = self.drug(fact.drug)
                drafts.append(Draft("EEM", "eem.first_line_drug", {"condition_lay": self._lay(self.condition.lay)},
                                    name, [event], [name], "first_line_drug"))
        for event, fact in self._facts(checkpoint, LabFact):
            value = lab_with_unit(self.kb, fact.lab, fact.value)
            drafts.append(Draft("EEM", "eem.lab_value", {"lab_lay": self._lay(self.kb.labs[fact.lab].lay),
                                                         "date": event.date},
                                value, [event], [value], f"lab:{fact.lab}:{event.event_id}",
                                aliases=[value.replace(" ", "")]))
        for event, fact in self._facts(checkpoint, TestFact):
            finding = self._t(fact.finding)
            drafts.append(Draft("EEM", "eem.test_finding", {"test": self._t(fact.name)}, finding, [event], [finding],
                                f"test:{fact.test}"))
        for event, fact in self._facts(checkpoint, AdverseFact):
            effect = next(e for e in self.kb.drugs[fact.drug].adverse_effects if e.key == fact.effect)
            name = self._t(effect.name)
            drafts.append(Draft("EEM", "eem.adverse_effect", {"drug": self.drug(fact.drug)}, name, [event], [name],
                                f"adverse:{fact.drug}", aliases=[self._t(effect.lay)]))
        for trap in self.traps:
            event = self.disclosure(trap)
            if trap.category == "allergy" and event is not None and event.index <= checkpoint:
                agent = self.trap_detail(trap)
                drafts.append(Draft("EEM", "eem.allergen", {}, agent, [event], [agent], "allergen",
                                    trap_category="allergy"))
        return drafts

    # --- TLA ------------------------------------------------------------------------------------

    def tla(self, checkpoint: int) -> list[Draft]:
        drafts = []
        for event, fact in self._first_starts(checkpoint):
            if fact.reason != "long_term":
                drafts.append(Draft("TLA", "tla.start_date", {"drug": self.drug(fact.drug)}, event.date, [event],
                                    [event.date], f"start_date:{fact.drug}", aliases=date_aliases(event.date)))
        for event in self.upto(checkpoint):
            if event.kind == "diagnosis":
                drafts.append(Draft("TLA", "tla.diagnosis_date", {"condition_lay": self._lay(self.condition.lay)},
                                    event.date, [event], [event.date], "diagnosis_date",
                                    aliases=date_aliases(event.date)))
            if event.kind in ("prescription", "dose_change", "switch"):
                meds = [f for f in event.facts if isinstance(f, MedicationFact)]
                answer = describe_event(self.kb, event.model_copy(update={"facts": meds}))
                keys = [self.drug(meds[0].drug), dose_with_unit(meds[-1].dose, meds[-1].unit)]
                drafts.append(Draft("TLA", "tla.event_on_date", {"date": event.date}, answer, [event], keys,
                                    f"event:{event.event_id}"))
        for event, fact in self._facts(checkpoint, MedicationFact):
            if fact.action == "increase" and fact.previous_dose is not None:
                fields = {"drug": self.drug(fact.drug), "previous_dose": format_number(fact.previous_dose),
                          "unit": fact.unit}
                drafts.append(Draft("TLA", "tla.dose_change_date", fields, event.date, [event], [event.date],
                                    f"increase:{event.event_id}", aliases=date_aliases(event.date)))
        return drafts

    # --- SUA ------------------------------------------------------------------------------------

    def sua(self, checkpoint: int) -> list[Draft]:
        drafts = []
        by_lab: dict[str, list[tuple[Event, LabFact]]] = {}
        for event, fact in self._facts(checkpoint, LabFact):
            by_lab.setdefault(fact.lab, []).append((event, fact))
        for lab, series in by_lab.items():
            if len(series) >= 2:
                event, fact = series[-1]
                value = lab_with_unit(self.kb, lab, fact.value)
                drafts.append(Draft("SUA", "sua.latest_lab", {"lab_lay": self._lay(self.kb.labs[lab].lay)}, value,
                                    [event], [value], f"latest:{lab}:{event.event_id}",
                                    aliases=[value.replace(" ", "")]))
        upto = self.upto(checkpoint)
        if upto:
            state = state_on(self.year, upto[-1].date)
            by_date = {e.date: e for e in upto}
            for drug, dose in state.medications.items():
                event = by_date.get(dose.since)
                if event is None or event.kind == "trap_disclosure":
                    continue
                value = dose_with_unit(dose.dose, dose.unit)
                drafts.append(Draft("SUA", "sua.current_dose", {"drug": self.drug(drug)}, value, [event], [value],
                                    f"dose:{drug}:{dose.since}", aliases=[value.replace(" ", "")]))
        for event in upto:
            if event.kind == "switch":
                start, stop, stopped_in = self.switched(event)
                if stop is None:
                    continue
                name = self.drug(start.drug)
                drafts.append(Draft("SUA", "sua.replacement", {"drug": self.drug(stop.drug)}, name,
                                    [stopped_in, event], [name], f"replacement:{event.event_id}"))
        return drafts

    def switched(self, event: Event) -> tuple[MedicationFact, MedicationFact | None, Event | None]:
        """A switch's new drug, and the drug it replaces with the visit where that was stopped."""
        start = next(f for f in event.facts if isinstance(f, MedicationFact) and f.action in ("start", "administer"))
        for earlier in reversed([e for e in self.events if e.index <= event.index]):
            stop = next((f for f in earlier.facts if isinstance(f, MedicationFact) and f.action == "stop"
                         and f.step == start.step and f.reason == start.reason), None)
            if stop is not None:
                return start, stop, earlier
        return start, None, None

    # --- MQ -------------------------------------------------------------------------------------

    def _disclosed(self, checkpoint: int) -> list[tuple[Trap, Event]]:
        out = []
        for trap in self.traps:
            event = self.disclosure(trap)
            if event is not None and event.index <= checkpoint:
                out.append((trap, event))
        return out

    def _letters(self, options: list[tuple[str, bool]]) -> tuple[list[str], list[str]]:
        labelled = [f"{LETTERS[i]}. {name}" for i, (name, _) in enumerate(options)]
        return labelled, [LETTERS[i] for i, (_, ok) in enumerate(options) if ok]

    def mq(self, checkpoint: int, rng: random.Random) -> list[Draft]:
        drafts = []
        disclosed = self._disclosed(checkpoint)
        forbidden_all = {d for t in self.traps for d in t.forbidden_drugs}
        candidates = sorted({c for s in self.condition.care_path for c in s.drug_keys})
        safe = [d for d in candidates if d not in forbidden_all and verdict(self.kb, d, self.patient).is_allowed]
        for trap, event in disclosed:
            wrong = [d for d in trap.forbidden_drugs if d in candidates]
            if not wrong or not safe:
                continue
            n_wrong = min(len(wrong), rng.randint(1, 2))
            picks = [(d, False) for d in rng.sample(wrong, n_wrong)]
            picks += [(d, True) for d in rng.sample(safe, min(len(safe), 4 - n_wrong))]
            if len(picks) != 4:
                continue
            rng.shuffle(picks)
            options, correct = self._letters([(self.drug(d), ok) for d, ok in picks])
            drafts.append(Draft("MQ", "mq.safe_options", {"condition_lay": self._lay(self.condition.lay)},
                                ", ".join(correct), [event], [self.trap_detail(trap)], f"mq_safe:{trap.category}",
                                trap_category=trap.category, options=options, correct_options=correct))
        upto = self.upto(checkpoint)
        if upto:
            current = sorted(state_on(self.year, upto[-1].date).medications)
            ever = {f.drug for _, f in self._facts(checkpoint, MedicationFact)}
            relatives = sorted({d.drug for r in self.year.persona.family for d in r.drugs} - ever)
            stopped = sorted(ever - set(current))
            distractors = stopped + relatives + [c for c in candidates if c not in ever]
            if current and len(distractors) >= 1:
                right = rng.sample(current, min(len(current), rng.randint(1, 3)))
                wrong = rng.sample(distractors, min(len(distractors), 4 - len(right)))
                if len(right) + len(wrong) == 4:
                    picks = [(d, True) for d in right] + [(d, False) for d in wrong]
                    rng.shuffle(picks)
                    options, correct = self._letters([(self.drug(d), ok) for d, ok in picks])
                    starts = {f.drug: e for e, f in self._facts(checkpoint, MedicationFact) if f.action != "stop"}
                    evidence = [starts[d] for d in right if d in starts]
                    drafts.append(Draft("MQ", "mq.current_drugs", {}, ", ".join(correct), evidence,
                                        [self.drug(d) for d in right], f"mq_current:{checkpoint}",
                                        options=options, correct_options=correct))
        return drafts

    # --- IG -------------------------------------------------------------------------------------

    def ig(self, checkpoint: int) -> list[Draft]:
        drafts = []
        answers = self.answers
        avoided = {(f.drug, category): (e, f) for e in self.upto(checkpoint) for f in e.facts
                   if isinstance(f, AvoidedFact) for category in f.traps}
        condition_lay = self._lay(self.condition.lay)
        for trap, event in self._disclosed(checkpoint):
            detail = self.trap_detail(trap)
            for forbidden in trap.forbidden:
                drug = forbidden.drug
                purpose = self._t(self.step_purpose(forbidden.step))
                evidence = [event]
                instead = ""
                if (drug, trap.category) in avoided:
                    avoid_event, fact = avoided[(drug, trap.category)]
                    evidence.append(avoid_event)
                    instead = answers["ig_instead"].format(instead=self.drug(fact.instead))
                answer = answers["ig_no"].format(drug=self.drug(drug), reason=self.trap_reason(trap),
                                                 instead=instead).strip().rstrip(";")
                wrong = answers["ig_wrong"].format(drug=self.drug(drug), purpose=purpose)
                fields = {"drug": self.drug(drug), "purpose": purpose}
                drafts.append(Draft("IG", "ig.drug_suggestion", fields, answer, evidence, [detail],
                                    f"ig:{trap.category}:{drug}", trap_category=trap.category,
                                    common_wrong_answer=wrong))
            if trap.category == "diet_preference" and trap.undermined_advice:
                advice = self._t(self.kb.advice[trap.undermined_advice[0]].text)
                answer = answers["ig_habit"].format(habit=detail, advice=advice)
                drafts.append(Draft("IG", "ig.habit", {"condition_lay": condition_lay}, answer, [event], [detail],
                                    f"ig:habit:{trap.option}", trap_category=trap.category,
                                    common_wrong_answer=answers["ig_habit_wrong"]))
        return drafts

    def step_purpose(self, step_key: str):  # noqa: ANN201
        """What a care step is for, in the patient's words."""
        step = next(s for s in self.condition.care_path if s.key == step_key)
        assert step.purpose is not None, f"conditions/{self.condition.key}.yaml: {step_key}: purpose missing"
        return step.purpose

    # --- MCD ------------------------------------------------------------------------------------

    def _node_key(self, event: Event) -> str | None:
        """The one short string that a chain node's patient-specific data comes down to."""
        for fact in event.facts:
            if isinstance(fact, AdverseFact):
                effect = next(e for e in self.kb.drugs[fact.drug].adverse_effects if e.key == fact.effect)
                return self._t(effect.name)
            if isinstance(fact, DiagnosisFact) and fact.status == "complication":
                return self._t(fact.name)
            if isinstance(fact, AdherenceFact):
                return str(fact.missed_days)
            if isinstance(fact, MedicationFact) and fact.action in ("start", "increase"):
                return self.drug(fact.drug)
        lab = next((f for f in event.facts if isinstance(f, LabFact)), None)
        if lab is not None:
            return lab_with_unit(self.kb, lab.lab, lab.value)
        symptom = next((f for f in event.facts if isinstance(f, SymptomFact)), None)
        return self._t(symptom.name) if symptom else None

    def mcd(self, checkpoint: int) -> list[Draft]:
        by_id = {e.event_id: e for e in self.events}
        drafts = []
        for chain in causal_chains(self.year, maximal_only=False):
            nodes = [by_id[i] for i in chain.event_ids]
            if nodes[-1].index > checkpoint or chain.span_days < 14 or len({n.date for n in nodes}) < 2:
                continue
            nodes = nodes[-5:]  # 2-5 hops
            phrasing = self._mcd_template(nodes)
            if phrasing is None:
                continue
            template, fields = phrasing
            descriptions = [describe_event(self.kb, n) for n in nodes]
            keys = list(dict.fromkeys(k for k in (self._node_key(n) for n in nodes) if k))[:4]
            answer = " Then: ".join(descriptions)
            fact_key = f"chain:{template}:{sorted(fields.items())}"
            drafts.append(Draft("MCD", template, fields, answer, nodes, keys, fact_key,
                                chain=list(zip(descriptions, nodes, strict=True))))
        return drafts

    def _mcd_template(self, nodes: list[Event]) -> tuple[str, dict[str, str]] | None:
        """The phrasing for a chain, chosen by what it ends in; None for chains not worth asking about."""
        kinds = [n.kind for n in nodes]
        last = nodes[-1]
        if "switch" in kinds:
            start, stop, _ = self.switched(nodes[kinds.index("switch")])
            if stop is None:
                return None
            return "mcd.why_switch", {"drug": self.drug(stop.drug), "replacement": self.drug(start.drug)}
        if "complication" in kinds:
            diagnosis = next(f for f in nodes[kinds.index("complication")].facts if isinstance(f, DiagnosisFact))
            return "mcd.why_complication", {"complication": self._t(diagnosis.name)}
        lapse_lab = next((n for n in nodes if n.kind == "lab_check"), None)
        if any(isinstance(f, AdherenceFact) for n in nodes for f in n.facts) and lapse_lab is not None:
            lab = next(f for f in lapse_lab.facts if isinstance(f, LabFact))
            return "mcd.why_lapse", {"lab_lay": self._lay(self.kb.labs[lab.lab].lay)}
        if last.kind == "diagnosis":
            return "mcd.why_chain", {"last": f"my diagnosis of {self._t(self.condition.name)}"}
        started = next((f for f in last.facts if isinstance(f, MedicationFact) and f.action in ("start", "increase")),
                       None)
        if started is not None:
            verb = "starting" if started.action == "start" else "increasing"
            return "mcd.why_chain", {"last": f"{verb} {self.drug(started.drug)}"}
        return None

    # --- ABS ------------------------------------------------------------------------------------

    def _never_said(self, *terms: str) -> bool:
        """Whether none of the terms occurs (normalized) in the patient's own sessions."""
        return all(normalize_text(term) not in self.patient_text for term in terms)

    def abs(self, checkpoint: int) -> list[Draft]:
        drafts = []
        answer, aliases = self.answers["abstain"], self.answers["abstain_aliases"]
        for relative in self.year.persona.family:
            for item in relative.drugs:
                name = self.drug(item.drug)
                if self._never_said(name):
                    drafts.append(Draft("ABS", "abs.relative_drug", {"drug": name}, answer, [], [],
                                        f"abs:drug:{item.drug}", aliases=list(aliases), abstain=True,
                                        absent_fact=name))
            for lab in relative.labs:
                lay = self._lay(self.kb.labs[lab.lab].lay)
                if self._never_said(self._t(self.kb.labs[lab.lab].name), lay):
                    drafts.append(Draft("ABS", "abs.unmeasured_lab", {"lab_lay": lay}, answer, [], [],
                                        f"abs:lab:{lab.lab}", aliases=list(aliases), abstain=True,
                                        absent_fact=lay))
        measured = {f.lab for e in self.events for f in e.facts if isinstance(f, LabFact)}
        for key in sorted(set(self.kb.labs) - measured):
            lab = self.kb.labs[key]
            if self._never_said(self._t(lab.name), self._lay(lab.lay)):
                drafts.append(Draft("ABS", "abs.unmeasured_lab", {"lab_lay": self._lay(lab.lay)}, answer, [], [],
                                    f"abs:lab:{key}", aliases=list(aliases), abstain=True,
                                    absent_fact=self._lay(lab.lay)))
        return drafts
