"""Independent reading of a past disease's treatment target (`HistoryCondition.treat_to`) held whatever the year is
about.

Each function returns violation messages (empty: the year passes) and reads only the record and the knowledge base,
never the engine's state. The rule (its name as `docs/simulation.md` lists it):

- `history_target_treated`: once a history with a target is on record (a stroke told, or a drug told as taken for it)
  and the last `readings` readings of its lab on record are all past the target (after a stroke: two systolic
  readings in a row above 130 mmHg, AHA/ASA 2021 and NICE NG136) with no drug of the target's candidates' classes
  taken, no visit falls more than `within_days` (28) after the visit that made them so with still none taken, unless
  the record says why not (the target's `no_drug_advice`: no candidate the rules allow, and the referral) since
  then. Left to the condition's own care where a step of it moves the lab. The seed-53 read: systolic 142-155 at
  nine visits after a stroke, each answered "we'll keep a close eye on it".
"""

from __future__ import annotations

from medmemorybench.knowledge.base import KnowledgeBase
from medmemorybench.knowledge.models import HistoryTarget
from medmemorybench.simulate.models import AdviceFact, CareYear, LabFact
from tests.simulate.clinical import days_between, fail
from tests.simulate.monitoring_check import taking_spans
from tests.simulate.mood_check import on_record


def targets_of(kb: KnowledgeBase, year: CareYear) -> list[tuple[str, HistoryTarget]]:
    """(history, target) for each target of the patient's histories that the condition's own care leaves alone."""
    condition = kb.conditions[year.persona.condition]
    moved = {lab for step in condition.care_path for lab in (*step.moves, *step.targets)}
    return [(key, target) for key in year.persona.histories if key in kb.history_conditions
            for target in kb.history_conditions[key].treat_to if target.lab not in moved]


def history_target_violations(kb: KnowledgeBase, year: CareYear) -> list[str]:
    """`history_target_treated`."""
    out = []
    spans = taking_spans(year)
    for key, target in targets_of(kb, year):
        classes = {kb.drugs[d].drug_class for d in target.candidates}
        drugs = [d for d in spans if d in kb.drugs and kb.drugs[d].drug_class in classes]
        readings: list[float] = []
        past_since: str | None = None
        past: list[float] = []
        for event in year.events:
            readings += [f.value for f in event.facts if isinstance(f, LabFact) and f.lab == target.lab]
            if any(start <= event.date and (end is None or event.date < end)
                   for d in drugs for start, end in spans[d]):
                past_since = None
                continue
            last = readings[-target.readings:]
            if past_since is None and key in on_record(year, event) and len(last) == target.readings \
                    and all(value > target.above for value in last):
                past_since, past = event.date, last
            if past_since is None or days_between(past_since, event.date) <= target.within_days:
                continue
            if not any(past_since <= e.date <= event.date for e in year.events for f in e.facts
                       if isinstance(f, AdviceFact) and f.advice == target.no_drug_advice):
                out.append(fail("history_target_treated", year, event, f"{key}: {target.lab} past {target.above:g} "
                                f"since {past_since} ({', '.join(f'{v:g}' for v in past)}), nothing of "
                                f"{', '.join(sorted(classes))} taken and no reason said"))
    return out
