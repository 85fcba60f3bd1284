"""Independent readings of what a year's visits say about time and progress, as a physician reads them (issue 27, the
seed-53 read): credit and praise only where the simulated marker bears them out, a blood test said to be taken on the
day the previous visit booked it, an onset told before the visit it is told at, and a strain that speaks of an
admission told only after one.

The checks read each visit's plan act by act (`said_acts`: every act the checks judge, said `RNGS` ways in each
language) and judge the words against the year's simulated values and the knowledge base, never against the code that
picks the act.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date

from medmemorybench.knowledge.base import KnowledgeBase
from medmemorybench.render.acts import Act
from medmemorybench.render.conversation import SessionRenderer
from medmemorybench.render.fact_acts import FactSlots
from medmemorybench.render.grammar import Alt
from medmemorybench.render.templates import Templates
from medmemorybench.simulate.models import (
    AdverseFact,
    CareYear,
    ComplicationFact,
    Event,
    LabFact,
    MedicationFact,
    SettingFact,
    StressorFact,
    SymptomFact,
    TestFact,
)
from tests.simulate.clinical import days_between, fail

RNGS = 1
"""Draws of an act's wording per act, each seeded by the visit and the act's place in it (over the cohort every
variant is drawn many times; a whole-session rendering of the cohort in two languages would take minutes)."""
CHECKED_ACTS = ("backref.", "open.symptom_report", "open.lab_check", "ans.onset", "ans.tried", "next.tests",
                *(f"results.{kind}" for kind in ("blood", "urine", "stool", "breath", "sleep_study", "ecg", "imaging")))
"""The acts the checks read: looking back on a drug or the diagnosis, a symptom's or a result's opening, onsets,
a sample's results, booked tests."""


@dataclass(frozen=True)
class Said:
    """One act of a visit's plan and what it may be said as."""

    event: Event
    act: Act
    texts: dict[str, list[str]]
    """Language -> the act's wordings (`RNGS` draws)."""


def _literals(node: object) -> list[str]:
    if isinstance(node, str):
        return [node]
    if isinstance(node, Alt):
        return [text for option in node.options for part in option for text in _literals(part)]
    return []


def could_say(templates: Templates, key: str) -> str:
    """Every literal an act's variants may say, through its sub-phrases too, slots left as `{slot}` (what an act can
    say beyond its slot values)."""
    refs: set[str] = set()
    seqs = list(templates.parsed[key])
    for seq in seqs:
        templates.grammar.reachable_refs(seq, refs)
    seqs += [variant for name in refs for variant in templates.grammar.rules[name]]
    return " ".join(text for seq in seqs for node in seq for text in _literals(node))


_MATTERS: dict[tuple, bool] = {}
"""(act key, judge, templates ...) -> whether the act can say what a check judges (`could_matter`), read once per
run."""


def said_acts(kb: KnowledgeBase, year: CareYear, templates: dict[str, Templates],
              wanted: Callable[[str], bool] = lambda key: key.startswith(CHECKED_ACTS),
              judged: Callable[[str, str, str], bool] | None = None, draws: int = RNGS) -> list[Said]:
    """Every `wanted` act of the year's plans that can say what the checks judge (`judged`, by default `could_matter`:
    language, key, what it can say), with its wordings in each language (the plan is language-free: it is made once,
    and said by each language's renderer), `draws` of each (a rare act is drawn more)."""
    judged = judged or could_matter
    renderers = {lang: SessionRenderer(kb, t, year) for lang, t in templates.items()}
    planner = next(iter(renderers.values()))

    def matters(key: str) -> bool:
        cached = (key, judged, *map(id, templates.values()))
        if cached not in _MATTERS:
            _MATTERS[cached] = any(
                key not in t.parsed or judged(lang, key, could_say(t, key)) for lang, t in templates.items())
        return _MATTERS[cached]

    out = []
    for event in year.events:
        acts = [act for beat in planner.plan(event) for act in beat if wanted(act.key) and matters(act.key)]
        if acts:
            sessions = {lang: r.session_slots(event) for lang, r in renderers.items()}
            out += [Said(event, act, {lang: list(dict.fromkeys(
                r.phrase(act, random.Random(f"{event.event_id}/{i}/{k}"), sessions[lang]) for k in range(draws)))
                for lang, r in renderers.items()}) for i, act in enumerate(acts)]
        planner.ctx.advance(event)
    return out


