"""Persona invariants over 1,000 seeded patients: each patient is one coherent person, one test per rule.

Each failure message starts with the rule's name in brackets (the names `docs/simulation.md` lists). Each rule has
a second test that builds a violation into a simulated year and asserts the check catches it.
"""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from medmemorybench.render.acts import DrugName
from medmemorybench.render.conversation import SessionRenderer
from medmemorybench.render.fields import trap_detail
from medmemorybench.render.templates import load_templates
from medmemorybench.simulate.describe import drug_name
from medmemorybench.simulate.models import (
    AdviceFact,
    AllergyFact,
    CareYear,
    DietFact,
    Event,
    Household,
    LabFact,
    MedicationFact,
    Relative,
    StressorFact,
    Trap,
)
from medmemorybench.simulate.show import render_timeline
from tests.simulate.clinical import check, first_event
from tests.simulate.persona_check import (
    aid_holds_what_is_said,
    body_consistent,
    budget_bar_consistent,
    household_coherent,
    life_events_respected,
    lifestyle_advice_gated,
    meals_coherent,
    meals_fit_lifestyle,
    persona_occupation,
    relative_names_distinct,
    retired_not_asked_about_work,
    roster_fits_visits,
    trap_never_contradicted,
)
from tests.simulate.said_check import said_acts


def _run(check, kb, years) -> list[str]:  # noqa: ANN001
    return [failure for year in years for failure in check(kb, year)]


def _edit(year: CareYear, **persona) -> CareYear:  # noqa: ANN003
    return year.model_copy(update={"persona": year.persona.model_copy(update=persona)})


def _with_event(year: CareYear, event: Event, *facts) -> CareYear:  # noqa: ANN002
    events = [e.model_copy(update={"facts": [*e.facts, *facts]}) if e.event_id == event.event_id else e
              for e in year.events]
    return year.model_copy(update={"events": events})


# --- persona_occupation ---------------------------------------------------------------------------


def test_persona_occupation_job_fits_age_hours_and_every_text_about_work(kb, years):
    check(_run(persona_occupation, kb, years))


def test_persona_occupation_catches_a_crafted_violation(kb, years):
    year = next(y for y in years if y.persona.age >= 75)  # an old patient given a working-age desk job
    accountant = next(o for o in kb.people.occupations if o.key == "accountant")
    failures = persona_occupation(kb, _edit(year, occupation=accountant.text, occupation_key=accountant.key))
    assert failures and all(f.startswith("[persona_occupation]") for f in failures)
    # a retired patient whose trap says they operate machinery at work
    retired = next(y for y in years if "retired" in next(o for o in kb.people.occupations
                                                         if o.key == y.persona.occupation_key).traits)
    traps = [t.model_copy(update={"option": "nothing_sedating"}) if t.category == "medication_preference" else t
             for t in retired.persona.traps]
    assert any("operates_machinery" in f for f in persona_occupation(kb, _edit(retired, traps=traps)))


def test_persona_occupation_rendered_sessions_say_nothing_untrue_of_the_patient(kb, years):
    """A retired patient does not come 'on their lunch break'; a needle-phobic one does not find 'the needle not
    too bad this time'; one with no spouse has no 'partner' and one with no children no 'kids' (the renderer drops
    the phrasings `conversation.UNTRUE_TALK` names, and a strain needs the family it speaks of)."""
    templates = load_templates("en")
    chosen = [y for y in years if y.persona.occupation_key and y.persona.occupation_key.startswith("retired")][:4]
    chosen += [y for y in years if any(t.option == "needle_phobia" for t in y.persona.traps)][:4]
    chosen += [y for y in years if not {"wife", "husband"} & {r.relation for r in y.persona.family}][:4]
    failures = []
    for year in chosen:
        renderer = SessionRenderer(kb, templates, year)
        own_words = [trap_detail(kb, trap, "en") for trap in year.persona.traps]  # (the phobia itself, told)
        # (a symptom's own lay words still name family: "my daughter says I ask the same question", open)
        own_words += [s.lay.en for s in kb.conditions[year.persona.condition].symptoms]
        for event in year.events:
            text = " ".join(turn.text for turn in renderer.render(event).turns)
            for words in own_words:
                text = text.replace(words, "")
            if renderer.untrue is not None and renderer.untrue.search(text):
                failures.append(f"[persona_occupation] {year.persona.persona_id} (seed {year.seed}) {event.event_id}: "
                                f"{renderer.untrue.search(text).group(0)!r} in {text[:160]!r}")
    check(failures)


