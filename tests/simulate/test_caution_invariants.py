"""What a physician weighs beside a prescription, over 1,000 seeded patients (the seed-29 read, issue 27): an ARB after
ACE-inhibitor angioedema, a potassium salt substitute once potassium is at risk, daytime sleepiness on a dopamine
agonist, bupropion with poor kidneys. Each rule also has a crafted violation that its check must catch.

Failure messages start with the rule's name in brackets (the names `docs/simulation.md` lists).
"""

from __future__ import annotations

from medmemorybench.render.conversation import SessionRenderer
from medmemorybench.render.models import session_text
from medmemorybench.render.templates import load_templates
from medmemorybench.simulate.models import (
    AdverseFact,
    AdviceFact,
    AllergyFact,
    CareYear,
    CautionFact,
    HistoryFact,
    LabFact,
    MedicationFact,
    SymptomFact,
)
from medmemorybench.simulate.safety import Constraint, Patient, rule_text, verdict
from tests.simulate.caution_check import (
    NO_DRIVING_SLEEP,
    SLEEP_ONSET_CLASS,
    advice_safety_violations,
    arb_caution_violations,
    blood_test_violations,
    caution_when_told_violations,
    class_harm_violations,
    habit_stop_violations,
    low_count_violations,
    red_flag_violations,
    sedation_violations,
    sleep_onset_violations,
    year_angioedema_violations,
)
from tests.simulate.clinical import check, first_event, patient_rule_violations, with_facts

SALT = "stop_potassium_salt_substitute"
COUNT = "blood_count_today"
CIRRHOSIS = "chronic_liver_disease"


def _edit(year: CareYear, event_id: str, edit) -> CareYear:  # noqa: ANN001
    """The year with one visit's facts replaced by `edit(facts)`."""
    return year.model_copy(update={"events": [e.model_copy(update={"facts": edit(e.facts)}) if e.event_id == event_id
                                              else e for e in year.events]})


def _has_advice(advice: str):  # noqa: ANN202
    return lambda e: any(isinstance(f, AdviceFact) and f.advice == advice for f in e.facts)


# --- the cohort --------------------------------------------------------------------------------------


def test_arb_after_ace_angioedema_every_arb_start_carries_the_angioedema_caution(kb, years):
    check([v for year in years for v in arb_caution_violations(kb, year)])
    cautioned = {f.rule for y in years for e in y.events for f in e.facts if isinstance(f, CautionFact)
                 and f.rule in ("allergy:ace_inhibitor_reaction", "contraindication:ace_inhibitor_angioedema")}
    assert cautioned, "no ARB started after ACE-inhibitor angioedema among 1,000 patients: the rule is never exercised"


def _year_angioedema(e) -> bool:  # noqa: ANN001
    return any(isinstance(f, AdverseFact) and f.effect == "angioedema" for f in e.facts)


def test_arb_after_year_angioedema_an_arb_after_angioedema_had_this_year_carries_the_caution(kb, years):
    check([v for year in years for v in year_angioedema_violations(kb, year)])
    had = [y for y in years if any(_year_angioedema(e) for e in y.events)]
    assert had, "no ACE-inhibitor angioedema during the year among 1,000 patients: the rule is never exercised"


def test_an_arb_after_year_angioedema_with_no_word_of_it_is_caught(kb, years):
    """Losartan started at the visit after lisinopril angioedema, with no caution; then sacubitril/valsartan."""
    year, event = first_event(years, _year_angioedema)
    year = year.model_copy(update={"events": [e for e in year.events if e.index <= event.index]})
    assert not year_angioedema_violations(kb, year)
    broken = with_facts(year, MedicationFact(drug="losartan", action="start", dose=25, unit="mg",
                                             frequency="once_daily", reason="hypertension"))
    found = year_angioedema_violations(kb, broken)
    assert any(v.startswith("[arb_after_year_angioedema]") and "losartan" in v and "no word" in v for v in found)
    cautioned = with_facts(year, MedicationFact(drug="losartan", action="start", dose=25, unit="mg",
                                                frequency="once_daily", reason="hypertension"),
                           CautionFact(drug="losartan", rule="allergy:ace_inhibitor_reaction"))
    assert not year_angioedema_violations(kb, cautioned)
    arni = with_facts(year, MedicationFact(drug="sacubitril_valsartan", action="start", dose=24, unit="mg",
                                           frequency="twice_daily", reason="heart_failure"))
    assert any("sacubitril_valsartan started after" in v for v in year_angioedema_violations(kb, arni))


