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


def test_a_once_a_day_patient_below_egfr_30_gets_no_pramipexole_and_the_rule_is_the_reason():
    once = Constraint("medication_preference", "once_daily_blister_pack")
    assert verdict(KB, "pramipexole", _patient(45, once)).formulation[0].release == "extended"
    barred = verdict(KB, "pramipexole", _patient(23, once))
    assert not barred.is_allowed
    assert any(block.rule == "rule:pramipexole_er_egfr_30" for block in barred.blocks)
