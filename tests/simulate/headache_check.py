"""Independent readings of a headache's care and a triptan's safety (the seed-61 read, issue 27): sumatriptan in heart
failure with diabetes, CKD and rising pressure, told to "finish the box"; migraine named from a diary days old; a new
headache on warfarin put down to migraine.

Each function returns violation messages (empty: the year passes) and reads only the record, the knowledge base and
the templates, never the engine's state. The rules (names as `docs/simulation.md` lists them):

- `triptan_heart`: no triptan is given to a patient with a condition or history that bars the class (a past stroke,
  heart failure, grade-2 hypertension, atherosclerotic renal artery stenosis: history.yaml contraindications naming
  it) or with as many cardiovascular risk factors as its avoid rule counts (patient_rules.yaml; Imigran SmPC 4.3-4.4).
- `as_needed_not_finished`: an as-needed drug's start and duration answer say nothing of finishing the box or the
  course (read over every variant of the act, in both languages).
- `diary_before_diagnosis`: an intercurrent illness with `self_care_days` (migraine: an 8-week headache diary) is
  named no sooner than their minimum after its symptoms were first told (ICHD-3: at least 5 attacks; NICE CG150).
- `illness_red_flag_same_day`: an illness's first symptoms told by a patient in whom they are its red flag (its age
  reached, a condition of it held, a drug of it taken as far as the record shows) get its red-flag advice that visit
  (examined, referred for urgent imaging), and the illness is never diagnosed or treated after (NICE CG150 1.1.1).
"""

from __future__ import annotations

from medmemorybench.knowledge.base import KnowledgeBase
from medmemorybench.knowledge.models import Illness
from medmemorybench.render.templates import Templates
from medmemorybench.simulate.models import AdviceFact, CareYear, DiagnosisFact, Event, MedicationFact, SymptomFact
from tests.simulate.clinical import days_between, fail, given, risk_factors_of, taken_on
from tests.simulate.said_check import could_say

TRIPTAN = "triptan"
FINISH_WORDS = {
    "en": ("finish the box", "take them all", "finish the course", "don't stop early", "finish it"),
    "zh": ("一盒吃完", "都吃完", "好了也要吃完", "别提前停", "吃完就停"),
}
"""What tells a patient to take every tablet of a course (the words of `answer.duration` and of a course's start)."""
SAID_OF_A_COURSE = ("answer.duration", "fact.medication.start_course")
"""The acts that say how a course is taken: the start and the answer to how long."""


def triptan_heart_violations(kb: KnowledgeBase, year: CareYear) -> list[str]:
    """`triptan_heart`."""
    triptans = kb.expand([TRIPTAN])
    held = {year.persona.condition, *year.persona.histories}
    bars = [r for r in kb.contraindications if r.level == "contraindicated" and r.history in held]
    rules = [
        r
        for r in kb.patient_rules
        if r.level == "avoid" and r.when.risk_factors is not None and kb.expand(r.drugs) & triptans
    ]
    out = []
    for event, fact in given(year):
        if fact.drug not in triptans:
            continue
        for rule in bars:
            if fact.drug in kb.expand([*rule.classes, *rule.drugs]):
                out.append(fail("triptan_heart", year, event, f"{fact.drug} given with {rule.history}"))
        for rule in rules:
            factors = rule.when.risk_factors
            assert factors is not None
            if fact.drug in kb.expand(rule.drugs) and risk_factors_of(kb, rule, year, event) >= factors.at_least:
                out.append(fail("triptan_heart", year, event, f"{fact.drug} given under rule:{rule.key}"))
    return out


def as_needed_violations(
    kb: KnowledgeBase, year: CareYear, templates: dict[str, Templates], renderer: type | None = None
) -> list[str]:
    """`as_needed_not_finished`: every start and duration answer a visit starting an as-needed course plans, read over
    all their variants in each language (`renderer`: the planner's class, a crafted one in the violation test)."""
    from medmemorybench.render.conversation import SessionRenderer  # (the renderer only where a visit needs it)

    renderer = renderer or SessionRenderer
    out = []
    planner = None
    for event in year.events:
        as_needed = [
            f
            for f in event.facts
            if isinstance(f, MedicationFact) and f.action == "start" and f.frequency == "as_needed" and f.course_days
        ]
        if as_needed:
            planner = planner or renderer(kb, next(iter(templates.values())), year)
            for act in (a for beat in planner.plan(event) for a in beat if a.key.startswith(SAID_OF_A_COURSE)):
                for lang, t in templates.items():
                    said = could_say(t, act.key).lower()
                    if words := [w for w in FINISH_WORDS[lang] if w in said]:
                        out.append(
                            fail(
                                "as_needed_not_finished",
                                year,
                                event,
                                f"{as_needed[0].drug} as needed: {act.key} can say {words} ({lang})",
                            )
                        )
        if planner is not None:
            planner.ctx.advance(event)
    return out


