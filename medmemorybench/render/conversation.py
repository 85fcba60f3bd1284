"""The template renderer: one regular event becomes a 6–10 turn consultation planned as dialogue acts.

A visit is planned (language-free, from the ground truth and a seeded RNG) as a sequence of beats that
alternate patient and doctor: the patient's reason for coming, in lay words and fitting what led to the
visit; the doctor's greeting and history questions (onset, severity, triggers, adherence, side effects) and
the patient's answers (sometimes vague, sometimes corrected; a pill described by when it is taken before
the doctor names it); the examination or results explained as fits their kind (a scan is not a blood test)
with the trend since the last reading; the decision, where the patient raises a trap fact that matters, and
asks about side effects, cost, alternatives or how long; safety-netting fitting the visit (an admission is
urgent); teach-back and the next visit, with references to earlier visits. Every fact of the event is
stated verbatim by a fact intent (`fact_acts.py`). Each language's phrasing file realizes the acts
(`templates.py`), so English and Chinese sessions are two renderings of the same plan.
"""

from __future__ import annotations

import random
import re
from collections import Counter
from datetime import date

from medmemorybench.knowledge.base import KnowledgeBase
from medmemorybench.knowledge.models import Text
from medmemorybench.render.acts import Act, Count, Day, DrugName, LayName, Money, SlotValue, Word
from medmemorybench.render.context import VisitFacts, YearContext
from medmemorybench.render.fact_acts import FactSlots, fact_acts, grouped_avoided
from medmemorybench.render.fields import (
    budget_text,
    dose_with_unit,
    format_lab_value,
    judged_range,
    lab_status,
    lab_with_unit,
    range_place,
    text_of,
    trap_detail,
    trend_size,
)
from medmemorybench.render.models import Session, Turn, regular_session_id
from medmemorybench.render.templates import Templates
from medmemorybench.simulate.household import aid_holds, is_able
from medmemorybench.simulate.models import (
    WITHDRAWN,
    AdherenceFact,
    AdviceFact,
    AvoidedFact,
    CareYear,
    ComplicationFact,
    DiagnosisFact,
    Event,
    Household,
    LabFact,
    MedicationFact,
    Persona,
    PreferenceFact,
    Relative,
    SymptomFact,
    TestFact,
)
from medmemorybench.simulate.rng import rng_for

DATE_SAID_PROBABILITY = 0.4
"""Share of visits where the doctor says the day's date (as clinicians do for the record): a dated question is
then answerable from what was said, not only from the session's metadata."""
BACKREF_PROBABILITY = 0.45
SECOND_QUESTION_PROBABILITY = 0.6
PATIENT_QUESTION_PROBABILITY = 0.75
VAGUE_PILL_PROBABILITY = 0.3
CORRECTED_ONSET_PROBABILITY = 0.2
RAISE_TRAP_PROBABILITY = 0.6
GREETING_PROBABILITY = 0.7
ASIDE_PROBABILITY = 0.6
"""Visits where the patient mentions their life in passing (a relative, their work, the day)."""
REPEAT_ADVICE_BRIEFLY = 0.7
"""Advice given before is referred back to ("the walking we agreed on 4 March") rather than read out in full."""
HOUSEHOLD_TALK_PROBABILITY = 0.2
"""Lifestyle visits where the patient's account of their routine is who cooks at home (the household drawn once per
persona: `simulate/household.py`)."""
GOODBYE_PROBABILITY = 0.5
TECHNICAL_REGISTER_SHARE = 0.3
"""Patients who speak of their results in clinical terms (the rest use lay words)."""
_STARTS = ("start", "increase", "decrease", "administer")


def _told_before(key: str, seen: str, on: str) -> tuple[str, dict[str, SlotValue]]:
    """The act that names when a symptom was first told, and that day as it is said: its month ("back in March"), or,
    told earlier in the visit's own month, its day (the seed-53 read: "Do you remember what I said in March?" on 3
    March about a symptom told on 2 March)."""
    if seen[:7] == on[:7]:
        return f"{key}.recent", {"since": Day(seen, "spoken")}
    return key, {"since": Day(seen, "month")}


def shifted(iso: str, days: int) -> str:
    """The date `days` after (or, negative, before) an ISO date."""
    return date.fromordinal(date.fromisoformat(iso).toordinal() + days).isoformat()


def _next_bucket(days: int | None) -> str:
    if days is None:
        return "none"
    return "days" if days < 7 else "week" if days < 12 else "weeks" if days < 25 else "month" if days < 50 \
        else "months"


