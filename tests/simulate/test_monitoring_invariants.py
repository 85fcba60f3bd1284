"""Monitoring over 1,000 seeded patients (issue 27): rechecks after what moves a level, routine checks never left
to lapse, results judged against a drug's own target range, age-based starting doses, and ECGs for QT-prolonging
drugs where a caution asks for them. Each rule also has a crafted violation that its check must catch.

Failure messages start with the rule's name in brackets (the names `docs/simulation.md` lists).
"""

from __future__ import annotations

from medmemorybench.simulate import simulate_patient
from medmemorybench.simulate.models import (
    AdviceFact,
    AvoidedFact,
    CareYear,
    CautionFact,
    Event,
    HistoryFact,
    LabFact,
    MedicationFact,
    SymptomFact,
)
from tests.simulate.clinical import check, first_event
from tests.simulate.monitoring_check import (
    WORKUP_ENCOUNTERS,
    _taken_on,
    advice_violations,
    augment_violations,
    baseline_violations,
    due_violations,
    level_changes,
    out_of_range_share,
    partners_of,
    qt_electrolyte_violations,
    qt_violations,
    raise_held_violations,
    range_violations,
    recheck_violations,
    red_flag_examined_violations,
    red_flag_violations,
    renal_cap_violations,
    serious_harm_violations,
    start_dose_violations,
    stop_recheck_violations,
    taking_spans,
    taper_violations,
    workup_violations,
)


def _without(year: CareYear, drop) -> CareYear:  # noqa: ANN001
    """The year with every fact `drop` picks removed."""
    return year.model_copy(update={"events": [e.model_copy(update={"facts": [f for f in e.facts if not drop(e, f)]})
                                              for e in year.events]})


def _with_reason(years: list[CareYear], reason: str) -> list[MedicationFact]:
    """Every medication fact of the cohort given for `reason` (to show a rule is exercised)."""
    return [f for y in years for e in y.events for f in e.facts if isinstance(f, MedicationFact) and f.reason == reason]


def _starts(drug: str):  # noqa: ANN202
    return lambda e: any(isinstance(f, MedicationFact) and f.drug == drug and f.action == "start" for f in e.facts)


# --- the cohort --------------------------------------------------------------------------------------


def test_monitoring_recheck_a_level_is_checked_soon_after_anything_that_moves_it(kb, years):
    check([v for year in years for v in recheck_violations(kb, year)])


def test_held_levels_sit_in_their_target_range_nine_times_in_ten(kb, years):
    # [therapeutic_range_used] lithium 0.35-0.39 mmol/L at four visits running with no action (seed-13 review): a
    # working dose holds the level in the middle of its range, and a result outside it is the exception (rechecked)
    shares = out_of_range_share(kb, years)
    assert {"inr", "lithium_level"} <= set(shares)
    assert all(share <= 0.10 for share in shares.values()), shares


def test_monitoring_due_a_monitored_level_is_never_left_unchecked(kb, years):
    check([v for year in years for v in due_violations(kb, year)])


def test_therapeutic_range_used_a_held_lab_is_judged_against_the_drugs_target(kb, years):
    check([v for year in years for v in range_violations(kb, year)])


def test_start_dose_rule_an_older_patient_starts_warfarin_low(kb, years):
    check([v for year in years for v in start_dose_violations(kb, year)])
    started = [f for y in years if y.persona.age >= 80 for e in y.events for f in e.facts
               if isinstance(f, MedicationFact) and f.drug == "warfarin" and f.action == "start"]
    assert started, "no patient of 80 or over started warfarin: the rule is never exercised"


def test_qt_rule_a_qt_prolonging_drug_under_a_caution_gets_an_ecg_before_and_after(kb, years):
    check([v for year in years for v in qt_violations(kb, year)])
    cautioned = [f for y in years for e in y.events for f in e.facts
                 if isinstance(f, CautionFact) and f.rule in ("contraindication:long_qt_syndrome",
                                                              "contraindication:hfpef")]
    assert cautioned, "no QT caution among 1,000 patients: the rule is never exercised"


