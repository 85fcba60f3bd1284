"""Persona checks: each simulated patient is one coherent person (the rules `docs/simulation.md` lists).

Each check reads one care year against the knowledge base and returns its violations, messages starting with the
rule's name in brackets. They re-read the record (the persona, the facts on record), not the engine's state.
"""

from __future__ import annotations

import re
from datetime import date

from medmemorybench.knowledge.base import KnowledgeBase
from medmemorybench.knowledge.models import DOSES_PER_DAY, Lifestyle, Occupation
from medmemorybench.simulate.describe import drug_name
from medmemorybench.simulate.models import (
    AdviceFact,
    AllergyFact,
    CareYear,
    DietFact,
    Event,
    LabFact,
    MedicationFact,
    Relative,
    StressorFact,
)
from tests.simulate.clinical import GIVEN, fail

WORK_TEXT = re.compile(r"\b(?:work|works|working|job|shifts?|lunch|boss|drive|operat\w*)\b", re.IGNORECASE)
"""Words in a persona text (a trap's, the lifestyle's) that say the patient goes to work."""
ADULT_HEIGHT_CM = (140.0, 205.0)
BMI_TOLERANCE = 0.051
"""A BMI reported beside a weight is that weight over the height squared, rounded to 0.1."""
SAME_BODY_DAYS = 7
"""A BMI is compared with a weight on record this many days before it at most."""
WEIGHT_DRIFT = 0.05
"""How far (share) the weight a BMI implies may be from a weight up to `SAME_BODY_DAYS` earlier."""


def occupation_of(kb: KnowledgeBase, year: CareYear) -> Occupation | None:
    """The persona's occupation in people.yaml (by key; a record without one, by its English text)."""
    persona = year.persona
    for occupation in kb.people.occupations:
        if occupation.key == persona.occupation_key or (
                persona.occupation_key is None and occupation.text.en.startswith(persona.occupation.en)):
            return occupation
    return None


def lifestyle_of(kb: KnowledgeBase, year: CareYear) -> Lifestyle | None:
    persona = year.persona
    return next((ls for ls in kb.people.lifestyles if ls.key == persona.lifestyle_key
                 or (persona.lifestyle_key is None and ls.text.en == persona.lifestyle.en)), None)


def is_smoker(kb: KnowledgeBase, year: CareYear) -> bool:
    """Whether the patient smokes now: the persona's flag, else what their lifestyle says."""
    if year.persona.smoker is not None:
        return year.persona.smoker
    lifestyle = lifestyle_of(kb, year)
    return lifestyle is not None and lifestyle.smoker


def _trap_text(kb: KnowledgeBase, category: str, option: str) -> tuple[str, list[str], list[str]]:
    if category == "medication_preference":
        preference = kb.preferences[option]
        return preference.text.en, list(preference.requires), list(preference.excludes)
    if category == "lifestyle_economic":
        return kb.economic_profiles[option].text.en, list(kb.economic_profiles[option].requires), []
    return "", [], []


def persona_occupation(kb: KnowledgeBase, year: CareYear) -> list[str]:
    """The job fits the age, the working life, and every text said of the patient that mentions work."""
    rule, persona = "persona_occupation", year.persona
    occupation = occupation_of(kb, year)
    if occupation is None:
        return [fail(rule, year, None, f"occupation {persona.occupation.en!r} is not in people.yaml")]
    out = []
    traits = set(occupation.traits)
    low, high = occupation.age
    if not low <= persona.age <= high:
        out.append(fail(rule, year, None, f"a {occupation.key} aged {persona.age} (the job is for ages {low}-{high})"))
    texts = [(f"trap {t.option}", *_trap_text(kb, t.category, t.option)) for t in persona.traps]
    lifestyle = lifestyle_of(kb, year)
    if lifestyle is None:
        out.append(fail(rule, year, None, f"lifestyle {persona.lifestyle.en!r} is not in people.yaml"))
    else:
        texts.append((f"lifestyle {lifestyle.key}", lifestyle.text.en, list(lifestyle.requires), []))
        if set(lifestyle.excludes) & traits:
            out.append(fail(rule, year, None, f"a {occupation.key} who {lifestyle.text.en!r}"))
        if not lifestyle.age[0] <= persona.age <= lifestyle.age[1]:
            out.append(fail(rule, year, None, f"aged {persona.age}, {lifestyle.text.en!r}"))
    for what, text, requires, excludes in texts:
        missing = sorted(set(requires) - traits)
        if missing:
            out.append(fail(rule, year, None, f"a {occupation.key} says {text!r} ({what} needs {missing})"))
        elif set(excludes) & traits:
            out.append(fail(rule, year, None, f"a {occupation.key} says {text!r} ({what} rules out {excludes})"))
        elif "retired" in traits and WORK_TEXT.search(text) and "retired" not in requires:
            out.append(fail(rule, year, None, f"a {occupation.key} says {text!r} ({what} speaks of work)"))
    return out


