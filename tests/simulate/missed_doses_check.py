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
- `refill_answered`: a patient who asks for more of a drug (nearly run out) gets, that visit, a repeat prescription of
  it, or the change made to it that visit (the seed-53 and seed-61 reads: "I've nearly run out of the
  carbidopa/levodopa" three times, no prescription, then seven days without it).
- `missed_critical_drug`: days of levodopa or warfarin missed get, that visit, the drug's own care: the questions and
  safety net (`missed_levodopa`: fever, rigidity, confusion, falls, NICE NG71, Parkinson's UK "Get It On Time";
  `missed_warfarin`: clot symptoms, BSH 2011, NICE NG158), the check (a temperature; an INR), and the drug restarted at
  its dose with a repeat prescription (the seed-61 read: "a reminder on your phone or a pill box").
- `missed_lithium_bipolar`: days of lithium missed in bipolar disorder get, that visit, relapse asked about (mania
  above all), the risk of an abrupt stop explained, the mental health team told (`missed_lithium_bipolar`), a PHQ-9
  that visit or within its two-week recall before it, lithium restarted with a prescription, and a lithium level
  within 7 days after (NICE CG185 1.10.6-1.10.8; BNF, Priadel SmPC 4.4). The seed-89 read: 20 and 21 days off
  answered "we'll work out a routine", the next level 22 days later (P0004 E069, P0009 E070).
- `lapse_unread`: no reading of a lab the missed drug drives (its care step's labs; a range it holds, warfarin's INR)
  falls inside the days missed before the visit that tells them (a reading there would have shown the lapse: the
  seed-61 INR 2.2 two days before nine missed days were told).
- `lapse_shows_on_held_lab`: a lab a drug holds in a range (`on_treatment`: INR 2-3 on warfarin), read once the lapse
  has outlasted the drug's waning and three quarters of the lab's response time, up to the day after it is told, is
  below that range (the seed-61 INR 2.4 the day after nine days without warfarin).
- `no_adherence_claim_in_lapse`: the patient never answers "every day, never missed" (nor the vague "never miss it")
  for a drug on a day inside doses of it they later say they missed (the seed-61 "All good, once a day" on 25 August,
  inside nine days without warfarin).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from datetime import date, timedelta

from medmemorybench.render.acts import Act, DrugName
from medmemorybench.simulate.models import (
    AdherenceFact,
    AdviceFact,
    CareYear,
    ComplicationFact,
    Event,
    LabFact,
    MedicationFact,
    RefillFact,
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


# --- refills and critical drugs (the seed-61 read) -----------------------------------------------------------------

PATIENT_REASONS = ("long_term", "patient_correction")
"""Medication facts the patient states (a drug they already take, a dose they set right): not a prescription."""
CRITICAL = {"N04BA": ("missed_levodopa", ("body_temperature",)), "B01AA": ("missed_warfarin", ("inr",))}
"""ATC prefix of a drug whose missed days are a danger in anyone -> (the advice said that visit, the labs taken):
levodopa (parkinsonism-hyperpyrexia, akinetic crisis: NICE NG71, Parkinson's UK "Get It On Time"), vitamin K
antagonists (a clot while the INR is low: BSH 2011, NICE NG158)."""
HELD_FROM = 0.75
"""Share of a lab's response time after a drug has waned by which a range it held is gone from a reading."""
CLAIMS = ("ans.adherence.ok", "ans.adherence.vague")
"""The patient's answers that say the drug is taken every day."""


def _prescribed(event: Event, drug: str) -> list[MedicationFact]:
    return [f for f in event.facts if isinstance(f, MedicationFact) and f.drug == drug
            and f.reason not in PATIENT_REASONS and f.action != "correct"]


def refill_violations(year: CareYear) -> list[str]:
    """`refill_answered`."""
    out = []
    for event in year.events:
        for request in (f for f in event.facts if isinstance(f, RefillFact)):
            answers = _prescribed(event, request.drug)
            if not answers:
                out.append(fail("refill_answered", year, event, f"asked for more {request.drug}: no prescription"))
            elif all(f.action == "continue" and f.reason != "repeat" for f in answers):
                out.append(fail("refill_answered", year, event, f"asked for more {request.drug}: continued with no "
                                "repeat prescription"))
    return out


def _critical(kb, drug: str) -> tuple[str, tuple[str, ...]] | None:  # noqa: ANN001
    atc = kb.drugs[drug].atc or ""
    return next((care for prefix, care in CRITICAL.items() if atc.startswith(prefix)), None)


def missed_critical_violations(kb, year: CareYear) -> list[str]:  # noqa: ANN001
    """`missed_critical_drug`."""
    out = []
    for _, event, lapse in _lapses(year):
        care = _critical(kb, lapse.drug)
        if care is None:
            continue
        advice, labs = care
        what = f"{lapse.missed_days} days of {lapse.drug} missed"
        if not _advised(event, advice):
            out.append(fail("missed_critical_drug", year, event, f"{what} without the questions and safety net"))
        measured = {f.lab for f in event.facts if isinstance(f, LabFact)}
        out += [fail("missed_critical_drug", year, event, f"{what} with no {lab} that visit")
                for lab in labs if lab not in measured]
        if not any(f.action != "stop" for f in _prescribed(event, lapse.drug)):
            out.append(fail("missed_critical_drug", year, event, f"{what}, not restarted with a repeat prescription"))
    return out


BIPOLAR = "bipolar_disorder"
LITHIUM_ATC = "N05AN"
LITHIUM_ADVICE = "missed_lithium_bipolar"
"""Relapse (mania above all) asked about, the abrupt stop explained, restarted, a level within a week, the team told."""
LITHIUM_LEVEL_WITHIN_DAYS = 7
"""A 12-hour level one week after restarting (NICE CG185 1.10.6: steady state after about 5 days)."""


def missed_lithium_violations(kb, year: CareYear) -> list[str]:  # noqa: ANN001
    """`missed_lithium_bipolar`."""
    if BIPOLAR not in year.persona.histories:
        return []
    out = []
    for index, event, lapse in _lapses(year):
        if not (kb.drugs[lapse.drug].atc or "").startswith(LITHIUM_ATC):
            continue
        what = f"{lapse.missed_days} days of {lapse.drug} missed in bipolar disorder"
        if not _advised(event, LITHIUM_ADVICE):
            out.append(fail("missed_lithium_bipolar", year, event, f"{what} with no relapse check or team told"))
        if not any(days_between(e.date, event.date) <= PHQ9_RECALL_DAYS and any(
                isinstance(f, LabFact) and f.lab == "phq9" for f in e.facts) for e in year.events[:index + 1]):
            out.append(fail("missed_lithium_bipolar", year, event, f"{what} with no PHQ-9 within {PHQ9_RECALL_DAYS} "
                            "days"))
        if not any(f.action != "stop" for f in _prescribed(event, lapse.drug)):
            out.append(fail("missed_lithium_bipolar", year, event, f"{what}, not restarted"))
        told, within = _day(event.date), timedelta(days=LITHIUM_LEVEL_WITHIN_DAYS)
        ends = told + within <= _day(year.events[-1].date)  # (a window past the year's last visit is not judged)
        if ends and not any(True for _ in _readings(year, "lithium_level", told + timedelta(days=1), told + within)):
            out.append(fail("missed_lithium_bipolar", year, event, f"{what} with no lithium level within "
                            f"{LITHIUM_LEVEL_WITHIN_DAYS} days of the restart"))
    return out


def _day(on: str) -> date:
    return date.fromisoformat(on)


def _driven_labs(kb, year: CareYear, drug: str) -> set[str]:  # noqa: ANN001
    """Labs `drug` drives: those its care steps in the year move or target, and a range it holds (`on_treatment`)."""
    steps = {s.key: s for s in kb.conditions[year.persona.condition].care_path}
    given = {f.step for e in year.events for f in e.facts if isinstance(f, MedicationFact) and f.drug == drug
             and f.step in steps}
    return {lab for s in given for lab in (*steps[s].moves, *steps[s].targets)} | {
        m.lab for m in kb.drugs[drug].monitoring if m.on_treatment}


def _readings(year: CareYear, lab: str, first: date, last: date) -> Iterable[tuple[Event, LabFact]]:
    return ((e, f) for e in year.events if first <= _day(e.date) <= last
            for f in e.facts if isinstance(f, LabFact) and f.lab == lab)


def lapse_unread_violations(kb, year: CareYear) -> list[str]:  # noqa: ANN001
    """`lapse_unread`."""
    out = []
    for _, event, lapse in _lapses(year):
        told = _day(event.date)
        first = told - timedelta(days=lapse.missed_days)  # (a reading that morning may precede the first dose missed)
        for lab in sorted(_driven_labs(kb, year, lapse.drug)):
            out += [fail("lapse_unread", year, read, f"{lab} {fact.value} read inside the {lapse.missed_days} days of "
                         f"{lapse.drug} missed that {event.event_id} tells")
                    for read, fact in _readings(year, lab, first + timedelta(days=1), told - timedelta(days=1))]
    return out


def lapse_held_lab_violations(kb, year: CareYear) -> list[str]:  # noqa: ANN001
    """`lapse_shows_on_held_lab`."""
    out = []
    for _, event, lapse in _lapses(year):
        wanes = kb.drugs[lapse.drug].wanes_days or 0
        told = _day(event.date)
        for held in (m for m in kb.drugs[lapse.drug].monitoring if m.on_treatment):
            gone = wanes + math.ceil(HELD_FROM * kb.labs[held.lab].kinetics.response_days)
            if lapse.missed_days < gone:
                continue
            first = told - timedelta(days=lapse.missed_days - gone)
            low = held.on_treatment[0]
            out += [fail("lapse_shows_on_held_lab", year, read, f"{held.lab} {fact.value} in or above {low} after "
                         f"{lapse.missed_days} days without {lapse.drug} ({event.event_id})")
                    for read, fact in _readings(year, held.lab, first, told + timedelta(days=1)) if fact.value >= low]
    return out


def adherence_claim_violations(year: CareYear, planned: Iterable[tuple[Event, list[Act]]]) -> list[str]:
    """`no_adherence_claim_in_lapse`: `planned` holds each visit's acts (`SessionRenderer.plan`, flattened)."""
    windows = [(lapse.drug, _day(event.date) - timedelta(days=lapse.missed_days), _day(event.date))
               for _, event, lapse in _lapses(year)]
    out = []
    for event, acts in planned:
        on = _day(event.date)
        for act in (a for a in acts if a.key in CLAIMS and isinstance(a.slots.get("drug"), DrugName)):
            drug = act.slots["drug"].key  # type: ignore[union-attr]
            if any(d == drug and first <= on < told for d, first, told in windows):
                out.append(fail("no_adherence_claim_in_lapse", year, event, f"says {drug} is taken every day "
                                "inside days of it missed"))
    return out
