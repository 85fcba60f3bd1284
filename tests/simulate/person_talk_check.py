"""What the sessions say of the patient's life is the persona's (issue 27, the seed-53 read: "one coherent person").

Each check reads a year's rendered sessions, (visit, text) pairs, against the persona and the knowledge base, with
word tables written here (what a physician hears as "a pill box", "a retiree's day", "steak and eggs"), never against
the code that picks the wording. Messages start with the rule's name in brackets, as the other checks' do:

- `adherence_aid_true`: one aid for the tablets a year, and a relative who helps with them lives with the patient and
  is able to (no "my mother reminds me" from a mother with dementia, no "my son sorts them" from one who lives alone);
- `home_talk_true`: a patient who lives alone never speaks of others at home, one who lives with someone never says
  they live alone;
- `diet_talk_true`: everyday eating told beside a diet habit on record does not contradict it;
- `day_fits_work`: a working patient's day is not a retiree's, nor a retiree's a working day; a boss or shifts only
  where the job has them; an account of the day says the lifestyle on record;
- `needle_phobia_managed`: a patient who faints at needles is told how it is managed at the first blood test once it
  is known and at every needle test or needle advice after, in every language rendered.
"""

from __future__ import annotations

import re

from medmemorybench.knowledge.base import KnowledgeBase
from medmemorybench.simulate.models import (
    CareYear,
    ComplicationFact,
    DietFact,
    Event,
    LabFact,
    PreferenceFact,
    Relative,
    TestFact,
)
from tests.simulate.clinical import fail
from tests.simulate.persona_check import able, occupation_of
from tests.simulate.text_check import _ALONE

Talk = list[tuple[Event, str]]
"""A year's sessions as (visit, text), in order; a check reads whichever visits it is given."""

# --- adherence_aid_true -------------------------------------------------------------------------------------------

AID_WORDS = {
    "blister_pack": r"blister pack",
    "pill_box": r"\bpill ?box\b|pill organiser",
    "phone_alarm": r"alarm on my phone|\b[Mm]y phone reminds me",
    "calendar": r"on the calendar|calendar on the (?:wall|fridge) keeps me",
    "routine": r"by the kettle|next to my toothbrush|part of the routine",
}
"""How a patient says each aid for their tablets (English)."""
_HELPER = re.compile(r"\b((?:[Mm]y (?!phone\b)[a-z-]+(?: brother| sister)?)|[A-Z][a-z]+) (?:sorts them (?:out|into)"
                     r"|keeps track of it for me|nags me if I forget|reminds me\b|checks on me)")
"""A relative named as the one who sorts the tablets or reminds ("my son sorts them into the box", "Edward keeps
track of it for me"; "my phone reminds me" is an alarm)."""


def _relative_named(year: CareYear, said: str) -> Relative | None:
    """The relative a phrase names, by their relation in the patient's words ("my son") or their given name."""
    said = said.lower()
    for relative in year.persona.family:
        if said in (f"my {relative.relation.replace('_', '-')}", relative.name.en.lower()):
            return relative
        if said == "my " + relative.relation.replace("_", " "):  # ("my younger brother")
            return relative
    return None


def aids_said(text: str) -> list[str]:
    """The aids for the tablets a session speaks of (`household_member:<who>` for a relative who helps)."""
    found = [kind for kind, words in AID_WORDS.items() if re.search(words, text)]
    found += [f"household_member:{m.group(1).lower()}" for m in _HELPER.finditer(text)]
    return found


def adherence_talk_violations(kb: KnowledgeBase, year: CareYear, talk: Talk) -> list[str]:
    """[adherence_aid_true] every aid a session speaks of is the persona's one aid (where a record has none: the one a
    trap text names, else the year's first), and a relative who helps lives with the patient and is able to."""
    rule, persona, out = "adherence_aid_true", year.persona, []
    household = persona.household
    expected = household.adherence_aid if household is not None else None
    helper = household.adherence_helper if household is not None else None
    if expected is None and any(t.category == "medication_preference" and kb.preferences[t.option].lives_alone
                                for t in persona.traps):
        expected = "blister_pack"  # (the trap text says the pharmacy packs them)
    members = set(household.members) if household is not None else set()
    for event, text in talk:
        for said in aids_said(text):
            kind, _, who = said.partition(":")
            if who:
                relative = _relative_named(year, who)
                if relative is None or relative.relation not in members:
                    out.append(fail(rule, year, event, f"{who!r} helps with the tablets but does not live with the "
                                                       f"patient (home: {sorted(members) or 'alone'})"))
                elif not able(kb, relative):
                    out.append(fail(rule, year, event, f"{who!r} aged {relative.age} with {relative.conditions} "
                                                       "helps with the tablets"))
                elif helper is not None and relative.relation != helper:
                    out.append(fail(rule, year, event, f"{who!r} helps with the tablets, not the {helper}"))
            expected = expected or kind
            if kind != expected:
                out.append(fail(rule, year, event, f"says {said} where the aid is {expected}"))
    return out