def relative_names_distinct(kb: KnowledgeBase, year: CareYear) -> list[str]:
    """No two relatives share a given name, and none has the patient's."""
    rule, persona = "relative_names_distinct", year.persona
    out = []
    for lang, own in (("en", persona.name.en.split(" ", 1)[0]), ("zh", persona.name.zh[1:])):
        seen = {own: "the patient"}
        for relative in persona.family:
            name = getattr(relative.name, lang)
            if name in seen:
                detail = f"{relative.relation} is called {name!r} ({lang}), as is {seen[name]}"
                out.append(fail(rule, year, None, detail))
            seen.setdefault(name, f"the {relative.relation}")
    return out


def bmi_on_record(year: CareYear, upto_index: int) -> float | None:
    """The latest BMI on record up to and including event `upto_index`: a BMI, or a weight over the height²."""
    height = year.persona.height_cm
    value = None
    for event in year.events:
        if event.index > upto_index:
            break
        for fact in event.facts:
            if isinstance(fact, LabFact) and fact.lab == "bmi":
                value = fact.value
            elif isinstance(fact, LabFact) and fact.lab == "weight" and height:
                value = fact.value / (height / 100) ** 2
    return value


def lifestyle_advice_gated(kb: KnowledgeBase, year: CareYear) -> list[str]:
    """No stopping-smoking advice to a non-smoker; no weight-loss advice where the BMI on record is under its
    threshold or unknown."""
    rule = "lifestyle_advice_gated"
    smoker = is_smoker(kb, year)
    out = []
    for event in year.events:
        for fact in event.facts:
            if not isinstance(fact, AdviceFact) or fact.advice not in kb.advice:
                continue
            spec = kb.advice[fact.advice]
            if spec.smokers_only and not smoker:
                out.append(fail(rule, year, event, f"{fact.advice} for a non-smoker ({year.persona.lifestyle.en})"))
            if spec.min_bmi is not None:
                bmi = bmi_on_record(year, event.index)
                if bmi is None or bmi < spec.min_bmi:
                    shown = "unknown" if bmi is None else f"{bmi:.1f}"
                    out.append(fail(rule, year, event, f"{fact.advice} at a BMI of {shown} (< {spec.min_bmi})"))
    return out