UNTRUE_TALK = {
    "work": {"en": r"\b(?:at|from|off|to|for|of|tell|affecting|your|my)\]? work\b|\bcan't work like"
                   r"|\b[Ww]ork(?:'s| is| as| makes| gets| got| has| takes| keeps|, mostly)\b|\bMostly work"
                   r"|lunch break|\b(?:my|your|night|early|late|long) shifts?\b|shift work|\bboss\b"
                   r"|\b(?:my|your) job\b|\{occupation\}|office|colleague",
             "zh": r"上班|下班|午休|倒班|轮班|单位|老板|同事|工作|\{occupation\}"},
    "needles": {"en": r"[Nn]eedle", "zh": r"针"},
    "wife": {"en": r"\b[Ww]ife\b", "zh": r"老婆|妻子|媳妇"},
    "husband": {"en": r"\b[Hh]usband\b", "zh": r"老公|丈夫"},
    "spouse": {"en": r"\b[Pp]artner\b", "zh": r"爱人(?!的(?:母亲|父亲))|对象|老伴"},  # (an in-law outlives a marriage)
    "daughter": {"en": r"\b[Dd]aughter", "zh": r"闺女|女儿"},
    "son": {"en": r"\b[Ss]on\b|\b[Ss]on's\b", "zh": r"儿子"},
    "child": {"en": r"\b(?:[Mm]y|[Oo]ur) (?:child|kid)\b", "zh": r"孩子"},
    "children": {"en": r"\b(?:[Kk]ids|[Cc]hildren)\b", "zh": r"孩子们|几个孩子|俩孩子|孩子都"},
    "boss": {"en": r"\bboss\b", "zh": r"老板|领导"},
    "shifts": {"en": r"\b(?:my|your|a|night|early|late|long) shifts?\b|shift work", "zh": r"倒班|换班|调班|夜班|轮班"},
    "helper": {"en": r"\{helper", "zh": r"\{helper"},
    "housemate": {"en": r"\{housemate", "zh": r"\{housemate"},
}
"""Talk that presupposes something of the patient: a job to go to (not said by or to a retired patient: "Is it getting
in the way of work?", "What do I tell work?", the seed-73 read), a boss (not
by a farmer or a restaurant owner: the seed-53 read) and shifts (not where the job has none), needles taken calmly
(not said by one whose trap is a needle phobia: the fact is never contradicted later), family the patient does not
have (a husband for a man whose family has a wife, a partner for one who lives alone, a daughter where there is none:
the seed-19 and seed-23 reads), and a relative who does something for them where none is able (`helper`) or shares
their home (`housemate`: no "I'll write it on the fridge for Anthony to see" from one who lives alone)."""
VISIT_TALK = {
    "last_visit": {"en": r"\{last_seen\}|\{gap\}", "zh": r"\{last_seen\}|\{gap\}"},
    "a_while": {"en": r"been a while, so", "zh": r"有段时间没来了"},
    "medicines": {"en": r"(?:[Aa]longside|[Bb]esides) the medicines", "zh": r"除了吃药"},
    "acting": {"en": r"[Ww]e'll adjust it|I'll act on that|act on it|needs attention|and that matters",
               "zh": r"需要调整|我会处理|得调整一下|需要处理|得想办法降下来|这个要重视|这很重要"},
    "new_drug": {"en": r"since starting|at first on the|has settled in now", "zh": r"刚吃"},
    "no_complaint": {"en": r"Nothing urgent, I'm|nothing dramatic|Not much to report|Things are ticking along|"
                           r"Mostly good news",
                     "zh": r"没什么急事|，没什么大事|没什么大变化|总体还行"},
}
"""Talk that presupposes something of the visit (the seed-61 read): a last visit to speak of ("Last time was 3
January", said at the first one, on 3 January), a real gap since it ("It's been a while", two days after it:
`A_WHILE_DAYS`), a medicine taken or given ("Alongside the medicines, there's something else", with none on record;
"Besides the medicines, what can I do myself?"), a result acted on ("2.26 mmol/L is over the 1.80 we aim for, so we
need to act on it", "132 mmHg is above the 119 mmHg limit, and that matters" at a visit that keeps every medicine as it
is: the seed-73 read, P0009 S086, P0004 S037 and S094; `ACTED_ON`), nothing to complain of ("Nothing urgent, I'm just
keeping my appointment", then "it's bad enough that I came in" at a visit that tells a symptom: the seed-73 read, P0004
S005, P0014 S050; `COMPLAINT_KINDS`); and, of a drug the patient was on before the year (`Taking.since_before`), no
talk of a new drug ("Have you noticed anything since starting the warfarin?", "Maybe a bit queasy at first on the
warfarin", "The warfarin has settled in now", of warfarin taken for years: the seed-73 read, P0014 S023, S026)."""
COMPLAINT_KINDS = frozenset({"symptom_report", "acute_illness", "adverse_event", "complication"})
"""Visits that bring a complaint whether or not a symptom is told at them (an acute illness, a side effect)."""
ACTED_ON = frozenset({"start", "increase", "decrease", "stop", "administer"})
"""Medicine decisions that act on a result: a visit with none of them says no result must be acted on."""
A_WHILE_DAYS = 28
"""Days since the last visit before a patient says "it's been a while"."""
FAMILY_TALK = {"wife": ("wife",), "husband": ("husband",), "spouse": ("wife", "husband"), "daughter": ("daughter",),
               "son": ("son",), "child": ("son", "daughter"), "children": ("son", "daughter")}
"""Family talk and the relations (any one of them) that make it true."""
FAMILY_TALK_AT_LEAST = {"children": 2}
"""Family talk in the plural and how many relatives of its relations it needs (the seed-61 read: "I'll tell the kids"
from a patient with one son; one relative makes the rest true)."""


def able_relatives(kb: KnowledgeBase, persona: Persona) -> list[Relative]:
    """The relatives of an age and health to do something for the patient (drive them in, sort their tablets)."""
    return [r for r in persona.family if is_able(kb, r)]


def able_housemates(kb: KnowledgeBase, persona: Persona) -> list[Relative]:
    """Those of `able_relatives` who share the patient's home (none for one who lives alone)."""
    members = persona.household.members if persona.household is not None else []
    return [r for r in able_relatives(kb, persona) if r.relation in members]


def untrue_of(kb: KnowledgeBase, persona: Persona, lang: str) -> re.Pattern[str] | None:
    """The phrasings (as written) that would say something untrue of this patient, as one pattern (None: none)."""
    topics = []
    occupation = next((o for o in kb.people.occupations if o.key == persona.occupation_key), None)
    traits = set(occupation.traits) if occupation is not None else set()
    if "retired" in traits:
        topics.append("work")
    if occupation is not None and "employee" not in traits:
        topics.append("boss")
    if occupation is not None and "shift_work" not in traits:
        topics.append("shifts")
    if not able_relatives(kb, persona):
        topics.append("helper")
    if not able_housemates(kb, persona):
        topics.append("housemate")
    if any(t.category == "medication_preference" and "injection" in kb.preferences[t.option].excludes_forms
           for t in persona.traps):
        topics.append("needles")
    topics += [topic for topic, makes_true in FAMILY_TALK.items()
               if sum(r.relation in makes_true for r in persona.family) < FAMILY_TALK_AT_LEAST.get(topic, 1)]
    return re.compile("|".join(UNTRUE_TALK[t][lang] for t in topics)) if topics else None



def explanation(kb: KnowledgeBase, templates: Templates, fact: LabFact) -> tuple[Act, Act]:
    """The patient's question about a result and the doctor's answer: the value against the range it is judged by
    (a drug's target, a condition's goal, else the reference), placed where it sits in it (`range_place`: "79" is at
    the top end of 60 to 79, never "right in the middle")."""
    lab = kb.labs[fact.lab]
    status = lab_status(kb, fact.lab, fact.value, fact.target, fact.goal)
    unit = templates.unit(lab.unit)
    low, high = judged_range(kb, fact.lab, fact.target, fact.goal)
    slots = {"lab_lay": LayName(lab.lay), "value": lab_with_unit(kb, fact.lab, fact.value, unit),
             "low": format_lab_value(kb, fact.lab, low), "high": format_lab_value(kb, fact.lab, high), "unit": unit,
             "place": Word("place", range_place(fact.value, low, high))}
    return Act("patient", "react.result", slots), Act("doctor", f"explain.{status}", slots)