def test_habit_stop_advised_a_salt_substitute_is_stopped_the_visit_its_risk_is_on_record(kb, years):
    check([v for year in years for v in habit_stop_violations(kb, year)])
    stop = kb.habits["potassium_salt_substitute"].stop
    # (the least a physician asks of the rule: RAAS blockers, MRAs and CKD G3 on are risks)
    assert stop is not None and {"losartan", "lisinopril", "spironolactone"} <= kb.expand(stop.taking)
    assert stop.egfr_below is not None and stop.egfr_below >= 60
    assert any(_has_advice(SALT)(e) for y in years for e in y.events), "the salt substitute is never advised against"


def test_sleep_onset_no_driving_agonist_sleepiness_is_acted_on_the_day_it_is_told(kb, years):
    check([v for year in years for v in sleep_onset_violations(kb, year)])
    told = {f.drug for y in years for e in y.events if _has_advice(NO_DRIVING_SLEEP)(e) for f in e.facts
            if isinstance(f, MedicationFact) and f.action in ("stop", "decrease")}
    # (any agonist: the warning is the class's; once-a-day patients below eGFR 30 now take pramipexole, renal_frequency)
    assert any(kb.drugs[d].drug_class == SLEEP_ONSET_CLASS for d in told), "no agonist sleepiness in 1,000 patients"


def test_drug_red_flag_same_day_a_fever_on_a_drug_that_can_take_the_white_cells_gets_a_count(kb, years):
    check([v for year in years for v in red_flag_violations(kb, year)])
    assert any(_has_advice(COUNT)(e) for y in years for e in y.events), "no fever on such a drug in 1,000 patients"


def test_low_count_rechecked_a_low_white_count_is_repeated_until_it_recovers(kb, years):
    check([v for year in years for v in low_count_violations(kb, year)])
    flag = kb.drug_red_flags["myelotoxic"]
    repeats = [e for y in years for e in y.events if not any(isinstance(f, SymptomFact) for f in e.facts)
               and {f.lab for f in e.facts if isinstance(f, LabFact)} >= set(flag.labs)]
    assert repeats, "no low white count repeated in 1,000 patients: the rule is never exercised"


def test_class_harm_not_repeated_no_drug_of_a_harm_after_one_was_stopped_for_it(kb, years):
    check([v for year in years for v in class_harm_violations(kb, year)])


def test_advice_safe_for_condition_no_alcohol_limit_in_cirrhosis(kb, years):
    check([v for year in years for v in advice_safety_violations(kb, year)])
    stop = kb.habits["nightly_alcohol"].stop
    assert stop is not None and CIRRHOSIS in stop.conditions and stop.advice == "alcohol_stop_cirrhosis"


def test_caution_when_told_a_history_told_on_a_drug_it_cautions_is_weighed_that_visit(kb, years):
    check([v for year in years for v in caution_when_told_violations(kb, year)])
    assert any(isinstance(f, CautionFact) and any(isinstance(g, AllergyFact | HistoryFact) for g in e.facts)
               and not any(isinstance(g, MedicationFact) and g.action == "start" for g in e.facts)
               for y in years for e in y.events for f in e.facts), "no caution said at a telling in 1,000 patients"


def test_blood_tests_within_reach_no_drug_checked_sooner_than_the_patient_can_give_blood(kb, years):
    check([v for year in years for v in blood_test_violations(kb, year)])


# --- the rules themselves ----------------------------------------------------------------------------