def trap_never_contradicted(kb: KnowledgeBase, year: CareYear) -> list[str]:
    """A needle phobia told as a trap stands all year: no drug given that only comes as an injection or infusion,
    and no allergy told through a needle taken calmly ("I react badly to Remicade (infliximab) infusions" beside "I
    faint at the sight of one"; told as the patient got through it, lying down, it stands)."""
    rule = "trap_never_contradicted"
    excluded: set[str] = set()
    for trap in year.persona.traps:
        if trap.category == "medication_preference":
            excluded.update(f for f in kb.preferences[trap.option].excludes_forms if f in ("injection", "infusion"))
    if not excluded:
        return []
    out = []
    calm = {text.en for group in kb.allergy_groups.values() for text in (*group.agents, *group.reactions)
            if text.by_needle}
    told = [(None, t.fact) for t in year.persona.traps if isinstance(t.fact, AllergyFact)]
    told += [(e, f) for e in year.events for f in e.facts if isinstance(f, AllergyFact)]  # (corrections included)
    for event, fact in told:
        out += [fail(rule, year, event, f"{said!r} told by a patient who faints at needles")
                for said in (fact.agent.en, fact.reaction.en) if said in calm]
    for event in year.events:
        for fact in event.facts:
            if isinstance(fact, MedicationFact) and fact.action in GIVEN and fact.drug in kb.drugs:
                forms = {form.form for form in kb.drugs[fact.drug].forms}
                if forms and forms <= excluded:
                    out.append(fail(rule, year, event, f"{fact.drug} ({sorted(forms)}) given to a patient who "
                                                       f"refused {sorted(excluded)}"))
    return out


def household_coherent(kb: KnowledgeBase, year: CareYear) -> list[str]:
    """One household for the year: its members are family who may share a home (a spouse always does; a sibling,
    aunt or uncle keeps their own), nobody where the patient says they live alone, and the cook, if not the patient,
    is a member of an age and health to cook; one aid for the tablets, the one a trap text names where it names one
    (the pharmacy's blister pack), and a helper with them only a member able to help (no mother with dementia)."""
    rule, persona = "household_coherent", year.persona
    household = persona.household
    if household is None:
        return [fail(rule, year, None, "no household drawn: who lives with the patient and who cooks is not one fact")]
    family = {r.relation: r for r in persona.family}
    out = [fail(rule, year, None, f"{m} lives with the patient but is not in the family") for m in household.members
           if m not in family]
    out += [fail(rule, year, None, f"{m} keeps a home of their own (relatives.yaml lives_with: never)")
            for m in household.members if m in family and kb.relatives[m].lives_with == "never"]
    out += [fail(rule, year, None, f"the patient's {r} does not live with them") for r in family
            if kb.relatives[r].lives_with == "always" and r not in household.members and not lives_alone(kb, year)]
    if lives_alone(kb, year) and household.members:
        out.append(fail(rule, year, None, f"says they live on their own, yet lives with {household.members}"))
    if household.cook is not None:
        cook = family.get(household.cook)
        if household.cook not in household.members or cook is None:
            out.append(fail(rule, year, None, f"{household.cook} does the cooking but does not live with the patient"))
        elif not able(kb, cook):
            out.append(fail(rule, year, None, f"{household.cook} aged {cook.age} with {cook.conditions} does the "
                                              "cooking"))
    return out + _adherence_aid(kb, year)


def _adherence_aid(kb: KnowledgeBase, year: CareYear) -> list[str]:
    rule, household = "household_coherent", year.persona.household
    assert household is not None
    named = next((kb.preferences[t.option].adherence_aid for t in year.persona.traps
                  if t.category == "medication_preference" and kb.preferences[t.option].adherence_aid), None)
    aid, helper = household.adherence_aid, household.adherence_helper
    if aid is None:
        return [fail(rule, year, None, "no adherence aid drawn: how the tablets are kept to is not one fact")]
    if named is not None and aid != named:
        return [fail(rule, year, None, f"keeps to the tablets with {aid}, but says {named}")]
    if aid != "household_member":
        own = named is not None or aid in kb.people.adherence.own_aids
        return [] if own and helper is None else [fail(rule, year, None, f"aid {aid} with helper {helper}")]
    family = {r.relation: r for r in year.persona.family}
    relative = family.get(helper or "")
    if relative is None or helper not in household.members:
        return [fail(rule, year, None, f"{helper} helps with the tablets but does not live with the patient")]
    if not able(kb, relative):
        return [fail(rule, year, None, f"{helper} aged {relative.age} with {relative.conditions} helps with the "
                                       "tablets")]
    return []