def _first_told(year: CareYear, illness: Illness, upto: Event) -> Event | None:
    """The latest visit up to `upto` at which the illness's symptoms were told."""
    prefix = f"{illness.key}."
    return next(
        (
            e
            for e in reversed(year.events[: upto.index])
            if any(isinstance(f, SymptomFact) and f.symptom.startswith(prefix) for f in e.facts)
        ),
        None,
    )


def _diagnosed(year: CareYear, illness: Illness) -> list[Event]:
    return [
        e
        for e in year.events
        if any(isinstance(f, DiagnosisFact) and f.status == "acute" and f.icd11 == illness.icd11 for f in e.facts)
    ]


def diary_violations(kb: KnowledgeBase, year: CareYear) -> list[str]:
    """`diary_before_diagnosis`."""
    out = []
    for illness in kb.illnesses.values():
        if illness.self_care_days is None:
            continue
        for event in _diagnosed(year, illness):
            told = _first_told(year, illness, event)
            if told is None or days_between(told.date, event.date) < illness.self_care_days[0]:
                since = (
                    "never told"
                    if told is None
                    else f"{days_between(told.date, event.date)} days after {told.event_id}"
                )
                out.append(
                    fail(
                        "diary_before_diagnosis",
                        year,
                        event,
                        f"{illness.key} diagnosed {since} (the diary needs {illness.self_care_days[0]})",
                    )
                )
    return out


def _taking(year: CareYear, event: Event) -> set[str]:
    """Drugs taken at a visit (`taken_on`), less the long-term drug the patient came with once it is stopped."""
    last: dict[str, str] = {}
    for earlier in year.events[: event.index - 1]:
        for fact in earlier.facts:
            if isinstance(fact, MedicationFact):
                last[fact.drug] = fact.action
    return {drug for drug in taken_on(year, event) if last.get(drug) != "stop"}


def is_red_flag(kb: KnowledgeBase, illness: Illness, year: CareYear, event: Event) -> bool:
    """Whether the illness's symptoms told at this visit are its red flag in this patient, from the record."""
    flag = illness.red_flag
    held = {year.persona.condition, *year.persona.histories}
    return flag is not None and flag.holds(kb, year.persona.age, held, _taking(year, event))


def illness_red_flag_violations(kb: KnowledgeBase, year: CareYear) -> list[str]:
    """`illness_red_flag_same_day`."""
    out = []
    for illness in kb.illnesses.values():
        flag = illness.red_flag
        if flag is None:
            continue
        prefix = f"{illness.key}."
        for event in year.events:
            if not any(
                isinstance(f, SymptomFact) and f.symptom.startswith(prefix) for f in event.facts
            ) or not is_red_flag(kb, illness, year, event):
                continue
            if not any(isinstance(f, AdviceFact) and f.advice == flag.advice for f in event.facts):
                out.append(
                    fail(
                        "illness_red_flag_same_day",
                        year,
                        event,
                        f"{illness.key}'s symptoms told as its red flag without {flag.advice}",
                    )
                )
            out += [
                fail(
                    "illness_red_flag_same_day",
                    year,
                    later,
                    f"{illness.key} diagnosed after its red flag at {event.event_id}",
                )
                for later in _diagnosed(year, illness)
                if later.index > event.index
            ]
            treated = [
                e
                for e in year.events[event.index :]
                for f in e.facts
                if isinstance(f, MedicationFact) and f.action == "start" and f.reason == f"illness:{illness.key}"
            ]
            out += [
                fail(
                    "illness_red_flag_same_day",
                    year,
                    e,
                    f"a course for {illness.key} after its red flag at {event.event_id}",
                )
                for e in treated
            ]
    return out