def test_bupropion_stays_at_150_mg_below_egfr_60_and_its_caution_says_so(kb):
    # [renal_rule] bupropion 150 mg at eGFR 21 beside clopidogrel, then a seizure (the seed-29 read)
    for egfr in (21.0, 45.0):
        result = verdict(kb, "bupropion", Patient(70, "male", "major_depressive_disorder", egfr=egfr))
        assert result.is_allowed and result.doses() == [150.0], (egfr, result.doses())
        caution = rule_text(kb, "rule:bupropion_egfr_60", "bupropion", bars=False)
        assert caution is not None and "150 mg" in caution.en and "150 mg" in caution.zh
    assert verdict(kb, "bupropion", Patient(70, "male", "major_depressive_disorder", egfr=75.0)).doses() == [150, 300]


def test_clopidogrel_tells_a_bupropion_patient_of_bupropion_alone(kb):
    # [caution_text_matches_pair] "raising resmetirom (reduce to 80 mg), pioglitazone ... and bupropion exposure"
    # read out to a patient starting bupropion (the seed-29 read)
    text = rule_text(kb, "interaction:clopidogrel+bupropion", "bupropion", bars=False)
    assert text is not None and "fit" in text.en and "resmetirom" not in text.en and "pioglitazone" not in text.en
    assert "瑞司美替罗" not in text.zh and "抽搐" in text.zh


def test_an_arb_is_cautioned_after_ace_angioedema_and_an_arni_is_barred(kb):
    patient = Patient(70, "male", "hfpef")
    for rule_id in ("allergy:ace_inhibitor_reaction", "contraindication:ace_inhibitor_angioedema"):
        text = rule_text(kb, rule_id, "losartan", bars=False)
        assert text is not None and "ambulance" in text.en and "救护车" in text.zh, rule_id
    allergic = patient.with_constraint(Constraint("allergy", "ace_inhibitor_reaction"))
    assert [b.rule for b in verdict(kb, "losartan", allergic).cautions] == ["allergy:ace_inhibitor_reaction"]
    assert not verdict(kb, "sacubitril_valsartan", allergic).is_allowed
    told = patient.with_constraint(Constraint("disease_history", "ace_inhibitor_angioedema"))
    assert "contraindication:ace_inhibitor_angioedema" in [b.rule for b in verdict(kb, "losartan", told).cautions]


def test_angioedema_on_an_ace_inhibitor_bars_every_ace_inhibitor_and_the_arni(kb):
    # (seed 71's question read: ramipril offered as a safe option after lisinopril was stopped for angioedema)
    harmed = Patient(60, "male", "diabetic_kidney_disease", toxicities={"angioedema"}, intolerant={"lisinopril"})
    for drug in ("enalapril", "ramipril", "perindopril", "sacubitril_valsartan"):
        assert [b.rule for b in verdict(kb, drug, harmed).blocks] == ["toxicity:angioedema"], drug
    assert verdict(kb, "losartan", harmed).is_allowed  # (an ARB is not barred: cautioned after ACE angioedema)
    effects = {e.key: e for d in ("lisinopril", "sacubitril_valsartan") for e in kb.drugs[d].adverse_effects}
    assert effects["angioedema"].bars_kind == "angioedema"


# --- crafted violations ------------------------------------------------------------------------------


def test_losartan_after_ramipril_angioedema_with_no_word_of_it_is_caught(kb, years):
    year, event = first_event(years, lambda e: any(
        isinstance(f, CautionFact) and f.rule == "allergy:ace_inhibitor_reaction" for f in e.facts))
    assert not arb_caution_violations(kb, year)
    broken = _edit(year, event.event_id, lambda facts: [f for f in facts if not (
        isinstance(f, CautionFact) and f.rule == "allergy:ace_inhibitor_reaction")])
    assert any(v.startswith("[arb_after_ace_angioedema]") and event.event_id in v
               for v in arb_caution_violations(kb, broken))


def test_a_salt_substitute_never_stopped_beside_an_arb_is_caught(kb, years):
    year, event = first_event(years, _has_advice(SALT))
    assert not habit_stop_violations(kb, year)
    broken = _edit(year, event.event_id, lambda facts: [f for f in facts if not (
        isinstance(f, AdviceFact) and f.advice == SALT)])
    found = habit_stop_violations(kb, broken)
    assert any(v.startswith("[habit_stop_advised]") and event.event_id in v and "not given" in v for v in found), found