def test_qt_start_electrolytes_a_qt_prolonging_start_in_long_qt_has_potassium_and_magnesium_not_low(kb, years):
    check([v for year in years for v in qt_electrolyte_violations(kb, year)])
    started = [f for y in years if "long_qt_syndrome" in y.persona.histories for e in y.events for f in e.facts
               if isinstance(f, MedicationFact) and f.action == "start" and any(
                   isinstance(g, LabFact) and g.lab == "magnesium" for g in e.facts)]
    assert started, "no QT-prolonging start in long QT among 1,000 patients: the rule is never exercised"


def _qt_start_in_long_qt(kb):  # noqa: ANN001, ANN202
    def has(e: Event) -> bool:
        return any(isinstance(f, CautionFact) and f.rule == "contraindication:long_qt_syndrome" for f in e.facts) and \
            any(isinstance(f, LabFact) and f.lab == "magnesium" for f in e.facts)
    return has


def test_a_qt_prolonging_start_in_long_qt_with_no_magnesium_is_caught(kb, years):
    year, event = first_event(years, _qt_start_in_long_qt(kb))
    assert not qt_electrolyte_violations(kb, year)
    broken = _without(year, lambda e, f: isinstance(f, LabFact) and f.lab == "magnesium")
    assert any(v.startswith("[qt_start_electrolytes]") and event.event_id in v and "no magnesium" in v
               for v in qt_electrolyte_violations(kb, broken))


def test_a_qt_prolonging_start_in_long_qt_at_a_low_potassium_is_caught(kb, years):
    year, event = first_event(years, _qt_start_in_long_qt(kb))
    broken = year.model_copy(update={"events": [e.model_copy(update={"facts": [
        *(f for f in e.facts if not (isinstance(f, LabFact) and f.lab == "potassium")),
        LabFact(lab="potassium", value=3.1, unit="mmol/L")]}) if e is event else e for e in year.events]})
    assert any(v.startswith("[qt_start_electrolytes]") and event.event_id in v and "potassium of 3.1" in v
               for v in qt_electrolyte_violations(kb, broken))


def test_serious_harm_at_once_sleep_attacks_are_acted_on_the_day_they_are_told(kb, years):
    check([v for year in years for v in serious_harm_violations(kb, year)])
    told = [e for y in years for e in y.events if e.kind == "adverse_event"
            and any(isinstance(f, AdviceFact) and f.advice == "no_driving_sleep_attacks" for f in e.facts)]
    assert told, "no sleep attacks among 1,000 patients: the rule is never exercised"


def test_red_flag_acted_on_congestion_told_from_the_turning_point_gets_a_diuretic_at_that_visit(kb, years):
    check([v for year in years for v in red_flag_violations(kb, year)])
    acted = [f for y in years for e in y.events for f in e.facts
             if isinstance(f, MedicationFact) and f.reason.startswith("symptom:")]
    assert acted, "no red flag acted on among 1,000 patients: the rule is never exercised"


def test_workup_promptly_the_tests_diagnosis_and_first_treatment_follow_the_turning_point(kb, years):
    check([v for year in years for v in workup_violations(kb, year)])


def test_advice_given_a_safety_plan_for_suicidal_thoughts_and_driving_advice_at_a_parkinsons_diagnosis(kb, years):
    check([v for year in years for v in advice_violations(kb, year)])
    given = {f.advice for y in years for e in y.events for f in e.facts if isinstance(f, AdviceFact)}
    assert {"safety_plan_crisis", "driving_parkinsons", "no_driving_after_seizure"} <= given, \
        "a piece of advice a harm or a diagnosis calls for is never given among 1,000 patients"


def test_rechecked_after_stop_a_disease_left_without_its_drug_is_checked_and_stepped_up(kb, years):
    check([v for year in years for v in stop_recheck_violations(kb, year)])


def test_red_flag_examined_fever_with_pleuritic_pain_is_examined_not_sent_home(kb, years):
    check([v for year in years for v in red_flag_examined_violations(kb, year)])
    examined = [f for y in years for e in y.events if e.kind == "acute_illness" for f in e.facts
                if isinstance(f, SymptomFact) and f.symptom == "community_pneumonia.pleuritic_pain"]
    assert examined, "no pneumonia examined among 1,000 patients: the rule is never exercised"


def test_steroid_taper_a_long_steroid_course_is_stepped_down(kb, years):
    check([v for year in years for v in taper_violations(kb, year)])
    assert _with_reason(years, "taper"), "no steroid taper among 1,000 patients: the rule is never exercised"


