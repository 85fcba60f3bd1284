"""What the sessions say of the patient's life is the persona's, over 1,000 seeded patients (issue 27, the seed-53
read), one test per rule, each with a crafted violation its check must catch.

The sessions are rendered once per module: for every patient the visits where their life is told (lifestyle and
trap-telling visits, medication reviews, in English), and for a patient who faints at needles every visit in English
and Chinese (a needle procedure may come at any visit).
"""

from __future__ import annotations

import pytest

from medmemorybench.render.conversation import SessionRenderer
from medmemorybench.render.templates import load_templates
from medmemorybench.simulate.models import CareYear, DietFact, Event, Household
from tests.simulate.clinical import check
from tests.simulate.person_talk_check import (
    adherence_talk_violations,
    day_talk_violations,
    diet_talk_violations,
    home_talk_violations,
    needle_talk_violations,
    needle_visits,
)

TALK_KINDS = ("lifestyle", "trap_disclosure", "medication_review")
"""Visits whose sessions tell the patient's life: their day and meals, who is at home, how they keep to the pills."""
LANGUAGES = ("en", "zh")


def _patient_words(session) -> str:  # noqa: ANN001
    return " ".join(turn.text for turn in session.turns if turn.role == "patient")


def _render(kb, year: CareYear, lang: str, everything: bool) -> list[tuple[Event, object]]:  # noqa: ANN001
    renderer, out = SessionRenderer(kb, load_templates(lang), year), []
    for event in year.events:
        if everything or event.kind in TALK_KINDS:
            out.append((event, renderer.render(event)))
        else:
            renderer.ctx.advance(event)
    return out


@pytest.fixture(scope="module")
def talk(kb, years):
    """Per year: the patient's words of the visits that tell their life (English), and for a patient who faints at
    needles the whole sessions of every visit per language (empty for the others)."""
    out = []
    for year in years:
        needles = bool(needle_visits(kb, year))
        sessions = _render(kb, year, "en", needles)
        words = [(e, _patient_words(s)) for e, s in sessions if e.kind in TALK_KINDS]
        whole = {"en": [(e, " ".join(t.text for t in s.turns)) for e, s in sessions]} if needles else {}
        if needles:
            whole["zh"] = [(e, " ".join(t.text for t in s.turns)) for e, s in _render(kb, year, "zh", True)]
        out.append((year, words, whole))
    return out


def _edit(year: CareYear, **persona) -> CareYear:  # noqa: ANN003
    return year.model_copy(update={"persona": year.persona.model_copy(update=persona)})


# --- adherence_aid_true -------------------------------------------------------------------------------------------


def test_adherence_aid_true(kb, talk):
    check([f for year, words, _ in talk for f in adherence_talk_violations(kb, year, words)])


def test_adherence_aid_true_catches_a_second_aid_and_a_helper_who_cannot(kb, talk):
    """The seed-53 HFpEF patient: the pharmacy's blister pack, then "I've got an alarm on my phone"; the diabetic
    kidney patient's "Teresa nags me if I forget", Teresa a mother with late-onset Alzheimer's who lives elsewhere."""
    year, words, _ = next(t for t in talk if t[0].persona.household.adherence_aid == "blister_pack" and t[1])
    event = words[-1][0]
    failures = adherence_talk_violations(kb, year, [*words, (event, "Easy enough, once a day; I've got an alarm on "
                                                                    "my phone.")])
    assert failures and failures[-1].startswith("[adherence_aid_true]") and "phone_alarm" in failures[-1]
    relative = year.persona.family[0]
    said = f"Every day; {relative.name.en} nags me if I forget."
    failures = adherence_talk_violations(kb, year, [(event, said)])
    assert any("does not live with the patient" in f for f in failures)
    # a member of the household too old or ill to help
    frail = relative.model_copy(update={"age": 95, "conditions": ["alzheimers_late_onset"]})
    crafted = _edit(year, family=[frail, *year.persona.family[1:]],
                    household=Household(members=[relative.relation], adherence_aid="household_member",
                                        adherence_helper=relative.relation))
    assert any("aged 95" in f for f in adherence_talk_violations(kb, crafted, [(event, said)]))


# --- home_talk_true -----------------------------------------------------------------------------------------------


def test_home_talk_true(kb, talk):
    check([f for year, words, _ in talk for f in home_talk_violations(kb, year, words)])