def test_a_salt_substitute_stopped_weeks_after_its_risk_is_caught(kb, years):
    year, event = first_event(years, _has_advice(SALT))
    later = next(e for e in year.events if e.index > event.index)
    moved = _edit(_edit(year, event.event_id, lambda facts: [f for f in facts if not (
        isinstance(f, AdviceFact) and f.advice == SALT)]), later.event_id, lambda facts: [*facts, AdviceFact(
            advice=SALT)])
    assert any(v.startswith("[habit_stop_advised]") and event.event_id in v for v in habit_stop_violations(kb, moved))


def test_losartan_started_months_after_the_salt_advice_with_no_word_of_it_is_caught(kb, years):
    # (told to stop in January at an eGFR of 57; losartan in September: the advice is said again that day)
    again = [(y, [e for e in y.events if _has_advice(SALT)(e)]) for y in years]
    year, event = next(((y, told[1]) for y, told in again if len(told) > 1), (None, None))
    assert year is not None and event is not None, "no salt-substitute advice said again among the 1,000 patients"
    assert not habit_stop_violations(kb, year)
    broken = _edit(year, event.event_id, lambda facts: [f for f in facts if not (
        isinstance(f, AdviceFact) and f.advice == SALT)])
    assert any(v.startswith("[habit_stop_advised]") and event.event_id in v and "said again" in v
               for v in habit_stop_violations(kb, broken))


def test_a_salt_substitute_advised_against_before_any_risk_is_caught(kb, years):
    # (the advice says "with your kidneys or with medicines that keep potassium": untrue before either is on record)
    year, event = first_event(years, lambda e: _has_advice(SALT)(e) and e.index > 2 and not any(
        isinstance(f, LabFact) and f.lab == "egfr" for f in e.facts))
    first = year.events[0]
    early = _edit(year, first.event_id, lambda facts: [*facts, AdviceFact(advice=SALT)])
    assert any(v.startswith("[habit_stop_advised]") and first.event_id in v and "before" in v
               for v in habit_stop_violations(kb, early))


def test_ropinirole_sleepiness_left_for_weeks_with_no_driving_advice_is_caught(kb, years):
    year, event = first_event(years, lambda e: _has_advice(NO_DRIVING_SLEEP)(e) and any(
        isinstance(f, MedicationFact) and kb.drugs[f.drug].drug_class == SLEEP_ONSET_CLASS for f in e.facts))
    assert not sleep_onset_violations(kb, year)
    broken = _edit(year, event.event_id, lambda facts: [f for f in facts if not (
        isinstance(f, AdviceFact) or isinstance(f, MedicationFact) and f.action in ("stop", "decrease"))])
    found = sleep_onset_violations(kb, broken)
    assert any("neither lowered" in v and event.event_id in v for v in found), found
    assert any("no driving advice" in v for v in found), found


def test_bupropion_raised_to_300_mg_at_a_low_egfr_is_caught(kb, years):
    year, event = first_event(years, lambda e: any(isinstance(f, MedicationFact) and f.drug == "bupropion"
                                              and f.action == "start" for f in e.facts))
    assert not patient_rule_violations(kb, year, "renal")
    low = LabFact(lab="egfr", value=21.0, unit="mL/min/1.73m2")
    broken = _edit(year, event.event_id, lambda facts: [low, *[
        f.model_copy(update={"dose": 300.0}) if isinstance(f, MedicationFact) and f.drug == "bupropion" else f
        for f in facts]])
    assert any(v.startswith("[renal_rule]") and "bupropion_egfr_60_dose" in v
               for v in patient_rule_violations(kb, broken, "renal"))


def _low_count_stop(kb):  # noqa: ANN001, ANN202
    """Picks a visit that stops a drug for a low white count (sulfasalazine leukopenia, the seed-53 read's E042)."""
    flag = kb.drug_red_flags["myelotoxic"]
    return lambda e: any(isinstance(f, MedicationFact) and f.action == "stop" and f.reason.startswith("adverse_effect:")
                         and f.reason.partition(":")[2] in flag.effects for f in e.facts)


