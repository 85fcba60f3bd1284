"""What a harm told calls for that day over 1,000 seeded patients (issue 27): a fit in long QT syndrome, or on a drug a
long-QT rule names, gets an ECG and the electrolytes at the visit it is told. The rule also has a crafted violation
that its check must catch.

Failure messages start with the rule's name in brackets (the names `docs/simulation.md` lists).
"""

from __future__ import annotations

from medmemorybench.simulate.models import AdverseFact, CareYear, LabFact, SymptomFact
from tests.simulate.acute_check import harm_workup_violations
from tests.simulate.clinical import check, with_facts


def test_harm_workup_same_day_a_fit_in_long_qt_gets_an_ecg_and_electrolytes(kb, years):
    check([v for year in years for v in harm_workup_violations(kb, year)])


def _fit_told(kb, year: CareYear, drop: str | None = None) -> CareYear:  # noqa: ANN001
    """The year with a visit appended that tells a fit on bupropion, with its workup's labs (less `drop`). Since
    bupropion counts an eGFR under 30 as a seizure risk factor (h27t), the cohort's fits in long QT (bupropion at
    eGFR 19-26 in one depression persona) are gone, so the crafted visit is appended to a long-QT year."""
    workup = next(w for w in kb.history_conditions["long_qt_syndrome"].harm_workup if "seizure" in w.effects)
    effect = next(e for e in kb.drugs["bupropion"].adverse_effects if e.key == "seizure")
    labs = [LabFact(lab=lab, value=kb.labs[lab].reference[0], unit=kb.labs[lab].unit) for lab in workup.labs
            if lab != drop]
    return with_facts(year, AdverseFact(drug="bupropion", effect=effect.key),
                      SymptomFact(symptom=effect.key, name=effect.name, lay=effect.lay), *labs)


def test_a_fit_in_long_qt_with_no_ecg_that_day_is_caught(kb, years):
    year = next(y for y in years if "long_qt_syndrome" in y.persona.histories)
    assert not harm_workup_violations(kb, _fit_told(kb, year))
    broken = _fit_told(kb, year, drop="qtc")
    event = broken.events[-1]
    assert any(v.startswith("[harm_workup_same_day]") and event.event_id in v and "qtc" in v
               for v in harm_workup_violations(kb, broken))
