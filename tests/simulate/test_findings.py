"""The checks of `findings_check.py` catch what the physician review found (issue 26/27), each on a crafted copy of a
real year: a knowledge-base finding fixed as a range or as another value than the visit measured, a threshold the
value fails, a placeholder left unfilled, a CRB-65 that ignores the patient's age. The same checks run over 1,000
patients in `test_clinical_invariants.py`."""

from __future__ import annotations

import pytest

from medmemorybench.knowledge import default_knowledge
from medmemorybench.knowledge.models import Text
from medmemorybench.simulate import simulate_patient
from medmemorybench.simulate.models import CareYear, ComplicationFact, LabFact
from medmemorybench.simulate.models import TestFact as Result  # (not a pytest class)
from tests.simulate.findings_check import finding_value_violations, score_violations, unfilled_violations


@pytest.fixture(scope="module")
def kb():
    return default_knowledge()


def _year(kb, condition: str, seed: int = 0) -> CareYear:  # noqa: ANN001
    return simulate_patient(kb, seed, 0, condition=kb.conditions[condition])


def _rewrite(year: CareYear, test: str, en: str, zh: str, labs: dict[str, float]) -> CareYear:
    """The year with one test's finding replaced and the visit's results set to `labs`."""
    events = []
    for event in year.events:
        if any(isinstance(f, Result) and f.test == test for f in event.facts):
            facts = [f.model_copy(update={"finding": Text(en=en, zh=zh)}) if isinstance(f, Result) and f.test == test
                     else f.model_copy(update={"value": labs[f.lab]}) if isinstance(f, LabFact) and f.lab in labs
                     else f for f in event.facts]
            present = {f.lab for f in facts if isinstance(f, LabFact)}
            facts += [LabFact(lab=lab, value=value, unit="") for lab, value in labs.items() if lab not in present]
            event = event.model_copy(update={"facts": facts})
        events.append(event)
    assert events != year.events, f"no visit states {test}"
    return year.model_copy(update={"events": events})


def test_the_simulated_findings_of_these_years_pass(kb):
    for condition in ("ulcerative_colitis", "obstructive_sleep_apnea", "severe_insulin_resistant_t2d", "hfpef",
                      "generalized_anxiety_disorder", "nafld", "copd_chronic_bronchitis"):
        year = _year(kb, condition)
        assert not finding_value_violations(kb, year) + unfilled_violations(year) + score_violations(kb, year)


def test_finding_above_a_threshold_the_measured_value_is_not_is_caught(kb):
    # "a visit states faecal calprotectin 497 µg/g and a finding 'above 800 µg/g'"
    year = _rewrite(_year(kb, "ulcerative_colitis"), "fecal_calprotectin_test", "calprotectin above 800 µg/g",
                    "粪钙卫蛋白高于800 µg/g", {"fecal_calprotectin": 497.0})
    found = finding_value_violations(kb, year)
    assert any("fecal_calprotectin 497.0 is not > 800.0" in v for v in found), found


def test_finding_that_states_a_textbook_range_as_the_result_is_caught(kb):
    # "polysomnography 'AHI 30-55 events/h ... oxygen nadir 72-82%' at a visit that also measured AHI 30.6"
    year = _rewrite(_year(kb, "obstructive_sleep_apnea"), "polysomnography",
                    "AHI 30-55 events/h, mostly obstructive, with oxygen nadir 72-82%",
                    "AHI 30-55次/小时，以阻塞性事件为主，最低血氧72%-82%", {"ahi": 30.6, "nadir_spo2": 80.0})
    found = finding_value_violations(kb, year)
    assert any("states a range of ahi" in v and "(en)" in v for v in found), found
    assert any("states a range of nadir_spo2" in v and "(zh)" in v for v in found), found
    # "score 13-19" for the Epworth scale, and "eosinophils 0.3-0.5 ×10⁹/L": ranges beside no lab's name
    year = _rewrite(_year(kb, "obstructive_sleep_apnea"), "epworth_questionnaire",
                    "score 13-19, excessive daytime sleepiness", "评分13-19分，白天嗜睡明显", {})
    assert any("states the range '13-19'" in v for v in finding_value_violations(kb, year))
    year = _rewrite(_year(kb, "copd_chronic_bronchitis"), "blood_eosinophil_count",
                    "eosinophils 0.3-0.5 ×10⁹/L, predicting benefit", "嗜酸性粒细胞0.3-0.5×10⁹/L，提示获益",
                    {"blood_eosinophils": 0.35})
    assert any("states a range of blood_eosinophils" in v for v in finding_value_violations(kb, year))