# --- what a reading bears out (the check's own reading of the simulated values) -----------------------------------

SETTLE_DAYS = 28
"""Days before a drug that moves no marker of the condition may be said to have settled in."""


def readings(year: CareYear, lab: str, upto: Event) -> list[float]:
    """The values of a lab on record up to and including a visit, in order."""
    return [f.value for e in year.events[:upto.index] for f in e.facts if isinstance(f, LabFact) and f.lab == lab]


def agrees(kb: KnowledgeBase, year: CareYear, lab: str, values: list[float],
           goal: tuple[float, float] | None = None) -> bool:
    """Whether the latest of `values` bears out "it's working": inside the range treatment aims for and not worse
    than the reading before by more than one measurement's variation, or outside it but nearer than before (never,
    for a lab treated to a target, `Lab.to_target`: blood pressure above its goal is not controlled)."""
    monitored = next(m for m in kb.conditions[year.persona.condition].monitored if m.lab == lab)
    low, high = goal or monitored.treated
    rising = sum(monitored.untreated) > sum(monitored.treated)
    cv = kb.labs[lab].kinetics.cv if kb.labs[lab].kinetics else 0.0

    def off(value: float) -> float:
        return max(low - value, value - high, 0.0)

    now = values[-1]
    if len(values) == 1 or (kb.labs[lab].to_target is not None and off(now) > 0):
        return off(now) == 0
    before = values[-2]
    worse = (now - before if rising else before - now) > cv * abs(before)
    return (off(now) == 0 and not worse) or off(now) < off(before)


def step_of(year: CareYear, drug: str, upto: Event) -> str | None:
    """The care step of the latest record of a drug up to a visit."""
    step = None
    for event in year.events[:upto.index]:
        for fact in event.facts:
            if isinstance(fact, MedicationFact) and fact.drug == drug:
                step = fact.step
    return step


def markers(kb: KnowledgeBase, year: CareYear, step_key: str | None,
            indication: str | None = None) -> dict[str, tuple[float, float] | None]:
    """The condition's monitored labs a care step moves, with the range it aims each at (None: the treated range); for
    a drug of no step, the lab its indication keeps it for (`lab:<key>`, or the `kept_for` of the misdiagnosis it was
    given for: the seed-61 read, amlodipine "doing its job" at 154 mmHg for "essential hypertension" in HFpEF), at
    the range of the step that treats that lab."""
    condition = kb.conditions[year.persona.condition]
    step = next((s for s in condition.care_path if s.key == step_key), None)
    monitored = {m.lab for m in condition.monitored}
    if step is None:
        lab = indication.removeprefix("lab:") if indication and indication.startswith("lab:") else None
        mis = next((m for m in condition.misdiagnoses if indication == f"misdiagnosis:{m.icd11}"), None)
        lab = mis.kept_for if mis is not None else lab
        treating = next((s for s in condition.care_path if s.indication.lab == lab), None)
        return {lab: treating.targets.get(lab) if treating else None} if lab in monitored else {}
    return {lab: step.targets.get(lab) for lab in (*step.moves, *step.targets) if lab in monitored}


def settle_days(kb: KnowledgeBase, year: CareYear, drug: str, upto: Event) -> float:
    days = [kb.labs[lab].kinetics.response_days for lab in markers(kb, year, step_of(year, drug, upto))
            if kb.labs[lab].kinetics is not None]
    return max(days) if days else SETTLE_DAYS


# --- credit_only_where_due ----------------------------------------------------------------------------------------

