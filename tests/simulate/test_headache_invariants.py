"""Headache, triptans and a harm's lab over 1,000 seeded patients (issue 27, the seed-61 read): no triptan where the
heart or the arteries bar it, no "finish the box" for an as-needed drug, migraine named only after an 8-week diary, a
new headache on an anticoagulant (after cancer, on an immunosuppressant) answered that day as a red flag, and a
liver injury told with its ALT and INR the same day. Each rule also has a crafted violation its check must catch.

Failure messages start with the rule's name in brackets (the names `docs/simulation.md` lists).
"""

from __future__ import annotations

import pytest

from medmemorybench.render.templates import load_templates
from medmemorybench.simulate.models import AdverseFact, AdviceFact, DiagnosisFact, LabFact, MedicationFact
from tests.simulate.clinical import check, first_event, with_event_facts
from tests.simulate.headache_check import (
    as_needed_violations,
    diary_violations,
    illness_red_flag_violations,
    triptan_heart_violations,
)
from tests.simulate.monitoring_check import serious_harm_violations

LANGUAGES = ("en", "zh")


@pytest.fixture(scope="module")
def templates():
    return {lang: load_templates(lang) for lang in LANGUAGES}


def _starts(drug_class: str, kb):  # noqa: ANN001, ANN202
    drugs = kb.expand([drug_class])
    return lambda e: any(isinstance(f, MedicationFact) and f.action == "start" and f.drug in drugs for f in e.facts)


def test_triptan_heart_no_triptan_with_heart_disease_or_two_cardiovascular_risk_factors(kb, years):
    check([v for year in years for v in triptan_heart_violations(kb, year)])
    first_event(years, _starts("triptan", kb))  # (triptans are still given where nothing bars them)


def test_a_triptan_in_heart_failure_is_caught(kb, years):
    year, event = first_event(years, _starts("triptan", kb))
    assert not triptan_heart_violations(kb, year)
    failing = year.model_copy(update={"persona": year.persona.model_copy(update={"condition": "hfpef"})})
    assert any(v.startswith("[triptan_heart]") and "hfpef" in v for v in triptan_heart_violations(kb, failing))


def test_as_needed_not_finished_no_finish_the_box_for_an_as_needed_drug(kb, years, templates):
    check([v for year in years for v in as_needed_violations(kb, year, templates)])


def test_finish_the_box_for_an_as_needed_drug_is_caught(kb, years, templates):
    """A planner that answers an as-needed supply's duration as a course's (`answer.duration`, "Finish the box", what
    main did) is what the check must refuse."""
    from medmemorybench.render.acts import Act
    from medmemorybench.render.conversation import SessionRenderer

    class AsACourse(SessionRenderer):
        def plan(self, event):  # noqa: ANN001, ANN202
            beats = super().plan(event)
            return [*beats, [Act("doctor", "answer.duration", {"drug": "sumatriptan", "days": "30"})]]

    year, event = first_event(
        years,
        lambda e: any(
            isinstance(f, MedicationFact) and f.action == "start" and f.frequency == "as_needed" and f.course_days
            for f in e.facts
        ),
    )
    assert not as_needed_violations(kb, year, templates)
    found = as_needed_violations(kb, year, templates, renderer=AsACourse)
    assert any(
        v.startswith("[as_needed_not_finished]") and event.event_id in v and "finish the box" in v for v in found
    )
    assert any("一盒吃完" in v for v in found)


def _migraine_diagnosed(kb):  # noqa: ANN001, ANN202
    code = kb.illnesses["migraine"].icd11
    return lambda e: any(isinstance(f, DiagnosisFact) and f.icd11 == code for f in e.facts)


def test_diary_before_diagnosis_migraine_only_after_an_eight_week_diary(kb, years):
    check([v for year in years for v in diary_violations(kb, year)])
    first_event(years, _migraine_diagnosed(kb))  # (exercised)


def test_migraine_named_days_after_the_headache_is_caught(kb, years):
    year, event = first_event(years, _migraine_diagnosed(kb))
    assert not diary_violations(kb, year)
    told = next(
        e
        for e in reversed(year.events[: event.index - 1])
        if any(getattr(f, "symptom", "").startswith("migraine.") for f in e.facts)
    )
    moved = [
        e.model_copy(
            update={"facts": [*e.facts, *(f for f in told.facts if getattr(f, "symptom", "").startswith("migraine."))]}
        )
        if e.index == event.index - 1
        else e
        for e in year.events
    ]
    broken = year.model_copy(update={"events": moved})
    assert any(v.startswith("[diary_before_diagnosis]") for v in diary_violations(kb, broken))


def _red_flag_told(e):  # noqa: ANN001, ANN202
    return any(isinstance(f, AdviceFact) and f.advice == "headache_red_flag_same_day" for f in e.facts)


def test_illness_red_flag_same_day_a_new_headache_on_an_anticoagulant_is_examined_and_referred(kb, years):
    check([v for year in years for v in illness_red_flag_violations(kb, year)])
    first_event(years, _red_flag_told)  # (exercised)


def test_a_red_flag_headache_put_in_a_diary_is_caught(kb, years):
    year, event = first_event(years, _red_flag_told)
    assert not illness_red_flag_violations(kb, year)
    broken = with_event_facts(
        year,
        event,
        [
            AdviceFact(advice="self_care_headache_diary")
            if _red_flag_told(event.model_copy(update={"facts": [f]}))
            else f
            for f in event.facts
        ],
    )
    assert any(
        v.startswith("[illness_red_flag_same_day]") and "without" in v for v in illness_red_flag_violations(kb, broken)
    )


def test_serious_harm_at_once_a_liver_injury_is_told_with_its_alt_and_inr(kb, years):
    check([v for year in years for v in serious_harm_violations(kb, year)])


def test_a_liver_injury_told_with_no_alt_is_caught(kb, years):
    year, event = first_event(
        years,
        lambda e: (
            e.kind == "adverse_event"
            and any(
                isinstance(f, AdverseFact)
                and (effect := next(x for x in kb.drugs[f.drug].adverse_effects if x.key == f.effect)).is_serious
                and effect.lab == "alt"
                for f in e.facts
            )
        ),
    )
    assert not serious_harm_violations(kb, year)
    broken = with_event_facts(year, event, [f for f in event.facts if not (isinstance(f, LabFact) and f.lab == "alt")])
    assert any(
        v.startswith("[serious_harm_at_once]") and "no alt that day" in v for v in serious_harm_violations(kb, broken)
    )
