"""Drug choice and dosing against the kidneys and the indication, over 1,000 seeded patients (the seed-37 read, issue
27): sulfasalazine where its 5-ASA is barred, pramipexole three times a day below an eGFR of 30, amoxicillin 250 mg
for pneumonia. Each rule also has a crafted violation that its check must catch.

Failure messages start with the rule's name in brackets (the names `docs/simulation.md` lists).
"""

from __future__ import annotations

from medmemorybench.simulate.models import CareYear, Event, LabFact, MedicationFact
from medmemorybench.simulate.models import TestFact as Result  # (not a pytest class)
from medmemorybench.simulate.prescribing import choose_for_step, prescribe
from medmemorybench.simulate.safety import Patient, verdict
from tests.simulate.clinical import check, first_event, given, latest_egfr, patient_rule_violations
from tests.simulate.dosing_check import (
    challenge_dose_violations,
    course_candidates,
    course_frequency_violations,
    indication_dose_violations,
    kept_for_violations,
    moiety_violations,
    spacing_violations,
)
from tests.simulate.monitoring_check import taking_spans

PNEUMONIA = "illness:community_pneumonia"
PARKINSONS = "parkinsons_tremor_dominant"
GLAUCOMA = "narrow_angle_glaucoma"
BLISTER = "once_daily_blister_pack"


def _edit(year: CareYear, event: Event, facts: list) -> CareYear:  # noqa: ANN001
    """The year with one visit's facts replaced."""
    return year.model_copy(update={"events": [event.model_copy(update={"facts": facts}) if e.event_id == event.event_id
                                              else e for e in year.events]})


def _started(drug: str, **fields):  # noqa: ANN003, ANN202
    """Picks a visit that starts `drug` with these fact fields."""
    return lambda e: any(isinstance(f, MedicationFact) and f.drug == drug and f.action == "start"
                         and all(getattr(f, k) == v for k, v in fields.items()) for f in e.facts)


# --- the cohort --------------------------------------------------------------------------------------


def test_moiety_rule_binds_prodrug_no_sulfasalazine_where_its_5_asa_is_barred(kb, years):
    check([v for year in years for v in moiety_violations(kb, year)])
    # (no colitis or arthritis year has CKD stage 4 any more: with sulfasalazine barred too, the trap draw finds a
    # care step left with no drug and draws another history; the crafted test below and the rules test bind it)


def test_renal_frequency_pramipexole_is_spaced_out_as_the_kidneys_fall(kb, years):
    check([v for year in years for v in spacing_violations(kb, year)])
    spaced = {f.frequency for y in years for e in y.events for f in e.facts if isinstance(f, MedicationFact)
              and f.drug == "pramipexole" and f.action == "start" and f.release == "immediate"}
    assert "once_daily" in spaced, spaced


def test_indication_dose_pneumonia_gets_its_own_amoxicillin_dose(kb, years):
    check([v for year in years for v in indication_dose_violations(kb, year)])
    renal = [f for y in years for e in y.events for f in e.facts if isinstance(f, MedicationFact)
             and f.drug == "amoxicillin" and f.reason == PNEUMONIA and f.frequency == "twice_daily"]
    assert renal and all(f.dose >= 500 for f in renal), "no pneumonia treated at a low eGFR in 1,000 patients"


def test_test_dose_allowed_no_levodopa_challenge_where_levodopa_is_barred(kb, years):
    check([v for year in years for v in challenge_dose_violations(kb, year)])
    glaucoma = [y for y in years if y.persona.condition == PARKINSONS and GLAUCOMA in y.persona.histories]
    assert glaucoma, "no Parkinson's patient with narrow-angle glaucoma among 1,000: the rule is never exercised"


def test_kept_while_above_target_an_antihypertensive_outlives_the_wrong_diagnosis(kb, years):
    check([v for year in years for v in kept_for_violations(kb, year)])
    kept = [f for y in years for e in y.events for f in e.facts if isinstance(f, MedicationFact)
            and f.reason == "still_needed"]
    assert kept and all(f.indication == "lab:systolic_bp" for f in kept), "no drug kept at a revision in 1,000 years"
    assert any(_switched(e) for y in years for e in y.events), "no drug switched at a revision in 1,000 years"


def _switched(event: Event) -> bool:
    """A revision that stops glipizide and starts a drug for the HbA1c the same visit."""
    return any(isinstance(f, MedicationFact) and f.drug == "glipizide" and f.reason == "diagnosis_revised"
               for f in event.facts) and any(isinstance(f, MedicationFact) and f.action == "start"
                                             and f.indication == "lab:hba1c" for f in event.facts)


def test_course_fits_doses_a_day_a_blister_pack_patient_gets_the_course_taken_least_often(kb, years):
    check([v for year in years for v in course_frequency_violations(kb, year)])
    fitted = [f for y in years if BLISTER in {t.option for t in y.persona.traps} for e in y.events for f in e.facts
              if isinstance(f, MedicationFact) and f.reason.startswith("illness:") and f.frequency == "once_daily"]
    assert fitted, "no once-a-day course for a blister-pack patient in 1,000 years"