class SessionRenderer:
    """Renders the regular sessions of one care year, in order (back references need the earlier ones)."""

    def __init__(self, kb: KnowledgeBase, templates: Templates, year: CareYear) -> None:
        self.kb, self.templates, self.year = kb, templates, year
        self.lang = templates.language
        self.persona = year.persona
        self.ctx = YearContext(kb, year)
        self.facts = FactSlots(kb, templates, year)
        self.traps = {t.category: t for t in year.persona.traps}
        pid = year.persona.persona_id
        self.technical = rng_for(year.seed, pid, "render/register").random() < TECHNICAL_REGISTER_SHARE
        self._say_rng: random.Random | None = None
        self.stats: Counter = Counter()
        """Patient turns and the stock-filler ones among them (what the variety report counts)."""
        self.untrue = untrue_of(kb, year.persona, self.lang)
        """Phrasings not said in this year: what is untrue of this patient (`untrue_of`)."""
        self.untrue_now = self.untrue
        """Phrasings not said at the visit being said: the year's and the visit's own (`untrue_at`)."""
        self._untrue_cache: dict[tuple[str, ...], re.Pattern[str] | None] = {}
        self.untrue_topics_now: tuple[str, ...] = ()
        self.long_held_now: set[str] = set()
        """Drugs taken at the visit being said since before the year: never spoken of as new (`VISIT_TALK` new_drug)."""
        persona = year.persona
        occupation = next((o for o in kb.people.occupations if o.key == persona.occupation_key), None)
        self.retired = occupation is not None and "retired" in occupation.traits
        self.helpers = able_relatives(kb, persona)
        self.housemates = able_housemates(kb, persona)
        household = persona.household
        self.aid = household.adherence_aid if household is not None and household.adherence_aid else "routine"
        """How the patient keeps to their tablets, the same all year (an older record without one: a place in the
        routine, which says nothing of anyone else)."""
        self.aid_helper = next((r for r in persona.family if household is not None
                                and r.relation == household.adherence_helper), None)
        lifestyle = next((ls for ls in kb.people.lifestyles if ls.key == persona.lifestyle_key), None)
        self.day = lifestyle.day if lifestyle is not None else None
        self.meals = kb.meals[persona.meals].text if persona.meals in kb.meals else None
        self.needle_phobia = next((t.option for t in persona.traps if t.category == "medication_preference"
                                   and kb.preferences[t.option].needle_care is not None), None)
        """The preference that is a fainting needle phobia, if the patient has it: needle procedures are told as
        managed once it is known (`MedicationPreference.needle_care`)."""

    # --- planning (language-free) ------------------------------------------------------------------------

    def _rng(self, event: Event, purpose: str) -> random.Random:
        return rng_for(self.year.seed, self.persona.persona_id, f"render/{purpose}/{event.event_id}")

    def plan(self, event: Event) -> list[list[Act]]:
        """The beats of the consultation: lists of acts, alternating patient and doctor, patient first."""
        rng = self._rng(event, "plan")
        v = VisitFacts.of(event)
        on = event.date
        taking = [t for t in self.ctx.current(on) if t.fact.reason != "long_term" or rng.random() < 0.3]
        urgent = v.is_urgent or any(isinstance(f, ComplicationFact) and self._acute(f.complication)
                                    for f in v.findings)
        told = [a for fact in v.told for a in fact_acts(self.kb, self.year, fact)]
        told_p = [a for a in told if a.role == "patient"]
        told_d = [a for a in told if a.role == "doctor"]
        first_q, first_a, second = self._history(event, v, taking, rng)

        open_beat = [self._opening(event, v, urgent, rng)]
        if not urgent and rng.random() < ASIDE_PROBABILITY:
            open_beat.insert(rng.randrange(2), Act("patient", "aside.patient"))
        greet = [Act("doctor", "greet.doctor.urgent", filler=True)] if urgent else []
        if not urgent and rng.random() < GREETING_PROBABILITY:
            greet.append(Act("doctor", "greet.doctor", self._since_last(event), filler=True))
        if not urgent and rng.random() < ASIDE_PROBABILITY / 2:
            greet.append(Act("doctor", "aside.doctor"))
        if self._rng(event, "dates").random() < DATE_SAID_PROBABILITY:  # (own stream: the rest of the plan stays)
            greet.append(Act("doctor", "today", {"date": Day(on, "full")}))
        beats: list[list[Act]] = [open_beat, greet + [first_q]]
        split = len(told_p) if second is None or len(told_p) < 3 else (len(told_p) + 1) // 2
        vague = first_a.key == "ans.adherence.vague"
        beats.append([first_a, *told_p[:split], *self._needle_told(event, v)])
        doctor_acks = (self._clarify(first_a) if vague else []) + self._acks(told_d, told_p[:split])
        findings = self._findings(event, v, urgent, rng)
        decisions = self._decisions(event, v, rng)
        if second is not None:
            beats.append(doctor_acks + [second[0]])
            beats.append([second[1], *told_p[split:]])
            doctor_acks = self._acks(told_d, told_p[split:])
        raise_acts = self._raise(v, rng)
        if raise_acts:
            beats[-1] = [*beats[-1], raise_acts[0]]
        body = doctor_acks + findings + ([raise_acts[1]] if raise_acts else [])
        answer = self._self_harm_asked(v)
        if answer is not None:  # (the question and the answer, before the advice that says it was asked)
            beats += [[*body, Act("doctor", "hx.self_harm")], [Act("patient", answer)]]
            body = []
        body += decisions
        beats.append(body or [Act("doctor", "plan.none")])
        question = self._patient_question(event, v, urgent, rng)
        safety = self._safety(v, urgent, rng)
        if question is not None and answer is None:  # (the self-harm exchange takes the question's two turns)
            beats.append([question[0]])
            beats.append([question[1], *safety])
            safety = []
        # (a patient going into hospital today books nothing at the desk)
        goodbye = rng.random() < GOODBYE_PROBABILITY and not v.is_admission
        beats.append([*self._teachback(v, rng), *([Act("patient", "bye.patient", filler=True)] if goodbye else [])])
        # (an acute visit does not close on "since we found your COPD in April, you've done well")
        looking_back = [] if urgent else self._backref(event, rng)
        beats.append([*safety, *self._next(event, rng), *looking_back,
                      *([Act("doctor", "bye.doctor", filler=True)] if goodbye or not safety else [])])
        return beats

    def untrue_at(self, event: Event) -> re.Pattern[str] | None:
        """The phrasings untrue of this patient or of this visit (`visit_topics`), as one pattern."""
        return self._untrue_pattern(self.visit_topics(event))

    def visit_topics(self, event: Event) -> tuple[str, ...]:
        """The topics of `VISIT_TALK` untrue of this visit: no last visit at the first, no "a while" within
        `A_WHILE_DAYS` of the last, no "alongside the medicines" with none taken or given, no result that "needs acting
        on" where no medicine is started, changed or stopped (`ACTED_ON`), nothing to complain of at a visit that
        brings a complaint (`COMPLAINT_KINDS`, a told symptom)."""
        topics = []
        if event.index < 2:
            topics += ["last_visit", "a_while"]
        elif (date.fromisoformat(event.date) - date.fromisoformat(self.year.events[event.index - 2].date)).days \
                < A_WHILE_DAYS:
            topics.append("a_while")
        if not self.ctx.current(event.date) and not any(isinstance(f, MedicationFact) and f.action != "stop"
                                                        for f in event.facts):
            topics.append("medicines")
        if not any(isinstance(f, MedicationFact) and f.action in ACTED_ON for f in event.facts):
            topics.append("acting")
        if event.kind in COMPLAINT_KINDS or any(isinstance(f, SymptomFact) for f in event.facts):
            topics.append("no_complaint")
        return tuple(topics)

    def _untrue_pattern(self, key: tuple[str, ...]) -> re.Pattern[str] | None:
        """The patient's untrue phrasings and those of the visit `topics` (`VISIT_TALK`), as one pattern."""
        if key not in self._untrue_cache:  # (one pattern object per kind of visit: the templates keep what it leaves)
            parts = [self.untrue.pattern] if self.untrue is not None else []
            parts += [VISIT_TALK[t][self.lang] for t in key]
            self._untrue_cache[key] = re.compile("|".join(parts)) if parts else None
        return self._untrue_cache[key]

    def _as_needed(self) -> str:
        """'.as_needed' where the course a review follows was taken only as attacks came on: its review never speaks
        of a course finished (the seed-73 read: "Codeine phosphate isn't a course to finish", then "Finished it, the
        whole course"), else ''."""
        course = self.ctx.last_course
        return ".as_needed" if course is not None and course.frequency == "as_needed" else ""

    def _self_harm_asked(self, v: VisitFacts) -> str | None:
        """The patient's answer to the self-harm question where the visit's advice says it was asked (a positive mood
        screen's safety net, patient_rules.yaml `mood_screen`: the seed-61 read found "I also asked you about thoughts
        of harming yourself" with no such question): a plain no, or, where such thoughts were told before, not now."""
        rule = self.kb.mood_screen
        advice = {f.advice for f in v.decisions if isinstance(f, AdviceFact)}
        if rule is None or not advice & {rule.safety_net_advice, rule.crisis_advice}:
            return None
        return "ans.self_harm.before" if rule.crisis_advice in advice else "ans.self_harm"

    def _needle_known(self, event: Event) -> bool:
        """Whether the patient's fainting needle phobia is on record by this visit (told before or at it)."""
        return self.needle_phobia is not None and (self.needle_phobia in self.ctx.preferences_told or any(
            isinstance(f, PreferenceFact) and f.preference == self.needle_phobia for f in event.facts))

    def _needle_told(self, event: Event, v: VisitFacts) -> list[Act]:
        """How a needle procedure of this visit went for a patient who faints at needles, once the phobia is known:
        a needle test or an aspirated joint each time, a blood test the first time after it is known (the seed-29 to
        seed-53 reads: about 20 blood tests and a colonoscopy with no word of it; `needle_care`)."""
        if not self._needle_known(event):
            return []
        condition = self.kb.conditions[self.persona.condition]
        tests = {t.key for t in condition.diagnostic_tests if t.needle}
        complications = {c.key for c in condition.complications if c.needle}
        if any(isinstance(f, TestFact) and f.test in tests or isinstance(f, ComplicationFact)
               and f.complication in complications for f in v.findings):
            return [Act("patient", "needle.procedure")]
        if not self.ctx.blood_drawn_known and any(self._lab_kind(f.lab) == "blood" for f in v.labs):
            return [Act("patient", "needle.blood")]
        return []

    @staticmethod
    def _acks(told_d: list[Act], said: list[Act]) -> list[Act]:
        """The doctor's acknowledgements of what the patient just said."""
        facts = {id(a.fact) for a in said}
        return [a for a in told_d if id(a.fact) in facts]

    def _acute(self, complication: str) -> bool:
        comps = self.kb.conditions[self.persona.condition].complications
        return any(c.acute for c in comps if c.key == complication)

    def _opening(self, event: Event, v: VisitFacts, urgent: bool, rng: random.Random) -> Act:
        kind = event.kind
        symptoms = [f for f in v.told if isinstance(f, SymptomFact)]
        if kind == "symptom_report" and symptoms:
            if "." in symptoms[0].symptom:
                return Act("patient", "open.symptom_report.illness")
            seen = self.ctx.symptoms_seen.get(symptoms[0].symptom)
            if seen is not None:
                return Act("patient", *_told_before("open.symptom_report.again", seen, event.date))
        if (kind == "lab_check" or kind == "complication" and not symptoms) and v.labs:  # (found on a result)
            lab_kinds = Counter(self._lab_kind(f.lab) for f in v.labs)
            return Act("patient", f"open.lab_check.{lab_kinds.most_common(1)[0][0]}")
        if kind == "follow_up":
            if any(isinstance(f, TestFact) and f.test.endswith(":review") for f in v.findings) and self.ctx.last_course:
                return Act("patient", f"open.follow_up.review{self._as_needed()}",
                           {"course_drug": DrugName(self.ctx.last_course.drug)})
            taking = self.ctx.current(event.date)
            if taking and rng.random() < 0.5:
                drug = rng.choice(taking).fact.drug
                return Act("patient", "open.follow_up.on_drug", {"drug": DrugName(drug), "form": self._form(drug)})
        if kind == "adverse_event":
            suspect = next((t for t in self.ctx.current(event.date)
                            if any(getattr(f, "drug", None) == t.fact.drug for f in v.findings)), None)
            if suspect is not None:
                return Act("patient", "open.adverse_event.drug",
                           {"form": self._form(suspect.fact.drug), "since": Day(suspect.started, "month")})
        if kind == "complication" and urgent:
            return Act("patient", "open.complication.urgent")
        if kind == "prescription" and self.ctx.diagnosed_on is not None:
            return Act("patient", "open.prescription.diagnosed")
        return Act("patient", f"open.{kind}")

    def _lab_kind(self, key: str) -> str:
        """What a result was measured on or by: blood, urine, stool, breath, sleep_study, ecg, imaging, score,
        vital."""
        lab = self.kb.labs[key]
        return lab.specimen if lab.kind == "lab" else lab.kind

    def _form(self, drug: str) -> Word:
        return Word("form", self.kb.drugs[drug].forms[0].form)

    def _history(self, event: Event, v: VisitFacts, taking: list, rng: random.Random):  # noqa: ANN202
        """The doctor's first question and the patient's answer, and an optional second question with its
        answer: what this kind of visit calls for, answered truthfully (no side effect or missed dose that the
        year does not hold)."""
        kind = event.kind
        symptoms = [f for f in v.told if isinstance(f, SymptomFact)]
        adherence = next((f for f in v.told if isinstance(f, AdherenceFact)), None)
        second = None
        if symptoms and kind != "adverse_event":
            seen = self.ctx.symptoms_seen.get(symptoms[0].symptom)
            if kind == "complication":
                answer = Act("patient", "ans.urgent")
            elif seen is not None:
                answer = Act("patient", *_told_before("ans.onset.since", seen, event.date))
            elif "." in symptoms[0].symptom:  # an acute illness's symptom is days old, not weeks
                answer = Act("patient", "ans.onset.acute")
            elif rng.random() < CORRECTED_ONSET_PROBABILITY:
                answer = Act("patient", "ans.onset.corrected")
            else:
                answer = Act("patient", "ans.onset.new")
            first = (Act("doctor", "hx.urgent" if kind == "complication" else "hx.onset"), answer)
            if rng.random() < SECOND_QUESTION_PROBABILITY:
                topics = ["severity", "trigger", "impact"] + (["tried"] if "." in symptoms[0].symptom else [])
                topic = rng.choice(topics)
                low = 7 if kind == "complication" else 3
                slots = {"score": str(rng.randint(low, low + 2 if low == 7 else 8))} if topic == "severity" else {}
                second = (Act("doctor", f"hx.{topic}"), Act("patient", f"ans.{topic}", slots))
            return first[0], first[1], second
        if kind == "adverse_event" and taking:
            drug = taking[-1].fact.drug
            return Act("doctor", "hx.side_effects", {"drug": DrugName(drug)}), \
                Act("patient", "ans.onset.new"), None
        if adherence is not None:
            drug = DrugName(adherence.drug)
            answer = Act("patient", "ans.adherence.missed", {"drug": drug})
            return Act("doctor", "hx.adherence", {"drug": drug}), answer, None
        if kind == "acute_illness":
            return Act("doctor", "hx.illness"), Act("patient", "ans.illness.worse"), None
        if kind == "follow_up" and self.ctx.last_course and any(
                isinstance(f, TestFact) and f.test.endswith(":review") for f in v.findings):
            drug = DrugName(self.ctx.last_course.drug)
            return Act("doctor", f"hx.review{self._as_needed()}", {"course_drug": drug}), \
                Act("patient", f"ans.review{self._as_needed()}", {"course_drug": drug}), None
        if kind in ("trap_disclosure", "correction"):
            return Act("doctor", "hx.disclosure"), Act("patient", "ans.disclosure"), None
        if kind == "psychological":
            return Act("doctor", "hx.mood"), Act("patient", "ans.mood"), \
                (Act("doctor", "hx.impact"), Act("patient", "ans.impact")) if rng.random() < 0.5 else None
        if kind == "lifestyle":
            household = self.persona.household
            if household is not None and rng.random() < HOUSEHOLD_TALK_PROBABILITY:
                return Act("doctor", "hx.routine"), self._cooking(household), None
            # (a working patient's day is not a retiree's: the seed-53 hairdresser "potters about, then the telly")
            routine = "ans.routine.retired" if self.retired else "ans.routine.working"
            return Act("doctor", "hx.routine"), Act("patient", routine), None
        if kind in ("diagnostic_test", "diagnosis"):
            return Act("doctor", "hx.tests_how"), Act("patient", "ans.tests_how"), None
        # (a drug the patient's aid holds is asked about first: a short course is given beside the pharmacy's pack)
        held = [t for t in taking if aid_holds(self.kb, self.persona.traps, t.fact)]
        taking = held or taking
        taking = [t for t in taking if not self.ctx.in_lapse(t.fact.drug, event.date)]
        if taking:
            pick = rng.choice(taking)
            drug = DrugName(pick.fact.drug, pick.fact.release)
            slots: dict[str, SlotValue] = {"drug": drug, "frequency": Word("frequency", pick.fact.frequency)}
            if not aid_holds(self.kb, self.persona.traps, pick.fact):  # (it is kept beside the aid, and said so)
                slots["aid"] = Word("aid_beside", self.aid)
            if rng.random() < VAGUE_PILL_PROBABILITY:
                answer = Act("patient", "ans.adherence.vague", {"form": self._form(pick.fact.drug), **slots})
            else:
                answer = Act("patient", "ans.adherence.ok", slots)
            if rng.random() < SECOND_QUESTION_PROBABILITY * 0.6:
                second = (Act("doctor", "hx.side_effects", {"drug": drug}),
                          Act("patient", "ans.side_effects.none", {"drug": drug}))
            return Act("doctor", "hx.adherence", {"drug": drug}), answer, second
        relative = rng.choice(self.persona.family)
        return Act("doctor", "hx.general"), Act("patient", "ans.general",
                                                 {"relative": self.kb.relatives[relative.relation].text}), None

    def _cooking(self, household: Household) -> Act:
        """Who cooks at home, as the persona's one household says: a member, or the patient for them or alone."""
        if household.cook is not None:
            return Act("patient", "ans.routine.cook_other", {"cook": self.kb.relatives[household.cook].text})
        if household.members:
            return Act("patient", "ans.routine.cook_for", {"household": self._members(household)})
        return Act("patient", "ans.routine.cook_alone")

    def _members(self, household: Household) -> str:
        texts = [text_of(self.kb.relatives[relation].text, self.lang) for relation in household.members]
        return self.templates.word("joiner", "and").join(texts)

    def _clarify(self, answer: Act) -> list[Act]:
        """The doctor names the pill the patient described by when they take it."""
        return [Act("doctor", "clarify.drug", {"drug": answer.slots["drug"]})]

    def _findings(self, event: Event, v: VisitFacts, urgent: bool, rng: random.Random) -> list[Act]:
        """Examination, results with their trend and meaning, tests and diagnoses."""
        out: list[Act] = []
        symptomatic = any(isinstance(f, SymptomFact) for f in v.told)
        if urgent:
            out.append(Act("doctor", "exam.urgent"))
        elif symptomatic and rng.random() < 0.6:
            out.append(Act("doctor", "exam.general"))
        said_kinds: set[str] = set()
        for fact in sorted(v.labs, key=lambda f: self.kb.labs[f.lab].kind != "vital" if symptomatic else 0):
            lab = self.kb.labs[fact.lab]
            kind = self._lab_kind(fact.lab)
            if kind not in said_kinds and not (symptomatic and kind == "vital"):
                out.append(Act("doctor", f"results.{kind}", filler=True))
            said_kinds.add(kind)
            out.append(Act("doctor", "fact.lab", fact=fact))
            trend = self._trend(event, fact)
            if trend is not None and rng.random() < 0.6:
                direction, since = trend
                name = LayName(lab.lay) if not self.technical else lab.name
                out.append(Act("doctor", f"trend.{direction}", {"lab": name, "since": since}))
        tests = [f for f in v.findings if isinstance(f, TestFact)]
        if tests and not symptomatic and rng.random() < 0.5:
            out.append(Act("doctor", "results.tests", filler=True))
        for fact in v.findings:
            out += fact_acts(self.kb, self.year, fact)
        return out

    def _trend(self, event: Event, fact: LabFact) -> tuple[str, Day] | None:
        """How a result moved since the previous reading of that lab, and how to name that reading: the direction of
        the values as the sessions show them (rounded to the lab's decimals; equal shown values are "same") with the
        size of the change against the range it is judged by (`trend_size`: "up_slight", "up", "up_marked"), and the
        reading by its month only where that month holds no other reading of the lab and is not this visit's own
        month ("since March" at a March visit, or beside two March readings, would point at the wrong one), else by
        its day."""
        previous = self.ctx.previous_lab(fact.lab)
        if previous is None:
            return None
        on, value = previous
        then, now = (float(format_lab_value(self.kb, fact.lab, v)) for v in (value, fact.value))
        direction = "up" if now > then else "down" if now < then else "same"
        if direction != "same":  # ("a little higher" only for a small change, "much higher" for a big one)
            direction += trend_size(self.kb, fact.lab, then, now, fact.target)
        month = on[:7]
        alone = sum(1 for day, _ in self.ctx.lab_history[fact.lab] if day[:7] == month) == 1
        return direction, Day(on, "month" if alone and month != event.date[:7] else "spoken")

    def _decisions(self, event: Event, v: VisitFacts, rng: random.Random) -> list[Act]:
        """What is decided; advice given before is referred back to rather than read out again, most times (safety
        advice said again is said in full: stopping a salt substitute when an ARB starts is not "keep at it")."""
        out: list[Act] = []
        for fact in grouped_avoided(v.decisions):
            given = self.ctx.advice_given.get(fact.advice) if isinstance(fact, AdviceFact) else None
            if given is not None and self.kb.advice[fact.advice].safety:
                out.append(Act("doctor", "advice.again_safety", {"since": Day(given, "spoken"),
                                                                 "advice": self.kb.advice[fact.advice].text}))
            elif given is not None and rng.random() < REPEAT_ADVICE_BRIEFLY:
                out.append(Act("doctor", "advice.again", {"since": Day(given, "spoken"),
                                                          "advice": self.kb.advice[fact.advice].text}))
            else:
                out += fact_acts(self.kb, self.year, fact)
            needle = self.kb.advice[fact.advice].needle if isinstance(fact, AdviceFact) else None
            if needle is not None and self._needle_known(event):  # (vaccines lying down; finger-pricks made bearable)
                out.append(Act("doctor", f"needle.{needle}"))
        return out

    def _raise(self, v: VisitFacts, rng: random.Random) -> list[Act] | None:
        """The patient raises a trap fact where it matters (the usual drug it rules out is about to be chosen),
        and the doctor confirms it is on record."""
        avoided = next((f for f in v.decisions if isinstance(f, AvoidedFact) and f.traps), None)
        if avoided is None or rng.random() >= RAISE_TRAP_PROBABILITY:
            return None
        category = avoided.traps[0]
        return [Act("patient", f"raise.{category}"), Act("doctor", "answer.raise")]

    def _main_prescription(self, v: VisitFacts) -> MedicationFact | None:
        return next((f for f in v.prescriptions if f.action in _STARTS and f.reason != "long_term"), None)

    def _patient_question(self, event: Event, v: VisitFacts, urgent: bool, rng: random.Random):  # noqa: ANN202
        """A question the patient asks about what was decided or found, and the doctor's answer."""
        if rng.random() >= PATIENT_QUESTION_PROBABILITY:
            return None
        if urgent:
            return Act("patient", "ask.urgent"), Act("doctor", "answer.urgent")
        main = self._main_prescription(v)
        if main is not None:
            drug = DrugName(main.drug, main.release)
            topics = ["side_effects", "cost", "alternative"] + (["duration"] if main.course_days else [])
            topic = rng.choice(topics)
            ask = Act("patient", f"ask.{topic}", {"drug": drug})
            if topic == "side_effects":
                effects = self.kb.drugs[main.drug].adverse_effects
                if not effects:
                    return ask, Act("doctor", "answer.side_effects.none", {"drug": drug})
                return ask, Act("doctor", "answer.side_effects", {"drug": drug, "effect": effects[0].name})
            if topic == "cost":
                return ask, Act("doctor", "answer.cost", {"drug": drug,
                                                          "cost": Money(self.kb.drugs[main.drug].monthly_cost_usd)})
            if topic == "duration":  # (an as-needed drug is taken at attacks, never "finish the box")
                key = "answer.duration.as_needed" if main.frequency == "as_needed" else "answer.duration"
                return ask, Act("doctor", key, {"drug": drug, "days": str(main.course_days)})
            avoided = next((f for f in v.decisions if isinstance(f, AvoidedFact) and f.instead == main.drug), None)
            if avoided is not None:
                return ask, Act("doctor", "answer.alternative.avoided", {"drug": drug, "other": DrugName(avoided.drug)})
            return ask, Act("doctor", "answer.alternative", {"drug": drug})
        diagnosis = next((f for f in v.findings if isinstance(f, DiagnosisFact)
                          and f.status in ("confirmed", "complication", "acute")), None)
        if diagnosis is not None:
            return Act("patient", "ask.meaning"), Act("doctor", "answer.meaning", {"diagnosis": diagnosis.name})
        judged = [f for f in v.labs if self.kb.labs[f.lab].judged]  # (a weight has no range to explain it by)
        if judged:
            return explanation(self.kb, self.templates, rng.choice(judged))
        return None

    def _safety(self, v: VisitFacts, urgent: bool, rng: random.Random) -> list[Act]:
        if v.is_urgent:  # (an admission goes in by ambulance today: no "a taxi, or an ambulance if it gets worse")
            return [Act("doctor", "safety.admission" if v.is_admission else "safety.urgent")]
        # (signs the label has a patient report at once are told at every start, whatever else is said: sulfasalazine's
        # sore throat and fever, not first after a fever has come; the seed-79 read)
        warned = [Act("doctor", "safety.new_drug", {"drug": DrugName(f.drug, f.release), "effect": e.warning})
                  for f in v.prescriptions if f.action == "start"
                  for e in self.kb.drugs[f.drug].adverse_effects if e.warning is not None]
        if urgent:  # (an acute complication treated at home: no one is expecting them anywhere)
            return [Act("doctor", "safety.acute_home"), *warned]
        main = self._main_prescription(v)
        if main is not None and main.reason.startswith("illness:"):
            return [Act("doctor", "safety.illness"), *warned]
        if warned:
            return warned
        if main is not None and self.kb.drugs[main.drug].adverse_effects and rng.random() < 0.7:
            effect = self.kb.drugs[main.drug].adverse_effects[-1]
            return [Act("doctor", "safety.new_drug", {"drug": DrugName(main.drug, main.release),
                                                       "effect": effect.name})]
        return [Act("doctor", "safety.general")] if rng.random() < 0.4 else []

    def _teachback(self, v: VisitFacts, rng: random.Random) -> list[Act]:
        if v.is_admission:  # (no tablets to pick up today: the treatment starts on the ward)
            return [Act("patient", "teachback.admission")]
        changed = [f for f in v.prescriptions if f.reason != "long_term"]
        if changed:
            fact = rng.choice(changed)
            drug = DrugName(fact.drug, fact.release)
            if fact.action == "stop":
                return [Act("patient", "teachback.stop", {"drug": drug})]
            dose = dose_with_unit(fact.dose, self.templates.unit(fact.unit))
            return [Act("patient", "teachback.drug", {"drug": drug, "dose": dose,
                                                      "frequency": Word("frequency", fact.frequency)})]
        diagnosis = next((f for f in v.findings if isinstance(f, DiagnosisFact) and f.status not in WITHDRAWN), None)
        if diagnosis is not None:
            return [Act("patient", "teachback.diagnosis", {"diagnosis": diagnosis.name})]
        advice = [f for f in v.decisions if isinstance(f, AdviceFact)]
        if advice:  # (advice a harm calls for is taken as an instruction, not a habit to work on "in small steps")
            safety = any(self.kb.advice[f.advice].safety for f in advice)
            return [Act("patient", "teachback.advice_safety" if safety else "teachback.advice")]
        if v.labs:
            return [Act("patient", "teachback.results", {"lab_lay": LayName(self.kb.labs[rng.choice(v.labs).lab].lay)})]
        return [Act("patient", "teachback.general", filler=True)]

    def _since_last(self, event: Event) -> dict[str, SlotValue]:
        """When the patient was last seen (the greeting may say so)."""
        if event.index < 2:
            return {"last_seen": Day(event.date, "spoken"), "gap": "0"}
        previous = self.year.events[event.index - 2]
        gap = (date.fromisoformat(event.date) - date.fromisoformat(previous.date)).days
        return {"last_seen": Day(previous.date, "spoken"), "gap": str(gap)}

    def _next(self, event: Event, rng: random.Random) -> list[Act]:
        """The next visit: when (its date, its weekday, the days until it), and the tests due then."""
        upcoming = self.ctx.next_visit(event)
        if upcoming is None:
            return [Act("doctor", "next.none")]
        days = self.ctx.days_to_next(event)
        slots: dict[str, SlotValue] = {"when": Word("next", _next_bucket(days)), "in_days": Count("in_days", days or 0),
                                       "next_day": Day(upcoming.date, "spoken"),
                                       "next_weekday": Day(upcoming.date, "weekday")}
        labs = [f for f in upcoming.facts if isinstance(f, LabFact) and self.kb.labs[f.lab].kind != "vital"]
        if upcoming.kind == "lab_check" and labs:
            lab = labs[0].lab  # ("repeat" and "recheck" only of a lab measured before: the seed-53 read)
            seen = any(isinstance(f, LabFact) and f.lab == lab for e in self.year.events if e.index <= event.index
                       for f in e.facts)
            key = "next.tests_again" if seen else "next.tests"
            return [Act("doctor", key, {**slots, "lab": self.kb.labs[lab].name})]
        return [Act("doctor", "next.visit", slots)]

    def _backref(self, event: Event, rng: random.Random) -> list[Act]:
        touched = {f.drug for f in event.facts if isinstance(f, MedicationFact)}
        taking = {t.fact.drug for t in self.ctx.current(event.date)} - touched
        # (a drug started or changed is referred back to only while it is taken, and not in the visit that stops or
        # changes it: a finished course is no backbone, nor is a drug being taken off)
        # (and a start or change of the run taken now: not the course of the same drug that ended in February)
        started = {t.fact.drug: t.started for t in self.ctx.current(event.date)}
        earlier = [m for m in self.ctx.memorable if m[0] < event.date and (
            m[1] == "diagnosis" or m[2].get("drug") in taking and m[0] >= started[m[2]["drug"]])]
        if not earlier or rng.random() >= BACKREF_PROBABILITY:
            return []
        when, kind, details = rng.choice(earlier)
        since = Day(when, "spoken")
        if kind == "diagnosis":
            # (praise only while nothing troubles them today and the condition's markers bear it out)
            key = "backref.diagnosis.well" if self.ctx.is_going_well(event) and rng.random() < 0.5 \
                else "backref.diagnosis"
            return [Act("doctor", key, {"diagnosis": details["name"], "since": since})]
        key = f"backref.{kind}"
        if kind == "start":  # (credit only where today's reading of what it treats bears it out; "settled" in time)
            drug = details["drug"]
            waited = (date.fromisoformat(event.date) - date.fromisoformat(when)).days
            keys = [key, *(["backref.start.settled"] if waited >= self.ctx.settle_days(drug) else []),
                    *(["backref.start.working"] if self.ctx.is_working(drug, event, when) else [])]
            key = rng.choice(keys)
        return [Act("doctor", key, {"drug": DrugName(details["drug"]), "since": since})]

    # --- realizing (one language) --------------------------------------------------------------------------

    def _value(self, value: SlotValue, key: str) -> str:
        if isinstance(value, str):
            return value
        if isinstance(value, Text):
            return text_of(value, self.lang)
        if isinstance(value, Word):
            return self.templates.word(value.table, value.key, self._say_rng)
        if isinstance(value, DrugName):
            return self.facts.drug(value.key, value.release)
        if isinstance(value, Money):
            return budget_text(round(value.usd), self.lang)
        if isinstance(value, Day):
            return self.say_date(value)
        if isinstance(value, Count):
            return self.templates.word(value.table, "one" if value.n == 1 else "many").format(n=value.n)
        if isinstance(value, LayName):
            return self.templates.lay(text_of(value.text, self.lang))
        raise TypeError(f"slot {key}: no surface form for {value!r}")

    def say_date(self, day: Day) -> str:
        when = date.fromisoformat(day.iso)
        month = self.templates.word("month", str(when.month))
        if day.form == "month":
            return month
        if day.form == "weekday":
            return self.templates.word("weekday", str(when.isoweekday()))
        pattern = self.templates.word("date", day.form)
        return pattern.format(day=when.day, month=month, year=when.year, m=when.month)

    def session_slots(self, event: Event) -> dict[str, str]:
        """What every act of the visit may say: how the doctor addresses the patient, their job, the day (and a
        weekday two or three days either side of it, for an onset or a start), a relative (drawn per visit,
        language-free) the visit may mention in passing, one able to help and one who shares the home, and what holds
        all year: how they keep to their tablets, their meals and their day. It opens the visit: what its acts may not
        say is the visit's from here (`untrue_at`)."""
        self.untrue_topics_now = self.visit_topics(event)
        self.untrue_now = self._untrue_pattern(self.untrue_topics_now)
        self.long_held_now = {t.fact.drug for t in self.ctx.current(event.date) if t.since_before}
        name = text_of(self.persona.name, self.lang)
        order = self.templates.word("address", "order")
        given, surname = (name.split(" ", 1) + [""])[:2] if order == "given_first" else (name[1:], name[:1])
        address = self.templates.word("address", self.persona.sex).format(given=given, surname=surname)
        rng = self._rng(event, "relative")
        relative = rng.choice(self.persona.family)
        # (a phrasing that needs a helper or a housemate is not drawn where there is none: `untrue_of`)
        helper = rng.choice(self.helpers) if self.helpers else relative
        housemate = rng.choice(self.housemates) if self.housemates else helper
        aid_helper = {"aid_helper": "", "aid_helper_name": ""} if self.aid_helper is None else {
            "aid_helper": text_of(self.kb.relatives[self.aid_helper.relation].text, self.lang),
            "aid_helper_name": text_of(self.aid_helper.name, self.lang)}
        aid = self.templates.realize(f"aid.{self.aid}", self._rng(event, "aid"), aid_helper, avoid=self.untrue)
        before, after = self._rng(event, "weekdays").choices((2, 3), k=2)
        return {"name": address, "occupation": text_of(self.persona.occupation, self.lang),
                "weekday": self.say_date(Day(event.date, "weekday")), "month": self.say_date(Day(event.date, "month")),
                "weekday_before": self.say_date(Day(shifted(event.date, -before), "weekday")),
                "weekday_after": self.say_date(Day(shifted(event.date, after), "weekday")),
                "relative": text_of(self.kb.relatives[relative.relation].text, self.lang),
                "relative_yours": self.templates.word("relation", relative.relation),
                "relative_name": text_of(relative.name, self.lang),
                "helper": text_of(self.kb.relatives[helper.relation].text, self.lang),
                "helper_name": text_of(helper.name, self.lang),
                "housemate": text_of(self.kb.relatives[housemate.relation].text, self.lang),
                "housemate_name": text_of(housemate.name, self.lang),
                "aid": aid, "meals": text_of(self.meals, self.lang) if self.meals is not None else "",
                "day": text_of(self.day, self.lang) if self.day is not None else ""}

    def realize(self, act: Act, rng: random.Random, session: dict[str, str], used: set[tuple[str, int]]) -> str:
        if act.fact is not None:
            slots = self.facts.slots(act.key, act.fact, rng)
        elif act.key.startswith("raise."):
            slots = {"detail": trap_detail(self.kb, self.traps[act.key.partition(".")[2]], self.lang)}
        else:
            slots = {k: self._value(v, k) for k, v in act.slots.items()}
        avoid = self.untrue_now
        drug = act.slots.get("drug")
        if isinstance(drug, DrugName) and drug.key in self.long_held_now:  # (not new to the patient: `new_drug`)
            avoid = self._untrue_pattern((*self.untrue_topics_now, "new_drug"))
        return self.templates.realize(act.key, rng, {**session, **slots}, used, avoid=avoid)

    def phrase(self, act: Act, rng: random.Random, session: dict[str, str]) -> str:
        """One act of a visit's plan said on its own, drawn with `rng`, with the visit's `session_slots` (what a check
        reads an act may be said as)."""
        self._say_rng = rng
        return self.realize(act, rng, session, set())

    def render(self, event: Event) -> Session:
        """The consultation of one event."""
        beats = self.plan(event)
        rng = self._say_rng = self._rng(event, self.lang)
        session = self.session_slots(event)
        used: set[tuple[str, int]] = set()
        turns = []
        for index, beat in enumerate(beats):
            role = "patient" if index % 2 == 0 else "doctor"
            assert all(a.role == role for a in beat), (event.event_id, index, [a.key for a in beat])
            text = self.templates.joined([self.realize(a, rng, session, used) for a in beat])
            turns.append(Turn(role=role, text=text))  # type: ignore[arg-type]
            if role == "patient":
                self.stats["patient_turns"] += 1
                self.stats["filler_turns"] += all(a.filler for a in beat)
        self.ctx.advance(event)
        return Session(session_id=regular_session_id(event.event_id), kind="regular", date=event.date,
                       turns=turns, event_ids=[event.event_id])

    def render_year(self) -> list[Session]:
        """Every regular session of the year, in order."""
        return [self.render(event) for event in self.year.events]