CREDIT = {"en": r"paying off|part of why I'm pleased|backbone|holding up|doing its job",
          "zh": r"效果不错|起作用|维持得不错|效果在慢慢显现|方案的基础"}
"""What credits a drug with the patient's progress."""
PRAISE = {"en": r"done well|coped well|managed well|gone the right way|going the right way",
          "zh": r"做得挺好|应对得不错|做得不错|控制得挺好|往好的方向|在好转"}
"""What praises how the patient has done since the diagnosis."""
STABLE = {"en": r"stable on it|doing its job|working well", "zh": r"很稳定|效果不错|挺管用"}
"""What a drug continued "because everything is stable on it" is said with."""


def credit_violations(kb: KnowledgeBase, year: CareYear, said: list[Said]) -> list[str]:
    """[credit_only_where_due] a drug is credited with the patient's progress ("seems to be paying off", "still the
    backbone of this") only at a visit that measured a marker its care step moves, every such reading agreeing and the
    drug taken as long as the marker takes to show it (never penicillin at an ankle-oedema visit, nor pramipexole as
    the motor score climbs 15 -> 20 -> 23 -> 25); the patient is praised since the diagnosis only while nothing new
    troubles them and every marker of the condition agrees (never "you've coped well" at a PHQ-9 of 17 after 15)."""
    out = []
    monitored = [m.lab for m in kb.conditions[year.persona.condition].monitored]
    for item in said:
        event, act = item.event, item.act
        if not act.key.startswith("backref."):
            continue
        for lang, texts in item.texts.items():
            credit = [t for t in texts if re.search(CREDIT[lang], t)]
            praise = [t for t in texts if re.search(PRAISE[lang], t)]
            if credit and "drug" in act.slots:
                drug = act.slots["drug"].key
                aims = markers(kb, year, step_of(year, drug, event))
                today = [f.lab for f in event.facts if isinstance(f, LabFact) and f.lab in aims]
                waited = days_between(act.slots["since"].iso, event.date)
                if not today or waited < settle_days(kb, year, drug, event) or not all(
                        agrees(kb, year, lab, readings(year, lab, event), aims[lab]) for lab in today):
                    out.append(fail("credit_only_where_due", year, event, f"{drug} credited ({credit[0]!r}); "
                                    f"markers measured today: {today}, {waited} days on it"))
            if praise:
                troubled = any(isinstance(f, SymptomFact | AdverseFact | ComplicationFact) for f in event.facts)
                measured = [lab for lab in monitored if readings(year, lab, event)]
                astray = [lab for lab in measured if not agrees(kb, year, lab, readings(year, lab, event))]
                if troubled or not measured or astray:
                    why = "a new problem today" if troubled else f"markers astray: {astray or monitored}"
                    out.append(fail("credit_only_where_due", year, event, f"praise ({praise[0]!r}) with {why}"))
    return out


def run_start(year: CareYear, drug: str, upto: Event) -> str | None:
    """The day the run of a drug taken at a visit began (a start after a stop or an ended course begins a new one);
    None where it is not taken then (never started, stopped, or its course over)."""
    began, ends = None, None
    for event in year.events[:upto.index - 1]:
        for fact in event.facts:
            if not isinstance(fact, MedicationFact) or fact.drug != drug or fact.action == "administer":
                continue
            if fact.action == "stop":
                began = ends = None
                continue
            if began is None or (ends is not None and ends < event.date):
                began = event.date
            if fact.action == "start":
                ends = (date.fromisoformat(event.date).toordinal() + fact.course_days) if fact.course_days else None
                ends = date.fromordinal(ends).isoformat() if ends is not None else None
    return None if began is None or (ends is not None and ends < upto.date) else began


BACKREF_RUN_ACTS = ("backref.start", "backref.change")
"""Acts that look back on a drug's start or change, from the day it was made (`backref_of_current_run`)."""