def test_a_low_white_count_never_repeated_is_caught(kb, years):
    # (the seed-53 read, P0014 E042: sulfasalazine stopped at a white count of 2.4, no count for the rest of the year)
    flag = kb.drug_red_flags["myelotoxic"]
    year, event = first_event(years, _low_count_stop(kb))
    assert not low_count_violations(kb, year)
    later = [e.event_id for e in year.events[event.index:]]
    broken = year.model_copy(update={"events": [e.model_copy(update={"facts": [
        f for f in e.facts if not (isinstance(f, LabFact) and f.lab in flag.labs)]}) if e.event_id in later else e
        for e in year.events]})
    found = low_count_violations(kb, broken)
    assert any(v.startswith("[low_count_rechecked]") and event.event_id in v for v in found), found


def test_gargles_for_a_fever_after_a_drug_stopped_for_a_low_count_are_caught(kb, years):
    # (the seed-53 read, P0014 E056: four weeks after sulfasalazine stopped at a white count of 2.4, never repeated, a
    # sore throat with fever got salt-water gargles; told before the count is seen back in range, it gets one that day)
    year, event = first_event(years, _low_count_stop(kb))
    after = year.events[event.index]  # (the next visit: the count not yet repeated)
    sore = SymptomFact(symptom="strep_throat.sore_throat_fever", name=kb.illnesses["strep_throat"].symptoms[0].name,
                       lay=kb.illnesses["strep_throat"].symptoms[0].lay)
    broken = _edit(year, after.event_id, lambda facts: [sore, *[f for f in facts if not isinstance(f, LabFact)]])
    found = red_flag_violations(kb, broken)
    assert any(after.event_id in v and "not measured that day" in v for v in found), found
    assert any(after.event_id in v and "blood_count_today_recovering not said" in v for v in found), found


def test_bupropion_started_beside_two_seizure_risk_factors_is_caught(kb, years):
    # [risk_rule] bupropion after a stroke, with nightly drinking and clopidogrel, then a seizure (the seed-53 read)
    year, event = first_event(years, lambda e: any(isinstance(f, MedicationFact) and f.drug == "bupropion"
                                              and f.action == "start" for f in e.facts))
    assert not patient_rule_violations(kb, year, "risk")
    first = year.events[0].event_id
    factors = [MedicationFact(drug=drug, action="start", dose=dose, unit="mg", frequency="once_daily", reason="crafted",
                              indication="crafted") for drug, dose in (("clopidogrel", 75.0), ("aripiprazole", 5.0))]
    broken = _edit(year, first, lambda facts: [*facts, *factors])
    found = patient_rule_violations(kb, broken, "risk")
    assert any(v.startswith("[risk_rule]") and "bupropion_seizure_risk_factors" in v and event.event_id in v
               for v in found), found


def test_bupropion_is_barred_by_two_seizure_risk_factors_and_held_at_150_mg_by_one(kb):
    # (Wellbutrin XL label 5.3, Elontril and Zyban SmPC 4.4: a past stroke, heavy drinking, clopidogrel raising it)
    stroke = Constraint("disease_history", "stroke_history")
    drinking = Constraint("diet_preference", "nightly_alcohol")
    clopidogrel = Constraint("medication_history", "clopidogrel", indication="stroke_history")
    patient = Patient(60, "female", "major_depressive_disorder", [stroke, drinking, clopidogrel], egfr=81.0)
    assert "rule:bupropion_seizure_risk_factors" in {b.rule for b in verdict(kb, "bupropion", patient).blocks}
    for one in ([drinking], [stroke], []):
        patient = Patient(60, "female", "major_depressive_disorder", one, egfr=81.0,
                          taking=set() if one else {"prednisolone"})
        result = verdict(kb, "bupropion", patient)
        assert result.is_allowed and result.doses() == [150.0], (one, result.blocks, result.doses())
        assert "rule:bupropion_seizure_risk_factor" in {c.rule for c in result.cautions}
    assert verdict(kb, "bupropion", Patient(60, "female", "major_depressive_disorder", egfr=81.0)).doses() == [150, 300]
    # an eGFR under 30 is a factor too (its metabolites build up; the seed-61 read: a nightly drinker at eGFR 20)
    kidneys = Patient(46, "male", "major_depressive_disorder", [drinking], egfr=20.0)
    assert "rule:bupropion_seizure_risk_factors" in {b.rule for b in verdict(kb, "bupropion", kidneys).blocks}
    assert verdict(kb, "bupropion", Patient(46, "male", "major_depressive_disorder", egfr=20.0)).is_allowed
    text = rule_text(kb, "rule:bupropion_seizure_risk_factors", "bupropion", bars=True)
    assert text is not None and "stroke" in text.en and "卒中" in text.zh


