"""Independent reading of orthostatic hypotension: judged on a standing fall measured that visit, and levodopa not
stopped for it.

Each function returns violation messages (empty: the year passes) and reads only the record and the knowledge base,
never the engine's state. The rules (their names as `docs/simulation.md` lists them):

- `orthostatic_drop_measured`: a visit that diagnoses orthostatic hypotension (the complication) or acts on it as a
  drug's side effect (stops, lowers or keeps the drug for it) records a fall in systolic blood pressure from lying
  to standing of at least 20 mmHg, measured there (consensus definition, Freeman et al., Clin Auton Res 2011: a fall
  of >= 20 mmHg systolic or >= 10 mmHg diastolic within 3 minutes of standing; NICE CG109 and NG71: lying and
  standing blood pressure). A seated reading cannot show it (the seed-47 read: levodopa stopped on one seated
  109 mmHg, P0007 E059).
- `levodopa_kept_for_orthostatic_hypotension`: levodopa is not stopped for orthostatic hypotension; the visit that
  acts on it says the non-drug measures (NICE NG71: review medicines that lower blood pressure, non-drug measures,
  and do not withdraw antiparkinsonian medicines abruptly; the seed-47 read replaced it with pramipexole, P0007
  E059-E060).
- `presyncope_driving_advice`: a visit that diagnoses orthostatic hypotension or acts on it takes an ECG and says not
  to drive while faint on standing; a professional driver is told to stop driving at work too and to tell the licensing
  authority (NICE CG109; DVLA 2024 group 2; the seed-73 read, P0007 E051).
"""

from __future__ import annotations

from medmemorybench.knowledge.base import KnowledgeBase
from medmemorybench.simulate.models import AdviceFact, CareYear, ComplicationFact, Event, LabFact, MedicationFact
from tests.simulate.clinical import fail

ORTHOSTATIC = "orthostatic_hypotension"
"""The side effect's and the complication's key."""
STANDING_FALL = "orthostatic_sbp_drop"
"""The lab: fall in systolic blood pressure from lying to standing at 3 minutes (mmHg)."""
FALL_AT_LEAST_MMHG = 20.0
"""Freeman 2011 consensus: a systolic fall of 20 mmHg or more."""
ACTS_ON = ("stop", "decrease", "continue", "increase")
"""Actions that judge the side effect at that visit (a replacement started the visit after is judged where its
culprit was stopped)."""
LEVODOPA_ATC = "N04BA"
"""Dopa and dopa derivatives (ATC)."""
NON_DRUG_MEASURES = "orthostatic_hypotension_measures"
"""Advice that says them: rise in stages, fluids, head of the bed raised, no driving while faint on standing."""
NON_DRUG_MEASURES_WORK = "orthostatic_hypotension_measures_work"
"""The same to someone who drives for a living: no driving at work either until it is assessed (DVLA group 2)."""


def _for_orthostatic(fact: MedicationFact) -> bool:
    return fact.reason in (f"adverse_effect:{ORTHOSTATIC}", f"complication:{ORTHOSTATIC}")


def _standing_fall(event: Event) -> float | None:
    return next((f.value for f in event.facts if isinstance(f, LabFact) and f.lab == STANDING_FALL), None)


def orthostatic_drop_violations(kb: KnowledgeBase, year: CareYear) -> list[str]:
    """`orthostatic_drop_measured`."""
    out = []
    for event in year.events:
        diagnosed = any(isinstance(f, ComplicationFact) and f.complication == ORTHOSTATIC for f in event.facts)
        acted = [f for f in event.facts
                 if isinstance(f, MedicationFact) and f.action in ACTS_ON and _for_orthostatic(f)]
        if not diagnosed and not acted:
            continue
        fall = _standing_fall(event)
        what = "orthostatic hypotension diagnosed" if diagnosed else \
            f"{acted[0].drug} {acted[0].action} for orthostatic hypotension"
        if fall is None:
            out.append(fail("orthostatic_drop_measured", year, event, f"{what} with no lying-to-standing fall "
                            "measured that visit"))
        elif fall < FALL_AT_LEAST_MMHG:
            out.append(fail("orthostatic_drop_measured", year, event, f"{what} on a standing fall of {fall:g} mmHg "
                            f"(under {FALL_AT_LEAST_MMHG:g})"))
    return out


def levodopa_kept_violations(kb: KnowledgeBase, year: CareYear) -> list[str]:
    """`levodopa_kept_for_orthostatic_hypotension`."""
    out = []
    for event in year.events:
        for fact in event.facts:
            if not isinstance(fact, MedicationFact) or not _for_orthostatic(fact) or fact.action not in ACTS_ON \
                    or not (kb.drugs[fact.drug].atc or "").startswith(LEVODOPA_ATC):
                continue
            if fact.action == "stop":
                out.append(fail("levodopa_kept_for_orthostatic_hypotension", year, event,
                                f"{fact.drug} stopped for orthostatic hypotension"))
            if not any(isinstance(f, AdviceFact) and f.advice in (NON_DRUG_MEASURES, NON_DRUG_MEASURES_WORK)
                       for f in event.facts):
                out.append(fail("levodopa_kept_for_orthostatic_hypotension", year, event,
                                f"{fact.drug} {fact.action} for orthostatic hypotension without the non-drug measures"))
    return out


ECG = "qtc"
"""The 12-lead ECG (its corrected QT interval is what the record keeps of it)."""
PRESYNCOPE_DRIVING = {"presyncope_driving", "orthostatic_hypotension_measures"}
"""Advice that tells a patient not to drive while faint on standing."""
PRESYNCOPE_DRIVING_WORK = {"presyncope_driving_work", "orthostatic_hypotension_measures_work"}
"""The same to someone who drives for a living: no driving at work either, the licensing authority and the employer
told (DVLA group 2)."""
DRIVES_FOR_A_LIVING = "drives_all_day"
"""The occupation trait of a bus, lorry or delivery driver."""


def presyncope_violations(kb: KnowledgeBase, year: CareYear) -> list[str]:
    """`presyncope_driving_advice`: a visit that diagnoses orthostatic hypotension or acts on it (nearly blacking out
    on standing) takes an ECG beside the lying and standing pressure (NICE CG109 1.1) and says not to drive while it
    lasts; a professional driver is told to stop driving at work too and to tell the licensing authority (DVLA,
    Assessing fitness to drive 2024, group 2; the seed-73 read: a bus driver at 9/10 told nothing, P0007 E051)."""
    job = next((o for o in kb.people.occupations if o.key == year.persona.occupation_key), None)
    at_work = job is not None and DRIVES_FOR_A_LIVING in job.traits
    wanted = PRESYNCOPE_DRIVING_WORK if at_work else PRESYNCOPE_DRIVING | PRESYNCOPE_DRIVING_WORK
    out = []
    for event in year.events:
        diagnosed = any(isinstance(f, ComplicationFact) and f.complication == ORTHOSTATIC for f in event.facts)
        acted = any(isinstance(f, MedicationFact) and f.action in ACTS_ON and _for_orthostatic(f) for f in event.facts)
        if not diagnosed and not acted:
            continue
        if not any(isinstance(f, LabFact) and f.lab == ECG for f in event.facts):
            out.append(fail("presyncope_driving_advice", year, event, "orthostatic hypotension judged with no ECG"))
        if not {f.advice for f in event.facts if isinstance(f, AdviceFact)} & wanted:
            out.append(fail("presyncope_driving_advice", year, event, "orthostatic hypotension judged without "
                            f"{'the professional driver' if at_work else 'driving'} advice "
                            f"(job: {year.persona.occupation_key})"))
    return out
