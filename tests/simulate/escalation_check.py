"""Independent reading of titration judged on its marker at the marker's own interval.

Each function returns violation messages (empty: the year passes) and reads only the record and the knowledge base
(the care path's markers and goals, the labs' response times), never the engine's state. The rules (their names as
`docs/simulation.md` lists them):

- `escalated_when_short_of_goal`: a drug of a care step kept as it is ("stable", "unchanged") while the readings of
  the step's marker (`titrate_on`, else the first lab it moves) that show the present treatment (taken at least the
  lab's response time after the latest change of the drug, or a start or raise of another drug whose step moves the
  marker) have been short of goal since the last one at goal, still so on a reading one response time or more after
  the first of them (the reading that shows the goal unmet on this treatment), and the visit is more than
  `INTERVALS` response times (and `REVIEW_DAYS`) after that reading, with no `no_next_step` said since the change
  (ADA Standards of Care 2024 §9: intensify when the HbA1c goal is unmet at 3 months; KDIGO 2022 diabetes in CKD;
  NICE NG222 1.9: change treatment with no adequate response at 4-6 weeks; STRIDE-II). The seed-79 read: metformin
  1000 mg twice daily "doing its job" at HbA1c 7.5-7.3 % for eight months (P0009), bupropion 150 mg kept at PHQ-9
  scores of 7-10 for five months (P0015).
- `stable_at_goal`: a drug is never continued as "stable" ("since it's doing its job") while the latest reading of
  a marker its step moves is short of that marker's goal.
"""

from __future__ import annotations

from datetime import date, timedelta

from medmemorybench.knowledge.base import KnowledgeBase
from medmemorybench.simulate.models import CareYear, LabFact, MedicationFact
from tests.simulate.clinical import days_between, fail
from tests.simulate.said_check import markers, readings

INTERVALS = 2
"""Response times a marker may stay short of goal on the same treatment before the next step or a reason is due."""
REVIEW_DAYS = 28
"""The least time given for that step: the next review (NICE NG136's monthly review; a fasting glucose's 7-day
response time would otherwise leave two weeks)."""
KEPT_AS_IS = ("stable", "unchanged")
"""Continue reasons that keep a drug as it is for no reason of its own."""
CHANGES = ("start", "increase", "decrease")
"""Actions whose effect on the marker only the readings after its response time show."""


def _short(kb: KnowledgeBase, year: CareYear, lab: str, value: float, goal: tuple[float, float] | None) -> bool:
    """Whether `value` is on the disease's side of `goal` (None: the treated range)."""
    monitored = next(m for m in kb.conditions[year.persona.condition].monitored if m.lab == lab)
    low, high = goal or monitored.treated
    return value > high if sum(monitored.untreated) > sum(monitored.treated) else value < low


def escalated_violations(kb: KnowledgeBase, year: CareYear) -> list[str]:
    """`escalated_when_short_of_goal`."""
    condition = kb.conditions[year.persona.condition]
    steps = {s.key: s for s in condition.care_path}
    monitored = {m.lab for m in condition.monitored}
    out = []
    changed: dict[str, str] = {}  # drug -> date of its latest start, raise or cut
    moved: dict[str, str] = {}  # marker -> date of the latest start or raise of a drug whose step moves it
    explained: set[str] = set()  # drugs kept saying why no next step is open, since their latest change
    shown: dict[str, list[tuple[str, float]]] = {}
    for event in year.events:
        for fact in event.facts:
            if isinstance(fact, LabFact):
                shown.setdefault(fact.lab, []).append((event.date, fact.value))
        for fact in (f for f in event.facts if isinstance(f, MedicationFact)):
            step = steps.get(fact.step or "")
            if fact.action in CHANGES:
                changed[fact.drug] = event.date
                explained.discard(fact.drug)
                for lab in step.moves if step is not None and fact.action != "decrease" else ():
                    moved[lab] = event.date
            if fact.action == "stop":
                changed.pop(fact.drug, None)
            if fact.reason == "no_next_step":
                explained.add(fact.drug)
        for fact in (f for f in event.facts if isinstance(f, MedicationFact)):
            step = steps.get(fact.step or "")
            lab = step.marker if step is not None else None
            if fact.action != "continue" or fact.reason not in KEPT_AS_IS or lab not in monitored \
                    or fact.drug not in changed or fact.drug in explained or kb.labs[lab].kinetics is None:
                continue
            response = kb.labs[lab].kinetics.response_days
            since = max(changed[fact.drug], moved.get(lab, changed[fact.drug]))
            first = (date.fromisoformat(since) + timedelta(days=response)).isoformat()
            run: list[tuple[str, float]] = []  # (the readings short of goal since the last one at goal)
            for day, value in (r for r in shown.get(lab, []) if r[0] >= first):
                run = [*run, (day, value)] if _short(kb, year, lab, value, step.targets.get(lab)) else []
            confirmed = next((d for d, _ in run if days_between(run[0][0], d) >= response), None)
            if confirmed is not None and days_between(confirmed, event.date) > max(INTERVALS * response, REVIEW_DAYS):
                out.append(fail("escalated_when_short_of_goal", year, event,
                                f"{fact.drug} kept {fact.reason} with {lab} short of goal since {run[0][0]}, "
                                f"still on {confirmed} ({[v for _, v in run]}), last change {since}, no next step "
                                "nor reason"))
    return out


def stable_at_goal_violations(kb: KnowledgeBase, year: CareYear) -> list[str]:
    """`stable_at_goal`."""
    out = []
    for event in year.events:
        for fact in event.facts:
            if not (isinstance(fact, MedicationFact) and fact.action == "continue" and fact.reason == "stable"):
                continue
            for lab, goal in markers(kb, year, fact.step, fact.indication).items():
                values = readings(year, lab, event)
                if values and _short(kb, year, lab, values[-1], goal):
                    out.append(fail("stable_at_goal", year, event,
                                    f"{fact.drug} continued as stable at {lab} {values[-1]}, short of goal"))
    return out
