"""Independent reading of a chronic disease left untreated after its last control drug ends.

Each function returns violation messages (empty: the year passes) and reads only the record and the knowledge base,
never the engine's state. The rule (its name as `docs/simulation.md` lists it):

- `untreated_after_stop`: for a condition whose knowledge base sets a `restart` (ulcerative colitis: 14 days, ECCO
  2022 and BSG 2019; lupus nephritis: 14 days, Euro-Lupus and KDIGO 2024), no visit falls more than
  `restart.within_days` after the last drug of its control steps (`restart.steps`) ended (stopped, or a course or
  taper finished) with no drug of those steps taken and the disease still active: the latest value on record of an
  activity lab (`Condition.activity_labs`, the marker each control step is titrated on) short of the goal the
  engine treats to (`Condition.is_short_of_goal`, the one definition both read). The seed-37 and seed-47 reads:
  colitis untreated for months after sulfasalazine stopped for leukopenia and the steroid taper ended, "stable" at
  every review. A stop with the disease at its goal (a planned stop in remission, a drug holiday) is not counted
  until a result shows it active again. Depression (14 days, NICE NG222's two-week review) was added after the
  seed-53 read: PHQ-9 12 -> 17 for seven months after bupropion stopped for a seizure.
- `untreated_after_stop` also holds a restart to the care the knowledge base sets beside it (`restart.advice`):
  a control drug started after a gap in which none was taken (not a switch on the day of a stop) comes with that
  advice, given between the last control drug's end and the start (depression: high-intensity psychological
  therapy beside the new antidepressant). Where the knowledge base sets a `restart.referral` (depression: the
  community mental health team where the rules leave no antidepressant), that referral given since the last control
  drug ended stands for the drug: the record says why not and who carries the care on.
"""

from __future__ import annotations

from medmemorybench.knowledge.base import KnowledgeBase
from medmemorybench.simulate.models import AdviceFact, CareYear, LabFact, MedicationFact
from tests.simulate.clinical import days_between, fail
from tests.simulate.monitoring_check import taking_spans


def control_drugs(kb: KnowledgeBase, year: CareYear) -> set[str]:
    """The drugs the year started (or gave) for a control step of its condition."""
    restart = kb.conditions[year.persona.condition].restart
    if restart is None:
        return set()
    return {f.drug for e in year.events for f in e.facts if isinstance(f, MedicationFact)
            and f.action in ("start", "administer") and f.step in restart.steps}


def untreated_violations(kb: KnowledgeBase, year: CareYear) -> list[str]:
    """`untreated_after_stop`."""
    condition = kb.conditions[year.persona.condition]
    restart, drugs = condition.restart, control_drugs(kb, year)
    if restart is None or not drugs:
        return []
    spans = {drug: span for drug, span in taking_spans(year).items() if drug in drugs}
    latest: dict[str, float] = {}
    out = [] if restart.advice is None else _unadvised_restarts(year, restart.advice, spans)
    for event in year.events:
        latest |= {f.lab: f.value for f in event.facts if isinstance(f, LabFact) and f.lab in condition.activity_labs}
        if any(start <= event.date and (end is None or event.date < end)
               for span in spans.values() for start, end in span):
            continue
        ended = [(end, drug) for drug, span in spans.items() for _, end in span
                 if end is not None and end <= event.date]
        if not ended:
            continue
        end, drug = max(ended)
        gap = days_between(end, event.date)
        if gap > restart.within_days and condition.is_active(latest) and not (
                restart.referral is not None and _advised(year, restart.referral, end, event.date)):
            active = ", ".join(f"{lab} {value:g}" for lab, value in latest.items()
                               if condition.is_short_of_goal(lab, value))
            out.append(fail("untreated_after_stop", year, event, f"{gap} days after {drug} ended on {end} "
                            f"(limit {restart.within_days}), nothing of {', '.join(restart.steps)} taken, "
                            f"still active ({active})"))
    return out


def _unadvised_restarts(year: CareYear, advice: str, spans: dict[str, list[tuple[str, str | None]]]) -> list[str]:
    """Control drugs started after a gap with none taken, with no `advice` given since the last one ended."""
    out = []
    for event in year.events:
        starts = [f.drug for f in event.facts if isinstance(f, MedicationFact) and f.action == "start"
                  and f.drug in spans]
        ends = [end for span in spans.values() for start, end in span if end is not None and end <= event.date]
        covered = any(start < event.date and (end is None or end >= event.date)
                      for span in spans.values() for start, end in span)
        if not starts or not ends or covered:
            continue
        if not _advised(year, advice, max(ends), event.date):
            out.append(fail("untreated_after_stop", year, event, f"{starts[0]} started after the last control drug "
                            f"ended on {max(ends)} without {advice}"))
    return out


def _advised(year: CareYear, advice: str, first: str, last: str) -> bool:
    """Whether `advice` was given on a day from `first` to `last`."""
    return any(first <= e.date <= last for e in year.events for f in e.facts
               if isinstance(f, AdviceFact) and f.advice == advice)
