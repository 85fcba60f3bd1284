"""Load checks of the clinical rules issue 27 added: each refuses a knowledge base that breaks it, naming the file
and the field (the invariants over the simulated cohort are in tests/simulate/test_monitoring_invariants.py)."""

from __future__ import annotations

from tests.helpers import knowledge_problems


def _candidate(doc: dict, step_key: str, drug: str) -> dict:
    step = next(s for s in doc["care_path"] if s["key"] == step_key)
    return next(c for c in step["candidates"] if isinstance(c, dict) and c["drug"] == drug)


def test_a_long_steroid_course_without_a_taper_is_refused(tmp_path):
    # [steroid_taper] prednisolone 40 mg for 56 days stopped from its full dose (the P0014 E087)
    def change(doc: dict) -> None:
        del _candidate(doc, "steroid_induction", "prednisolone")["taper"]

    found = knowledge_problems(tmp_path, "conditions/ulcerative_colitis.yaml", change)
    assert "care_path.steroid_induction.candidates.prednisolone: a steroid course of 56 days needs a taper" in found


def test_a_taper_step_no_tablet_makes_is_refused(tmp_path):
    def change(doc: dict) -> None:
        _candidate(doc, "symptom_bridge", "prednisolone")["taper"] = {"step": 2.5, "every_days": 14}

    found = knowledge_problems(tmp_path, "conditions/seropositive_rheumatoid_arthritis.yaml", change)
    assert "taper: 7.5 mg cannot be made from [1.0, 5.0, 25.0]" in found


def test_a_caution_that_asks_for_an_unknown_check_is_refused(tmp_path):
    # [qt_rule] the ECG a QT caution asks for must be a lab of the base, with its recheck window
    def change(doc: dict) -> None:
        rule = next(r for r in doc["contraindications"] if r.get("monitoring"))
        rule["monitoring"] = ["qtc_typo"]
        del rule["recheck_days"]

    found = knowledge_problems(tmp_path, "history.yaml", change)
    assert "monitoring: unknown lab 'qtc_typo'" in found and "monitoring and recheck_days go together" in found


def test_a_start_dose_rule_without_its_dose_is_refused(tmp_path):
    # [start_dose_rule] warfarin at 80 or over starts at 2.5 mg
    def change(doc: dict) -> None:
        del next(r for r in doc["rules"] if r["key"] == "warfarin_start_elderly")["start_dose"]

    found = knowledge_problems(tmp_path, "patient_rules.yaml", change)
    assert "warfarin_start_elderly: start_dose goes with level start_dose, and only with it" in found


def test_a_red_flag_naming_no_step_is_refused(tmp_path):
    # [red_flag_acted_on] orthopnoea after a heart-failure diagnosis calls for the decongestion step
    def change(doc: dict) -> None:
        next(s for s in doc["symptoms"] if s["key"] == "orthopnoea")["red_flag_step"] = "no_such_step"

    found = knowledge_problems(tmp_path, "conditions/hfpef.yaml", change)
    assert "symptoms.orthopnoea.red_flag_step: unknown care step 'no_such_step'" in found


def test_a_restart_naming_an_unknown_step_or_only_courses_is_refused(tmp_path):
    # [untreated_after_stop] the restart after the last control drug is a step of the condition, and a long-term one
    def change(doc: dict) -> None:
        doc["restart"]["steps"] = ["steroid_induction", "no_such_step"]

    found = knowledge_problems(tmp_path, "conditions/ulcerative_colitis.yaml", change)
    assert "restart.steps: 'no_such_step' is not a step of this condition" in found
    assert "restart.steps: no long-term candidate to restart with (a course is no maintenance)" in found


def test_a_restart_advice_or_referral_that_is_no_advice_is_refused(tmp_path):
    # [untreated_after_stop] depression's therapy beside the new antidepressant, and its referral where none is allowed
    def change(doc: dict) -> None:
        doc["restart"]["advice"] = "cbt_typo"
        doc["restart"]["referral"] = "referral_typo"

    found = knowledge_problems(tmp_path, "conditions/major_depressive_disorder.yaml", change)
    assert "restart.advice: 'cbt_typo' is not an advice key" in found
    assert "restart.referral: 'referral_typo' is not an advice key" in found


def test_a_history_target_with_unknown_parts_or_a_treated_range_past_it_is_refused(tmp_path):
    # [history_target_treated] the blood pressure a stroke is treated to
    def change(doc: dict) -> None:
        target = next(h for h in doc["history_conditions"] if h["key"] == "stroke_history")["treat_to"][0]
        target["candidates"] = ["perindopril", "no_such_drug"]
        target["no_drug_advice"] = "advice_typo"
        target["treated"] = [120, 135]

    found = knowledge_problems(tmp_path, "history.yaml", change)
    assert "treat_to.candidates: unknown drug 'no_such_drug'" in found
    assert "treat_to.no_drug_advice: 'advice_typo' is not an advice key" in found
    assert "treat_to.treated: (120.0, 135.0) is not under the target 130" in found