def test_renal_dose_not_bar_a_dose_cap_chooses_a_formulation_before_it_bars_the_drug(kb, years):
    # "amoxicillin avoided by quoting a dose-adjustment rule as if it were a bar" (the seed-11 read)
    check([v for year in years for v in renal_cap_violations(kb, year)])
    twice = [f for y in years for e in y.events for f in e.facts if isinstance(f, MedicationFact)
             and f.drug == "amoxicillin" and f.frequency == "twice_daily" and f.dose <= 500]
    assert twice, "no kidney dose of amoxicillin among 1,000 patients: the rule is never exercised"


def test_raise_held_past_limit_no_qt_prolonging_dose_is_raised_past_a_prolonged_qtc(kb, years):
    check([v for year in years for v in raise_held_violations(kb, year)])
    if not _with_reason(years, "raise_held"):
        # (a hold is rare, about one year in a thousand: past the cohort, the depression slot of later seeds, where
        # long QT meets aripiprazole; seeds 118 and 123 hold one as of 2026-12-07)
        later = (simulate_patient(kb, seed, 14) for seed in range(50, 200))
        held = next((y for y in later if _with_reason([y], "raise_held")), None)
        assert held is not None, "no dose held at a prolonged QTc in 1,150 patients: the rule is never exercised"
        check(raise_held_violations(kb, held))


def test_augments_a_base_an_augmenting_drug_is_never_taken_alone(kb, years):
    check([v for year in years for v in augment_violations(kb, year)])
    augmented = [f for y in years for e in y.events for f in e.facts
                 if isinstance(f, MedicationFact) and f.action == "start" and f.step == "augmentation"
                 and y.persona.condition == "major_depressive_disorder"]
    assert augmented, "no augmentation among 1,000 patients: the rule is never exercised"


def test_lithium_and_warfarin_levels_are_measured(years):
    labs = {f.lab for y in years for e in y.events for f in e.facts if isinstance(f, LabFact)}
    assert {"lithium_level", "inr", "qtc"} <= labs


# --- crafted violations --------------------------------------------------------------------------------


def test_a_lithium_change_with_no_level_after_it_is_caught(kb, years):
    """A lithium start, dose change or interacting drug started while lithium is taken, its level then dropped.
    (Since the blood-test limit counts lithium's level a week after a start, none of the 1,000 years starts lithium:
    the long-term lithium of a bipolar history is changed or met by its partners instead.)"""
    partners = partners_of(kb, "lithium")

    def moves_lithium(year: CareYear) -> Event | None:
        spans = taking_spans(year)
        return next((e for e in year.events if _taken_on(spans, "lithium", e.date)
                     and level_changes(e, "lithium", partners)), None)

    year, event = next(((y, e) for y in years if (e := moves_lithium(y)) is not None), (None, None))
    assert year is not None and event is not None, "no lithium start, change or partner among the 1,000 patients"
    assert not recheck_violations(kb, year)
    broken = _without(year, lambda e, f: isinstance(f, LabFact) and f.lab == "lithium_level")
    assert any(v.startswith("[monitoring_recheck]") and event.event_id in v for v in recheck_violations(kb, broken))
    assert any(v.startswith("[monitoring_due]") for v in due_violations(kb, broken))


def test_an_inr_judged_against_the_reference_range_on_warfarin_is_caught(kb, years):
    year, event = first_event(years, lambda e: any(isinstance(f, LabFact) and f.target for f in e.facts)
                         and not any(isinstance(f, MedicationFact) and f.action == "start" for f in e.facts))
    assert not range_violations(kb, year)
    broken = year.model_copy(update={"events": [e.model_copy(update={"facts": [
        f.model_copy(update={"target": None}) if isinstance(f, LabFact) else f for f in e.facts]})
        for e in year.events]})
    assert any(v.startswith("[therapeutic_range_used]") and event.event_id in v
               for v in range_violations(kb, broken))


def test_warfarin_started_at_5_mg_at_84_is_caught(kb, years):
    year, event = first_event([y for y in years if y.persona.age >= 80], _starts("warfarin"))
    assert not start_dose_violations(kb, year)
    broken = year.model_copy(update={"events": [e.model_copy(update={"facts": [
        f.model_copy(update={"dose": 5.0}) if isinstance(f, MedicationFact) and f.drug == "warfarin"
        and f.action == "start" else f for f in e.facts]}) for e in year.events]})
    assert any(v.startswith("[start_dose_rule]") and event.event_id in v for v in start_dose_violations(kb, broken))