# --- home_talk_true -----------------------------------------------------------------------------------------------

_WITH_OTHERS = re.compile(r"[Ee]veryone at home|\b[Ii]n our house\b|explain it at home|on the fridge for (\w+) to see"
                          r"|\b(\w+) kept the house quiet")
"""Talk that says someone else is at home (a name, where one is said, must be of someone who is)."""


def home_talk_violations(kb: KnowledgeBase, year: CareYear, talk: Talk) -> list[str]:
    """[home_talk_true] no "everyone at home" or "on the fridge for Anthony to see" from a patient who lives alone, a
    name said at home is of someone who lives there, and no "I live by myself" from one who lives with someone."""
    rule, persona, out = "home_talk_true", year.persona, []
    if persona.household is None:
        return []
    members = set(persona.household.members)
    for event, text in talk:
        for match in _WITH_OTHERS.finditer(text):
            who = next((g for g in match.groups() if g), None)
            relative = _relative_named(year, who) if who else None
            if not members:
                out.append(fail(rule, year, event, f"{match.group(0)!r} from a patient who lives alone"))
            elif who and (relative is None or relative.relation not in members):
                out.append(fail(rule, year, event, f"{match.group(0)!r}: {who} does not live with the patient"))
        if members and _ALONE.search(text):
            out.append(fail(rule, year, event, f"{_ALONE.search(text).group(0)!r} from one who lives with "
                                               f"{sorted(members)}"))
    return out


# --- diet_talk_true -----------------------------------------------------------------------------------------------

UNTRUE_BESIDE_HABIT = {
    "high_protein_meals_with_pills": r"\btoast\b|don't bother much with meals|whatever's easy|ready meals|rice and "
                                     r"bread|quick food|pasta and sandwiches|[Bb]reakfast on the run|[Ss]kip breakfast"
                                     r"|a sandwich at work|whatever's quick at lunch|too many snacks",
    "skips_meals_intermittent_fasting": r"\btoast\b|[Bb]reakfast on the run|a sandwich at work|whatever's quick at "
                                        r"lunch|three big meals|too many snacks",
    "late_night_heavy_meals": r"just have toast|don't bother much with meals",
    "fried_fatty_food": r"just have toast|don't bother much with meals",
    "salty_pickles_and_soups": r"just have toast|don't bother much with meals",
}
"""Everyday eating a physician hears as untrue beside a habit on record (three high-protein meals a day are not
"cooking for one, I often just have toast"; one meal in the evening is not "a sandwich at work")."""


def diet_talk_violations(kb: KnowledgeBase, year: CareYear, talk: Talk) -> list[str]:
    """[diet_talk_true] no account of everyday eating contradicts the patient's diet habit on record."""
    rule, out = "diet_talk_true", []
    habits = [t.fact.habit for t in year.persona.traps if isinstance(t.fact, DietFact)]
    untrue = [(h, re.compile(UNTRUE_BESIDE_HABIT[h])) for h in habits if h in UNTRUE_BESIDE_HABIT]
    for event, text in talk:
        for habit, words in untrue:
            match = words.search(text)
            if match:
                out.append(fail(rule, year, event, f"{match.group(0)!r} from a patient who says {habit}"))
    return out


# --- day_fits_work ------------------------------------------------------------------------------------------------

_RETIREE_DAY = re.compile(r"potter about|[Mm]ornings are slow|(?:telly|a nap) in the afternoon|[Ss]ince I retired"
                          r"|[Nn]ow I'm retired|[Tt]he days are quiet|[Tt]here's no rush these days")
_WORKING_DAY = re.compile(r"[Ww]ork, mostly|[Mm]ostly work\b|hours are all over the place|[Ww]ork takes most of the "
                          r"day|[Ww]ork keeps me busy|work gets in the way")
