"""IG golds a physician accepts (issue 26, the seed-73 oracle read): the cohort holds none of `ig_check`'s
violations, and each check fails on a crafted question that has one."""

from __future__ import annotations

import pytest

from medmemorybench.dataset.build import PatientBuild
from medmemorybench.questions.models import Question
from medmemorybench.simulate import simulate_patient, state_on
from medmemorybench.simulate.models import MedicationFact, PreferenceFact
from tests.questions import ig_check
from tests.simulate.clinical import with_facts


@pytest.mark.parametrize("check", ig_check.CHECKS, ids=lambda c: c.__name__)
def test_the_cohort_holds_no_ig_gold_a_physician_rejects(kb, cohort, check):
    assert check(kb, cohort) == []


def _asking(
    patient: PatientBuild,
    checkpoint: int,
    drug: str,
    answer: str,
    lang: str = "en",
    template: str = "ig.drug_suggestion",
) -> PatientBuild:
    """The patient with one crafted IG question on `drug` at `checkpoint`."""
    question = Question(
        query_id=f"{patient.year.persona.persona_id}-C{checkpoint}-IGX",
        checkpoint=checkpoint,
        persona_id=patient.year.persona.persona_id,
        query_type="IG",
        template=template,
        question="?",
        answer=answer,
        subject=drug,
    )
    return PatientBuild(patient.year, [], [], [question], [checkpoint], language=lang)


def _started(kb, year, drug: str):  # noqa: ANN001, ANN202
    """The year with one more visit starting `drug` at its first dose, and that visit's checkpoint."""
    spec = kb.drugs[drug].dose
    year = with_facts(
        year,
        MedicationFact(
            drug=drug, action="start", dose=spec.start, unit=spec.unit, frequency=spec.frequency, reason="long_term"
        ),
    )
    return year, len(year.events)


def test_a_yes_for_a_second_drug_of_a_kind_taken_fails(kb):
    # (seed 73, P0004-C050-IG2: nifedipine "suitable" beside amlodipine; an ARB beside an ACE inhibitor alike)
    year, checkpoint = _started(kb, simulate_patient(kb, 73, 0), "amlodipine")
    assert "amlodipine" in state_on(year, year.events[-1].date).medications
    patient = PatientBuild(year, [], [], [], [checkpoint])
    name = kb.drugs["nifedipine_er"].name.en
    bad = _asking(patient, checkpoint, name, f"Yes, {name} would be suitable for you.")
    assert ig_check.second_of_a_class_taken(kb, [bad])
    assert not ig_check.second_of_a_class_taken(kb, [_asking(patient, checkpoint, name, "No, you already take ...")])
    year, checkpoint = _started(kb, simulate_patient(kb, 73, 0), "lisinopril")
    losartan = kb.drugs["losartan"].name.en
    assert ig_check.second_of_a_class_taken(
        kb, [_asking(PatientBuild(year, [], [], [], [checkpoint]), checkpoint, losartan, "Yes, it is fine.")]
    )


def test_a_plain_yes_beside_a_qt_drug_fails(kb):
    # (seed 73, P0003-C020-IG1: clarithromycin "nothing rules it out" for a patient on lithium)
    known, possible = ig_check.qt_drugs(kb)
    assert "clarithromycin" in known and "lithium" in possible
    year, checkpoint = _started(kb, simulate_patient(kb, 73, 0), "lithium")
    patient = PatientBuild(year, [], [], [], [checkpoint])
    name = kb.drugs["clarithromycin"].name.zh
    yes = _asking(patient, checkpoint, name, f"可以，如果您得了鼻窦炎，{name}对您没问题。", "zh", "ig.illness_drug")
    assert ig_check.yes_beside_a_qt_drug(kb, [yes])
    amoxicillin = kb.drugs["amoxicillin"].name.en
    assert not ig_check.yes_beside_a_qt_drug(kb, [_asking(patient, checkpoint, amoxicillin, "Yes, fine.")])


def test_clarithromycin_beside_lithium_is_a_caution(kb):
    # (the knowledge base's side: a caution, so no question takes it for a plain yes, `FactFinder.ruling`)
    from dataclasses import replace

    from medmemorybench.simulate.safety import patient_of, verdict

    patient = replace(patient_of(simulate_patient(kb, 73, 0).persona), taking={"lithium"})
    result = verdict(kb, "clarithromycin", patient, "course")
    assert "interaction:lithium+clarithromycin" in [b.rule for b in result.cautions]


