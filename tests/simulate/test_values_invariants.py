"""Values that agree over the 1,000-patient cohort (the seed-61 read: 78.6 kg one day and BMI 23.7 the next, "my clothes
are loose" beside a year of stable weights, Mayo 5 beside "moderately active" colitis), with crafted violations each
check must catch."""

from __future__ import annotations

from medmemorybench.simulate.models import CareYear, DiagnosisFact, Event, LabFact, SymptomFact
from tests.simulate.clinical import check, first_event
from tests.simulate.values_check import (
    LOSS_SEEN,
    SHORT_KG,
    _explains,
    _treated,
    body_readings,
    body_violations,
    severity_violations,
    weight_loss_violations,
)


def _with_lab(year: CareYear, event: Event, lab: str, value: float) -> CareYear:
    """The year with `event`'s reading of `lab` set to `value`."""
    facts = [f.model_copy(update={"value": value}) if isinstance(f, LabFact) and f.lab == lab else f
             for f in event.facts]
    return year.model_copy(update={"events": [e.model_copy(update={"facts": facts}) if e is event else e
                                              for e in year.events]})


def test_body_agrees_weight_and_bmi_through_one_height_and_bounded_day_to_day(kb, years):
    check([v for year in years for v in body_violations(kb, year)])


def test_body_agrees_fails_a_weight_two_kilograms_off_the_day_before(kb, years):
    def close_pair(year: CareYear) -> tuple[Event, float] | None:
        """Two readings a day or two apart, the second a weight, with nothing between them that explains a change."""
        readings = body_readings(year)
        for first, second in zip(readings, readings[1:], strict=False):
            between = [e for e in year.events if first.event.index <= e.index <= second.event.index]
            if 1 <= second.day - first.day <= 2 and any(isinstance(f, LabFact) and f.lab == "weight"
                                                       for f in second.event.facts) \
                    and not any(_explains(kb, year, f) for e in between for f in e.facts) \
                    and not _treated(kb, year, second):
                return second.event, first.kg
        return None

    year, (event, before) = next((y, pair) for y in years if (pair := close_pair(y)) is not None)
    # (the seed-61 read, P0015 E085/E086: +2.3 kg overnight at one height)
    broken = _with_lab(year, event, "weight", round(before + SHORT_KG + 0.3, 1))
    broken = broken.model_copy(update={"events": [e.model_copy(update={"facts": [
        f for f in e.facts if not (isinstance(f, LabFact) and f.lab == "bmi")]}) if e.event_id == event.event_id
        else e for e in broken.events]})
    assert any(event.event_id in v and "nothing to explain it" in v for v in body_violations(kb, broken))


def test_body_agrees_fails_a_bmi_the_height_does_not_give(kb, years):
    year, event = first_event(years, lambda e: {"weight", "bmi"} <= {f.lab for f in e.facts if isinstance(f, LabFact)})
    bmi = next(f.value for f in event.facts if isinstance(f, LabFact) and f.lab == "bmi")
    broken = _with_lab(year, event, "bmi", bmi + 0.7)
    assert any(event.event_id in v and "disagree at height" in v for v in body_violations(kb, broken))


def test_weight_loss_measured_a_told_weight_loss_shows_on_the_scales(kb, years):
    check([v for year in years for v in weight_loss_violations(kb, year)])
    claims = {s.key for c in kb.conditions.values() for s in c.symptoms if s.weight_lost is not None}
    told = {f.symptom for y in years for e in y.events for f in e.facts if isinstance(f, SymptomFact)}
    assert claims <= told, f"never told among 1,000 patients: {sorted(claims - told)}"


def test_weight_loss_measured_fails_a_weight_loss_told_beside_flat_weights(kb, years):
    # (the seed-61 read, P0015 E016/E021/E028: "my clothes are loose" beside 78.6, 77.6, 78.4, 78.3, 78.4 kg)
    claims = {s.key for c in kb.conditions.values() for s in c.symptoms if s.weight_lost is not None}
    year = next(y for y in years if any(isinstance(f, SymptomFact) and f.symptom in claims
                                        for e in y.events for f in e.facts) and len(body_readings(y)) >= 3)
    assert not weight_loss_violations(kb, year)
    first = body_readings(year)[0].kg
    height2 = (year.persona.height_cm / 100) ** 2
    flat = year.model_copy(update={"events": [e.model_copy(update={"facts": [
        f.model_copy(update={"value": first if f.lab == "weight" else round(first / height2, 1)})
        if isinstance(f, LabFact) and f.lab in ("weight", "bmi") else f for f in e.facts]}) for e in year.events]})
    assert any("weight loss told" in v for v in weight_loss_violations(kb, flat))
    assert LOSS_SEEN > 0


def test_severity_named_the_diagnosis_stands_on_a_reading_in_its_band(kb, years):
    check([v for year in years for v in severity_violations(kb, year)])


def test_severity_named_fails_a_mild_mayo_score_beside_moderately_active_colitis(kb, years):
    # (the seed-61 read, P0014 E032/E033: Mayo 5, the mild band, then "ulcerative colitis, ... moderately active")
    year, diagnosis = first_event(years, lambda e: any(isinstance(f, DiagnosisFact) and f.status == "confirmed"
                                                       and "moderately active" in f.name.en for f in e.facts))
    assert not severity_violations(kb, year)
    scored = next(e for e in reversed([e for e in year.events if e.index <= diagnosis.index])
                  if any(isinstance(f, LabFact) and f.lab == "mayo_score" for f in e.facts))
    broken = _with_lab(year, scored, "mayo_score", 5.0)
    assert any(diagnosis.event_id in v and "mayo_score 5" in v for v in severity_violations(kb, broken))