# --- meals_fit_lifestyle ---------------------------------------------------------------------------


def test_meals_fit_lifestyle(kb, years):
    check(_run(meals_fit_lifestyle, kb, years))


def test_meals_fit_lifestyle_catches_a_crafted_violation(kb, years):
    """A patient who fasts until one evening meal given "eats out almost every lunch" (seed 73 P0007), found both
    ways: the lifestyle set beside the fasting meals, and the meals set beside the lifestyle."""
    eats_out = next(ls for ls in kb.people.lifestyles if ls.key == "eats_out")
    year = next(y for y in years if y.persona.lifestyle_key != "eats_out")
    failures = meals_fit_lifestyle(kb, _edit(year, meals="one_evening_meal", lifestyle=eats_out.text,
                                             lifestyle_key="eats_out"))
    assert failures and failures[0].startswith("[meals_fit_lifestyle]") and "eats_out" in failures[0]
    diner = next(y for y in years if y.persona.lifestyle_key == "eats_out")
    assert not meals_fit_lifestyle(kb, diner)
    assert meals_fit_lifestyle(kb, _edit(diner, meals="protein_meals"))


# --- retired_not_asked_about_work --------------------------------------------------------------------

RETIRED_SAMPLE = 20
"""Retired patients whose years are rendered in both languages (about a sixth of the cohort is retired)."""


def _retired_sessions(kb, years, lang: str):  # noqa: ANN001, ANN202
    retired = [y for y in years if (y.persona.occupation_key or "").startswith("retired")][:RETIRED_SAMPLE]
    out = []
    for year in retired:
        renderer = SessionRenderer(kb, load_templates(lang), year)
        out.append((year, [(e, " ".join(t.text for t in renderer.render(e).turns)) for e in year.events]))
    return out


@pytest.fixture(scope="module")
def retired_sessions(kb, years):
    """The retired years' sessions per language, rendered once for the check and its crafted case."""
    return {lang: _retired_sessions(kb, years, lang) for lang in ("en", "zh")}


def test_retired_not_asked_about_work(retired_sessions):
    failures = []
    for lang in ("en", "zh"):
        sessions = retired_sessions[lang]
        assert len(sessions) == RETIRED_SAMPLE
        failures += [f for year, said in sessions for f in retired_not_asked_about_work(year, said, lang)]
    check(failures)


def test_retired_not_asked_about_work_catches_a_crafted_violation(retired_sessions):
    """The seed-73 read's questions (P0004 S048, S058) said to a retired patient are found in either language; a
    medicine that "doesn't work" and a dose "doing its job" are not talk of a job."""
    year, said = retired_sessions["en"][0]
    event, text = said[-1]
    for question in ("Is it getting in the way of work?", "How many days will I be in for? What do I tell work?"):
        failures = retired_not_asked_about_work(year, [(event, f"{text} {question}")], "en")
        assert failures and failures[0].startswith("[retired_not_asked_about_work]") and event.event_id in failures[0]
    fine = "If the amlodipine doesn't work, there are others. Stay on it, since it's doing its job."
    assert not retired_not_asked_about_work(year, [(event, fine)], "en")
    assert retired_not_asked_about_work(year, [(event, "有没有影响上班？")], "zh")
    assert not retired_not_asked_about_work(year, [(event, "工作日帮着带孙辈。")], "zh")


# --- aid_holds_what_is_said --------------------------------------------------------------------------


