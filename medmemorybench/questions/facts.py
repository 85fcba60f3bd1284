"""What a question can be made of: one patient's askable facts, their surface forms and the references to them.

`FactFinder` reads the structured ground truth (never generated text). Every surface form comes from the
phrasing files of the question's language (`phrasing.py`) or from the same functions the renderer used
(`render.fields`), so a key fact is the exact string the session states. `Draft` is a question before it
gets its id and wording; the type modules in `questions/types/` make drafts, `generate.py` schedules them.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import date, timedelta
from typing import TYPE_CHECKING, NamedTuple

from medmemorybench.knowledge.base import KnowledgeBase
from medmemorybench.knowledge.models import CareStep, Illness, PatientRule
from medmemorybench.normalize import normalize_text
from medmemorybench.questions.models import GoldFact
from medmemorybench.questions.phrasing import Phrasing
from medmemorybench.render.fields import dose_with_unit, format_number, lab_with_unit, text_of, trap_detail
from medmemorybench.render.models import regular_session_id
from medmemorybench.render.templates import Templates
from medmemorybench.simulate.models import (
    WITHDRAWN,
    AdherenceFact,
    AdverseFact,
    AllergyFact,
    AvoidedFact,
    CareYear,
    DiagnosisFact,
    DietFact,
    EconomicFact,
    Event,
    HistoryFact,
    LabFact,
    MedicationFact,
    PreferenceFact,
    SymptomFact,
    TestFact,
    Trap,
)
from medmemorybench.simulate.rng import rng_for
from medmemorybench.simulate.safety import Patient, is_long_term, patient_of, verdict
from medmemorybench.simulate.timeline import Dose, PatientState, state_on

if TYPE_CHECKING:
    from medmemorybench.questions.cohort import CohortPrior


@dataclass
class Draft:
    """A question before it gets its id and wording."""

    query_type: str
    template: str
    """Phrasing key `<type>.<intent>` ("eem.lab_at_anchor"): the wording is drawn from its variants."""
    fields: dict[str, str]
    answer: str
    evidence: list[Event]
    key_facts: list[str]
    fact_key: str
    """What the question is about (one per patient: no fact is asked twice)."""
    kind: str = ""
    """Sub-kind for the mix quotas (EEM: dose, drug, lab, finding, effect, allergen)."""
    names_date: bool = False
    """The question names a session's date (a metadata lookup: capped per type)."""
    aliases: list[str] = field(default_factory=list)
    trap_category: str | None = None
    options: list[str] = field(default_factory=list)
    correct_options: list[str] = field(default_factory=list)
    chain: list[tuple[str, Event]] = field(default_factory=list)
    abstain: bool = False
    absent_fact: str | None = None
    common_wrong_answer: str | None = None
    facts: list[GoldFact] = field(default_factory=list)
    """What a correct answer states (`GoldFact`s, compared by kind)."""
    chain_facts: list[list[GoldFact]] = field(default_factory=list)
    """MCD: per step of `chain`, what shows an answer told it."""
    side_by_coin: bool = False
    """A yes/no question whose side was drawn by a fair coin per patient and entity: its answers across the cohort
    are even already, so the cohort prior does not thin them."""


REMEDY_REGIMEN = "one_off"
"""A remedy from home is asked about as a dose taken when needed (a paracetamol for a headache), not as a regimen:
a budget or a once-a-day routine does not bar it; an allergy, an interaction or a contraindication does."""

DISTRACTORS = 6
"""Drugs other patients take that are held back as the wrong options of "which of these do I take?"."""


class Ruling(NamedTuple):
    """May the patient be given a drug after a checkpoint, as what they have told and take decides it."""

    allowed: bool | None
    """True: no rule bars, qualifies or caps it; False: a disclosed fact or a drug they take bars it; None: neither
    (a caution, a dose cap, or only a rule whose deciding fact the records may not state, such as age)."""
    traps: list[Trap]
    """The disclosed trap facts that bar it."""
    taken: list[str]
    """The drugs they take that bar it (a long-standing one told as a trap fact is among `traps` instead)."""
    permitted: bool
    """No rule bars it (cautions and dose caps aside)."""
    rules: tuple[str, ...] = ()
    """The patient rules that bar it whose deciding fact the records state by the checkpoint (an eGFR measured below
    the rule's threshold, `stated_rules`): a right reason beside the disclosed facts, though alone they do not make a
    question (`allowed` stays None)."""


_FORMULATION = ("release", "acting", "depot", "injection", "patch", "cream", "gel", "spray", "inhaler", "drops",
                "modified", "sustained", "liquid", "缓释", "控释", "注射", "贴", "乳膏", "凝胶", "喷雾", "吸入")