def backref_of_current_run(year: CareYear, said: list[Said]) -> list[str]:
    """[backref_of_current_run] a drug looked back on ("Since 28 February the penicillin V has had time to settle in")
    is taken at the visit, and the day named is one of its run taken now: not a course of the same drug that ended
    months before (the seed-73 read, P0007 S028/S029: a 10-day course from 28 February spoken of in May, during a
    second course started on 14 May)."""
    out = []
    for item in said:
        act = item.act
        if not act.key.startswith(BACKREF_RUN_ACTS) or "drug" not in act.slots:
            continue
        drug, since = act.slots["drug"].key, act.slots["since"].iso
        began = run_start(year, drug, item.event)
        if began is None or since < began:
            out.append(fail("backref_of_current_run", year, item.event,
                            f"{drug} looked back on from {since}; the run taken now began {began}"))
    return out


def stable_violations(kb: KnowledgeBase, year: CareYear, slots: FactSlots) -> list[str]:
    """[credit_only_where_due] a drug continued with the words of a stable course ("because everything is stable on
    it") has every marker its care step moves agreeing at its latest reading (the seed-53 read: pramipexole "stable"
    while the motor score rose; metformin "doing its job" at an HbA1c of 7.6 % and rising)."""
    out = []
    for event in year.events:
        for fact in event.facts:
            if not (isinstance(fact, MedicationFact) and fact.action == "continue" and fact.reason != "long_term"):
                continue
            words = {slots.slots("fact.medication.continue", fact, random.Random(seed))["reason"]
                     for seed in range(6)}
            if not any(re.search(STABLE[slots.lang], w) for w in words):
                continue
            for lab, goal in markers(kb, year, fact.step, fact.indication).items():
                values = readings(year, lab, event)
                if values and not agrees(kb, year, lab, values, goal):
                    out.append(fail("credit_only_where_due", year, event,
                                    f"{fact.drug} continued as stable at {lab} {values[-2:]}"))
    return out


# --- draw_said_on_its_day -----------------------------------------------------------------------------------------

WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
TAKEN_BEFORE = {"en": r"\blast week\b|\bthe other day\b|\byesterday\b|\ball week\b|\b(?:on|from) (?:"
                      + "|".join(WEEKDAYS) + r")\b",
                "zh": r"上礼拜|上周|前两天|昨天|这一礼拜|星期[一二三四五六天日]"}
"""What says a sample was taken (or its result came) on a day before the visit that measures it."""


def draw_violations(kb: KnowledgeBase, year: CareYear, said: list[Said]) -> list[str]:
    """[draw_said_on_its_day] a test's value is on record on the day of the visit that measures it, the day the
    visit before booked it for ("The nurse will take a serum lithium level on 4 March"): what that visit says of
    when the sample was taken or the result came is that day ("this morning"), never "I had my blood taken last
    week", "the bloods from Tuesday" or "the lab sent the bloods over late last week"; a booked test is measured at
    the visit booked."""
    out = []
    for item in said:
        event, act = item.event, item.act
        if act.key.startswith(("open.lab_check", "results.")):
            for lang, texts in item.texts.items():
                early = [t for t in texts if re.search(TAKEN_BEFORE[lang], t)]
                if early:
                    out.append(fail("draw_said_on_its_day", year, event, f"{act.key}: {early[0]!r}"))
        elif act.key.startswith("next.tests"):
            booked = act.slots["next_day"].iso
            visit = next((e for e in year.events if e.date == booked), None)
            lab = next(key for key, spec in kb.labs.items() if spec.name == act.slots["lab"])
            if visit is None or not any(isinstance(f, LabFact) and f.lab == lab for f in visit.facts):
                out.append(fail("draw_said_on_its_day", year, event, f"{lab} booked for {booked}, not measured then"))
    return out


# --- repeat_after_a_first ----------------------------------------------------------------------------------------

REPEAT_WORDS = {"en": r"\b(?:repeat|recheck|again|another)\b", "zh": r"再查|复查"}
"""Words that say a test was done before."""