ADHERENCE_DRAWS = 4
"""Wordings drawn of each adherence answer (a few dozen patients of the cohort keep a pharmacy's pack)."""


def _adherence_answers(kb, year: CareYear, lang: str):  # noqa: ANN001, ANN202
    """Each adherence answer of a year said in `lang`: (visit, the drug it speaks of, its words), and the phrasings of
    the patient's aid."""
    templates = load_templates(lang)
    said = said_acts(kb, year, {lang: templates}, wanted=lambda key: key.startswith("ans.adherence."),
                     judged=lambda *_: True, draws=ADHERENCE_DRAWS)
    answers = [(s.event, s.act.slots["drug"].key, text) for s in said if isinstance(s.act.slots.get("drug"), DrugName)
               for text in s.texts[lang]]
    return answers, templates.variants(f"aid.{year.persona.household.adherence_aid}")


def _packed(years):  # noqa: ANN001, ANN202
    return [y for y in years if y.persona.household is not None and y.persona.household.adherence_aid == "blister_pack"]


def test_aid_holds_what_is_said(kb, years):
    """Every patient of the cohort whose trap names the pharmacy's once-a-day pack, every adherence answer, in both
    languages."""
    packed = _packed(years)
    assert packed
    failures = []
    for lang in ("en", "zh"):
        for year in packed:
            failures += aid_holds_what_is_said(kb, year, *_adherence_answers(kb, year, lang))
    check(failures)


def test_aid_holds_what_is_said_catches_a_crafted_violation(kb, years):
    """The seed-73 read's answer (P0004 S009): penicillin V four times a day "in the pharmacy's blister pack", found in
    either language; said beside the pack, or of a once-a-day long-term drug, it is not a violation."""
    year = next(y for y in _packed(years) if any(isinstance(f, MedicationFact) and f.course_days
                                                 for e in y.events for f in e.facts))
    event, course = next((e, f) for e in year.events for f in e.facts
                         if isinstance(f, MedicationFact) and f.course_days)
    later = year.events[event.index]  # (the next visit)
    for lang, text in (("en", "Fine, I take it four times a day like clockwork. The pharmacy packs them in a blister "
                               "pack."), ("zh", "每日四次，一次不落；都在药房分好的泡罩包装里。")):
        _, words = _adherence_answers(kb, year, lang)
        failures = aid_holds_what_is_said(kb, year, [(later, course.drug, text)], words)
        assert failures and failures[0].startswith("[aid_holds_what_is_said]") and later.event_id in failures[0]
    beside = "Four times a day. It's not in the blister pack; I keep it on the side and tick each one off."
    assert not aid_holds_what_is_said(kb, year, [(later, course.drug, beside)], _adherence_answers(kb, year, "en")[1])
    daily = next((e, f) for e in year.events for f in e.facts if isinstance(f, MedicationFact)
                 and not f.course_days and f.frequency == "once_daily")
    after = year.events[daily[0].index]
    assert not aid_holds_what_is_said(kb, year, [(after, daily[1].drug, "Once a day; it's all in the pharmacy's "
                                                                        "blister pack.")],
                                      _adherence_answers(kb, year, "en")[1])


# --- budget_bar_consistent -------------------------------------------------------------------------


def _timeline(kb, year: CareYear) -> str:  # noqa: ANN001
    """The year's `show` text, wide enough that no cell wraps."""
    buffer = io.StringIO()
    render_timeline(kb, year, Console(file=buffer, width=5000))
    return buffer.getvalue()


def _budget_bitten(years):  # noqa: ANN001, ANN202
    """Years whose budget trap rules out a drug the year then starts."""
    return [y for y in years if any(f.rule.startswith("budget:") and any(
        isinstance(m, MedicationFact) and m.action == "start" and m.drug == f.drug for e in y.events for m in e.facts)
        for t in y.persona.traps for f in t.forbidden)]


def test_budget_bar_consistent(kb, years):
    """Every year of the cohort whose budget trap rules out a drug the year starts, its timeline read."""
    bitten = _budget_bitten(years)
    assert bitten
    check([f for year in bitten for f in budget_bar_consistent(kb, year, _timeline(kb, year))])