def meals_coherent(kb: KnowledgeBase, year: CareYear) -> list[str]:
    """One way of eating for the year: the meals a diet habit on record is, else one drawn (not a habit's own)."""
    rule, meals = "meals_coherent", year.persona.meals
    habit = next((kb.habits[t.fact.habit] for t in year.persona.traps if isinstance(t.fact, DietFact)), None)
    if meals not in kb.meals:
        return [fail(rule, year, None, f"meals {meals!r} are not in diet.yaml")]
    if habit is not None and habit.meals is not None and meals != habit.meals:
        return [fail(rule, year, None, f"eats {meals} but says {habit.text.en!r} ({habit.meals})")]
    if (habit is None or habit.meals is None) and not kb.meals[meals].drawn:
        return [fail(rule, year, None, f"eats {meals}, a habit's meals, with no such habit on record")]
    return []


def meals_fit_lifestyle(kb: KnowledgeBase, year: CareYear) -> list[str]:
    """The meals said and the lifestyle said are one day: no "nothing all day, then one big meal in the evening" (an
    intermittent-fasting habit's) beside "I eat out most lunchtimes" (the seed-73 read, P0007 and P0009;
    diet.yaml `meals[].excludes_lifestyles`)."""
    meals, lifestyle = kb.meals.get(year.persona.meals or ""), lifestyle_of(kb, year)
    if meals is None or lifestyle is None or lifestyle.key not in meals.excludes_lifestyles:
        return []
    return [fail("meals_fit_lifestyle", year, None, f"eats {meals.text.en!r} ({meals.key}) but "
                                                     f"{lifestyle.text.en!r} ({lifestyle.key})")]


JOB_TALK = {"en": re.compile(r"\b(?:work|job|boss|colleagues?|lunch break)\b", re.IGNORECASE),
            "zh": re.compile(r"上班|下班|午休|单位|老板|同事|工作")}
"""Words that speak of a job the patient goes to (read after `NOT_JOB_TALK` is taken out)."""
NOT_JOB_TALK = {
    "en": re.compile(r"blood work|working diagnosis|keep working on it"
                     r"|\bwork(?:s|ed|ing)? (?:out|for|within|with|best)\b"
                     r"|(?:n't|\b(?:not|medicines|drugs|kidneys?|it|they|that)) (?:work|works|worked|working)\b"
                     r"|working well|doing its job", re.IGNORECASE),
    "zh": re.compile(r"工作日|酒精单位|个单位|单位为"),
}
"""The same words in another sense: a drug or an organ that works (or is "doing its job"), blood work, a working
diagnosis, weekdays (工作日)
and alcohol units (酒精单位)."""


def retired_not_asked_about_work(year: CareYear, sessions: list[tuple[Event, str]], lang: str) -> list[str]:
    """A retired patient is not asked about work nor speaks of a job ("Is it getting in the way of work?", "What do I
    tell work?" to a retired factory worker: the seed-73 read, P0004 S048, S058, S098). `sessions`: each visit's
    rendered text in `lang`."""
    out = []
    for event, text in sessions:
        found = JOB_TALK[lang].search(NOT_JOB_TALK[lang].sub(" ", text))
        if found is not None:
            at = text.find(found.group(0))
            out.append(fail("retired_not_asked_about_work", year, event,
                            f"{found.group(0)!r} in {text[max(0, at - 80):at + 40]!r}"))
    return out