def test_gargles_for_a_febrile_sore_throat_on_sulfasalazine_are_caught(kb, years):
    # (the seed-31 read, P0014 E029: self-care advice only, the drug continued, no white count for a month)
    year, event = first_event(years, _has_advice(COUNT))
    assert not red_flag_violations(kb, year)
    broken = _edit(year, event.event_id, lambda facts: [f for f in facts if not (
        isinstance(f, LabFact) and f.lab in ("wbc", "neutrophils") or isinstance(f, AdviceFact) and f.advice == COUNT
        or isinstance(f, MedicationFact) and f.reason == "blood_count_normal")])
    found = red_flag_violations(kb, broken)
    assert any("not measured" in v and event.event_id in v for v in found), found
    assert any(COUNT in v for v in found), found


def test_a_drug_given_back_on_a_low_count_is_caught(kb, years):
    year, event = first_event(years, _has_advice(COUNT))
    broken = _edit(year, event.event_id, lambda facts: [
        f.model_copy(update={"value": 0.3}) if isinstance(f, LabFact) and f.lab == "neutrophils" else f for f in facts])
    assert any("not stopped" in v and event.event_id in v for v in red_flag_violations(kb, broken))


def test_pramipexole_after_ropinirole_stopped_for_hallucinations_is_caught(kb, years):
    year = years[0]
    first, later = year.events[1], year.events[3]
    stop = MedicationFact(drug="ropinirole", action="stop", dose=2.0, unit="mg", frequency="once_daily",
                          reason="adverse_effect:hallucinations")
    start = MedicationFact(drug="pramipexole", action="start", dose=0.375, unit="mg", frequency="once_daily",
                           reason="adverse_effect:hallucinations")
    broken = _edit(_edit(year, first.event_id, lambda facts: [*facts, stop]), later.event_id,
                   lambda facts: [*facts, start])
    found = class_harm_violations(kb, broken)
    assert any(v.startswith("[class_harm_not_repeated]") and later.event_id in v and "pramipexole" in v
               for v in found), found


def test_one_drink_a_day_in_cirrhosis_is_caught(kb, years):
    # (the seed-31 read, P0014 E060/E089/E092)
    year, event = first_event(years, lambda e: _has_advice("alcohol_stop_cirrhosis")(e) and any(
        isinstance(f, HistoryFact) and f.history == CIRRHOSIS or isinstance(f, MedicationFact)
        and f.indication == f"history:{CIRRHOSIS}" for f in e.facts))
    assert not advice_safety_violations(kb, year)
    broken = _edit(year, event.event_id, lambda facts: [*facts, AdviceFact(advice="alcohol_limit")])
    assert any(v.startswith("[advice_safe_for_condition]") and event.event_id in v
               for v in advice_safety_violations(kb, broken))


def test_angioedema_corrected_on_losartan_with_no_word_of_it_is_caught(kb, years):
    # (the seed-31 read, P0009 E063: "my throat swelled" told while on losartan, no reassessment)
    year, event = first_event(years, lambda e: any(isinstance(f, AllergyFact) for f in e.facts) and any(
        isinstance(f, CautionFact) for f in e.facts) and not any(
        isinstance(f, MedicationFact) and f.action == "start" for f in e.facts))
    assert not caution_when_told_violations(kb, year)
    broken = _edit(year, event.event_id, lambda facts: [f for f in facts if not isinstance(f, CautionFact)])
    assert any(v.startswith("[caution_when_told]") and event.event_id in v
               for v in caution_when_told_violations(kb, broken))