def test_budget_bar_consistent_catches_a_crafted_violation(kb, years):
    """The seed-73 read's table (P0007): a drug within the budget said to be ruled out by it outright, then started
    allowed by every rule; said as ruled out beside the plan's other drugs, it is not a violation."""
    year = _budget_bitten(years)[0]
    text = _timeline(kb, year)
    barred = next(f for t in year.persona.traps for f in t.forbidden if f.rule.startswith("budget:") and any(
        isinstance(m, MedicationFact) and m.action == "start" and m.drug == f.drug for e in year.events
        for m in e.facts))
    name = drug_name(kb, barred.drug)
    plain = f"{name} ({barred.rule}, {barred.step})"
    failures = budget_bar_consistent(kb, year, f"{plain}\n{text}")
    assert failures and failures[0].startswith("[budget_bar_consistent]") and name in failures[0]
    assert not budget_bar_consistent(kb, year, text.replace(plain, ""))


# --- relative_names_distinct ----------------------------------------------------------------------


def test_relative_names_distinct(kb, years):
    check(_run(relative_names_distinct, kb, years))


def test_relative_names_distinct_catches_a_crafted_violation(kb, years):
    year = next(y for y in years if y.persona.sex == "female" and
                any(r.sex == "female" for r in y.persona.family))
    relative = next(r for r in year.persona.family if r.sex == "female")
    given = year.persona.name.en.split(" ")[0]
    family = [r.model_copy(update={"name": r.name.model_copy(update={"en": given})}) if r is relative else r
              for r in year.persona.family]
    failures = relative_names_distinct(kb, _edit(year, family=family))
    assert failures and failures[0].startswith("[relative_names_distinct]") and "the patient" in failures[0]
    twin: Relative = relative.model_copy(update={"relation": "aunt"})
    assert relative_names_distinct(kb, _edit(year, family=[*year.persona.family, twin]))


# --- lifestyle_advice_gated -----------------------------------------------------------------------


def test_lifestyle_advice_gated(kb, years):
    check(_run(lifestyle_advice_gated, kb, years))


def test_lifestyle_advice_gated_catches_a_crafted_violation(kb, years):
    year = next(y for y in years if not y.persona.smoker and y.events)
    event = year.events[-1]
    failures = lifestyle_advice_gated(kb, _with_event(year, event, AdviceFact(advice="smoking_cessation")))
    assert failures and failures[0].startswith("[lifestyle_advice_gated]") and "non-smoker" in failures[0]
    # weight loss advised beside a weight that, at this height, is a healthy BMI
    height = year.persona.height_cm / 100
    healthy = LabFact(lab="weight", value=round(22.0 * height ** 2, 1), unit="kg")
    failures = lifestyle_advice_gated(kb, _with_event(year, event, healthy, AdviceFact(advice="weight_loss")))
    assert any("weight_loss at a BMI of 22.0" in f for f in failures)


# --- trap_never_contradicted ----------------------------------------------------------------------


def test_trap_never_contradicted(kb, years):
    check(_run(trap_never_contradicted, kb, years))


def test_trap_never_contradicted_catches_a_crafted_violation(kb, years):
    year = next(y for y in years if any(t.option == "needle_phobia" for t in y.persona.traps))
    injected = next(d for d in sorted(kb.drugs) if {f.form for f in kb.drugs[d].forms} == {"injection"})
    fact = MedicationFact(drug=injected, action="start", dose=1.0, unit="mg", frequency="once_weekly",
                          reason="first_line", indication=year.persona.condition)
    failures = trap_never_contradicted(kb, _with_event(year, year.events[-1], fact))
    assert failures and failures[0].startswith("[trap_never_contradicted]") and injected in failures[0]
    # a patient with the phobia told as their preference, whose record holds an injection
    other = next(y for y in years if not any(t.option == "needle_phobia" for t in y.persona.traps))
    traps: list[Trap] = [t.model_copy(update={"option": "needle_phobia"}) if t.category == "medication_preference"
                         else t for t in other.persona.traps]
    assert trap_never_contradicted(kb, _with_event(_edit(other, traps=traps), other.events[-1], fact))