def aid_holds_what_is_said(kb: KnowledgeBase, year: CareYear, said: list[tuple[Event, str, str]],
                           aid_words: list[str]) -> list[str]:
    """A drug the patient says is in their adherence aid is one the aid holds: a pharmacy's once-a-day pack holds
    no course, nothing taken as needed and nothing taken more than once a day (preferences.yaml `long_term_only`,
    `max_doses_per_day`; the seed-73 read, P0004 S009: penicillin V "four times a day like clockwork. The pharmacy
    packs them in a blister pack", beside "so I can only take things once a day"). `said`: each adherence answer's
    visit, the drug it speaks of and its text; `aid_words`: the phrasings of the patient's aid."""
    packs = [kb.preferences[t.option] for t in year.persona.traps if t.category == "medication_preference"
             and kb.preferences[t.option].adherence_aid is not None]
    out = []
    for event, drug, text in said:
        record = next((f for e in reversed(year.events[:event.index - 1]) for f in e.facts
                       if isinstance(f, MedicationFact) and f.drug == drug), None)
        if record is None or not any(w.lower() in text.lower() for w in aid_words):
            continue
        for pack in packs:
            course = pack.long_term_only and (record.course_days or record.frequency == "as_needed")
            limit = pack.max_doses_per_day
            if course or (limit is not None and DOSES_PER_DAY[record.frequency] > limit):
                out.append(fail("aid_holds_what_is_said", year, event,
                                f"{drug} ({record.frequency}, course {record.course_days}) said to be in the "
                                f"{pack.adherence_aid}: {text[:160]!r}"))
    return out


def budget_bar_consistent(kb: KnowledgeBase, year: CareYear, timeline: str) -> list[str]:
    """A drug the timeline (`medmemorybench show`) says a budget rules out is not then started "allowed by every
    rule", unless the table says it was ruled out only beside the plan's other drugs (the budget bites on the plan's
    total). The seed-73 read: fludrocortisone ($12 a month) and metformin "ruled out" by $47 and $35 budgets, then
    started "allowed by every rule" (P0007, P0009). `timeline`: the year's `show` text, unwrapped (its trap table is
    read)."""
    out = []
    started = {f.drug for e in year.events for f in e.facts if isinstance(f, MedicationFact) and f.action == "start"}
    table = timeline.split("phase 1:")[0]  # (the trap table: a visit that avoided a drug for the budget then is apart)
    for trap in year.persona.traps:
        for barred in trap.forbidden:
            name = drug_name(kb, barred.drug)
            said = re.compile(rf"(?<![\w/-]){re.escape(f'{name} ({barred.rule}')}")  # (not "amlodipine/{name}")
            if barred.rule.startswith("budget:") and barred.drug in started and said.search(table) \
                    and f"{name}: step" in timeline:
                out.append(fail("budget_bar_consistent", year, None,
                                f"{name} ruled out by {barred.rule} (${kb.drugs[barred.drug].monthly_cost_usd:g} a "
                                f"month), then started allowed by every rule"))
    return out


def roster_fits_visits(kb: KnowledgeBase, year: CareYear) -> list[str]:
    """A job whose roster leaves room for few visits (four weeks on a remote site, two at home) is not drawn beside a
    year of more (the seed-47 and seed-53 reads: "four weeks on, two off" beside 100 visits)."""
    occupation = occupation_of(kb, year)
    limit = occupation.max_encounters if occupation is not None else None
    if limit is None or len(year.events) <= limit:
        return []
    return [fail("roster_fits_visits", year, None, f"a {occupation.key} (roster: at most {limit} visits a year) "  # type: ignore[union-attr]
                                                   f"with {len(year.events)} visits")]


def able(kb: KnowledgeBase, relative: Relative) -> bool:
    """Whether a relative is of an age and health to do things for the patient (people.yaml `household`)."""
    rules = kb.people.household
    return rules.able_age[0] <= relative.age <= rules.able_age[1] and not set(relative.conditions) & set(
        rules.able_excludes)


def lives_alone(kb: KnowledgeBase, year: CareYear) -> bool:
    """Whether a trap text of the patient says they live on their own."""
    return any(t.category == "medication_preference" and kb.preferences[t.option].lives_alone
               for t in year.persona.traps)


