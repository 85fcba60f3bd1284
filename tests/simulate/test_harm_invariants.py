"""The seed-73 read's three findings over the 1,000-patient cohort (`harm_check.py`), with crafted violations each
check must catch: a low sodium left unrepeated and its symptoms unasked, diltiazem beside amlodipine, and a PHQ-9
item 9 read out with no risk assessment."""

from __future__ import annotations

from medmemorybench.simulate.models import AdviceFact, CareYear, LabFact, MedicationFact
from tests.simulate.clinical import check, first_event, with_facts
from tests.simulate.harm_check import duplicate_class_violations, item9_violations, low_sodium_violations


def _without(year: CareYear, keep) -> CareYear:  # noqa: ANN001
    """The year with the facts `keep(event, fact)` refuses removed."""
    return year.model_copy(
        update={"events": [e.model_copy(update={"facts": [f for f in e.facts if keep(e, f)]}) for e in year.events]}
    )


def _advised(key: str):  # noqa: ANN202
    return lambda e: any(isinstance(f, AdviceFact) and f.advice == key for f in e.facts)


# --- low_sodium_followed ------------------------------------------------------------------------------------------


def test_low_sodium_followed(kb, years):
    check([v for year in years for v in low_sodium_violations(kb, year)])
    assert any(_advised("low_sodium_care")(e) for y in years for e in y.events), "no low sodium in 1,000 patients"


def test_low_sodium_followed_fails_a_sodium_never_repeated(kb, years):
    year, event = first_event(years, _advised("low_sodium_care"))
    assert not low_sodium_violations(kb, year)
    # (every sodium after the low one removed: the seed-73 read, 125 mmol/L never repeated)
    broken = _without(year, lambda e, f: e.index <= event.index or not (isinstance(f, LabFact) and f.lab == "sodium"))
    assert any("not repeated" in v and v.startswith("[low_sodium_followed]") for v in low_sodium_violations(kb, broken))


def test_low_sodium_followed_fails_symptoms_not_asked(kb, years):
    year, event = first_event(years, _advised("low_sodium_care"))
    broken = _without(year, lambda e, f: not (isinstance(f, AdviceFact) and f.advice == "low_sodium_care"))
    assert any(event.event_id in v and "symptoms not asked" in v for v in low_sodium_violations(kb, broken))


# --- one_drug_per_class -------------------------------------------------------------------------------------------


def test_one_drug_per_class(kb, years):
    check([v for year in years for v in duplicate_class_violations(kb, year)])


def test_one_drug_per_class_fails_diltiazem_beside_amlodipine(kb, years):
    # (the seed-73 read, P0004 E063: diltiazem ER 180 mg started while amlodipine 10 mg carried on)
    year, _ = first_event(
        years,
        lambda e: any(
            isinstance(f, MedicationFact) and f.drug == "amlodipine" and f.action == "start" for f in e.facts
        ),
    )
    assert not duplicate_class_violations(kb, year)
    broken = with_facts(
        year,
        MedicationFact(
            drug="amlodipine", action="continue", dose=10.0, unit="mg", frequency="once_daily", reason="stable"
        ),
        MedicationFact(
            drug="diltiazem",
            action="start",
            dose=180.0,
            unit="mg",
            frequency="once_daily",
            reason="complication:atrial_fibrillation",
            release="extended",
        ),
    )
    failures = duplicate_class_violations(kb, broken)
    assert failures and "calcium_channel_blocker: ['amlodipine', 'diltiazem']" in failures[-1]


# --- item9_risk_assessed ------------------------------------------------------------------------------------------


def test_item9_risk_assessed(years):
    check([v for year in years for v in item9_violations(year)])
    assert any(_advised("suicide_risk_assessment")(e) for y in years for e in y.events)


def test_item9_risk_assessed_fails_item9_read_out_alone(years):
    # (the seed-73 read, P0015 E027: "item 9 (thoughts of death) scored 1" and nothing done)
    year, event = first_event(years, _advised("suicide_risk_assessment"))
    assert not item9_violations(year)
    broken = _without(year, lambda e, f: not (isinstance(f, AdviceFact) and f.advice == "suicide_risk_assessment"))
    failures = item9_violations(broken)
    assert any(event.event_id in v and v.startswith("[item9_risk_assessed]") for v in failures)