def test_trap_never_contradicted_catches_an_infusion_told_calmly(kb, years):
    """The seed-37 UC patient: "I'm terrified of needles" beside "I react badly to Remicade (infliximab)
    infusions", told with no word of how they got through them."""
    year = next(y for y in years if any(t.option == "needle_phobia" for t in y.persona.traps)
                and any(t.option == "infliximab_infusion_reaction" for t in y.persona.traps))
    calm = next(a for a in kb.allergy_groups["infliximab_infusion_reaction"].agents if a.by_needle).plain()
    traps = [t.model_copy(update={"fact": t.fact.model_copy(update={"agent": calm})})
             if isinstance(t.fact, AllergyFact) else t for t in year.persona.traps]
    failures = trap_never_contradicted(kb, _edit(year, traps=traps))
    assert failures and failures[0].startswith("[trap_never_contradicted]") and "infusions" in failures[0]


# --- household_coherent ---------------------------------------------------------------------------


def test_household_coherent(kb, years):
    check(_run(household_coherent, kb, years))


def test_household_coherent_catches_a_crafted_violation(kb, years):
    year = next(y for y in years if any(kb.relatives[r.relation].lives_with == "never" for r in y.persona.family))
    sibling = next(r for r in year.persona.family if kb.relatives[r.relation].lives_with == "never")
    # a sibling with their own home doing the cooking (the seed-37 "my younger brother does most of the cooking")
    crafted = _edit(year, household=Household(members=[sibling.relation], cook=sibling.relation))
    failures = household_coherent(kb, crafted)
    assert failures and failures[0].startswith("[household_coherent]") and "home of their own" in failures[0]
    # a patient who lives on their own, yet lives with someone; and none drawn at all
    alone = next(y for y in years if any(t.option == "once_daily_blister_pack" for t in y.persona.traps))
    relation = alone.persona.family[0].relation
    assert any("live on their own" in f for f in household_coherent(kb, _edit(
        alone, household=Household(members=[relation]))))
    assert household_coherent(kb, _edit(year, household=None))
    # a 98-year-old mother at the stove
    old = next(y for y in years if any(r.age > kb.people.household.able_age[1] and
                                       kb.relatives[r.relation].lives_with == "may" for r in y.persona.family))
    elder = next(r for r in old.persona.family if r.age > kb.people.household.able_age[1]
                 and kb.relatives[r.relation].lives_with == "may")
    members = [*old.persona.household.members, elder.relation]
    assert any("does the cooking" in f for f in household_coherent(kb, _edit(
        old, household=Household(members=members, cook=elder.relation, adherence_aid="pill_box"))))


def test_household_coherent_catches_a_second_aid_and_a_helper_who_cannot(kb, years):
    """The seed-53 reads: "the pharmacy packs my tablets in a blister pack" beside "my son sorts them into the box";
    "my mother reminds me" from a mother with late-onset Alzheimer's (MMSE 20); no aid drawn at all."""
    alone = next(y for y in years if any(t.option == "once_daily_blister_pack" for t in y.persona.traps))
    failures = household_coherent(kb, _edit(alone, household=Household(adherence_aid="pill_box")))
    assert failures and failures[0].startswith("[household_coherent]") and "says blister_pack" in failures[0]
    assert any("no adherence aid" in f for f in household_coherent(kb, _edit(alone, household=Household())))
    year = next(y for y in years if any(kb.relatives[r.relation].lives_with == "may" for r in y.persona.family))
    parent = next(r for r in year.persona.family if kb.relatives[r.relation].lives_with == "may")
    demented = parent.model_copy(update={"conditions": ["alzheimers_late_onset"]})
    family = [demented if r is parent else r for r in year.persona.family]
    members = [*year.persona.household.members, parent.relation]
    crafted = _edit(year, family=family, household=Household(members=members, adherence_aid="household_member",
                                                             adherence_helper=parent.relation))
    assert any("helps with the tablets" in f for f in household_coherent(kb, crafted))
    away = _edit(year, household=Household(members=[m for m in members if m != parent.relation],
                                           adherence_aid="household_member", adherence_helper=parent.relation))
    assert any("does not live with the patient" in f for f in household_coherent(kb, away))