def name_parts(name: str) -> list[str]:
    """The names a parenthesized name holds: "salbutamol (albuterol)" -> salbutamol, albuterol;
    "theophylline (extended release)" -> theophylline (a formulation is no name of its own)."""
    m = re.fullmatch(r"\s*(.+?)\s*[(（]([^()（）]+)[)）]\s*", name)
    if m is None:
        return []
    outer, inner = m.group(1).strip(), m.group(2).strip()
    return [outer] if any(word in inner.lower() for word in _FORMULATION) else [outer, inner]


def date_aliases(iso: str, phrasing: Phrasing) -> list[str]:
    """Other ways of writing a date a correct answer may use (`date_aliases` of the phrasing's common.yaml)."""
    day = date.fromisoformat(iso)
    month = phrasing.common("months")[day.month - 1]
    return [pattern.format(day=day.day, month=month, m=day.month, year=day.year, mm=f"{day.month:02d}",
                           dd=f"{day.day:02d}") for pattern in phrasing.common("date_aliases")]


class FactFinder:
    """Finds askable facts in one patient's year, with their surface forms in one language."""

    def __init__(self, kb: KnowledgeBase, year: CareYear, phrasing: Phrasing, words: Templates,
                 session_text: dict[str, str], prior: CohortPrior | None = None) -> None:
        self.kb, self.year, self.phrasing, self.words = kb, year, phrasing, words
        self.lang = phrasing.language
        self.events = year.events
        self.condition = kb.conditions[year.persona.condition]
        self.traps: list[Trap] = year.persona.traps
        self.patient = patient_of(year.persona)
        self.patient_text = normalize_text(" ".join(session_text.values()))
        self.session_text = {sid: normalize_text(text) for sid, text in session_text.items()}
        """Each regular session's text (normalized), by id: what a visit said in this language."""
        self.pools = self._drug_pools()
        self.prior = prior
        """How often each drug is allowed across the cohort, for choice questions to draw options by."""
        self._rulings: dict[tuple[str, int, str | None], Ruling] = {}
        self._distractors: dict[bool, list[str]] = {}
        self._own_and_relatives = {d for step in self.condition.care_path for d in step.drug_keys} | \
            {d.drug for r in year.persona.family for d in r.drugs}
        self._patients: dict[int, Patient] = {}
        self._states: dict[int, PatientState] = {}  # (read thousands of times per patient: replayed once each)
        self._diagnosis_events: dict[int, list[Event]] = {}
        self.renderings: list[FactFinder] = [self]
        """The finders of every language the questions are rendered in (this one among them): a fact is never said
        only when none of them says it, so every language asks the same abstention questions."""

    def _drug_pools(self) -> dict[str, str]:
        """The role each drug a question could name plays for this patient: `shared` (asked whether it may be
        given, or offered as an option: IG golds are half yes and half no), `abs` (asked about as if it were the
        patient's, so never an option: being asked as absent would mark the option wrong) or `none` (half the
        relatives' drugs, held back so that not every relative's drug is an abstention question)."""
        rng = rng_for(self.year.seed, self.year.persona.persona_id, "questions/pools")
        ever = self.ever_given()
        candidates = sorted({d for s in self.condition.care_path for d in s.drug_keys}
                            | {d for t in self.traps for d in t.forbidden_drugs})
        pools = {drug: "shared" for drug in candidates if drug not in ever}
        relatives = sorted({d.drug for r in self.year.persona.family for d in r.drugs} - ever - set(pools))
        rng.shuffle(relatives)
        for number, drug in enumerate(relatives):
            pools[drug] = "abs" if number % 2 == 0 else "none"
        classes = {self.kb.drugs[d].drug_class for d in ever}
        for drug in sorted(k for k, d in self.kb.drugs.items() if d.drug_class in classes and k not in ever):
            pools.setdefault(drug, "abs")
        return pools

    def in_pool(self, drug: str, *pools: str) -> bool:
        return self.pools.get(drug) in pools

    def forbidding(self, drug: str, checkpoint: int) -> list[Trap]:
        """The disclosed traps (by the checkpoint) that forbid a drug."""
        return [t for t, _ in self.disclosed(checkpoint) if drug in t.forbidden_drugs]

    # --- surface forms ------------------------------------------------------------------------

    def t(self, text) -> str:  # noqa: ANN001
        return text_of(text, self.lang)

    def drug(self, key: str) -> str:
        return self.t(self.kb.drugs[key].name)

    def lay(self, text) -> str:  # noqa: ANN001
        """A lay name ready to follow "my": a leading article dropped."""
        phrase = self.t(text)
        for article in self.phrasing.common("articles"):
            if phrase.lower().startswith(article):
                return phrase[len(article):]
        return phrase

    def told(self, lay) -> str:  # noqa: ANN001
        """A symptom as the patient told it, put in a question: "that I nod off in meetings", "about a dull headache
        every morning" (`told` of the phrasing's common.yaml)."""
        said = self.t(lay)
        forms = self.phrasing.common("told")
        if said.lower().startswith(tuple(forms["clause_openings"])):
            return forms["clause"].format(said=said)
        return forms["thing"].format(said=said[:1].lower() + said[1:])

    def lab_lay(self, lab: str) -> str:
        return self.lay(self.kb.labs[lab].lay)

    def lab_value(self, fact: LabFact) -> str:
        return lab_with_unit(self.kb, fact.lab, fact.value, self.words.unit(fact.unit))

    def dose(self, fact: MedicationFact) -> str:
        return self.dose_text(fact.dose, fact.unit)

    def dose_text(self, dose: float, unit: str) -> str:
        """A dose with its unit as the sessions of this language say it ("10 units", "10 单位")."""
        return dose_with_unit(dose, self.words.unit(unit))

    def condition_lay(self) -> str:
        return self.lay(self.condition.lay)

    def say(self, table: str, key: str, **fields: str) -> str:
        """An answer sentence of the phrasing files (`answers.<table>.<key>`)."""
        return self.phrasing.answer(table, key).format(**fields)

    def medication_text(self, fact: MedicationFact) -> str:
        """A medication fact as a gold answer says it ("metformin 500 mg twice a day was started")."""
        frequency = self.words.word("frequency", fact.frequency)
        fields = {"drug": self.drug(fact.drug), "dose": self.dose(fact), "frequency": frequency,
                  "previous": self.dose_text(fact.previous_dose, fact.unit) if fact.previous_dose is not None else ""}
        return self.say("medication", fact.action, **fields)

    def event_text(self, event: Event, lab: str | None = None, withdrawn: dict[str, str] | None = None) -> str:
        """What happened at a visit, from its structured facts, in the gold answers' words (no internal codes);
        `lab`: also that lab's value, where the visit measured it (a chain about how it moved); `withdrawn`: the
        diagnoses the record withdrew by the question's checkpoint (`withdrawn`), a suspected one told as such."""
        parts: list[str] = []
        measured = next((f for f in event.facts if isinstance(f, LabFact) and f.lab == lab), None)
        if measured is not None:
            parts.append(self.say("event", "lab", lab=self.lab_lay(measured.lab), value=self.lab_value(measured)))
        for fact in event.facts:
            if isinstance(fact, MedicationFact) and fact.reason != "long_term":
                parts.append(self.medication_text(fact))
            elif isinstance(fact, DiagnosisFact) and fact.status in ("confirmed", "complication", "suspected", "acute"):
                status = (withdrawn or {}).get(fact.icd11, fact.status) if fact.status == "suspected" else fact.status
                parts.append(self.say("diagnosis", status, name=self.t(fact.name)))
            elif isinstance(fact, AvoidedFact) and (reasons := self.avoided_reasons(fact)):
                parts.append(self.say("event", "avoided", drug=self.drug(fact.drug), reasons=reasons))
            elif (trap := next((t for t in self.traps if t.fact == fact), None)) is not None:
                told = self.say("disclosed", trap.category, detail=self.trap_detail(trap).rstrip(".。"))
                parts.append(self.say("event", "disclosed", detail=told))
            elif isinstance(fact, AdverseFact):
                parts.append(self.say("event", "adverse", effect=self.effect_name(fact), drug=self.drug(fact.drug)))
            elif isinstance(fact, AdherenceFact):
                parts.append(self.say("event", "adherence", drug=self.drug(fact.drug), days=str(fact.missed_days)))
            elif isinstance(fact, TestFact):
                parts.append(self.say("event", "test", test=self.t(fact.name), finding=self.t(fact.finding)))
        if not parts:  # a visit that changed nothing: what the patient told, else its result (a vital sign last)
            labs = sorted((f for f in event.facts if isinstance(f, LabFact)),
                          key=lambda f: self.kb.labs[f.lab].kind == "vital")
            # (every symptom told: the tremor reported with the palpitations is not a later step's)
            symptoms = [self.t(f.name) for f in event.facts if isinstance(f, SymptomFact)]
            if symptoms:
                parts.append(self.say("event", "symptom", symptom=self.say("joiner", "and").join(symptoms)))
            elif labs:
                parts.append(self.say("event", "lab", lab=self.lab_lay(labs[0].lab), value=self.lab_value(labs[0])))
        return self.say("joiner", "parts").join(parts)

    def avoided_reasons(self, fact: AvoidedFact) -> str:
        """Why a preferred drug was passed over, in the gold's words: the trap facts and the drugs taken that rule
        it out (other rules, such as age or kidney function, rest on facts the year may not state)."""
        reasons = [self.trap_reason(t) for t in self.traps if t.category in fact.traps]
        taken = [r.removeprefix("interaction:").partition("+")[0] for r in fact.rules if r.startswith("interaction:")]
        named = {t.option for t in self.traps if t.category in fact.traps}
        reasons += [self.say("ig", "taken_reason", drug=self.drug(d)) for d in dict.fromkeys(taken) if d not in named]
        return self.say("joiner", "and").join(reasons)

    def illness_of(self, event: Event) -> Illness | None:
        """The intercurrent illness a visit treated (its finding and course), if one."""
        for fact in event.facts:
            if isinstance(fact, TestFact) and fact.test.startswith("illness:"):
                return self.kb.illnesses[fact.test.split(":")[1]]
        return None

    def illness_lay(self, illness: Illness) -> str:
        return self.lay(illness.lay)

    def possible_illnesses(self) -> list[Illness]:
        """The acute illnesses the patient could catch (those their sex and age allow)."""
        persona = self.year.persona
        return [i for i in self.kb.illnesses.values()
                if i.sex in ("any", persona.sex) and i.age[0] <= persona.age <= i.age[1]]

    def effect_name(self, fact: AdverseFact) -> str:
        effect = next(e for e in self.kb.drugs[fact.drug].adverse_effects if e.key == fact.effect)
        return self.t(effect.name)

    def trap_detail(self, trap: Trap) -> str:
        """The short string that identifies a trap fact in the dialogue."""
        return trap_detail(self.kb, trap, self.lang)

    def trap_reason(self, trap: Trap) -> str:
        """Why a disclosed fact bars a drug, as a gold says it (a long-standing drug with what it is taken for:
        naproxen is barred by the ulcer pantoprazole treats, not by pantoprazole)."""
        key = (trap.indication or "").removeprefix("history:")
        if trap.category == "medication_history" and key in self.kb.history_conditions:
            return self.say("trap_reason", "medication_history_for", detail=self.trap_detail(trap),
                            condition=self.t(self.kb.history_conditions[key].name))
        return self.say("trap_reason", trap.category, detail=self.trap_detail(trap))

    def step_purpose(self, step_key: str) -> str:
        step = next(s for s in self.condition.care_path if s.key == step_key)
        assert step.purpose is not None, f"conditions/{self.condition.key}.yaml: {step_key}: purpose missing"
        return self.t(step.purpose)

    # --- gold facts: what a correct answer states, each with its other forms ---------------------

    def quantity_fact(self, text: str, *, required: bool = True, group: str = "") -> GoldFact:
        return GoldFact(text=text, kind="quantity", required=required, group=group)

    def date_fact(self, iso: str, group: str = "") -> GoldFact:
        return GoldFact(text=iso, kind="date", group=group)

    def start_date_facts(self, event: Event) -> list[GoldFact]:
        """When a drug was started: the visit's date, or the next day where the visit says it starts "from tomorrow"
        (the patient then begins it the day after; both are right). Read in every rendering, so every language asks
        the same."""
        sid = regular_session_id(event.event_id)
        if not any(word in f.session_text.get(sid, "") for f in self.renderings
                   for word in f.phrasing.common("from_tomorrow")):
            return [self.date_fact(event.date)]
        next_day = (date.fromisoformat(event.date) + timedelta(days=1)).isoformat()
        return [self.date_fact(event.date, group="start"), self.date_fact(next_day, group="start")]

    def polarity_fact(self, side: str) -> GoldFact:
        return GoldFact(text=side, kind="polarity")

    def name_fact(self, name: str, others: list[str] | tuple[str, ...] = (), group: str = "") -> GoldFact:
        """A name and its other forms: its parts around a parenthesis ("salbutamol (albuterol)": both; not a
        formulation such as "(extended release)") and `others`."""
        forms = [name, *name_parts(name), *others]
        aliases = [f for f in dict.fromkeys(forms) if f and f != name]
        return GoldFact(text=name, kind="name", aliases=aliases, group=group)

    def drug_fact(self, key: str, group: str = "") -> GoldFact:
        return self.name_fact(self.drug(key), self.kb.aliases.drug(key, self.lang), group)

    def diagnosis_fact(self, name, icd11: str, *, coded: bool = True) -> GoldFact:  # noqa: ANN001
        """A diagnosis by its name, and by the other names of its code where the code names it alone (`coded`: not
        a complication, whose code it may share with the disease it complicates: DD71, ulcerative colitis and its
        acute severe flare)."""
        return self.name_fact(self.t(name), self.kb.aliases.diagnosis(icd11, self.lang) if coded else [])

    def effect_fact(self, fact: AdverseFact) -> GoldFact:
        effect = next(e for e in self.kb.drugs[fact.drug].adverse_effects if e.key == fact.effect)
        return self.name_fact(self.t(effect.name), [self.t(effect.lay)])

    def symptom_fact(self, fact: SymptomFact) -> GoldFact:
        """A symptom by its gist where it has one (a condition's or an illness's symptom: "getting up at night to pee"
        states nocturia), else (an adverse effect, a complication) by its clinical and lay names."""
        key = fact.symptom.rpartition(".")[2]
        if key in self.kb.gists.symptoms:
            return GoldFact(text=self.t(fact.name), kind="gist", aliases=self.gist("symptoms", key))
        return self.name_fact(self.t(fact.name), [self.lay(fact.lay)])

    def lab_fact(self, fact: LabFact) -> GoldFact:
        return self.quantity_fact(self.lab_value(fact))

    def finding_fact(self, fact: TestFact) -> GoldFact:
        return GoldFact(text=self.t(fact.finding), kind="finding")

    def trap_fact(self, trap: Trap, group: str = "") -> GoldFact:
        """A trap fact as an answer states it: an allergy, a preference or a habit by its gist (the few concepts a
        paraphrase must touch), a long-standing drug or a past disease by name, a budget as its amount."""
        fact, detail = trap.fact, self.trap_detail(trap)
        if isinstance(fact, AllergyFact):
            return GoldFact(text=detail, kind="gist", aliases=self.gist("allergy_groups", fact.group), group=group)
        if isinstance(fact, PreferenceFact):
            return GoldFact(text=detail, kind="gist", aliases=self.gist("medication_preferences", fact.preference),
                            group=group)
        if isinstance(fact, DietFact):
            return GoldFact(text=detail, kind="gist", aliases=self.gist("habits", fact.habit), group=group)
        if isinstance(fact, MedicationFact):
            return self.drug_fact(fact.drug, group)
        if isinstance(fact, HistoryFact):
            return self.name_fact(detail, self.kb.aliases.history_condition(fact.history, self.lang), group)
        if isinstance(fact, EconomicFact):
            return self.quantity_fact(detail, group=group)
        raise TypeError(f"trap fact {type(fact).__name__} has no gold fact")

    def gist(self, section: str, key: str) -> list[str]:
        """A disclosed fact's concept groups (`gists.yaml`), each group's words joined by "|"."""
        return ["|".join(group) for group in self.kb.gists.of(section, key, self.lang)]

    def reason_facts(self, ruling: Ruling) -> list[GoldFact]:
        """Every disclosed fact and drug taken that bars a drug, as alternatives: naming any one of them is a right
        reason."""
        return [*(self.trap_fact(t, group="reason") for t in ruling.traps),
                *(self.drug_fact(d, group="reason") for d in ruling.taken),
                *(self.lab_name_fact("egfr", group="reason") for _ in ruling.rules[:1])]

    def lab_name_fact(self, lab: str, group: str = "") -> GoldFact:
        """A lab by its name, its lay name and its other names ("eGFR", "kidney function")."""
        return self.name_fact(self.t(self.kb.labs[lab].name),
                              [self.lay(self.kb.labs[lab].lay), *self.kb.aliases.lab(lab, self.lang)], group)

    def rule_reasons(self, ruling: Ruling, checkpoint: int) -> list[str]:
        """The stated rules that bar a drug (`Ruling.rules`), as a gold says them: the value and why."""
        return [self.say("ig", "lab_reason", lab=self.t(self.kb.labs[fact.lab].name), value=self.lab_value(fact),
                         reason=self.t(rule.reason))
                for rule, (_, fact) in self.stated_rules(list(ruling.rules), checkpoint)]

    # --- reading the year ---------------------------------------------------------------------

    def upto(self, checkpoint: int) -> list[Event]:
        return [e for e in self.events if e.index <= checkpoint]

    def facts(self, checkpoint: int, kind: type) -> list[tuple[Event, object]]:
        return [(e, f) for e in self.upto(checkpoint) for f in e.facts if isinstance(f, kind)]

    def first_starts(self, checkpoint: int) -> list[tuple[Event, MedicationFact]]:
        seen, out = set(), []
        for event, fact in self.facts(checkpoint, MedicationFact):
            if fact.action in ("start", "administer") and fact.drug not in seen:
                seen.add(fact.drug)
                out.append((event, fact))
        return out

    def disclosure(self, trap: Trap) -> Event | None:
        """The visit where the trap fact was told."""
        return next((e for e in self.events if trap.fact in e.facts), None)

    def disclosed(self, checkpoint: int) -> list[tuple[Trap, Event]]:
        out = []
        for trap in self.traps:
            event = self.disclosure(trap)
            if event is not None and event.index <= checkpoint:
                out.append((trap, event))
        return out

    def never_said(self, *terms: str) -> bool:
        """Whether none of the terms occurs (normalized) in the patient's own sessions."""
        return all(normalize_text(term) not in self.patient_text for term in terms)

    def never_said_anywhere(self, terms: Callable[[FactFinder], tuple[str, ...]]) -> bool:
        """Whether no rendering's sessions say that rendering's terms (`terms` names them in a finder's language)."""
        return all(f.never_said(*terms(f)) for f in self.renderings)

    def patient_at(self, checkpoint: int) -> Patient:
        """The prescriber's view of the patient after the checkpoint's last visit: every trap fact, what they take and
        what it costs a month, the latest kidney function and the results patient rules read (TPMT), the
        complications and the harms drugs have done. A
        "yes, that is fine" gold needs all of it: a drug the persona alone allows may be barred by a fall in eGFR."""
        if checkpoint in self._patients:
            return self._patients[checkpoint]
        state = self.state_at(checkpoint)
        taking = set(state.medications)
        stopped_for_harm = [(e, f) for e, f in self.facts(checkpoint, MedicationFact)
                            if f.action == "stop" and f.reason.startswith("adverse_effect:")]  # type: ignore[union-attr]
        toxicities = {effect.bars_kind for _, f in stopped_for_harm for effect in self.kb.drugs[f.drug].adverse_effects  # type: ignore[union-attr]
                      if f.reason == f"adverse_effect:{effect.key}" and effect.bars_kind}  # type: ignore[union-attr]
        spending = sum(self.kb.drugs[d].monthly_cost_usd for d, dose in state.medications.items()
                       if dose.until is None and is_long_term(self.kb, d))
        self._patients[checkpoint] = replace(
            self.patient, taking=taking, egfr=state.labs["egfr"].value if "egfr" in state.labs else None,
            complications=set(state.complications), toxicities=toxicities,
            intolerant={f.drug for _, f in stopped_for_harm}, spending_usd=spending,  # type: ignore[union-attr]
            labs={lab: state.labs[lab].value for lab in self.kb.rule_labs if lab in state.labs})
        return self._patients[checkpoint]

    def state_at(self, checkpoint: int) -> PatientState:
        """`state_on` the checkpoint's last visit, replayed once per checkpoint (read it, never change it)."""
        if checkpoint not in self._states:
            self._states[checkpoint] = state_on(self.year, self.upto(checkpoint)[-1].date)
        return self._states[checkpoint]

    def diagnosis_events(self, checkpoint: int) -> list[Event]:
        """The visits that confirmed the condition, by the checkpoint."""
        if checkpoint not in self._diagnosis_events:
            self._diagnosis_events[checkpoint] = [
                e for e in self.upto(checkpoint)
                if any(isinstance(f, DiagnosisFact) and f.status == "confirmed" for f in e.facts)]
        return list(self._diagnosis_events[checkpoint])

    def diagnosed(self, checkpoint: int) -> bool:
        """Whether the patient's condition was confirmed by the checkpoint."""
        return bool(self.diagnosis_events(checkpoint))

    def step_applies(self, step: CareStep, checkpoint: int) -> bool:
        """Whether a care step of the condition applies to the patient after the checkpoint: the diagnosis made, and
        the step's complication found or its lab past its threshold (`Indication`): "a drug for the burning pain in
        my feet" is no question before the neuropathy."""
        if not self.diagnosed(checkpoint):
            return False
        state = self.state_at(checkpoint)
        need = step.indication
        if need.complication is not None:
            return need.complication in state.complications
        if need.lab is not None:
            reading = state.labs.get(need.lab)
            return reading is not None and ((need.above is not None and reading.value > need.above)
                                            or (need.below is not None and reading.value < need.below))
        return True

    def indicated(self, drug: str, checkpoint: int) -> bool:
        """Whether some care step that gives the drug applies to the patient after the checkpoint (`step_applies`)."""
        return any(drug in step.drug_keys and self.step_applies(step, checkpoint) for step in self.condition.care_path)

    def same_kind_taken(self, drug: str, checkpoint: int) -> str | None:
        """A drug the patient takes after the checkpoint that does the asked drug's job (`KnowledgeBase.therapy_group`:
        amlodipine for nifedipine, an ACE inhibitor for an ARB), None if none: a second of a kind is no option and no
        addition, whatever else allows it (drug_classes.yaml; STOPP v2 A3). IG and MQ ask it alike."""
        if not self.upto(checkpoint) or not self.kb.classes[self.kb.drugs[drug].drug_class].same_job:
            return None  # (calcium carbonate is no second ferrous sulfate: `DrugClass.same_job`)
        group = self.kb.therapy_group(drug)
        return next((d for d in sorted(self.patient_at(checkpoint).taking)
                     if d != drug and self.kb.therapy_group(d) == group), None)

    def ruling(self, drug: str, checkpoint: int, regimen: str | None = None) -> Ruling:
        """Whether the drug may be given after the checkpoint, and what bars it (cached: IG and MQ ask the same)."""
        key = (drug, checkpoint, regimen)
        if key not in self._rulings:
            patient = self.patient_at(checkpoint)
            result = verdict(self.kb, drug, patient, regimen)
            traps = [t for t, _ in self.disclosed(checkpoint) if t.category in result.traps]
            named = {t.option for t in traps if t.category == "medication_history"}  # (said by its trap reason)
            taken = sorted({b.rule.split(":")[1].split("+")[0] for b in result.blocks
                            if b.rule.startswith("interaction:")} & patient.taking - named)
            plain = result.is_allowed and not result.cautions and result.max_daily_dose is None
            allowed = False if traps or taken else (True if plain else None)
            rules = self.stated_rules([b.rule.removeprefix("rule:") for b in result.blocks
                                       if b.rule.startswith("rule:")], checkpoint)
            self._rulings[key] = Ruling(allowed, traps, taken, result.is_allowed, tuple(r.key for r, _ in rules))
        return self._rulings[key]

    def stated_rules(self, keys: list[str], checkpoint: int) -> list[tuple[PatientRule, tuple[Event, LabFact]]]:
        """The patient rules (by key) that the records decide by the checkpoint, each with the visit and value that
        decide it: a rule on kidney function alone, where the latest eGFR measured is below its threshold (a rule on
        age or sex is left out: the records do not always state them)."""
        rules = {r.key: r for r in self.kb.patient_rules}
        egfr = [(e, f) for e, f in self.facts(checkpoint, LabFact) if f.lab == "egfr"]  # type: ignore[union-attr]
        out = []
        for key in keys:
            when = rules[key].when
            if when.egfr_below is None or when.min_age is not None or when.max_age is not None or when.sex \
                    or when.conditions or not egfr:
                continue
            if egfr[-1][1].value < when.egfr_below:  # type: ignore[union-attr]
                out.append((rules[key], egfr[-1]))
        return out  # type: ignore[return-value]

    def barred_reasons(self, ruling: Ruling, checkpoint: int) -> str:
        """Why a drug is barred, as a gold says it: every disclosed fact, drug taken and stated rule that bars it."""
        reasons = [self.trap_reason(t) for t in ruling.traps]
        reasons += [self.say("ig", "taken_reason", drug=self.drug(d)) for d in ruling.taken]
        reasons += self.rule_reasons(ruling, checkpoint)
        return self.say("joiner", "and").join(r.rstrip(".。") for r in reasons)  # (a told sentence ends mid-list)

    def barred_evidence(self, ruling: Ruling, checkpoint: int) -> tuple[list[Event], str]:
        """The visits that told what bars a drug, and the key fact a right answer names."""
        decided = [(e, f) for _, (e, f) in self.stated_rules(list(ruling.rules), checkpoint)]
        if ruling.traps:
            told, key = [e for e in (self.disclosure(t) for t in ruling.traps) if e], self.trap_detail(ruling.traps[0])
        elif ruling.taken:
            told = [next(e for e, f in self.facts(checkpoint, MedicationFact) if f.drug == ruling.taken[0])]  # type: ignore[union-attr]
            key = self.drug(ruling.taken[0])
        else:
            told, key = [], self.lab_value(decided[0][1])
        return list({e.event_id: e for e in [*told, *(e for e, _ in decided)]}.values()), key

    def distractors(self, given: bool = False) -> list[str]:
        """The drugs the cohort's other patients take most (`CohortPrior.taken`; `given`: were given at all, courses
        included) that this patient never had: the wrong options of "which of these do I take?" ("... was I ever
        given?"), so that a prior of "drugs people take" points at right and wrong options alike."""
        if given not in self._distractors:
            counts = (self.prior.given if given else self.prior.taken) if self.prior is not None else {}
            mine = self.ever_given()
            ranked = sorted((d for d in counts if d not in mine and not self.in_pool(d, "abs", "none")),
                            key=lambda d: (-counts[d], d))
            self._distractors[given] = ranked[:DISTRACTORS]
        return self._distractors[given]

    def remedies(self) -> list[str]:
        """The remedies a patient might reach for at home (`answers.otc_use`), by drug key."""
        return [d for d in self.phrasing.common("answers")["otc_use"] if d in self.kb.drugs]

    def asked_regimen(self, drug: str) -> str | None:
        """How a question offers the drug: a remedy as `REMEDY_REGIMEN`, anything else on its own regimen (None)."""
        return REMEDY_REGIMEN if drug in self.remedies() else None

    def askable(self) -> list[str]:
        """Every drug a yes/no or choice question could name: the condition's and the traps' (the pools), the common
        remedies and the acute illnesses' courses."""
        remedies = self.remedies()
        courses = [c.drug for i in self.kb.illnesses.values() for c in i.candidates]
        return sorted({*self.pools, *remedies, *courses})

    def foreign(self, drug: str) -> bool:
        """A drug neither of the patient's own condition's care nor a relative's (asked about as hypothetical)."""
        return drug not in self._own_and_relatives

    def ever_given(self) -> set[str]:
        return {f.drug for e in self.events for f in e.facts if isinstance(f, MedicationFact)}

    # --- references to a visit without its date -----------------------------------------------

    def anchors(self, checkpoint: int) -> dict[str, tuple[str, Event]]:
        """Visits a patient can point at by what happened there ("the visit where you started me on X"):
        anchor key -> (phrase, event). Only references that name one visit are kept."""
        found: dict[str, list[tuple[str, Event]]] = {}
        for event in self.upto(checkpoint):
            for key, phrase in self._anchor_phrases(event):
                found.setdefault(key, []).append((phrase, event))
        return {key: hits[0] for key, hits in found.items() if len(hits) == 1}

    def _anchor_phrases(self, event: Event) -> list[tuple[str, str]]:
        out = []
        for fact in event.facts:
            if isinstance(fact, MedicationFact) and fact.action == "start" and fact.reason != "long_term":
                out.append((f"start:{fact.drug}", self.say("anchor", "start", drug=self.drug(fact.drug))))
            elif isinstance(fact, MedicationFact) and fact.action == "stop":
                out.append((f"stop:{fact.drug}", self.say("anchor", "stop", drug=self.drug(fact.drug))))
            elif isinstance(fact, DiagnosisFact) and fact.status == "confirmed":
                out.append(("diagnosis", self.say("anchor", "diagnosis", condition=self.condition_lay())))
            elif isinstance(fact, DiagnosisFact) and fact.status == "complication":
                out.append((f"complication:{fact.icd11}", self.say("anchor", "complication",
                                                                   complication=self.t(fact.name))))
            elif isinstance(fact, AdverseFact):
                out.append((f"adverse:{fact.drug}", self.say("anchor", "adverse", effect=self.effect_name(fact))))
            elif isinstance(fact, DiagnosisFact) and fact.status == "acute" and (ill := self.illness_of(event)):
                out.append((f"illness:{ill.key}", self.say("anchor", "illness", illness=self.illness_lay(ill))))
        return out

    def month_of(self, event: Event) -> str:
        return self.phrasing.common("months")[date.fromisoformat(event.date).month - 1]

    def when(self, event: Event, others: list[Event]) -> str:
        """When a question says `event` was: in its month, or on its date where another of `others` (the visits it
        could mean by the checkpoint: the fasting sugar of 25 May beside that of 10 May) falls in that month."""
        words = self.phrasing.common("when")
        if any(o.event_id != event.event_id and o.date[:7] == event.date[:7] for o in others):
            return words["date"].format(date=event.date)
        return words["month"].format(month=self.month_of(event))

    def withdrawn(self, checkpoint: int) -> dict[str, str]:
        """The working diagnoses the record withdrew by the checkpoint (ICD-11 code -> `ruled_out` or `revised`)."""
        return {f.icd11: f.status for _, f in self.facts(checkpoint, DiagnosisFact)  # type: ignore[union-attr]
                if f.status in WITHDRAWN}  # type: ignore[union-attr]

    def format_number(self, value: float) -> str:
        return format_number(value)

    def other_dose(self, drug: str, dose: Dose, checkpoint: int) -> float | None:
        """The dose a dispensing slip or an out-of-date list would give for a drug taken now: the dose before its last
        change, or, for a dose never changed, the next strength of the drug's dosing (the next down at its maximum).
        None for a course (it runs out), a single strength, or a dose off the drug's ladder (a form of its own)."""
        if dose.until is not None:
            return None
        for event, fact in self.facts(checkpoint, MedicationFact):
            if event.date == dose.since and fact.drug == drug and fact.previous_dose \
                    and fact.previous_dose != dose.dose:  # type: ignore[union-attr]
                return fact.previous_dose  # type: ignore[union-attr]
        spec = self.kb.drugs[drug].dose
        ladder = spec.doses()
        if spec.unit != dose.unit or dose.dose not in ladder or len(ladder) < 2:
            return None
        index = ladder.index(dose.dose)
        return ladder[index + 1] if index + 1 < len(ladder) else ladder[index - 1]
