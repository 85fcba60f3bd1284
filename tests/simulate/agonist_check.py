"""Independent reading of a dopamine agonist's start and titration.

Each function returns violation messages (empty: the year passes) and reads only the record and the knowledge base
(ladders, dose caps, the condition's ranges), never the engine's state. The rules (their names as
`docs/simulation.md` lists them):

- `agonist_start_warned`: the visit that starts a dopamine agonist says the labels' warning: falling asleep during
  activities without warning, no driving or machinery when drowsy (Mirapex, Requip and Neupro labels 5.1; NICE NG71,
  which also asks for the impulse-control warning). The seed-47 read: pramipexole started for a heavy-equipment
  operator with no word of it (P0007 E060).
- `agonist_titrated`: a dopamine agonist's starting dose is the first rung of a weekly titration, not a maintenance
  dose: it is not continued at that dose four weeks after the start (Mirapex label: weekly to 1.5 mg a day; Requip:
  weekly for four weeks; Neupro: weekly to the effective 4 mg/24 h), and it is not kept as it is three weeks
  after a motor score above the treated range that reflects its dose (the score's response time after its last
  change), while a higher dose is allowed. The seed-47 read: pramipexole 0.125 mg once a day for five months while
  the MDS-UPDRS rose to 25 (P0007 E071-E091).
"""

from __future__ import annotations

from medmemorybench.knowledge.base import KnowledgeBase
from medmemorybench.simulate.models import AdviceFact, CareYear, Event, LabFact, MedicationFact
from tests.simulate.clinical import days_between, fail, higher_dose_within_caps

AGONIST_ATC = "N04BC"
"""Dopamine agonists (ATC)."""
SLEEP_WARNING = "dopamine_agonist_warning"
"""The advice said at the start."""
AT_START_DOSE_DAYS = 28
"""Four weekly steps: past this the starting dose has been kept, not titrated (a titration step waits for a visit)."""
MOTOR_SCORE = "updrs_motor"
KEPT_AS_IS = ("stable", "unchanged")
"""Continue reasons that keep the dose as it is for no reason of its own (`unchanged`: kept while off track)."""
SCORE_GRACE_DAYS = 21
"""A weekly step booked on an out-of-goal score is taken within three weeks (it waits for a visit free for it)."""


def _is_agonist(kb: KnowledgeBase, drug: str) -> bool:
    return (kb.drugs[drug].atc or "").startswith(AGONIST_ATC)


def agonist_start_violations(kb: KnowledgeBase, year: CareYear) -> list[str]:
    """`agonist_start_warned`."""
    out = []
    for event in year.events:
        for fact in event.facts:
            if isinstance(fact, MedicationFact) and fact.action == "start" and _is_agonist(kb, fact.drug) \
                    and not any(isinstance(f, AdviceFact) and f.advice == SLEEP_WARNING for f in event.facts):
                out.append(fail("agonist_start_warned", year, event, f"{fact.drug} started without the warning of "
                                "falling asleep without warning (no driving or machinery when drowsy)"))
    return out


def higher_dose_allowed(kb: KnowledgeBase, year: CareYear, event: Event, fact: MedicationFact) -> bool:
    """Whether the ladder of the formulation taken has a higher dose within every dose cap of a patient rule that binds
    the patient that day (pramipexole at most 1.5 mg a day below an eGFR of 30)."""
    return higher_dose_within_caps(kb, year, event, fact, (
        d for form, spec in kb.drugs[fact.drug].formulations() if form.release == fact.release for d in spec.doses()))


def _goal_high(kb: KnowledgeBase, year: CareYear) -> float | None:
    monitored = next((m for m in kb.conditions[year.persona.condition].monitored if m.lab == MOTOR_SCORE), None)
    return monitored.treated[1] if monitored is not None else None


def agonist_titration_violations(kb: KnowledgeBase, year: CareYear) -> list[str]:
    """`agonist_titrated`."""
    out = []
    started: dict[str, tuple[str, float]] = {}
    last_change: dict[str, str] = {}
    held: set[str] = set()
    scores: list[tuple[str, float]] = []
    goal = _goal_high(kb, year)
    for event in year.events:
        scores += [(event.date, f.value) for f in event.facts if isinstance(f, LabFact) and f.lab == MOTOR_SCORE]
        for fact in (f for f in event.facts if isinstance(f, MedicationFact) and _is_agonist(kb, f.drug)):
            if fact.action == "start":
                started[fact.drug], last_change[fact.drug] = (event.date, fact.dose), event.date
                held.discard(fact.drug)
            elif fact.action in ("increase", "decrease"):
                last_change[fact.drug] = event.date
                if fact.action == "decrease":
                    held.add(fact.drug)  # (lowered for a harm, sleepiness: not raised past it again)
            elif fact.action == "stop":
                started.pop(fact.drug, None)
            if fact.action != "continue" or fact.drug not in started or fact.drug in held \
                    or fact.reason.startswith("adverse_effect:") or not higher_dose_allowed(kb, year, event, fact):
                continue
            start_day, start_dose = started[fact.drug]
            if fact.dose <= start_dose + 1e-9 and days_between(start_day, event.date) > AT_START_DOSE_DAYS:
                out.append(fail("agonist_titrated", year, event, f"{fact.drug} {fact.dose:g} {fact.unit} still at "
                                f"its starting dose {days_between(start_day, event.date)} days after the start"))
                continue
            response = kb.labs[MOTOR_SCORE].kinetics.response_days
            reflecting = [(day, value) for day, value in scores
                          if days_between(last_change[fact.drug], day) >= response]
            if goal is not None and fact.reason in KEPT_AS_IS and reflecting:
                day, value = reflecting[-1]
                if value > goal and days_between(day, event.date) > SCORE_GRACE_DAYS:
                    out.append(fail("agonist_titrated", year, event, f"{fact.drug} {fact.dose:g} {fact.unit} kept "
                                    f"'{fact.reason}' {days_between(day, event.date)} days after a motor score of "
                                    f"{value:g} (goal at most {goal:g})"))
    return out