def test_a_qt_prolonging_drug_in_long_qt_with_no_ecg_is_caught(kb, years):
    year, event = first_event(years, lambda e: any(isinstance(f, CautionFact) and f.rule.startswith("contraindication:")
                                              and kb.labs["qtc"] and any(isinstance(g, LabFact) and g.lab == "qtc"
                                                                         for g in e.facts) for f in e.facts))
    assert not qt_violations(kb, year)
    broken = _without(year, lambda e, f: isinstance(f, LabFact) and f.lab == "qtc")
    assert any(v.startswith("[qt_rule]") and event.event_id in v and "that day" in v
               for v in qt_violations(kb, broken))


def test_sleep_attacks_left_for_a_later_visit_are_caught(kb, years):
    year, event = first_event(years, lambda e: any(isinstance(f, AdviceFact) and f.advice == "no_driving_sleep_attacks"
                                              for f in e.facts))
    assert not serious_harm_violations(kb, year)
    broken = _without(year, lambda e, f: e.event_id == event.event_id and (
        isinstance(f, AdviceFact) or isinstance(f, MedicationFact) and f.action in ("stop", "decrease")))
    found = serious_harm_violations(kb, broken)
    assert any("neither lowered nor stopped" in v and event.event_id in v for v in found), found
    assert any("without the advice" in v for v in found), found


def test_orthopnoea_noted_and_left_is_caught(kb, years):
    year, event = first_event(years, lambda e: any(isinstance(f, MedicationFact) and f.reason.startswith("symptom:")
                                              for f in e.facts))
    assert not red_flag_violations(kb, year)
    broken = _without(year, lambda e, f: e.event_id == event.event_id and isinstance(f, MedicationFact))
    assert any(v.startswith("[red_flag_acted_on]") and event.event_id in v for v in red_flag_violations(kb, broken))


def test_prednisolone_40_mg_for_56_days_with_no_taper_is_caught(kb, years):
    year, event = first_event(years, lambda e: any(isinstance(f, MedicationFact) and f.reason == "taper"
                                                   for f in e.facts))
    assert not taper_violations(kb, year)
    broken = _without(year, lambda e, f: isinstance(f, MedicationFact) and f.reason == "taper")
    assert any(v.startswith("[steroid_taper]") and "no step down" in v for v in taper_violations(kb, broken))


def test_amoxicillin_passed_over_for_its_own_kidney_dose_rule_is_caught(kb, years):
    year, event = first_event(years, lambda e: any(isinstance(f, MedicationFact) and f.drug == "amoxicillin"
                                              and f.frequency == "twice_daily" and f.dose <= 500 for f in e.facts))
    assert not renal_cap_violations(kb, year)
    passed_over = AvoidedFact(drug="amoxicillin", traps=[], rules=["rule:antibiotics_amoxicillin_egfr_30"],
                              instead="doxycycline")
    broken = year.model_copy(update={"events": [e.model_copy(update={"facts": [*e.facts, passed_over]})
                                                if e.event_id == event.event_id else e for e in year.events]})
    assert any(v.startswith("[renal_dose_not_bar]") for v in renal_cap_violations(kb, broken))


def test_a_work_up_left_for_weeks_after_the_turning_point_is_caught(kb, years):
    year = years[0]
    assert not workup_violations(kb, year)
    tests = next(e for e in year.events if e.kind == "diagnostic_test")
    late = [e.model_copy(update={"index": e.index + WORKUP_ENCOUNTERS + 5}) if e.index >= tests.index else e
            for e in year.events]
    assert any(v.startswith("[workup_promptly]") and "work-up" in v
               for v in workup_violations(kb, year.model_copy(update={"events": late})))


def test_suicidal_thoughts_found_with_no_safety_plan_are_caught(kb, years):
    year, event = first_event(years, lambda e: any(isinstance(f, AdviceFact) and f.advice == "safety_plan_crisis"
                                              for f in e.facts))
    assert not advice_violations(kb, year)
    broken = _without(year, lambda e, f: isinstance(f, AdviceFact) and f.advice == "safety_plan_crisis")
    assert any(v.startswith("[advice_given]") and event.event_id in v for v in advice_violations(kb, broken))