_BOSS = re.compile(r"\bboss\b")
_SHIFTS = re.compile(r"\b(?:my|your|a|night|early|late|long) shifts?\b")
"""Shifts worked (not a sodium "shift" of a caution's text)."""


def day_talk_violations(kb: KnowledgeBase, year: CareYear, talk: Talk) -> list[str]:
    """[day_fits_work] a working patient does not tell a retiree's day ("a walk to the shops, then the telly") nor a
    retired one a working day; no boss where the job has none (a farmer), no shifts where it has none; and an account
    of the day says the lifestyle on record ("cares for grandchildren on weekdays" never in her day: seed 53)."""
    rule, out = "day_fits_work", []
    occupation = occupation_of(kb, year)
    if occupation is None:
        return []
    traits = set(occupation.traits)
    lifestyle = next((ls for ls in kb.people.lifestyles if ls.key == year.persona.lifestyle_key), None)
    for event, text in talk:
        for words, untrue, what in ((_RETIREE_DAY, "working" in traits, "a retiree's day"),
                                    (_WORKING_DAY, "retired" in traits, "a working day"),
                                    (_BOSS, "employee" not in traits, "a boss"),
                                    (_SHIFTS, "shift_work" not in traits, "shifts")):
            match = words.search(text) if untrue else None
            if match:
                out.append(fail(rule, year, event, f"{what} ({match.group(0)!r}) from a {occupation.key}"))
        told_day = _RETIREE_DAY.search(text) or _WORKING_DAY.search(text)
        if told_day and lifestyle is not None and lifestyle.day.en not in text:
            out.append(fail(rule, year, event, f"a day told ({told_day.group(0)!r}) without {lifestyle.day.en!r} "
                                               f"({lifestyle.key})"))
    return out


# --- needle_phobia_managed ----------------------------------------------------------------------------------------

MANAGED = {"en": re.compile(r"lying down|numbing cream|sitting or lying|[Ss]it or lie down|lie or sit down|sensor on "
                            r"the arm"),
           "zh": re.compile(r"躺|麻药膏|传感器")}
"""Words that say a needle procedure is managed for one who faints (NHS, Green Book ch. 4: lying down, a topical
anaesthetic; a glucose sensor in place of finger-pricks)."""


def needle_visits(kb: KnowledgeBase, year: CareYear) -> dict[str, str]:
    """Event id -> what needle procedure a visit holds that must be told as managed, for a patient who faints at
    needles: from the visit that tells the phobia on, the first blood test, and every needle test, aspirated joint or
    needle advice (empty for any other patient)."""
    phobias = {t.option for t in year.persona.traps if t.category == "medication_preference"
               and "injection" in kb.preferences[t.option].excludes_forms}
    if not phobias:
        return {}
    condition = kb.conditions[year.persona.condition]
    tests = {t.key for t in condition.diagnostic_tests if t.needle}
    complications = {c.key for c in condition.complications if c.needle}
    out: dict[str, str] = {}
    known = blood_told = False
    for event in year.events:
        known = known or any(isinstance(f, PreferenceFact) and f.preference in phobias for f in event.facts)
        if not known:
            continue
        for fact in event.facts:
            if isinstance(fact, TestFact) and fact.test in tests:
                out[event.event_id] = f"test {fact.test}"
            elif isinstance(fact, ComplicationFact) and fact.complication in complications:
                out[event.event_id] = f"aspirate ({fact.complication})"
            elif getattr(fact, "advice", None) in kb.advice and kb.advice[fact.advice].needle:  # type: ignore[union-attr]
                out[event.event_id] = f"advice {fact.advice}"  # type: ignore[union-attr]
        blood = any(isinstance(f, LabFact) and kb.labs[f.lab].kind == "lab" and kb.labs[f.lab].specimen == "blood"
                    for f in event.facts)
        if blood and not blood_told:
            out.setdefault(event.event_id, "the first blood test")
            blood_told = True
    return out


def needle_talk_violations(kb: KnowledgeBase, year: CareYear, talk: dict[str, Talk]) -> list[str]:
    """[needle_phobia_managed] every visit `needle_visits` names says, in each language of `talk`, how the needle is
    managed (lying down, numbing cream; a sensor for finger-pricks)."""
    rule, out = "needle_phobia_managed", []
    due = needle_visits(kb, year)
    for lang, sessions in talk.items():
        for event, text in sessions:
            if event.event_id in due and not MANAGED[lang].search(text):
                out.append(fail(rule, year, event, f"{due[event.event_id]} with no word of how it is managed ({lang})"))
    return out
