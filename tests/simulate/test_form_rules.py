"""A patient rule on one release of a drug (pramipexole's extended-release tablet below eGFR 30, Mirapex ER label):
it removes that form, not the drug, and bars the drug only where no other form suits the patient (the seed-11 and
seed-23 reads had extended-release pramipexole at eGFR 18-23)."""

from __future__ import annotations

from medmemorybench.knowledge import default_knowledge
from medmemorybench.simulate.safety import Constraint, Patient, verdict

KB = default_knowledge()


def _patient(egfr: float, *constraints: Constraint) -> Patient:
    return Patient(70, "female", "parkinsons_tremor_dominant", list(constraints), egfr)


def test_the_extended_release_form_is_removed_below_egfr_30_and_the_immediate_one_capped():
    result = verdict(KB, "pramipexole", _patient(23))
    assert result.is_allowed and result.formulation is not None
    assert result.formulation[0].release == "immediate" and result.max_daily_dose == 1.5


def test_above_egfr_30_the_extended_release_form_stays():
    releases = {form.release for form, _ in KB.drugs["pramipexole"].formulations()}
    assert releases == {"immediate", "extended"}
    assert verdict(KB, "pramipexole", _patient(45)).is_allowed


def test_a_once_a_day_patient_below_egfr_30_gets_immediate_release_pramipexole_once_a_day():
    # (below eGFR 30 the label spaces the immediate-release tablet to once a day, `renal_frequency`, which a once-a-day
    # patient can take; the extended-release tablet stays removed)
    once = Constraint("medication_preference", "once_daily_blister_pack")
    assert verdict(KB, "pramipexole", _patient(45, once)).formulation[0].release == "extended"
    spaced = verdict(KB, "pramipexole", _patient(23, once))
    assert spaced.is_allowed and spaced.formulation is not None
    assert (spaced.formulation[0].release, spaced.formulation[1].frequency) == ("immediate", "once_daily")
    assert all(form.release == "immediate" for form, _ in spaced.options)
