"""Independent reading of missed doses that are a danger in themselves: acted on the visit they are told.

Each function returns violation messages (empty: the year passes) and reads only the record, never the engine's
state. The rules (their names as `docs/simulation.md` lists them):

- `missed_beta_blocker_long_qt`: missed doses of a beta-blocker in congenital long QT syndrome get, that visit, an
  ECG (QTc) and the adherence talk (the beta-blocker is the protection; most breakthrough events are non-adherence:
  HRS/EHRA/APHRS 2013, ESC 2022 ventricular arrhythmias). The seed-47 read: a week of skipped propranolol answered
  "restart as usual and see how it goes" (P0015 E061).
- `missed_doses_after_suicidal_ideation`: missed doses told after suicidal ideation get, that visit, mood and the
  thoughts asked again, the tablets accounted for and someone trusted holding the medicines (NICE NG225 2022:
  safety plan, access to means; NICE NG222: limited quantities), with a PHQ-9 that visit or within its two-week
  recall before it, unless the drug missed is one the PHQ-9 follows (an antidepressant: a score then would read as
  the lapse's effect before one can show, `mcd_response_time`; the questions are asked all the same).
"""

from __future__ import annotations

from medmemorybench.simulate.models import (
    AdherenceFact,
    AdviceFact,
    CareYear,
    ComplicationFact,
    Event,
    LabFact,
    MedicationFact,
)
from tests.simulate.clinical import days_between, fail

LONG_QT = "long_qt_syndrome"
BETA_BLOCKER_ATC = "C07"
"""Beta-blocking agents (ATC)."""
LONG_QT_ADVICE = "long_qt_missed_beta_blocker"
"""The adherence talk: restart today, never stop without asking, the ECG, the safety net (fainting, a fit,
palpitations: an ambulance)."""
SUICIDAL_IDEATION = "suicidal_ideation"
AFTER_IDEATION_ADVICE = "missed_doses_after_suicidal_ideation"
"""Mood and the thoughts asked again, the tablets accounted for, someone trusted holding the medicines."""
PHQ9_RECALL_DAYS = 14
"""A PHQ-9 covers the two weeks before it: one taken that recently stands for the visit."""


def _lapses(year: CareYear) -> list[tuple[int, Event, AdherenceFact]]:
    return [(i, e, f) for i, e in enumerate(year.events) for f in e.facts if isinstance(f, AdherenceFact)]


def _advised(event: Event, advice: str) -> bool:
    return any(isinstance(f, AdviceFact) and f.advice == advice for f in event.facts)


def missed_beta_blocker_violations(kb, year: CareYear) -> list[str]:  # noqa: ANN001
    """`missed_beta_blocker_long_qt`."""
    if LONG_QT not in year.persona.histories:
        return []
    out = []
    for _, event, lapse in _lapses(year):
        if not (kb.drugs[lapse.drug].atc or "").startswith(BETA_BLOCKER_ATC):
            continue
        if not any(isinstance(f, LabFact) and f.lab == "qtc" for f in event.facts):
            out.append(fail("missed_beta_blocker_long_qt", year, event, f"{lapse.missed_days} days of {lapse.drug} "
                            "missed in long QT syndrome with no ECG that visit"))
        if not _advised(event, LONG_QT_ADVICE):
            out.append(fail("missed_beta_blocker_long_qt", year, event, f"{lapse.missed_days} days of {lapse.drug} "
                            "missed in long QT syndrome without the adherence talk"))
    return out


def moves_phq9(kb, year: CareYear, drug: str) -> bool:  # noqa: ANN001
    """Whether `drug` is given in the year for a care step that moves the PHQ-9."""
    steps = {s.key: s for s in kb.conditions[year.persona.condition].care_path}
    given = {f.step for e in year.events for f in e.facts
             if isinstance(f, MedicationFact) and f.drug == drug and f.step}
    return any("phq9" in (*steps[s].moves, *steps[s].targets) for s in given if s in steps)


def missed_after_ideation_violations(kb, year: CareYear) -> list[str]:  # noqa: ANN001
    """`missed_doses_after_suicidal_ideation`."""
    out = []
    for index, event, lapse in _lapses(year):
        before = year.events[:index]
        if not any(isinstance(f, ComplicationFact) and f.complication == SUICIDAL_IDEATION
                   for e in before for f in e.facts):
            continue
        if not _advised(event, AFTER_IDEATION_ADVICE):
            out.append(fail("missed_doses_after_suicidal_ideation", year, event, f"{lapse.missed_days} days of "
                            f"{lapse.drug} missed after suicidal ideation, with no safety check or question of who "
                            "holds the medicines"))
        recent = [e for e in [*before, event] if days_between(e.date, event.date) <= PHQ9_RECALL_DAYS
                  and any(isinstance(f, LabFact) and f.lab == "phq9" for f in e.facts)]
        if not recent and not moves_phq9(kb, year, lapse.drug):
            out.append(fail("missed_doses_after_suicidal_ideation", year, event, f"{lapse.missed_days} days of "
                            f"{lapse.drug} missed after suicidal ideation, with no PHQ-9 within {PHQ9_RECALL_DAYS} "
                            "days"))
    return out
