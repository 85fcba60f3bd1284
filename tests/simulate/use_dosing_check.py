"""Independent reading of a drug given on its indication's own dose ladder, and of the warning told at its start (the
seed-79 read, P0014 E030: sulfasalazine for ulcerative colitis started at 1 g twice a day, the arthritis ladder's top
and the colitis maintenance dose, so never raised while the colitis failed; its start warned of hepatotoxicity only,
the sore throat and fever of a blood dyscrasia first told after a fever had come).

Each function returns violation messages (empty: the year passes) and reads only the record, the knowledge base and
the rendered text, never the engine's state. The rules (their names as `docs/simulation.md` lists them):

- `indication_dose_ladder`: a drug given for a care step whose candidate has a ladder of its own (`Candidate.dosing`:
  sulfasalazine for colitis, 500 mg to 1 g four times a day; BNF; BSG 2019) is given at that ladder's frequency and
  on one of its doses, unless a dosing preference of the patient bars that frequency (a once-a-day blister pack).
- `add_on_after_top_dose`: a step with an `after_top_of` step (amlodipine for blood pressure in albuminuric diabetic
  kidney disease) starts only once each drug of that step being taken is at the top dose its caps allow, or was lowered
  for a harm (KDIGO 2022/2024: the ACE inhibitor or ARB at its maximum tolerated dose first; the seed-79 read, P0009
  E040: amlodipine beside lisinopril 5 mg).
- `start_warning_told`: the session of a visit that starts a drug with an adverse effect whose warning signs the label
  has a patient report at once (`AdverseEffect.warning`: sulfasalazine's sore throat, fever, mouth ulcers, bruising;
  MHRA/BNF) says those signs, in English and in Chinese.
"""

from __future__ import annotations

from collections.abc import Iterable

from medmemorybench.knowledge.base import KnowledgeBase
from medmemorybench.knowledge.models import DOSES_PER_DAY
from medmemorybench.simulate.models import CareYear, Event, MedicationFact
from tests.simulate.clinical import fail, formulations_given, given, higher_dose_within_caps


def _bars_frequency(kb: KnowledgeBase, year: CareYear, frequency: str) -> bool:
    """Whether a dosing preference of the patient allows fewer doses a day than `frequency`."""
    return any(t.category == "medication_preference" and (most := kb.preferences[t.option].max_doses_per_day)
               is not None and DOSES_PER_DAY[frequency] > most for t in year.persona.traps)


def indication_dose_ladder_violations(kb: KnowledgeBase, year: CareYear) -> list[str]:
    condition = kb.conditions.get(year.persona.condition)
    if condition is None:
        return []
    steps = {s.key: s for s in condition.care_path}
    failures = []
    for event, fact in given(year):
        step = steps.get(fact.step or "")
        if step is None or fact.drug not in step.drug_keys:
            continue
        dosing = step.candidate(fact.drug).dosing
        if dosing is None or _bars_frequency(kb, year, dosing.frequency):
            continue
        if fact.frequency != dosing.frequency or all(abs(fact.dose - d) > 1e-9 for d in dosing.doses()):
            per_day = fact.dose * DOSES_PER_DAY.get(fact.frequency, 1)
            failures.append(fail("indication_dose_ladder", year, event,
                                 f"{fact.drug} {fact.dose:g} {fact.unit} {fact.frequency} ({per_day:g} a day) for "
                                 f"{step.key}, off its own ladder {dosing.doses()} {dosing.frequency}"))
    return failures


def warned_starts(kb: KnowledgeBase, year: CareYear) -> list[tuple[Event, str]]:
    """(visit, drug) of every start of a drug with a start warning."""
    return [(e, f.drug) for e in year.events for f in e.facts if isinstance(f, MedicationFact) and f.action == "start"
            and any(a.warning is not None for a in kb.drugs[f.drug].adverse_effects)]


def start_warning_violations(kb: KnowledgeBase, year: CareYear, said: Iterable[tuple[Event, str, str]]
                             ) -> list[str]:
    """`said`: (visit, language, its session's text) of the visits `warned_starts` names."""
    failures = []
    for event, lang, text in said:
        for drug in [d for e, d in warned_starts(kb, year) if e.event_id == event.event_id]:
            warning = next(a.warning for a in kb.drugs[drug].adverse_effects if a.warning is not None)
            if getattr(warning, lang) not in text:
                failures.append(fail("start_warning_told", year, event,
                                     f"{drug} started with no word ({lang}) of '{getattr(warning, lang)}'"))
    return failures


def add_on_after_top_dose_violations(kb: KnowledgeBase, year: CareYear) -> list[str]:
    """`add_on_after_top_dose`: a step with an `after_top_of` step (amlodipine for blood pressure in albuminuric
    diabetic kidney disease) starts only while every drug of that step being taken is at the highest dose of its
    ladder the patient's dose caps allow, or was lowered for a harm this year (its maximum tolerated dose; KDIGO
    2022/2024). A switch after a harm of the step's own drug (amlodipine for chlorthalidone's gout) adds nothing."""
    condition = kb.conditions.get(year.persona.condition)
    if condition is None:
        return []
    steps = {s.key: s for s in condition.care_path}
    failures = []
    latest: dict[str, tuple[MedicationFact, bool]] = {}  # drug -> (its latest fact, lowered for a harm this year)
    for event in year.events:
        for fact in event.facts:
            if not isinstance(fact, MedicationFact):
                continue
            step = steps.get(fact.step or "")
            # (a switch after a harm replaces the step's drug: no other antihypertensive added)
            if fact.action == "start" and step is not None and step.after_top_of is not None \
                    and not fact.reason.startswith("adverse_effect:"):
                for base, harmed in latest.values():
                    if base.step != step.after_top_of or base.action == "stop" or harmed:
                        continue
                    ladders = [spec.doses() for _, spec in formulations_given(kb, base)]
                    if higher_dose_within_caps(kb, year, event, base, {d for ladder in ladders for d in ladder}):
                        failures.append(fail("add_on_after_top_dose", year, event,
                                             f"{fact.drug} started for {step.key} beside {base.drug} "
                                             f"{base.dose:g} {base.unit}, short of its top dose"))
            lowered = fact.action in ("decrease", "stop") and fact.reason.startswith("adverse_effect:")
            latest[fact.drug] = (fact, lowered or (fact.drug in latest and latest[fact.drug][1]))
    return failures