def repeat_violations(kb: KnowledgeBase, year: CareYear, said: list[Said]) -> list[str]:
    """[repeat_after_a_first] a booked test is "repeated" or "rechecked" only when that lab is on record already (the
    seed-53 read: "Let's repeat the eGFR in a few days" with no eGFR before), and no test's name claims samples
    before the first (a first UACR "repeated on 2 of 3 samples over 3-6 months")."""
    out = []
    for item in said:
        if not item.act.key.startswith("next.tests"):
            continue
        lab = next(key for key, spec in kb.labs.items() if spec.name == item.act.slots["lab"])
        seen = any(isinstance(f, LabFact) and f.lab == lab for e in year.events if e.index <= item.event.index
                   for f in e.facts)
        for lang, texts in item.texts.items():
            again = [t for t in texts if re.search(REPEAT_WORDS[lang], t)]
            if again and not seen:
                out.append(fail("repeat_after_a_first", year, item.event, f"{lab}: {again[0]!r}, none on record"))
    named: set[str] = set()
    for event in year.events:
        for fact in event.facts:
            if isinstance(fact, TestFact):
                if re.search(r"\brepeated on\b", fact.name.en) and fact.name.en not in named:
                    out.append(fail("repeat_after_a_first", year, event, f"first {fact.name.en!r}"))
                named.add(fact.name.en)
    return out


# --- onset_before_its_visit ---------------------------------------------------------------------------------------

MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December")
MONTHS_ZH = ("一月", "二月", "三月", "四月", "五月", "六月", "七月", "八月", "九月", "十月", "十一月", "十二月")
WEEKDAYS_ZH = ("星期一", "星期二", "星期三", "星期四", "星期五", "星期六", "星期天")
SINCE_ACTS = ("open.symptom_report.again", "ans.onset.since")
"""Acts that name when a symptom was first told."""
DURATIONS = {
    "en": [(r"a couple of months|nearer two months|two months", 60), (r"six weeks", 42), (r"five or six weeks", 38),
           (r"five weeks", 35), (r"three or four weeks|four weeks|a month", 28), (r"three weeks", 21),
           (r"a fortnight|a couple of weeks|two weeks|ten days", 14),
           (r"about a week|a week or so|last weekend|the weekend", 7), (r"a few days", 3)],
    "zh": [(r"两个来月|差不多两个月|两个月", 60), (r"一个半月|五六个礼拜|六个礼拜", 42), (r"一个多月|五个礼拜", 35),
           (r"三四个礼拜|四个礼拜|一个月", 28), (r"三个礼拜", 21), (r"半个月|两个礼拜|十来天", 14),
           (r"一个礼拜|上个礼拜一|上个周末|上周末|周末", 7), (r"有几天|几天", 3)],
}
"""Spans a patient gives, longest first, in days (the check's own reading)."""
WEEK_BEFORE = {"en": "the week before", "zh": "再前一个礼拜"}


def durations(text: str, lang: str, on: str) -> list[int]:
    """The spans an onset answer states, in the order said ("since the start of the month": the visit's day of the
    month)."""
    patterns = [*DURATIONS[lang], (r"the start of the month" if lang == "en" else r"月初", date.fromisoformat(on).day)]
    found = sorted((m.start(), -m.end(), days) for pattern, days in patterns for m in re.finditer(pattern, text, re.I))
    kept, end = [], -1
    for start, minus_end, days in found:  # (a span inside a longer one: "six weeks" in "five or six weeks")
        if start >= end:
            kept.append(days)
            end = -minus_end
    return kept


SETTLED = {"en": r"time to settle|time to take effect|to settle in", "zh": r"稳定下来|时间够了|够它起效|时间已经够"}
"""What says a drug has had time to work."""
WEEKDAY_SLOTS = re.compile(r"\{weekday\w*\}")
SINCE_SLOTS = re.compile(r"\{(?:since|month)\}")


