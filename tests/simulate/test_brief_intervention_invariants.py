"""A habit that harms whatever drugs are taken gets a brief intervention (issue 27, the seed-61 read: "I still smoke
ten a day" at nine visits never answered; "three or four beers or a half bottle of wine every evening" answered only
"I've written that down"). Checked over 1,000 seeded patients, with crafted violations its check must catch.

Failure messages start with the rule's name in brackets (the names `docs/simulation.md` lists).
"""

from __future__ import annotations

from medmemorybench.simulate.models import AdviceFact, CareYear
from tests.simulate.brief_intervention_check import brief_intervention_violations, interventions_of
from tests.simulate.clinical import check


def _with_habits(kb, years: list[CareYear], key: str) -> list[CareYear]:  # noqa: ANN001
    return [y for y in years if any(k == key for k, _, _ in interventions_of(kb, y))]


def test_brief_intervention_given_at_disclosure_and_revisited(kb, years):
    check([v for year in years for v in brief_intervention_violations(kb, year)])
    # (exercised: smokers and heavy drinkers both, each told more than once in the year, never at every visit; a
    # drinker with cirrhosis hears stopping instead, `Advice.instead`)
    for key in ("current_smoker", "nightly_alcohol"):
        chosen = _with_habits(kb, years, key)
        assert len(chosen) >= 20
        advice = next(b.advice for k, b, _ in interventions_of(kb, chosen[0]) if k == key)
        instead = kb.advice[advice].instead
        either = {advice} | ({instead.advice} if instead is not None else set())
        assert all(any(isinstance(f, AdviceFact) and f.advice in either for e in y.events for f in e.facts)
                   for y in chosen)
        said = [n for y in chosen
                if (n := sum(isinstance(f, AdviceFact) and f.advice == advice for e in y.events for f in e.facts))]
        assert len(said) >= 20 and sorted(said)[len(said) // 2] >= 2 and max(said) <= 6


def test_an_intervention_left_out_is_caught(kb, years):
    # the seed-61 years: the habit on record, and never a word of it
    for key in ("current_smoker", "nightly_alcohol"):
        year = _with_habits(kb, years, key)[0]
        advice = {b.advice for k, b, _ in interventions_of(kb, year) if k == key}
        unsaid = year.model_copy(update={"events": [e.model_copy(update={"facts": [
            f for f in e.facts if not (isinstance(f, AdviceFact) and f.advice in advice)]}) for e in year.events]})
        caught = brief_intervention_violations(kb, unsaid)
        assert caught and all(v.startswith("[brief_intervention_given]") for v in caught)


def test_an_intervention_at_every_visit_is_caught(kb, years):
    # saying it at every visit is no brief intervention either
    year = _with_habits(kb, years, "current_smoker")[0]
    advice = next(b.advice for k, b, _ in interventions_of(kb, year) if k == "current_smoker")
    nagged = year.model_copy(update={"events": [e.model_copy(update={"facts": [*e.facts, AdviceFact(advice=advice)]})
                                                for e in year.events]})
    caught = brief_intervention_violations(kb, nagged)
    assert caught and all(v.startswith("[brief_intervention_spaced]") for v in caught)