def test_congestion_at_the_turning_point_left_untreated_is_caught(kb, years):
    # (the turning point noticed at a follow-up; a diagnosis visit answering a weight alarm carries such a rise too,
    # and is read by `hf_weight_gain_acted_on`, not by this check)
    year, event = first_event(years, lambda e: e.kind == "follow_up" and any(
        isinstance(f, MedicationFact) and f.reason.startswith("symptom:") and f.indication.startswith("symptom:")
        for f in e.facts))
    assert not red_flag_violations(kb, year)
    broken = _without(year, lambda e, f: e.event_id == event.event_id and isinstance(f, MedicationFact))
    assert any(v.startswith("[red_flag_acted_on]") and event.event_id in v for v in red_flag_violations(kb, broken))


def test_colitis_left_unchecked_after_its_drug_stopped_is_caught(kb, years):
    def unreplaced_stop(e: Event) -> bool:
        return any(isinstance(f, MedicationFact) and f.action == "stop" and f.reason.startswith("adverse_effect:")
                   and f.step and kb.conditions["ulcerative_colitis"].care_path[0].key == f.step for f in e.facts)

    year, event = first_event([y for y in years if y.persona.condition == "ulcerative_colitis"], unreplaced_stop)
    assert not stop_recheck_violations(kb, year)
    broken = _without(year, lambda e, f: e.index > event.index and isinstance(f, LabFact) and f.lab == "mayo_score")
    assert any(v.startswith("[rechecked_after_stop]") for v in stop_recheck_violations(kb, broken))


def test_pleuritic_pain_sent_home_with_cough_advice_is_caught(kb, years):
    year, event = first_event(years, lambda e: any(isinstance(f, AdviceFact) and f.advice == "self_care_cough"
                                              for f in e.facts))
    assert not red_flag_examined_violations(kb, year)
    sign = next(s for s in kb.illnesses["community_pneumonia"].symptoms if s.at_examination)
    told = SymptomFact(symptom=f"community_pneumonia.{sign.key}", name=sign.name, lay=sign.lay)
    broken = year.model_copy(update={"events": [e.model_copy(update={"facts": [*e.facts, told]})
                                                if e.event_id == event.event_id else e for e in year.events]})
    assert any(v.startswith("[red_flag_examined]") for v in red_flag_examined_violations(kb, broken))


def test_steroid_bone_protection_a_long_course_brings_calcium_and_vitamin_d_a_burst_does_not(kb, years):
    # [steroid_bone_protection] "no calcium or vitamin D" beside prednisolone 40 mg for 8 weeks (seeds 19, 23, 29)
    long_courses, protected = 0, 0
    for year in years:
        for event in year.events:
            for fact in event.facts:
                if not (isinstance(fact, MedicationFact) and fact.drug == "prednisolone" and fact.action == "start"):
                    continue
                # (started with it: the last course's partners may stop that visit, `co_prescription_ends_with_drug`)
                partners = {f.drug for f in event.facts if isinstance(f, MedicationFact) and f.action == "start"
                            and f.indication == "with:prednisolone"}
                if (fact.course_days or 0) < 28:
                    assert not partners, f"{event.event_id}: a {fact.course_days}-day burst with {partners}"
                else:
                    long_courses += 1
                    protected += "cholecalciferol" in partners
    assert long_courses and protected >= 0.8 * long_courses, (protected, long_courses)


def test_latent_tb_is_weighed_at_every_prednisolone_start(kb, years):
    # [latent_tb_caution] prednisolone started with latent TB on record and no word of it (seeds 19, 23, 29)
    starts = [(y, e) for y in years if "latent_tuberculosis" in y.persona.histories for e in y.events
              if any(isinstance(f, MedicationFact) and f.drug == "prednisolone" and f.action == "start"
                     for f in e.facts)]
    assert starts, "no prednisolone started with latent TB among 1,000 patients: the rule is never exercised"
    assert all(any(isinstance(f, CautionFact) and f.rule == "contraindication:latent_tuberculosis" for f in e.facts)
               for _, e in starts)