def test_finding_that_states_another_value_than_the_visit_measured_is_caught(kb):
    # "GAD-7 14 and 16", "FibroScan CAP 269 and 320 dB/m", "fasting insulin 19.8 and 25-45 mIU/L, HOMA-IR above 9"
    year = _rewrite(_year(kb, "generalized_anxiety_disorder"), "gad7_screen", "GAD-7 total 16 (severe anxiety)",
                    "GAD-7总分16分（重度焦虑）", {"gad7": 14.0})
    found = finding_value_violations(kb, year)
    assert any("states gad7 16.0" in v and "record has 14.0" in v for v in found), found
    # "PHQ-9 'total 17' and 14", the number read after the test's own name as the session says it
    year = _rewrite(_year(kb, "major_depressive_disorder"), "phq9_screen",
                    "a total of 17 (moderately severe depression)", "总分17分（中重度抑郁）", {"phq9": 14.0})
    found = finding_value_violations(kb, year)
    assert any("states phq9 17.0" in v and "(en)" in v for v in found), found
    assert any("states phq9 17.0" in v and "(zh)" in v for v in found), found
    year = _rewrite(_year(kb, "nafld"), "transient_elastography", "CAP 320 dB/m and liver stiffness 9.8 kPa",
                    "受控衰减参数320 dB/m，肝硬度9.8 kPa", {"cap_score": 269.0, "liver_stiffness": 9.8})
    found = finding_value_violations(kb, year)
    assert any("states cap_score 320.0" in v for v in found) and not any("liver_stiffness" in v for v in found)
    year = _rewrite(_year(kb, "severe_insulin_resistant_t2d"), "fasting_insulin_test",
                    "fasting insulin 25-45 mIU/L, HOMA-IR above 9", "空腹胰岛素25-45 mIU/L，HOMA-IR大于9",
                    {"fasting_insulin": 19.8, "homa_ir": 7.5})
    found = finding_value_violations(kb, year)
    assert any("range of fasting_insulin" in v for v in found), found
    assert any("homa_ir 7.5 is not > 9.0" in v for v in found), found


def test_an_unfilled_placeholder_is_caught(kb):
    year = _year(kb, "obstructive_sleep_apnea")
    assert not unfilled_violations(year)
    broken = _rewrite(year, "polysomnography", "AHI {lab:ahi}, mostly obstructive", "AHI {lab:ahi}，以阻塞性事件为主",
                      {})
    assert len(unfilled_violations(broken)) == 2


def test_a_crb65_that_ignores_the_patients_age_is_caught(kb):
    # "CRB-65 '0' for an 84-year-old is wrong": find a pneumonia visit of a patient aged 65 or more
    for seed in range(40):
        year = _year(kb, "hfpef", seed)
        visit = next((e for e in year.events for f in e.facts
                      if isinstance(f, Result) and f.test == "illness:community_pneumonia"), None)
        if visit is not None and year.persona.age >= 65:
            break
    else:
        pytest.skip("no pneumonia in an older patient among these seeds")
    assert not score_violations(kb, year)
    stale = "crackles at the right lung base and a right lower lobe consolidation on the X-ray, with a CRB65 score of 0"
    broken = _rewrite(year, "illness:community_pneumonia", stale, "右下肺可闻及湿啰音，CRB65评分0分", {})
    found = score_violations(kb, broken)
    assert any(f"aged {year.persona.age}" in v and "CRB-65 0" in v for v in found), found


def test_a_complication_finding_is_checked_like_a_tests(kb):
    # the atrial fibrillation of heart failure: "ventricular rate 110-130 bpm" beside the heart rate measured
    for seed in range(20):
        year = _year(kb, "hfpef", seed)
        if any(isinstance(f, ComplicationFact) and f.finding is not None for e in year.events for f in e.facts):
            break
    else:
        pytest.skip("no complication with a finding among these seeds")
    assert not finding_value_violations(kb, year)
    events = []
    for event in year.events:
        facts = [f.model_copy(update={"finding": Text(en="irregular rhythm, ventricular rate 110-130 bpm",
                                                      zh="心室率110-130次/分")})
                 if isinstance(f, ComplicationFact) and f.finding is not None else f for f in event.facts]
        events.append(event.model_copy(update={"facts": facts}))
    found = finding_value_violations(kb, year.model_copy(update={"events": events}))
    assert any("range of heart_rate" in v for v in found), found
