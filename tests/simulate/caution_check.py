"""Independent readings of what a physician weighs beside a prescription: a history that qualifies a drug, a habit
that turns dangerous, a harm that stops the patient driving (the seed-29 read, issue 27).

Each function returns violation messages (empty: the year passes) and reads only the record and the knowledge
base, never the engine's state. The rules (names as `docs/simulation.md` lists them):

- `arb_after_ace_angioedema`: an ARB started in a patient with ACE-inhibitor angioedema on record (told as an
  allergy or as a past illness) is started with that history's caution, the swelling's safety net (2022
  AHA/ACC/HFSA: an ARB with caution; losartan after ramipril angioedema with no word of it, the seed-19 and -29 reads).
- `habit_stop_advised`: a habit with a `stop` rule (a potassium salt substitute) is advised against at the first
  visit where the habit and a risk it meets are both on record (a drug that keeps potassium in taken, an eGFR under
  60, a kidney or potassium history told), again the day a further drug of that risk starts, and never before any
  risk (Lo-Salt used all year beside losartan at eGFR 55-59, the seed-19 and -29 reads).
- `sleep_onset_no_driving`: daytime sleepiness on a dopamine agonist (the labels' warning of falling asleep during
  daily activities) is acted on the visit it is told: the dose lowered or the drug stopped, and no driving or
  machinery while it lasts (ropinirole sleepiness left 33 days with no driving advice, the seed-29 read).
"""

from __future__ import annotations

from medmemorybench.knowledge.base import KnowledgeBase
from medmemorybench.simulate.models import (
    AdverseFact,
    AdviceFact,
    CareYear,
    CautionFact,
    DiagnosisFact,
    DietFact,
    Event,
    HistoryFact,
    MedicationFact,
    SymptomFact,
)
from tests.simulate.clinical import fail, latest_egfr
from tests.simulate.monitoring_check import taking_spans

ANGIOEDEMA = ("ace_inhibitor_reaction", "ace_inhibitor_angioedema")
"""The allergy group and the history condition that record ACE-inhibitor angioedema."""
SLEEP_ONSET_CLASS = "dopamine_agonist"
"""Every dopamine agonist's label warns of falling asleep during daily activities (Mirapex, Requip, Neupro 5.1)."""
NO_DRIVING_SLEEP = "no_driving_sleep_attacks"


def arb_caution_violations(kb: KnowledgeBase, year: CareYear) -> list[str]:
    """`arb_after_ace_angioedema`."""
    recorded = {t.option for t in year.persona.traps} & set(ANGIOEDEMA)
    if not recorded:
        return []
    arbs = kb.expand(["arb"])
    out = []
    for event in year.events:
        for fact in event.facts:
            if not (isinstance(fact, MedicationFact) and fact.action == "start" and fact.drug in arbs):
                continue
            if not any(isinstance(f, CautionFact) and f.drug == fact.drug and f.rule.partition(":")[2] in recorded
                       for f in event.facts):
                out.append(fail("arb_after_ace_angioedema", year, event, f"{fact.drug} started with "
                                f"{sorted(recorded)} on record and no word of the angioedema"))
    return out


def _on_record(year: CareYear, event: Event, spans: dict[str, list[tuple[str, str | None]]]
               ) -> tuple[set[str], set[str]]:
    """(drugs the doctor knows are taken after this visit, conditions told or diagnosed by it)."""
    taking = {drug for drug, runs in spans.items()
              if any(start <= event.date and (end is None or event.date < end) for start, end in runs)}
    conditions: set[str] = set()
    for earlier in year.events[:event.index]:
        for fact in earlier.facts:
            if isinstance(fact, HistoryFact):
                conditions.add(fact.history)
            elif isinstance(fact, MedicationFact) and fact.indication and fact.indication.startswith("history:"):
                conditions.add(fact.indication.partition(":")[2])
            elif isinstance(fact, DiagnosisFact) and fact.status == "confirmed":
                conditions.add(year.persona.condition)
    return taking, conditions


def habit_stop_violations(kb: KnowledgeBase, year: CareYear) -> list[str]:
    """`habit_stop_advised`."""
    habit = next((kb.habits[t.option] for t in year.persona.traps if t.category == "diet_preference"), None)
    if habit is None or habit.stop is None:
        return []
    stop, told, seen = habit.stop, False, None
    spans = taking_spans(year)
    out = []
    for event in year.events:
        told = told or any(isinstance(f, DietFact) and f.habit == habit.key for f in event.facts)
        advised = any(isinstance(f, AdviceFact) and f.advice == stop.advice for f in event.facts)
        taking, conditions = _on_record(year, event, spans)
        drugs = taking & kb.expand(stop.taking)
        egfr = latest_egfr(year, event)
        risk = sorted(drugs) + sorted(conditions & set(stop.conditions)) + (
            [f"eGFR {egfr:g}"] if stop.egfr_below is not None and egfr is not None and egfr < stop.egfr_below else [])
        if advised and not (told and risk):
            out.append(fail("habit_stop_advised", year, event, f"{stop.advice} given before the habit and a risk "
                            "were both on record"))
        if not (told and risk):
            continue
        if seen is None and not advised:  # (the first visit both are on record)
            out.append(fail("habit_stop_advised", year, event, f"{habit.key} on record with {risk}, and "
                            f"{stop.advice} not given"))
        elif seen is not None and drugs - seen and not advised:  # (a further drug of that risk starts)
            out.append(fail("habit_stop_advised", year, event, f"{sorted(drugs - seen)} started with {habit.key} "
                            f"on record, and {stop.advice} not said again"))
        seen = (seen or set()) | drugs
    return out


def sleep_onset_violations(kb: KnowledgeBase, year: CareYear) -> list[str]:
    """`sleep_onset_no_driving`."""
    out = []
    for event in year.events:
        for fact in event.facts:
            if not isinstance(fact, AdverseFact) or kb.drugs[fact.drug].drug_class != SLEEP_ONSET_CLASS:
                continue
            effect = next(e for e in kb.drugs[fact.drug].adverse_effects if e.key == fact.effect)
            told = any(isinstance(f, SymptomFact) and f.symptom == effect.key for f in event.facts)
            if effect.toxicity != "sedating" or not told:
                continue
            if not any(isinstance(f, MedicationFact) and f.drug == fact.drug and f.action in ("stop", "decrease")
                       for f in event.facts):
                out.append(fail("sleep_onset_no_driving", year, event, f"daytime sleepiness on {fact.drug} told, "
                                "and the dose neither lowered nor the drug stopped that visit"))
            if not any(isinstance(f, AdviceFact) and f.advice == NO_DRIVING_SLEEP for f in event.facts):
                out.append(fail("sleep_onset_no_driving", year, event, f"daytime sleepiness on {fact.drug} told "
                                "with no driving advice"))
    return out