def test_a_diuretic_at_65_started_with_no_sodium_is_caught(kb, years):
    # [qt_rule] the Beers hyponatraemia caution asks for a sodium: "check sodium when starting" said, and none
    # measured all year on lithium with furosemide (the seed-19, -23 and -29 reads)
    def cautioned_start(e: Event) -> bool:
        return any(isinstance(f, CautionFact) and f.rule == "rule:beers_hyponatraemia" for f in e.facts) and \
            any(isinstance(f, LabFact) and f.lab == "sodium" for f in e.facts)

    year, event = first_event(years, cautioned_start)
    assert not qt_violations(kb, year)
    broken = _without(year, lambda e, f: isinstance(f, LabFact) and f.lab == "sodium")
    assert any(v.startswith("[qt_rule]") and "sodium" in v and event.event_id in v for v in qt_violations(kb, broken))


def test_a_qt_prolonging_dose_raised_at_a_qtc_past_the_limit_is_caught(kb, years):
    """An increase of a drug a long-QT caution holds, with a QTc of 495 ms read that visit."""
    held = kb.expand([d for r in kb.contraindications if r.no_increase_above for d in r.drugs])
    year, event = first_event([y for y in years if "long_qt_syndrome" in y.persona.histories], lambda e: any(
        isinstance(f, MedicationFact) and f.action == "increase" and f.drug in held for f in e.facts))
    assert not raise_held_violations(kb, year)
    broken = year.model_copy(update={"events": [e.model_copy(update={"facts": [
        *e.facts, LabFact(lab="qtc", value=495, unit="ms")]}) if e is event else e for e in year.events]})
    assert any(v.startswith("[raise_held_past_limit]") and event.event_id in v
               for v in raise_held_violations(kb, broken))


def test_an_augmenting_drug_with_no_antidepressant_left_is_caught(kb, years):
    """An augmentation start with the antidepressant it was added to taken out of the year."""
    year, event = first_event([y for y in years if y.persona.condition == "major_depressive_disorder"], lambda e: any(
        isinstance(f, MedicationFact) and f.action == "start" and f.step == "augmentation" for f in e.facts))
    assert not augment_violations(kb, year)
    broken = _without(year, lambda e, f: isinstance(f, MedicationFact) and f.step == "ssri_first_line")
    assert any(v.startswith("[augments_a_base]") and event.event_id in v for v in augment_violations(kb, broken))


# --- a history's baseline; venlafaxine's renal start (the seed-53 read) -------------------------------------------


def test_history_baseline_av_block_and_long_qt_get_an_ecg_the_visit_they_are_known(kb, years):
    check([v for year in years for v in baseline_violations(kb, year)])
    # (the rule is exercised both ways: told as a past illness, and as what the long-term drug is for)
    for key in ("bradycardia_heart_block", "long_qt_syndrome"):
        assert any(key in y.persona.histories for y in years), f"no {key} among 1,000 patients"


def test_av_block_told_with_no_ecg_all_year_is_caught(kb, years):
    year, event = first_event(years, lambda e: any(isinstance(f, HistoryFact) and f.history == "bradycardia_heart_block"
                                                   for f in e.facts))
    assert not baseline_violations(kb, year)
    broken = _without(year, lambda e, f: isinstance(f, LabFact) and f.lab == "pr_interval")
    assert any(v.startswith("[history_baseline]") and event.event_id in v for v in baseline_violations(kb, broken))


def test_venlafaxine_started_at_75_mg_below_egfr_30_is_caught(kb, years):
    def low_start(e):  # noqa: ANN001, ANN202
        return _starts("venlafaxine")(e) and any(isinstance(f, MedicationFact) and f.drug == "venlafaxine"
                                                  and f.dose == 37.5 for f in e.facts)
    year, event = first_event(years, low_start)
    assert not start_dose_violations(kb, year)
    broken = year.model_copy(update={"events": [e.model_copy(update={"facts": [
        f.model_copy(update={"dose": 75.0}) if isinstance(f, MedicationFact) and f.drug == "venlafaxine"
        and f.action == "start" else f for f in e.facts]}) for e in year.events]})
    assert any(v.startswith("[start_dose_rule]") and "venlafaxine_egfr_30_start" in v and event.event_id in v
               for v in start_dose_violations(kb, broken))