def test_lithium_started_on_a_remote_worker_is_caught(kb, years):
    # (the seed-31 read, P0015 E056: a level a week after the start, from a patient who gives blood every 3 months; a
    # remote site's roster is not drawn beside a hundred visits, so the same limit comes from a plan that pays for a
    # blood test every three months)
    limited = {k for k, p in kb.economic_profiles.items() if p.min_blood_test_interval_days}
    year = next((y for y in years if any(t.option in limited for t in y.persona.traps)), None)
    assert year is not None, "no patient who can give blood only every three months among the 1,000"
    event = year.events[-1]
    lithium = MedicationFact(drug="lithium", action="start", dose=400.0, unit="mg", frequency="once_daily",
                             reason="add_on")
    found = blood_test_violations(kb, _edit(year, event.event_id, lambda facts: [*facts, lithium]))
    assert any(v.startswith("[blood_tests_within_reach]") and "lithium_level" in v for v in found), found
    assert not verdict(kb, "lithium", Patient(40, "male", "major_depressive_disorder", [Constraint(
        "lifestyle_economic", "remote_worker_rare_blood_tests", 90)])).is_allowed


# --- sedation: the drowsiness and driving warning (the seed-53 read) ----------------------------------------------

SEDATION = ("sedation_warning", "sedation_warning_work")
"""The general warning and the job's."""


def _sedating_start(kb):  # noqa: ANN001, ANN202
    return lambda e: any(isinstance(f, MedicationFact) and f.action == "start"
                         and "sedating" in kb.drugs[f.drug].toxicities for f in e.facts)


def _job_traits(kb, year: CareYear) -> set[str]:  # noqa: ANN001
    return {t for o in kb.people.occupations if o.key == year.persona.occupation_key for t in o.traits}


def test_sedation_warned_every_sedating_start_says_the_drowsiness_and_driving_warning(kb, years):
    check([v for year in years for v in sedation_violations(kb, year)])
    said = {f.advice for y in years for e in y.events for f in e.facts if isinstance(f, AdviceFact)}
    assert set(SEDATION) <= said, "the warning, or the job's, is never said among 1,000 patients"


def test_the_sedation_warning_says_drowsiness_driving_and_machinery_in_both_languages(kb):
    for key in SEDATION:
        text = kb.advice[key].text
        assert all(w in text.en for w in ("drowsy", "drive", "machinery", "until you know how it affects you"))
        assert all(w in text.zh for w in ("犯困", "开车", "机器", "弄清楚它对您有什么影响之前"))
    assert "job" in kb.advice["sedation_warning_work"].text.en and "工作" in kb.advice["sedation_warning_work"].text.zh


def test_the_sedation_warning_is_said_in_the_visit_that_starts_the_drug_in_both_languages(kb, years):
    # (rendered: the words reach the patient, in English and in Chinese, at the first 20 visits that say either)
    warned = [(y, e, f.advice) for y in years[:400] for e in y.events if _sedating_start(kb)(e)
              for f in e.facts if isinstance(f, AdviceFact) and f.advice in SEDATION][:20]
    assert {advice for _, _, advice in warned} == set(SEDATION), "not both warnings among the first 400 patients"
    for language in ("en", "zh"):
        templates = load_templates(language)
        for year, event, warning in warned:
            said = session_text(SessionRenderer(kb, templates, year).render(event))
            assert getattr(kb.advice[warning].text, language) in said, (year.persona.persona_id, event.event_id)


def test_codeine_started_for_a_crane_operator_with_no_warning_is_caught(kb, years):
    at_work = [y for y in years if {"drives_all_day", "operates_machinery"} & _job_traits(kb, y)]
    year, event = first_event(at_work, _sedating_start(kb))
    assert not sedation_violations(kb, year)
    broken = _edit(year, event.event_id, lambda facts: [f for f in facts if not (
        isinstance(f, AdviceFact) and f.advice in SEDATION)])
    assert any(v.startswith("[sedation_warned]") and event.event_id in v for v in sedation_violations(kb, broken))
    # (the general warning is too little for a driver or a machinery worker: not at work either)
    general = _edit(year, event.event_id, lambda facts: [AdviceFact(advice="sedation_warning") if isinstance(
        f, AdviceFact) and f.advice == "sedation_warning_work" else f for f in facts])
    assert any(v.startswith("[sedation_warned]") and event.event_id in v for v in sedation_violations(kb, general))