# --- crafted violations ------------------------------------------------------------------------------


def test_moiety_rule_binds_prodrug_catches_sulfasalazine_at_egfr_21(kb, years):
    # P0014 E034 of the seed-37 read: mesalazine avoided for the kidneys, sulfasalazine 1 g twice a day instead
    # (a colitis visit that starts a drug: where the 5-ASA step would have given sulfasalazine)
    colitis = [y for y in years if y.persona.condition == "ulcerative_colitis"]
    year, event = first_event(colitis, lambda e: any(isinstance(f, MedicationFact) and f.action == "start"
                                                     for f in e.facts))
    broken = _edit(year, event, [*event.facts, LabFact(lab="egfr", value=21, unit=kb.labs["egfr"].unit),
                                 MedicationFact(drug="sulfasalazine", action="start", dose=1000, unit="mg",
                                                frequency="twice_daily", reason="first_line")])
    failures = moiety_violations(kb, broken)
    assert failures and failures[0].startswith("[moiety_rule_binds_prodrug]") and "mesalamine_egfr_30" in failures[0]


def test_renal_frequency_catches_pramipexole_three_times_a_day_at_a_low_egfr(kb, years):
    # P0007 E022 of the seed-37 read: 0.125 mg three times a day at eGFR 22-26
    year, event = first_event(years, _started("pramipexole", frequency="once_daily"))
    facts = [f.model_copy(update={"frequency": "three_times_daily"}) if isinstance(f, MedicationFact)
             and f.drug == "pramipexole" else f for f in event.facts]
    failures = spacing_violations(kb, _edit(year, event, facts))
    assert failures and failures[0].startswith("[renal_frequency]") and "pramipexole_egfr_30" in failures[0]


def test_indication_dose_catches_amoxicillin_250_mg_for_pneumonia(kb, years):
    # P0007 E015 and P0015 E010 of the seed-37 read: 250 mg twice a day for pneumonia at eGFR 10-30
    year, event = first_event(years, _started("amoxicillin", reason=PNEUMONIA, frequency="twice_daily", dose=500))
    facts = [f.model_copy(update={"dose": 250.0}) if isinstance(f, MedicationFact) and f.drug == "amoxicillin"
             else f for f in event.facts]
    failures = indication_dose_violations(kb, _edit(year, event, facts))
    assert failures and failures[0].startswith("[indication_dose]")


def test_test_dose_allowed_catches_a_levodopa_challenge_in_narrow_angle_glaucoma(kb, years):
    # P0007 E021 of the seed-37 read: the challenge given, levodopa avoided for the glaucoma two visits later
    glaucoma = [y for y in years if y.persona.condition == PARKINSONS and GLAUCOMA in y.persona.histories]
    year, event = first_event(glaucoma, lambda e: any(isinstance(f, Result) and f.test == "dat_spect"
                                                      for f in e.facts))
    facts = [f.model_copy(update={"test": "levodopa_challenge"}) if isinstance(f, Result) and f.test == "dat_spect"
             else f for f in event.facts]
    failures = challenge_dose_violations(kb, _edit(year, event, facts))
    assert failures and failures[0].startswith("[test_dose_allowed]") and GLAUCOMA in failures[0]


def test_kept_while_above_target_catches_hydrochlorothiazide_stopped_at_a_systolic_of_142(kb, years):
    # P0009 E029 of the seed-37 read: "You can come off hydrochlorothiazide now, because the diagnosis has changed"
    year, event = first_event(years, lambda e: any(isinstance(f, MedicationFact) and f.reason == "still_needed"
                                                   and f.drug == "hydrochlorothiazide" for f in e.facts))
    facts = [f.model_copy(update={"action": "stop", "reason": "diagnosis_revised"})
             if isinstance(f, MedicationFact) and f.reason == "still_needed" else f for f in event.facts]
    failures = kept_for_violations(kb, _edit(year, event, facts))
    assert failures and failures[0].startswith("[kept_while_above_target]")


def test_kept_while_above_target_catches_glipizide_stopped_at_an_hba1c_of_8_with_nothing_in_its_place(kb, years):
    # P0009 E021 of the seed-47 read: glipizide stopped "because the diagnosis has changed" at an HbA1c of 8.0 %, no
    # glucose-lowering drug for 25 days
    year, event = first_event(years, _switched)
    facts = [f for f in event.facts if not (isinstance(f, MedicationFact) and f.action == "start"
                                            and f.indication == "lab:hba1c")]
    failures = kept_for_violations(kb, _edit(year, event, facts))
    assert failures and failures[0].startswith("[kept_while_above_target]") and "glipizide" in failures[0]