def could_matter(lang: str, key: str, literals: str) -> bool:
    """Whether act `key`, whose variants say `literals`, can say what a check here judges: credit, praise, a settled
    drug, a day before today or a weekday, a month where a first-told day is named, a corrected span of time (an act
    that cannot is not said over: the checks would otherwise realize a large share of the cohort's sessions), a
    drug looked back on (`BACKREF_RUN_ACTS`)."""
    if key == "ans.onset.corrected" or key.startswith(BACKREF_RUN_ACTS) or (
            key.startswith(SINCE_ACTS) and SINCE_SLOTS.search(literals)):
        return True
    names = WEEKDAYS + MONTHS if lang == "en" else WEEKDAYS_ZH + MONTHS_ZH
    patterns = [CREDIT[lang], PRAISE[lang], SETTLED[lang], TAKEN_BEFORE[lang], "|".join(names)]
    return bool(WEEKDAY_SLOTS.search(literals) or any(re.search(p, literals, re.I) for p in patterns))


def onset_violations(kb: KnowledgeBase, year: CareYear, said: list[Said]) -> list[str]:
    """[onset_before_its_visit] what a patient says of when a problem began lies before the visit it is said at and
    adds up: no "it began on Tuesday" told on a Tuesday, no "back in March" (or "after December") for a symptom
    first told this month, a corrected onset longer than the first guess ("the week before last weekend" is about a
    fortnight, not four weeks), and a drug "settled in" only once it has been taken as long as its markers take to
    show it ("we started bupropion on 5 April, so it's had time to settle", said on 6 April)."""
    out = []
    for item in said:
        event, act = item.event, item.act
        day = date.fromisoformat(event.date)
        for lang, texts in item.texts.items():
            weekday = (WEEKDAYS if lang == "en" else WEEKDAYS_ZH)[day.weekday()]
            if act.key.startswith(("open.symptom_report", "open.lab_check", "ans.onset", "ans.tried")):
                own = [t for t in texts if (re.search(rf"\b{weekday}\b", t) if lang == "en" else weekday in t)]
                if own:
                    out.append(fail("onset_before_its_visit", year, event, f"{act.key} names today: {own[0]!r}"))
            if act.key.startswith(SINCE_ACTS):
                month = (MONTHS if lang == "en" else MONTHS_ZH)[day.month - 1]
                pattern = rf"(?<!\d )\b{month}\b" if lang == "en" else rf"{month}"
                own = [t for t in texts if re.search(pattern, t)]
                if own:
                    out.append(fail("onset_before_its_visit", year, event, f"{act.key} names this month: {own[0]!r}"))
            if act.key == "ans.onset.corrected":
                for text in texts:
                    spans = durations(text, lang, event.date)
                    fortnight = WEEK_BEFORE[lang] in text
                    if len(spans) < 2 or (fortnight and not 8 <= spans[-1] <= 17) or \
                            (not fortnight and spans[-1] <= spans[0]):
                        out.append(fail("onset_before_its_visit", year, event, f"corrected onset {spans}: {text!r}"))
                        break
            if act.key.startswith("backref.start") and "since" in act.slots:
                settled = [t for t in texts if re.search(SETTLED[lang], t)]
                drug = act.slots["drug"].key
                waited = days_between(act.slots["since"].iso, event.date)
                if settled and waited < settle_days(kb, year, drug, event):
                    out.append(fail("onset_before_its_visit", year, event,
                                    f"{drug} 'settled' after {waited} days: {settled[0]!r}"))
    return out


def admission_talk_violations(kb: KnowledgeBase, year: CareYear) -> list[str]:
    """[onset_before_its_visit] a strain that speaks of a past hospital stay ("after the last admission I panic every
    time my ankles swell") is told only after an admission is on record."""
    stressors = {s.key: s for s in kb.conditions[year.persona.condition].stressors}
    admitted, out = False, []
    for event in year.events:
        for fact in event.facts:
            if isinstance(fact, StressorFact) and stressors[fact.stressor].after_admission and not admitted:
                out.append(fail("onset_before_its_visit", year, event, f"{fact.stressor} told before any admission"))
        admitted = admitted or any(isinstance(f, SettingFact) and f.setting == "admission" for f in event.facts)
    return out
