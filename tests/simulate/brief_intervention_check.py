"""Independent reading of the brief intervention a harmful habit calls for (`BriefIntervention`: a smoker's very
brief advice, a heavy drinker's brief intervention).

Each function returns violation messages (empty: the year passes) and reads only the record and the knowledge base,
never the engine's state. The rules (their names as `docs/simulation.md` lists them):

- `brief_intervention_given`: the habit's advice (or what is said in its place, `Advice.instead`: stopping alcohol
  in cirrhosis) is said the visit the doctor learns of it (a smoker: the first visit; a drinking habit: the visit it
  is told) and again at the first visit at least `review_after_days` after it was last said (NICE NG209, PH24). The
  seed-61 read: "I still smoke ten a day" at nine visits never answered, and "three or four beers or a half bottle of
  wine every evening" answered only "I've written that down".
- `brief_intervention_spaced`: never said again before `review_after_days` have passed (not at every visit).
"""

from __future__ import annotations

from datetime import date, timedelta

from medmemorybench.knowledge.base import KnowledgeBase
from medmemorybench.knowledge.models import BriefIntervention
from medmemorybench.simulate.models import AdviceFact, CareYear, DietFact, Event
from tests.simulate.clinical import fail


def interventions_of(kb: KnowledgeBase, year: CareYear) -> list[tuple[str, BriefIntervention, Event]]:
    """(habit or lifestyle key, its brief intervention, the event the doctor learns of it) for the year."""
    out: list[tuple[str, BriefIntervention, Event]] = []
    if year.persona.smoker and year.events:
        out += [(ls.key, ls.brief_intervention, year.events[0]) for ls in kb.people.lifestyles
                if ls.smoker and ls.brief_intervention is not None]
    for key, habit in kb.habits.items():
        told = next((e for e in year.events for f in e.facts if isinstance(f, DietFact) and f.habit == key), None)
        if habit.brief_intervention is not None and told is not None:
            out.append((key, habit.brief_intervention, told))
    return out


def _said(event: Event, keys: set[str]) -> bool:
    return any(isinstance(f, AdviceFact) and f.advice in keys for f in event.facts)


def brief_intervention_violations(kb: KnowledgeBase, year: CareYear) -> list[str]:
    """`brief_intervention_given`, `brief_intervention_spaced`."""
    out = []
    for key, brief, told in interventions_of(kb, year):
        instead = kb.advice[brief.advice].instead
        keys = {brief.advice} | ({instead.advice} if instead is not None else set())
        last: str | None = None
        for event in year.events[told.index - 1:]:
            due = last is None or event.date >= _days_on(last, brief.review_after_days)
            if due:
                if not _said(event, keys):
                    what = "the visit it is told" if last is None else f"{brief.review_after_days} days after {last}"
                    out.append(fail("brief_intervention_given", year, event, f"{key}: no {brief.advice} at {what}"))
                last = event.date
            elif _said(event, {brief.advice}):
                out.append(fail("brief_intervention_spaced", year, event,
                                f"{key}: {brief.advice} again within {brief.review_after_days} days of {last}"))
    return out


def _days_on(day: str, n: int) -> str:
    return (date.fromisoformat(day) + timedelta(days=n)).isoformat()
