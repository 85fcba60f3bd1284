"""Missed doses that are a danger in themselves, over 1,000 seeded patients (the seed-47 read, P0015 E061: a week of
skipped propranolol in congenital long QT, a month after suicidal ideation, answered "restart as usual"): a
beta-blocker missed in long QT gets an ECG and the adherence talk that visit, and any lapse after suicidal ideation a
safety check with the PHQ-9 and the question of who holds the medicines. Each rule also has crafted violations that
its check must catch.

Failure messages start with the rule's name in brackets (the names `docs/simulation.md` lists).
"""

from __future__ import annotations

from medmemorybench.simulate.models import AdherenceFact, AdviceFact, LabFact
from tests.simulate.clinical import check, first_event
from tests.simulate.missed_doses_check import (
    AFTER_IDEATION_ADVICE,
    LONG_QT,
    LONG_QT_ADVICE,
    missed_after_ideation_violations,
    missed_beta_blocker_violations,
    moves_phq9,
)


def _edit(year, event, drop):  # noqa: ANN001, ANN202
    """The year with the facts `drop` picks taken out of one visit."""
    return year.model_copy(update={"events": [e.model_copy(update={"facts": [f for f in e.facts if not drop(f)]})
                                              if e is event else e for e in year.events]})


def _lapse_with(advice: str):  # noqa: ANN202
    return lambda e: any(isinstance(f, AdherenceFact) for f in e.facts) and any(
        isinstance(f, AdviceFact) and f.advice == advice for f in e.facts)


def test_missed_beta_blocker_long_qt_gets_an_ecg_and_the_adherence_talk(kb, years):
    check([v for year in years for v in missed_beta_blocker_violations(kb, year)])
    first_event([y for y in years if LONG_QT in y.persona.histories], _lapse_with(LONG_QT_ADVICE))  # (exercised)


def test_missed_doses_after_suicidal_ideation_get_a_safety_check(kb, years):
    check([v for year in years for v in missed_after_ideation_violations(kb, year)])
    first_event(years, _lapse_with(AFTER_IDEATION_ADVICE))  # (exercised)


def test_restart_as_usual_in_long_qt_is_caught(kb, years):
    year, event = first_event([y for y in years if LONG_QT in y.persona.histories], _lapse_with(LONG_QT_ADVICE))
    assert not missed_beta_blocker_violations(kb, year)
    broken = _edit(year, event, lambda f: isinstance(f, LabFact) and f.lab == "qtc"
                   or isinstance(f, AdviceFact) and f.advice == LONG_QT_ADVICE)
    found = [v for v in missed_beta_blocker_violations(kb, broken) if event.event_id in v]
    assert any(v.startswith("[missed_beta_blocker_long_qt]") and "no ECG" in v for v in found)
    assert any("without the adherence talk" in v for v in found)


def test_a_lapse_after_suicidal_ideation_without_a_safety_check_is_caught(kb, years):
    # (a lapse of a drug the PHQ-9 does not follow: propranolol, as in the seed-47 read)
    year, event = next((y, e) for y in years for e in y.events if _lapse_with(AFTER_IDEATION_ADVICE)(e)
                       and not moves_phq9(kb, y, next(f.drug for f in e.facts if isinstance(f, AdherenceFact))))
    assert not missed_after_ideation_violations(kb, year)
    index = year.events.index(event)
    stripped = year.model_copy(update={"events": [
        e.model_copy(update={"facts": [f for f in e.facts if not (
            isinstance(f, AdviceFact) and f.advice == AFTER_IDEATION_ADVICE
            or isinstance(f, LabFact) and f.lab == "phq9")]}) if i <= index else e
        for i, e in enumerate(year.events)]})
    found = [v for v in missed_after_ideation_violations(kb, stripped) if event.event_id in v]
    assert any(v.startswith("[missed_doses_after_suicidal_ideation]") and "who holds the medicines" in v for v in found)
    assert any("no PHQ-9" in v for v in found)
