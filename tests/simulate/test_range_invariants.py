"""Range and target invariants over 1,000 seeded patients (issue 27, the seed-53 read), one test per rule, each with a
crafted violation showing its check catches it. Each failure message starts with the rule's name in brackets."""

from __future__ import annotations

import pytest

from medmemorybench.knowledge.models import Text
from medmemorybench.render.fact_acts import FactSlots
from medmemorybench.render.templates import load_templates
from medmemorybench.simulate.models import DiagnosisFact, LabFact
from tests.simulate.clinical import check
from tests.simulate.range_check import (
    explainer,
    goal_violations,
    obesity_violations,
    place_violations,
    weight_violations,
)

LANGUAGES = ("en", "zh")


@pytest.fixture(scope="module")
def slots(kb, years):
    return {lang: [FactSlots(kb, load_templates(lang), year) for year in years] for lang in LANGUAGES}


def _with_facts(year, *facts):  # noqa: ANN001
    """A copy of a year with one more visit at its end holding `facts`."""
    last = year.events[-1]
    event = last.model_copy(update={"event_id": last.event_id + "X", "index": last.index + 1, "facts": list(facts)})
    return year.model_copy(update={"events": [*year.events, event]})


def _diagnosed(years, condition: str):  # noqa: ANN001
    return next(y for y in years if y.persona.condition == condition and any(
        isinstance(f, DiagnosisFact) and f.status == "confirmed" for e in y.events for f in e.facts))


def test_judged_against_goal(kb, years, slots):
    check([f for lang in LANGUAGES for year, s in zip(years, slots[lang], strict=True)
           for f in goal_violations(kb, year, s)])


def test_judged_against_goal_catches_a_diabetic_hba1c_against_the_reference(kb, years):
    """HbA1c 7.3 % after diabetic kidney disease is diagnosed, said against the non-diabetic range."""
    year = _diagnosed(years, "diabetic_nephropathy_microalbuminuria")
    wrong = _with_facts(year, LabFact(lab="hba1c", value=7.3, unit="%"))
    right = _with_facts(year, LabFact(lab="hba1c", value=7.3, unit="%", goal=7.0))
    failures = goal_violations(kb, wrong, FactSlots(kb, load_templates("en"), wrong))
    assert failures and failures[-1].startswith("[judged_against_goal]") and "hba1c 7.3" in failures[-1]
    assert not [f for f in goal_violations(kb, right, FactSlots(kb, load_templates("en"), right)) if "7.3" in f]


def test_weight_has_no_range(kb, years, slots):
    check([f for lang in LANGUAGES for year, s in zip(years, slots[lang], strict=True)
           for f in weight_violations(kb, year, s)])


def test_weight_has_no_range_catches_a_weight_in_the_normal_range(kb, years):
    """A weight said "in the normal range" (against 45-90 kg)."""
    year = _with_facts(years[0], LabFact(lab="weight", value=89.4, unit="kg"))

    class Ranged(FactSlots):
        def status_key(self, fact):  # noqa: ANN001, ANN201, ARG002
            return "normal"

        def status_words(self, fact, rng):  # noqa: ANN001, ANN201
            return self.templates.word("status", self.status_key(fact), rng)

    failures = weight_violations(kb, year, Ranged(kb, load_templates("en"), year))
    assert failures and failures[-1].startswith("[weight_has_no_range]") and "89.4" in failures[-1]
    assert not [f for f in weight_violations(kb, year, FactSlots(kb, load_templates("en"), year)) if "89.4" in f]


def test_range_words_fit(kb, years, slots):
    for lang in LANGUAGES:
        explain = explainer(kb, load_templates(lang))
        check([f for year, s in zip(years, slots[lang], strict=True) for f in place_violations(kb, year, explain, s)])


def test_range_words_fit_catches_the_middle_at_the_top_end(kb, years):
    """Diastolic 79 mmHg (reference 60-79) said "right in the middle of 60 to 79 mmHg"."""
    year = _with_facts(years[0], LabFact(lab="diastolic_bp", value=79, unit="mmHg"))
    slots = FactSlots(kb, load_templates("en"), year)

    def middle(fact, rng):  # noqa: ANN001, ANN202, ARG001
        return f"{fact.value:g} mmHg is right in the middle of 60 to 79 mmHg."

    failures = place_violations(kb, year, middle, slots)
    assert failures and failures[-1].startswith("[range_words_fit]") and "diastolic_bp 79" in failures[-1]
    assert not [f for f in place_violations(kb, year, explainer(kb, load_templates("en")), slots) if "bp 79" in f]


def test_obesity_from_30(kb, years):
    check([f for year in years for f in obesity_violations(kb, year)])


def test_obesity_from_30_catches_obesity_at_a_bmi_of_28_6(kb, years):
    year = _with_facts(years[0], LabFact(lab="bmi", value=28.6, unit="kg/m²"),
                       DiagnosisFact(name=Text(en="obesity", zh="单纯性肥胖"), icd11="5B81", status="suspected"))
    failures = obesity_violations(kb, year)
    assert failures and failures[-1].startswith("[obesity_from_30]") and "28.6" in failures[-1]
