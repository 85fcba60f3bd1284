"""What protects a patient, over 1,000 seeded patients (issue 27, the seed-79 read): latent tuberculosis treated
before immunosuppression, a heart-failure congestion symptom weighed, examined and answered with the diuretic, and a
beta-blocker kept in long QT syndrome when the diagnosis it was started for is revised. Each rule also has a crafted
violation its check must catch.

Failure messages start with the rule's name in brackets (the names `docs/simulation.md` lists).
"""

from __future__ import annotations

from medmemorybench.simulate.models import HistoryFact, LabFact, MedicationFact, TestFact
from tests.simulate.clinical import check, first_event, with_event_facts
from tests.simulate.protect_check import (
    BETA_BLOCKER_CLASSES,
    LONG_QT,
    QT_DRUGS,
    hf_congestion_violations,
    latent_tb_violations,
    long_qt_beta_blocker_violations,
    qt_followed_violations,
)


def test_latent_tb_treated_first_before_every_immunosuppressant(kb, years):
    check([v for year in years for v in latent_tb_violations(kb, year)])


def test_an_immunosuppressant_with_latent_tb_untreated_is_caught(kb, years):
    """The visit as s13-clinical wrote it: the immunosuppressant started, no isoniazid before it."""
    year, event = first_event(
        years, lambda e: any(isinstance(f, MedicationFact) and f.reason == "prevention" for f in e.facts)
    )
    assert not latent_tb_violations(kb, year)
    bare = [f for f in event.facts if not (isinstance(f, MedicationFact) and f.drug in ("isoniazid", "pyridoxine"))]
    found = latent_tb_violations(kb, with_event_facts(year, event, bare))
    assert any(v.startswith("[latent_tb_treated_first]") for v in found), found


def test_hf_congestion_symptom_reviewed_weight_examination_and_diuretic(kb, years):
    check([v for year in years for v in hf_congestion_violations(kb, year)])


def test_an_unexamined_congestion_symptom_is_caught(kb, years):
    """The seed-79 visit: ankle swelling told after the diagnosis, no weight, no examination, nothing changed."""
    year, event = first_event(
        years,
        lambda e: any(isinstance(f, TestFact) and f.test == "congestion:ankle_oedema" for f in e.facts)
        and e.kind != "diagnosis",
    )
    assert not hf_congestion_violations(kb, year)
    bare = [
        f.model_copy(update={"action": "continue", "reason": "unchanged"}) if isinstance(f, MedicationFact) else f
        for f in event.facts
        if not isinstance(f, TestFact) and not (isinstance(f, LabFact) and f.lab == "weight")
    ]
    found = hf_congestion_violations(kb, with_event_facts(year, event, bare))
    assert any(
        v.startswith("[hf_congestion_symptom_reviewed]")
        and "a weight" in v
        and "an examination" in v
        and "loop diuretic" in v
        for v in found
    ), found


def test_long_qt_beta_blocker_kept_at_a_revised_diagnosis(kb, years):
    check([v for year in years for v in long_qt_beta_blocker_violations(kb, year)])


def test_a_long_qt_beta_blocker_stopped_with_the_diagnosis_is_caught(kb, years):
    """The seed-79 visit: propranolol stopped "because the diagnosis has changed" in long QT syndrome."""
    long_qt_years = [y for y in years if any(isinstance(f, HistoryFact) and f.history == LONG_QT
                                             for e in y.events for f in e.facts)]
    # (a drug kept for another history, not a beta-blocker in long QT, has nothing for this rule to catch)
    year, event = first_event(long_qt_years, lambda e: any(
        isinstance(f, MedicationFact) and f.reason == "treats_history"
        and kb.drugs[f.drug].drug_class in BETA_BLOCKER_CLASSES for f in e.facts))
    assert not long_qt_beta_blocker_violations(kb, year)
    stopped = [
        f.model_copy(update={"action": "stop", "reason": "diagnosis_revised"})
        if isinstance(f, MedicationFact) and f.reason == "treats_history"
        else f
        for f in event.facts
    ]
    found = long_qt_beta_blocker_violations(kb, with_event_facts(year, event, stopped))
    assert any(v.startswith("[long_qt_beta_blocker_kept]") for v in found), found


def test_qt_drug_ecg_followed_every_three_months_and_after_a_rise(kb, years):
    check([v for year in years for v in qt_followed_violations(kb, year)])


def test_a_qt_drug_left_without_an_ecg_is_caught(kb, years):
    """The seed-79 year: a QTc that rose a week after venlafaxine started, then no ECG for months."""
    def followed(event) -> bool:
        return any(isinstance(f, MedicationFact) and f.drug in QT_DRUGS and f.action == "start" for f in event.facts)

    year, start = first_event(years, lambda e: followed(e) and any(isinstance(f, LabFact) and f.lab == "qtc"
                                                                   for f in e.facts))
    assert not qt_followed_violations(kb, year)
    later = [e for e in year.events if e.date > start.date]
    # (each later QTc read as a pulse instead: the visits stay, the ECGs go)
    bare = year.model_copy(update={"events": [
        e.model_copy(update={"facts": [
            f.model_copy(update={"lab": "heart_rate"}) if isinstance(f, LabFact) and f.lab == "qtc" else f
            for f in e.facts]}) if e in later else e
        for e in year.events
    ]})
    found = qt_followed_violations(kb, bare)
    assert any(v.startswith("[qt_drug_ecg_followed]") for v in found), found