def life_events_respected(kb: KnowledgeBase, year: CareYear) -> list[str]:
    """A life event told stands beside the household of the year: "my marriage ended" is never said by a patient
    whose family has a wife or husband, and "the flat is silent" never by one who lives with someone; and it fits
    their job and age ("I had to retire early from the workshop" from a retired manual worker under the pension
    age, not from a 75-year-old retired librarian: the seed-53 read)."""
    rule, persona = "life_events_respected", year.persona
    stressors = {s.key: s for s in kb.conditions[persona.condition].stressors}
    relations = {r.relation for r in persona.family}
    occupation = occupation_of(kb, year)
    traits = set(occupation.traits) if occupation is not None else set()
    out = []
    for event in year.events:
        for fact in event.facts:
            stressor = stressors.get(fact.stressor) if isinstance(fact, StressorFact) else None
            if stressor is None:
                continue
            ended = sorted(relations & set(stressor.without_family))
            if ended:
                out.append(fail(rule, year, event, f"{stressor.text.en!r} beside a {ended[0]} in the family"))
            if stressor.lives_alone and persona.household is not None and persona.household.members:
                out.append(fail(rule, year, event, f"{stressor.text.en!r} from one who lives with "
                                                   f"{persona.household.members}"))
            if not set(stressor.requires) <= traits or set(stressor.excludes) & traits:
                out.append(fail(rule, year, event, f"{stressor.text.en!r} from a {persona.occupation.en}"))
            if not stressor.age[0] <= persona.age <= stressor.age[1]:
                out.append(fail(rule, year, event, f"{stressor.text.en!r} at {persona.age}"))
    return out


def body_consistent(kb: KnowledgeBase, year: CareYear) -> list[str]:
    """One body: a height fixed for the year; every BMI is the weight beside it over the height², and agrees with
    the weight on record shortly before it."""
    rule, height = "body_consistent", year.persona.height_cm
    out = []
    if height is None or not ADULT_HEIGHT_CM[0] <= height <= ADULT_HEIGHT_CM[1]:
        out.append(fail(rule, year, None, f"height {height} cm is not an adult's fixed height"))
        height = None
    implied: list[tuple[str, float]] = []
    last_weight: tuple[str, float] | None = None
    for event in year.events:
        labs = {f.lab: f.value for f in event.facts if isinstance(f, LabFact)}
        if "weight" in labs and "bmi" in labs:
            implied.append((event.event_id, 100 * (labs["weight"] / labs["bmi"]) ** 0.5))
            if height is not None and abs(labs["bmi"] - labs["weight"] / (height / 100) ** 2) > BMI_TOLERANCE:
                out.append(fail(rule, year, event, f"{labs['weight']} kg at {height} cm is not a BMI of {labs['bmi']}"))
        elif "bmi" in labs and last_weight is not None and height is not None:
            when, weight = last_weight
            gap = (_date(event.date) - _date(when)).days
            expected = labs["bmi"] * (height / 100) ** 2
            if gap <= SAME_BODY_DAYS and abs(expected - weight) > WEIGHT_DRIFT * weight:
                out.append(fail(rule, year, event, f"BMI {labs['bmi']} at {height} cm is {expected:.1f} kg, "
                                                   f"but {weight} kg was recorded {gap} days before"))
        if "weight" in labs:
            last_weight = (event.date, labs["weight"])
    if implied and height is None:  # no fixed height: the weights and BMIs side by side must still imply one
        heights = [h for _, h in implied]
        if max(heights) - min(heights) > 2.0 or not all(ADULT_HEIGHT_CM[0] <= h <= ADULT_HEIGHT_CM[1]
                                                          for h in heights):
            out.append(fail(rule, year, None, f"weights and BMIs imply heights of {min(heights):.0f}-"
                                              f"{max(heights):.0f} cm"))
    return out


def _date(iso: str) -> date:
    return date.fromisoformat(iso)


CHECKS = {
    "persona_occupation": persona_occupation,
    "relative_names_distinct": relative_names_distinct,
    "lifestyle_advice_gated": lifestyle_advice_gated,
    "trap_never_contradicted": trap_never_contradicted,
    "body_consistent": body_consistent,
    "household_coherent": household_coherent,
    "life_events_respected": life_events_respected,
    "meals_coherent": meals_coherent,
    "roster_fits_visits": roster_fits_visits,
}
"""Rule name -> its check."""