def test_home_talk_true_catches_others_at_home_of_one_who_lives_alone(kb, talk):
    """The seed-53 depression patient: "Cooking for one, I don't bother much with meals. Everyone at home will want to
    know", and "I'll write it on the fridge for Anthony to see" (her father, who lives elsewhere)."""
    year, words, _ = next(t for t in talk if not t[0].persona.household.members and t[1])
    event = words[-1][0]
    father = year.persona.family[0].name.en
    failures = home_talk_violations(kb, year, [(event, "Cooking for one, it's toast. Everyone at home will want to "
                                                       "know."), (event, f"I'll write it on the fridge for {father} "
                                                                         "to see.")])
    assert len(failures) == 2 and all(f.startswith("[home_talk_true]") for f in failures)
    together, words, _ = next(t for t in talk if t[0].persona.household.members and t[1])
    assert home_talk_violations(kb, together, [(words[0][0], "I live by myself, so it's ready meals.")])


# --- diet_talk_true -----------------------------------------------------------------------------------------------


def test_diet_talk_true(kb, talk):
    check([f for year, words, _ in talk for f in diet_talk_violations(kb, year, words)])


def test_diet_talk_true_catches_toast_beside_three_high_protein_meals(kb, talk):
    """The seed-53 Parkinson's patient: "steak, eggs and protein shakes three times a day", then "Cooking for one, I
    often just have toast"."""
    year, words, _ = next(t for t in talk if t[1] and any(isinstance(x.fact, DietFact) and x.fact.habit ==
                                                          "high_protein_meals_with_pills" for x in t[0].persona.traps))
    failures = diet_talk_violations(kb, year, [(words[-1][0], "Cooking for one, I often just have toast.")])
    assert failures and failures[0].startswith("[diet_talk_true]") and "toast" in failures[0]


# --- day_fits_work ------------------------------------------------------------------------------------------------


def test_day_fits_work(kb, talk):
    check([f for year, words, _ in talk for f in day_talk_violations(kb, year, words)])


def test_day_fits_work_catches_a_retirees_day_a_farmers_boss_and_a_missing_lifestyle(kb, talk):
    """The seed-53 hairdresser's "a walk to the shops, then the telly in the afternoon", the 71-year-old farmer's
    "I told my boss I'd be back by two", and a retired grandmother's days with no grandchildren in them."""
    working, words, _ = next(t for t in talk if t[1] and t[0].persona.occupation_key == "hairdresser")
    event = words[-1][0]
    failures = day_talk_violations(kb, working, [(event, "I potter about in the mornings, a walk to the shops, then "
                                                         "the telly in the afternoon.")])
    assert any(f.startswith("[day_fits_work]") and "a retiree's day" in f for f in failures)
    farmer = _edit(working, occupation_key="farmer")
    assert any("a boss" in f for f in day_talk_violations(kb, farmer, [(event, "I told my boss I'd be back by two.")]))
    grandmother, words, _ = next(t for t in talk if t[1] and t[0].persona.lifestyle_key == "grandchildren")
    failures = day_talk_violations(kb, grandmother, [(words[0][0], "Mornings are slow, a bit of gardening, then a nap "
                                                                   "in the afternoon.")])
    assert any("without 'I have the grandchildren on weekdays'" in f for f in failures)


# --- needle_phobia_managed ----------------------------------------------------------------------------------------


def test_needle_phobia_managed(kb, talk):
    phobic = [t for t in talk if t[2]]
    assert len(phobic) >= 20, f"only {len(phobic)} patients who faint at needles among the 1,000"
    check([f for year, _, whole in phobic for f in needle_talk_violations(kb, year, whole)])


def test_needle_phobia_managed_catches_a_blood_test_told_as_nothing(kb, talk):
    """The seed-53 reads: "I faint at the sight of one" beside about 20 blood tests and a colonoscopy with no word
    of it (P0009, P0014)."""
    year, _, whole = next(t for t in talk if t[2] and "the first blood test" in needle_visits(kb, t[0]).values())
    due = needle_visits(kb, year)
    silent = {lang: [(e, "Results day. Fingers crossed." if e.event_id in due else text) for e, text in sessions]
              for lang, sessions in whole.items()}
    failures = needle_talk_violations(kb, year, silent)
    assert len(failures) == len(due) * len(LANGUAGES)
    assert all(f.startswith("[needle_phobia_managed]") for f in failures)
    assert any("the first blood test" in f for f in failures)