def test_course_fits_doses_a_day_catches_penicillin_four_times_a_day_for_a_blister_pack(kb, years):
    # P0004 E014 and E033 of the seed-37 read: four times a day to a patient who "can only take things once a day"
    packed = [y for y in years if BLISTER in {t.option for t in y.persona.traps}]
    year, event = first_event(packed, lambda e: any(isinstance(f, MedicationFact) and f.action == "start"
                                                    and f.reason.startswith("illness:") and f.frequency == "once_daily"
                                                    for f in e.facts))
    facts = [f.model_copy(update={"frequency": "four_times_daily"}) if isinstance(f, MedicationFact)
             and f.reason.startswith("illness:") else f for f in event.facts]
    failures = course_frequency_violations(kb, _edit(year, event, facts))
    assert failures and failures[0].startswith("[course_fits_doses_a_day]")


def test_course_caution_before_fit_catches_a_cautioned_course_where_a_clear_one_was_allowed(kb, years):
    # P0004 E038 and E061 of the seed-47 read: clarithromycin's once-daily tablet, cautioned in heart failure and
    # beside amlodipine, where amoxicillin was allowed without a caution. The first blister-pack course with both a
    # cautioned and a clear candidate allowed is given the cautioned one.
    for year in (y for y in years if BLISTER in {t.option for t in y.persona.traps}):
        spans = taking_spans(year)
        for event, fact in given(year):
            if fact.action != "start" or not fact.reason.startswith("illness:"):
                continue
            allowed = course_candidates(kb, year, spans, event, fact)
            cautioned = [d for d, (_, c) in allowed.items() if c]
            if cautioned and any(not c for _, c in allowed.values()):
                swapped = fact.model_copy(update={"drug": cautioned[0]})
                broken = _edit(year, event, [swapped if f is fact else f for f in event.facts])
                failures = course_frequency_violations(kb, broken)
                assert any(f.startswith("[course_caution_before_fit]") and event.event_id in f for f in failures)
                return
    raise AssertionError("no blister-pack course with a cautioned and a clear candidate in 1,000 years")


# --- the rules themselves ----------------------------------------------------------------------------


def test_the_kidney_rules_space_pramipexole_out_and_bar_sulfasalazine(kb):
    for egfr, frequency in ((70.0, "three_times_daily"), (40.0, "twice_daily"), (22.0, "once_daily")):
        rx = prescribe(kb, "pramipexole", Patient(75, "female", "parkinsons_tremor_dominant", egfr=egfr))
        assert rx is not None and (rx.dose, rx.frequency, rx.release) == (0.125, frequency, "immediate"), egfr
    uc = Patient(60, "male", "ulcerative_colitis", egfr=21.0)
    assert [b.rule for b in verdict(kb, "sulfasalazine", uc).blocks] == ["rule:mesalamine_egfr_30"]
    assert verdict(kb, "sulfasalazine", Patient(60, "male", "ulcerative_colitis", egfr=45.0)).is_allowed


def test_pneumonia_amoxicillin_is_500_mg_at_every_kidney_function(kb):
    step = kb.illnesses["community_pneumonia"].step
    for egfr, frequency in ((80.0, "three_times_daily"), (25.0, "twice_daily")):
        rx = choose_for_step(kb, step, Patient(70, "male", "hfpef", egfr=egfr))
        assert rx is not None and (rx.drug, rx.dose, rx.frequency) == ("amoxicillin", 500.0, frequency), egfr


def test_renal_rule_holds_the_long_term_drug_continued_at_each_review(kb, years):
    # (the seed-47 read: nadolol 160 mg "stable" at review after review at an eGFR of 18; the patient's first account
    # of the drug they came with is theirs, every dose the year continues it at is the doctor's)
    year, event = next((y, e) for y in years for e in y.events
                       if any(isinstance(f, MedicationFact) and f.drug == "nadolol" and f.action == "continue"
                              and f.reason in ("stable", "unchanged") for f in e.facts)
                       and latest_egfr(y, e) is not None)
    assert not patient_rule_violations(kb, year, "renal")
    # (its latest kidney function before that review made CKD 4, as in the seed-47 year)
    measured = [e for e in year.events[:year.events.index(event) + 1]
                if any(isinstance(f, LabFact) and f.lab == "egfr" for f in e.facts)][-1]
    year = _edit(year, measured, [f.model_copy(update={"value": 18.0}) if isinstance(f, LabFact) and f.lab == "egfr"
                                  else f for f in measured.facts])
    event = next(e for e in year.events if e.event_id == event.event_id)
    doubled = [f.model_copy(update={"dose": 160.0}) if isinstance(f, MedicationFact) and f.drug == "nadolol" else f
               for f in event.facts]
    found = patient_rule_violations(kb, _edit(year, event, doubled), "renal")
    assert any(v.startswith("[renal_rule]") and "nadolol 160.0 mg" in v and event.event_id in v for v in found)
    told = next(e for e in year.events if any(isinstance(f, MedicationFact) and f.drug == "nadolol"
                                              and f.reason == "long_term" for f in e.facts))
    account = [f.model_copy(update={"dose": 160.0}) if isinstance(f, MedicationFact) and f.reason == "long_term" else f
               for f in told.facts]
    assert not [v for v in patient_rule_violations(kb, _edit(year, told, account), "renal") if told.event_id in v]