# --- meals_coherent -------------------------------------------------------------------------------------------


def test_meals_coherent(kb, years):
    check(_run(meals_coherent, kb, years))


def test_meals_coherent_catches_ready_meals_beside_three_high_protein_meals(kb, years):
    year = next(y for y in years if any(t.option == "high_protein_meals_with_pills" for t in y.persona.traps))
    failures = meals_coherent(kb, _edit(year, meals="ready_meals"))
    assert failures and failures[0].startswith("[meals_coherent]") and "protein_meals" in failures[0]
    other = next(y for y in years if not any(isinstance(t.fact, DietFact) and kb.habits[t.fact.habit].meals
                                             for t in y.persona.traps))
    assert meals_coherent(kb, _edit(other, meals="protein_meals"))


# --- roster_fits_visits ---------------------------------------------------------------------------------------


def test_roster_fits_visits(kb, years):
    check(_run(roster_fits_visits, kb, years))


def test_roster_fits_visits_catches_a_remote_site_worker_seen_a_hundred_times(kb, years):
    """The seed-47 and seed-53 depression patients: "four weeks on, two off" at a remote site, and 100 visits."""
    year = next(y for y in years if len(y.events) > 26)
    failures = roster_fits_visits(kb, _edit(year, occupation_key="mine_electrician"))
    assert failures and failures[0].startswith("[roster_fits_visits]") and "mine_electrician" in failures[0]


# --- life_events_respected ------------------------------------------------------------------------


def test_life_events_respected(kb, years):
    check(_run(life_events_respected, kb, years))


def test_life_events_respected_catches_a_crafted_violation(kb, years):
    """The seed-37 depression patient: "my marriage ended last year" beside a wife who drives him in."""
    year, event = first_event([y for y in years if y.persona.condition == "major_depressive_disorder"
                               and {"wife", "husband"} & {r.relation for r in y.persona.family}],
                              lambda e: any(isinstance(f, StressorFact) for f in e.facts))
    failures = life_events_respected(kb, _with_event(year, event, StressorFact(stressor="divorce")))
    assert failures and failures[0].startswith("[life_events_respected]") and "marriage ended" in failures[0]


def test_life_events_respected_catches_early_retirement_of_a_retired_librarian(kb, years):
    """The seed-53 Parkinson's patient: a 75-year-old retired librarian who "had to retire early from the
    workshop"."""
    year, event = first_event([y for y in years if y.persona.condition == "parkinsons_tremor_dominant"],
                              lambda e: any(isinstance(f, StressorFact) for f in e.facts))
    librarian = _edit(year, occupation_key="retired_librarian", age=75)
    failures = life_events_respected(kb, _with_event(librarian, event, StressorFact(stressor="early_retirement")))
    assert any("from a" in f for f in failures) and any("at 75" in f for f in failures)


# --- body_consistent ------------------------------------------------------------------------------


def test_body_consistent(kb, years):
    check(_run(body_consistent, kb, years))


def test_body_consistent_catches_a_crafted_violation(kb, years):
    year = next(y for y in years if y.persona.height_cm)
    # 52 kg beside a BMI of 30: not one body at any adult height near this patient's
    crafted = _with_event(year, year.events[-1], LabFact(lab="weight", value=52.0, unit="kg"),
                          LabFact(lab="bmi", value=30.0, unit="kg/m²"))
    failures = body_consistent(kb, crafted)
    assert failures and failures[0].startswith("[body_consistent]")
    assert body_consistent(kb, _edit(year, height_cm=None))  # no fixed height