def test_a_once_a_day_bar_on_a_once_daily_course_fails(kb):
    # (seed 73, P0001-C060-IG1: doxycycline, 100 mg once a day after the first day, barred for a shift worker)
    year = next(
        y
        for y in (simulate_patient(kb, seed, i) for seed in (73, 11, 3) for i in range(20))
        if any(
            isinstance(t.fact, PreferenceFact) and kb.preferences[t.option].max_doses_per_day == 1
            for t in y.persona.traps
        )
    )
    trap = next(t for t in year.persona.traps if isinstance(t.fact, PreferenceFact))
    said = kb.preferences[trap.option].text
    patient = PatientBuild(year, [], [], [], [10], language="zh")
    name = kb.drugs["doxycycline"].name.zh
    bad = _asking(patient, 10, name, f"不可以，{name}不适合您，因为您说过：{said.zh}", "zh", "ig.illness_drug")
    assert ig_check.once_daily_bar_on_a_once_daily_drug(kb, [bad])
    amoxicillin = kb.drugs["amoxicillin"].name.zh
    fine = _asking(
        patient, 10, amoxicillin, f"不可以，{amoxicillin}不适合您，因为您说过：{said.zh}", "zh", "ig.illness_drug"
    )
    assert not ig_check.once_daily_bar_on_a_once_daily_drug(kb, [fine])


def test_the_once_daily_courses_have_a_once_daily_formulation(kb):
    # (the knowledge base's side of the physician's table: a once-a-day routine leaves each a regimen)
    from medmemorybench.simulate.safety import Constraint, Patient, verdict

    routines = [p.key for p in kb.preferences.values() if p.max_doses_per_day == 1 and not p.long_term_only]
    assert routines
    for routine in routines:
        patient = Patient(
            age=40,
            sex="female",
            condition="knee_osteoarthritis",
            constraints=[Constraint("medication_preference", routine)],
        )
        for drug in ig_check.ONCE_DAILY_COURSES:
            result = verdict(kb, drug, patient, "course")
            assert result.is_allowed and result.formulation[1].frequency == "once_daily", (routine, drug)


def test_nifedipine_beside_amlodipine_is_a_no_that_names_amlodipine(kb):
    # (the generator's side, seed 73 P0004: "you already take amlodipine", in both languages, at every checkpoint that
    # asks about nifedipine while amlodipine is taken; which checkpoints do moves with the simulator: 50 on main, 40
    # and 60 once s13-clinical's visit rules had changed the year)
    import random

    from medmemorybench.questions.facts import FactFinder
    from medmemorybench.questions.phrasing import load_phrasing
    from medmemorybench.questions.types import ig
    from medmemorybench.render.templates import load_templates

    year = simulate_patient(kb, 73, 3)
    for lang, no in (("en", "No, you already take amlodipine"), ("zh", "不可以，您已经在吃氨氯地平")):
        finder = FactFinder(kb, year, load_phrasing(lang), load_templates(lang), {})
        name = finder.drug("nifedipine_er")
        drafts = [d for checkpoint in range(10, 101, 10) if "amlodipine" in finder.patient_at(checkpoint).taking
                  for d in ig.make(finder, checkpoint, random.Random(0)) if d.fields.get("drug") == name]
        assert drafts and all(d.answer.startswith(no) for d in drafts), [d.answer for d in drafts]
        assert all([f.text for f in d.facts if f.group == "reason"] == [finder.drug("amlodipine")] for d in drafts)


def test_a_supplement_of_another_job_is_no_second_of_its_kind(kb):
    # (c26h's review: iron and calcium share the mineral-supplement class, so the same-kind rule would have told a
    # patient on ferrous sulfate that calcium carbonate "does the same job"; `DrugClass.same_job` false says not)
    from medmemorybench.questions.facts import FactFinder
    from medmemorybench.questions.phrasing import load_phrasing
    from medmemorybench.render.templates import load_templates

    assert kb.drugs["ferrous_sulfate"].drug_class == kb.drugs["calcium_carbonate"].drug_class
    for drug, asked, same in (("ferrous_sulfate", "calcium_carbonate", None), ("amlodipine", "nifedipine_er",
                                                                                "amlodipine")):
        year, checkpoint = _started(kb, simulate_patient(kb, 73, 0), drug)
        finder = FactFinder(kb, year, load_phrasing("en"), load_templates("en"), {})
        assert drug in finder.patient_at(checkpoint).taking
        assert finder.same_kind_taken(asked, checkpoint) == same, (drug, asked)
