"""Clinical invariants over 1,000 seeded patients (every roster condition under 50 seeds), one test per rule.

Each failure message starts with the rule's name in brackets (the names `docs/simulation.md` lists).
"""

from __future__ import annotations

from collections import Counter, defaultdict

import pytest

from medmemorybench.knowledge.models import DOSES_PER_DAY
from medmemorybench.simulate.family import ADULT_AGE, is_eligible, standard_drugs
from medmemorybench.simulate.models import (
    WITHDRAWN,
    AdherenceFact,
    AdverseFact,
    CareYear,
    ComplicationFact,
    DiagnosisFact,
    EconomicFact,
    Event,
    HistoryFact,
    LabFact,
    MedicationFact,
    SymptomFact,
    TestFact,
)
from medmemorybench.simulate.safety import constraints_of, forbidden_by
from medmemorybench.simulate.summary import skeleton_share
from medmemorybench.simulate.timeline import course_end, state_on
from tests.simulate.caution_check import red_flag_symptoms
from tests.simulate.clinical import (
    N_SEEDS,
    check,
    days_between,
    dose_overrides,
    fail,
    formulations_given,
    given,
    histories,
    kinetic_bound,
    lab_envelope,
    patient_rule_violations,
    response_days,
)
from tests.simulate.findings_check import finding_value_violations, score_violations, unfilled_violations


def test_cohort_is_a_thousand_patients_over_every_condition(years):
    assert len(years) == 1000
    assert set(Counter(y.persona.condition for y in years).values()) == {N_SEEDS}


# --- labs ---------------------------------------------------------------------------------------


def _series(year):
    by_lab = defaultdict(list)
    for event in year.events:
        for fact in event.facts:
            if isinstance(fact, LabFact):
                by_lab[fact.lab].append((event, fact.value))
    return by_lab


def test_lab_kinetics_no_lab_moves_faster_than_it_can(kb, years):
    failures = []
    for year in years:
        for lab, series in _series(year).items():
            envelope = lab_envelope(kb, year, lab)
            for (e1, v1), (e2, v2) in zip(series, series[1:], strict=False):
                gap = days_between(e1.date, e2.date)
                bound = kinetic_bound(envelope, v1, v2, gap)
                if abs(v2 - v1) > bound + 1e-9:
                    failures.append(fail("lab_kinetics", year, e2, f"{lab} {v1} -> {v2} in {gap} days "
                                         f"(at most {bound:.3g} possible)"))
    check(failures)


def _urgent(kb, year: CareYear, event: Event, lab: str) -> bool:  # noqa: ANN001
    """Whether `lab` is measured at this visit for a red flag told there (a fever on sulfasalazine: a blood count that
    day, however recent the last; `drug_red_flag_same_day`), or for a harm a history of the patient's asks a work-up of
    (a fit in long QT syndrome: the ECG and the electrolytes that day, though potassium was taken at a QT drug's start
    three days before; `HistoryCondition.harm_workup`)."""
    flags = red_flag_symptoms(kb)
    if any(isinstance(f, SymptomFact) and f.symptom in flags and lab in flags[f.symptom].labs for f in event.facts):
        return True
    harms = {f.effect for f in event.facts if isinstance(f, AdverseFact)}
    return any(harms & set(w.effects) and lab in w.labs for key in year.persona.histories
               if key in kb.history_conditions for w in kb.history_conditions[key].harm_workup)


def test_lab_interval_no_lab_is_measured_more_often_than_realistic(kb, years):
    failures = []
    for year in years:
        for lab, series in _series(year).items():
            interval = kb.labs[lab].kinetics.min_interval_days
            for (e1, _), (e2, _) in zip(series, series[1:], strict=False):
                if days_between(e1.date, e2.date) < interval and not _urgent(kb, year, e2, lab):
                    failures.append(fail("lab_interval", year, e2, f"{lab} measured {days_between(e1.date, e2.date)} "
                                         f"days after {e1.event_id} (interval {interval})"))
    check(failures)


# --- regimens -----------------------------------------------------------------------------------


def test_course_limits_no_course_past_its_end_and_no_one_off_repeated(kb, years):
    failures = []
    for year in years:
        ends: dict[str, str] = {}
        administered: set[str] = set()
        for event, fact in given(year):
            if fact.action == "start" and fact.course_days:
                ends[fact.drug] = course_end(event.date, fact.course_days)
            elif fact.action == "start":
                ends.pop(fact.drug, None)  # (a course earlier, now long-term: a PPI for reflux, later beside an NSAID)
            elif fact.action in ("continue", "increase", "decrease") and fact.drug in ends \
                    and event.date > ends[fact.drug]:
                failures.append(fail("course_limits", year, event, f"{fact.drug} {fact.action} after its course "
                                     f"ended {ends[fact.drug]}"))
            if fact.action == "administer":
                if fact.drug in administered:
                    failures.append(fail("course_limits", year, event, f"one-off {fact.drug} given twice"))
                administered.add(fact.drug)
            elif fact.drug in administered:
                failures.append(fail("course_limits", year, event, f"one-off {fact.drug} {fact.action} as if taken"))
            if fact.action in ("increase", "decrease") and fact.course_days:
                failures.append(fail("course_limits", year, event, f"course {fact.drug} titrated"))
        last = year.events[-1].date
        for drug, end in ends.items():
            if end < last and drug in state_on(year, last).medications:
                failures.append(fail("course_limits", year, None, f"{drug} still current after its course"))
    check(failures)


def test_doses_on_ladder_every_dose_is_a_real_dose(kb, years):
    failures = []
    for year in years:
        for event, fact in given(year):
            ladders = [spec.doses() for _, spec in formulations_given(kb, fact)]
            overrides = dose_overrides(kb, fact.drug)
            dialled = fact.unit == "units" and fact.dose == int(fact.dose)  # insulin: any whole number of units
            if not any(fact.dose in ladder for ladder in ladders) and fact.dose not in overrides and not dialled:
                failures.append(fail("doses_on_ladder", year, event, f"{fact.drug} {fact.dose} {fact.unit} "
                                     f"{fact.frequency} is no dose of a formulation that exists"))
    check(failures)


# --- safety rules -------------------------------------------------------------------------------


def _trap_rule(kb, years, category: str, rule: str, exempt_history: bool = True) -> list[str]:
    failures = []
    for year in years:
        history_drug = next((t.option for t in year.persona.traps if t.category == "medication_history"), None)
        for constraint in constraints_of(year.persona.traps):
            if constraint.category != category:
                continue
            forbidden = forbidden_by(kb, constraint)
            for event, fact in given(year):
                if exempt_history and fact.drug == history_drug:
                    continue
                if fact.drug in forbidden and not (fact.course_days and forbidden[fact.drug].startswith("budget:")):
                    # (a budget caps what is paid month after month; a course is paid once)
                    failures.append(fail(rule, year, event, f"{fact.drug} given though {forbidden[fact.drug]}"))
    return failures


def test_allergy_rule(kb, years):
    check(_trap_rule(kb, years, "allergy", "allergy"))


def test_diet_rule(kb, years):
    check(_trap_rule(kb, years, "diet_preference", "diet"))


def test_budget_rule(kb, years):
    check(_trap_rule(kb, years, "lifestyle_economic", "budget"))


def test_budget_total_long_term_drugs_never_cost_more_together_than_the_patient_can_pay(kb, years):
    failures = []
    for year in years:
        budget = next(t.fact.monthly_budget_usd for t in year.persona.traps if t.category == "lifestyle_economic")
        history_drug = next((t.option for t in year.persona.traps if t.category == "medication_history"), None)
        for event, fact in given(year):
            if fact.action != "start" or fact.course_days or kb.drugs[fact.drug].regimen != "chronic":
                continue
            taking = set(state_on(year, event.date).medications) | {fact.drug}
            spend = sum(kb.drugs[d].monthly_cost_usd for d in taking if kb.drugs[d].regimen == "chronic"
                        and not _is_course(year, d, event))
            if spend > budget + 1e-9 and fact.drug != history_drug:
                failures.append(fail("budget_total", year, event, f"{fact.drug} brings long-term drugs to "
                                     f"${spend:.0f} a month over ${budget}"))
    check(failures)


def _is_course(year, drug: str, event) -> bool:  # noqa: ANN001
    """Whether the drug is being taken as a course at this event (a use-specific regimen)."""
    starts = [f for e in year.events if e.index <= event.index for f in e.facts
              if isinstance(f, MedicationFact) and f.drug == drug and f.action == "start"]
    return bool(starts) and starts[-1].course_days is not None


def test_titration_interval_no_dose_is_raised_again_before_its_interval(kb, years):
    failures = []
    for year in years:
        last_change: dict[str, str] = {}
        for event, fact in given(year):
            # (a complication or a red-flag symptom is treated at once: congestion gets its diuretic raised)
            if fact.action == "increase" and not fact.reason.startswith(("complication:", "symptom:")):
                interval = kb.drugs[fact.drug].dose.titration_days or 0
                if fact.drug in last_change and days_between(last_change[fact.drug], event.date) < interval:
                    failures.append(fail("titration_interval", year, event, f"{fact.drug} raised "
                                         f"{days_between(last_change[fact.drug], event.date)} days after the last "
                                         f"change (interval {interval})"))
            if fact.action in ("start", "increase", "decrease"):
                last_change[fact.drug] = event.date
    check(failures)


def test_adverse_no_restart_a_drug_stopped_for_an_adverse_effect_is_never_given_again(years):
    failures = []
    for year in years:
        stopped: set[str] = set()
        for event in year.events:
            for fact in event.facts:
                if isinstance(fact, MedicationFact) and fact.action in ("start", "administer") and fact.drug in stopped:
                    failures.append(fail("adverse_no_restart", year, event, f"{fact.drug} restarted"))
            for fact in event.facts:
                if isinstance(fact, MedicationFact) and fact.action == "stop" and fact.reason.startswith("adverse_"):
                    stopped.add(fact.drug)
    check(failures)


def test_dose_form_preference_rule_every_drug_given_has_a_form_the_patient_can_take(kb, years):
    failures = []
    for year in years:
        pref = next((kb.preferences[t.option] for t in year.persona.traps
                     if t.category == "medication_preference"), None)
        if pref is None:
            continue
        for event, fact in given(year):
            if pref.long_term_only and (fact.course_days is not None or fact.frequency == "once"):
                continue  # (a blister pack holds the regular medicines; a course is given beside it)
            forms = formulations_given(kb, fact)
            usable = [f for f, s in forms if f.form not in pref.excludes_forms
                      and (f.size is None or f.size not in pref.excludes_sizes)
                      and (pref.max_doses_per_day is None or DOSES_PER_DAY[s.frequency] <= pref.max_doses_per_day)]
            if fact.reason != "long_term" and not usable:
                failures.append(fail("dose_form_preference", year, event, f"{fact.drug} {fact.frequency} "
                                     f"({fact.release}) breaks '{pref.key}'"))
    check(failures)


def test_contraindication_rule_no_drug_contraindicated_by_a_history_or_the_condition(kb, years):
    failures = []
    for year in years:
        keys = [year.persona.condition, *year.persona.histories]
        barred = {}
        for rule in kb.contraindications:
            if rule.history in keys and rule.level == "contraindicated":
                barred.update(dict.fromkeys(kb.expand([*rule.classes, *rule.drugs]), rule.history))
        history_drug = next((t.option for t in year.persona.traps if t.category == "medication_history"), None)
        for event, fact in given(year):
            if fact.drug in barred and fact.drug != history_drug:
                failures.append(fail("contraindication", year, event, f"{fact.drug} given with {barred[fact.drug]}"))
    check(failures)


def test_interaction_rule_no_drug_given_beside_one_it_must_not_be_combined_with(kb, years):
    failures = []
    for year in years:
        for event, fact in given(year):
            if fact.action != "start":
                continue
            before = set(state_on(year, event.date).medications) - {fact.drug}
            for other, rule in kb.interaction_partners.get(fact.drug, []):
                if other in before and rule.action == "avoid":
                    failures.append(fail("interaction", year, event, f"{fact.drug} started beside {other}"))
    check(failures)


@pytest.mark.parametrize("rule_kind", ["age", "renal", "sex", "condition", "risk"])
def test_patient_rules_no_drug_an_age_renal_sex_disease_or_risk_factor_rule_forbids(kb, years, rule_kind):
    check([v for year in years for v in patient_rule_violations(kb, year, rule_kind)])


def test_complication_rule_nothing_a_complication_forbids_is_given_after_it(kb, years):
    failures = []
    for year in years:
        condition = kb.conditions[year.persona.condition]
        seen: set[str] = set()
        for event in year.events:
            for fact in event.facts:
                if isinstance(fact, ComplicationFact):
                    seen.add(fact.complication)
            for fact in event.facts:
                if isinstance(fact, MedicationFact) and fact.action in ("start", "increase", "continue", "administer"):
                    for comp in condition.complications:
                        if comp.key in seen and fact.drug in kb.expand(comp.forbids):
                            failures.append(fail("complication_forbids", year, event,
                                                 f"{fact.drug} given after {comp.key}"))
    check(failures)


def test_adverse_toxicity_rule_no_drug_with_the_harm_already_suffered_is_started_or_raised(kb, years):
    failures = []
    for year in years:
        harmed: set[str] = set()
        for event in year.events:
            for fact in event.facts:
                if isinstance(fact, MedicationFact) and fact.action in ("start", "increase", "administer"):
                    overlap = harmed & set(kb.drugs[fact.drug].toxicities)
                    if overlap:
                        failures.append(fail("adverse_toxicity", year, event, f"{fact.drug} given after a "
                                             f"{sorted(overlap)} reaction"))
            for fact in event.facts:
                is_stop = isinstance(fact, MedicationFact) and fact.action == "stop"
                if is_stop and fact.reason.startswith("adverse_effect:"):
                    effect = next(e for e in kb.drugs[fact.drug].adverse_effects
                                  if e.key == fact.reason.partition(":")[2])
                    if effect.bars_kind:  # (an idiosyncratic reaction bars its own drug only)
                        harmed.add(effect.bars_kind)
    check(failures)


def _kept_with_measures(kb, fact: MedicationFact) -> bool:  # noqa: ANN001
    """Whether a medication fact keeps its drug for a harm its label manages with measures, not a stop."""
    kind, _, key = fact.reason.partition(":")
    effect = next((e for e in kb.drugs[fact.drug].adverse_effects if e.key == key), None)
    return kind == "adverse_effect" and effect is not None and effect.keeps_drug


def test_adverse_effect_stops_its_drug_before_anything_else_is_done_with_it(kb, years):
    # (a harm managed by measures keeps its drug at its lowest dose instead, said with its reason: levodopa's
    # orthostatic hypotension, NICE NG71)
    failures = []
    for year in years:
        suspected: set[str] = set()
        for event in year.events:
            suspected |= {f.drug for f in event.facts if isinstance(f, AdverseFact)}
            for fact in event.facts:
                kept = isinstance(fact, MedicationFact) and fact.action == "continue" and _kept_with_measures(kb, fact)
                given_again = isinstance(fact, MedicationFact) and fact.action in ("continue", "increase") and not kept
                if kept:
                    suspected.discard(fact.drug)
                if given_again and fact.drug in suspected:
                    failures.append(fail("adverse_stop", year, event, f"{fact.drug} {fact.action} after its adverse "
                                         "effect was reported"))
                if isinstance(fact, MedicationFact) and fact.action in ("stop", "decrease"):
                    suspected.discard(fact.drug)  # stopped, or lowered for a dose-related harm
    check(failures)


def test_adverse_nuisance_a_drug_stopped_for_a_minor_effect_is_replaced_in_its_step(kb, years):
    # Only a serious harm (SERIOUS_EFFECTS, an organ toxicity) may leave a treatment step empty: nobody stops the
    # only safe bone drug for leg cramps. The switch comes within 28 days (the switch task's deadline).
    failures = []
    for year in years:
        for event, fact in ((e, f) for e in year.events for f in e.facts if isinstance(f, MedicationFact)):
            if fact.action != "stop" or not fact.reason.startswith("adverse_effect:") or fact.step is None:
                continue
            key = fact.reason.partition(":")[2]
            effect = next(e for e in kb.drugs[fact.drug].adverse_effects if e.key == key)
            if effect.is_serious:
                continue
            # (another of the step's drugs taken for something else covers it: metformin for a PCOS cycle)
            step = next(s for s in kb.conditions[year.persona.condition].care_path if s.key == fact.step)
            others = set(step.drug_keys) - {fact.drug}
            replaced = any(others & set(state_on(year, e.date).medications)
                           for e in year.events if 0 <= days_between(event.date, e.date) <= 28)
            if not replaced:
                failures.append(fail("adverse_nuisance", year, event, f"{fact.drug} stopped for {key} and nothing "
                                     f"started for {fact.step}"))
    check(failures)


def test_maintenance_after_induction_a_drug_an_induction_course_replaced_comes_back(kb, years):
    # Cyclophosphamide for a lupus flare stops mycophenolate; when the course ends, maintenance resumes (the
    # same drug, or its step's next) at the next encounter, unless a harm now bars it. The paused drug keeps its
    # budget share meanwhile, so nothing cheaper started during the course can price it out.
    failures, resumed = [], 0
    for year in years:
        for event, fact in ((e, f) for e in year.events for f in e.facts if isinstance(f, MedicationFact)):
            if fact.action != "stop" or not fact.reason.startswith("replaced_by:"):
                continue
            course = next(f for f in event.facts if isinstance(f, MedicationFact) and f.action == "start"
                          and f.drug == fact.reason.partition(":")[2])
            if not course.course_days:
                continue
            after = [e for e in year.events if days_between(course_end(event.date, course.course_days), e.date) > 0]
            if not after:
                continue  # the year ends with the course
            step = next(s for s in kb.conditions[year.persona.condition].care_path if s.key == fact.step)
            back = [e for e in after for f in e.facts if isinstance(f, MedicationFact) and f.action == "start"
                    and f.drug in step.drug_keys and f.drug != course.drug]
            harmed = any(isinstance(f, AdverseFact) and f.drug == fact.drug for e in year.events for f in e.facts)
            if back:
                resumed += 1
                if back[0] is not after[0] and back[0].index - after[0].index > 3:
                    failures.append(fail("maintenance_after_induction", year, back[0],
                                         f"{fact.drug} resumed {back[0].index - after[0].index} visits late"))
            elif not harmed:
                failures.append(fail("maintenance_after_induction", year, event,
                                     f"{fact.drug} never resumed after {course.drug}"))
    check(failures)
    assert resumed >= 10, f"[maintenance_after_induction] only {resumed} resumptions in the cohort"


def test_adverse_lab_level_a_harm_acted_on_shows_past_its_level(kb, years):
    # Leukopenia is acted on with WBC below 3.5, hyperkalaemia above 5.5 (labs.yaml harm_below/harm_above):
    # stopping sulfasalazine for a WBC of 6.3 is not care. Checked where the result is in the acting visit.
    failures = []
    for year in years:
        for event in year.events:
            acted = {f.drug for f in event.facts if isinstance(f, MedicationFact) and f.action in ("stop", "decrease")}
            values = {f.lab: f.value for f in event.facts if isinstance(f, LabFact)}
            for fact in (f for f in event.facts if isinstance(f, AdverseFact) and f.drug in acted):
                effect = next(e for e in kb.drugs[fact.drug].adverse_effects if e.key == fact.effect)
                if effect.lab is None or effect.lab not in values:
                    continue
                lab = kb.labs[effect.lab]
                level = lab.harm_below if effect.lab_delta < 0 else lab.harm_above
                value = values[effect.lab]
                if level is not None and (value > level if effect.lab_delta < 0 else value < level):
                    failures.append(fail("adverse_lab_level", year, event, f"{fact.effect} of {fact.drug} acted "
                                         f"on at {effect.lab} {value} (level {level})"))
    check(failures)


def test_history_clash_no_patient_holds_histories_that_exclude_each_other_or_the_condition(kb, years):
    # (history.yaml `incompatible`: a past HFrEF beside a new HFpEF diagnosis, bipolar disorder beside MDD)
    failures = []
    for year in years:
        held = [year.persona.condition, *histories(year)]
        for key in held[1:]:
            clash = set(kb.history_conditions[key].incompatible) & set(held)
            if clash:
                failures.append(fail("history_clash", year, None, f"{key} beside {sorted(clash)}"))
    check(failures)


# --- the diagnostic story -----------------------------------------------------------------------


def misdiagnosis_phase_violations(kb, year) -> list[str]:  # noqa: ANN001
    """`misdiagnosis_phase`: before the work-up nothing diagnostic of the true condition shows: no diagnostic lab (a
    screening questionnaire only below its `positive_at`, where it shows no episode, or from the turning point on where
    it emerges: the visit the core symptoms are told), no test, no specific symptom before the turning point; the
    misdiagnosis is made in phase 1, the diagnosis in phase 2, which rules it out."""
    failures = []
    condition = kb.conditions[year.persona.condition]
    diagnostic = {m.lab: m for m in condition.monitored if m.diagnostic}
    specific = {s.key for s in condition.symptoms if s.specific}
    workup_event = next((e for e in year.events if e.kind == "diagnostic_test"), None)
    workup = workup_event.index if workup_event else len(year.events) + 1
    by_id = {e.event_id: e for e in year.events}
    # the turning point is the visit that sent the patient for the work-up
    turning = min((by_id[t].index for t in workup_event.triggered_by), default=workup) if workup_event else workup
    for event in year.events:
        if event.index >= workup:
            break
        for fact in event.facts:
            if isinstance(fact, LabFact) and fact.lab in diagnostic:
                positive_at = kb.labs[fact.lab].positive_at
                screen_below = positive_at is not None and fact.value < positive_at
                emerged = diagnostic[fact.lab].emerges and event.index >= turning
                if not screen_below and not emerged:
                    failures.append(fail("misdiagnosis_phase", year, event,
                                         f"diagnostic lab {fact.lab} {fact.value:g} before work-up"))
            # (an acute illness's own, or the fluid examination of congestion told: no test of the condition)
            if isinstance(fact, TestFact) and not fact.test.startswith(("illness:", "congestion:")):
                failures.append(fail("misdiagnosis_phase", year, event, f"test {fact.test} before work-up"))
            if isinstance(fact, SymptomFact) and fact.symptom in specific and event.index < turning:
                failures.append(fail("misdiagnosis_phase", year, event, f"specific symptom {fact.symptom} "
                                     "before the turning point"))
    mis = next((e for e in year.events if e.kind == "misdiagnosis"), None)
    diagnosis = next((e for e in year.events if e.kind == "diagnosis"), None)
    if mis is None or diagnosis is None or mis.phase != 1 or diagnosis.phase != 2:
        return [*failures, fail("misdiagnosis_phase", year, None, "misdiagnosis in phase 1 and diagnosis in phase 2")]
    suspected = next(f for f in mis.facts if isinstance(f, DiagnosisFact))
    if not any(isinstance(f, DiagnosisFact) and f.status in WITHDRAWN and f.icd11 == suspected.icd11
               for f in diagnosis.facts):
        failures.append(fail("misdiagnosis_phase", year, diagnosis, "misdiagnosis not ruled out or revised"))
    return failures


def test_misdiagnosis_phase_shows_nothing_diagnostic_of_the_true_condition(kb, years):
    check([v for year in years for v in misdiagnosis_phase_violations(kb, year)])


def test_misdiagnosis_phase_a_depression_screen_reads_below_its_threshold_until_the_turning_point(kb, years):
    # (a PHQ-9 before "burn-out" is called, the seed-53 read; below 10 it shows no episode: the benchmark's misdiagnosis
    # phase holds, and the screen at the turning point is past it)
    phq9 = kb.labs["phq9"]
    emerging = {c.key for c in kb.conditions.values() if any(m.lab == "phq9" and m.emerges for m in c.monitored)}
    mis = [(y, e) for y in years if y.persona.condition in emerging for e in y.events if e.kind == "misdiagnosis"
           and any(isinstance(f, LabFact) and f.lab == "phq9" for f in e.facts)]
    assert mis and all(f.value < phq9.positive_at for _, e in mis for f in e.facts
                       if isinstance(f, LabFact) and f.lab == "phq9")
    year, event = mis[0]
    assert not misdiagnosis_phase_violations(kb, year)
    shown = year.model_copy(update={"events": [e.model_copy(update={"facts": [
        f.model_copy(update={"value": 14.0}) if isinstance(f, LabFact) and f.lab == "phq9" else f for f in e.facts]})
        if e.event_id == event.event_id else e for e in year.events]})
    assert any(event.event_id in v and "phq9 14" in v for v in misdiagnosis_phase_violations(kb, shown))


def test_acute_complications_are_treated_within_their_window(kb, years):
    failures = []
    for year in years:
        condition = kb.conditions[year.persona.condition]
        for event in year.events:
            comp_fact = next((f for f in event.facts if isinstance(f, ComplicationFact)), None)
            if comp_fact is None:
                continue
            comp = next(c for c in condition.complications if c.key == comp_fact.complication)
            if not comp.treatment:
                continue  # (its care is its advice: suicidal thoughts, `advice_given` and `antidepressant_indicated`)
            reason = f"complication:{comp.key}"
            treated = [e for e in year.events if e.index >= event.index and
                       days_between(event.date, e.date) <= comp.treat_within_days and
                       any(isinstance(f, MedicationFact) and f.reason == reason and f.action != "stop"
                           for f in e.facts)]
            if not treated:
                failures.append(fail("complication_treated", year, event, f"{comp.key} untreated within "
                                     f"{comp.treat_within_days} days"))
    check(failures)


def test_indication_on_record_every_started_drug(kb, years):
    failures = []
    for year in years:
        for event, fact in given(year):
            if fact.action not in ("start", "administer"):
                continue
            ind = fact.indication or ""
            kind, _, key = ind.partition(":")
            upto = [e for e in year.events if e.index <= event.index]
            if kind == "condition":
                ok = any(isinstance(f, DiagnosisFact) and f.status == "confirmed" for e in upto for f in e.facts)
            elif kind == "complication":
                ok = any(isinstance(f, ComplicationFact) and f.complication == key for e in upto for f in e.facts)
            elif kind == "lab":
                ok = any(isinstance(f, LabFact) and f.lab == key for e in upto for f in e.facts)
            elif kind == "misdiagnosis":
                ok = any(isinstance(f, DiagnosisFact) and f.icd11 == key for e in upto for f in e.facts)
            elif kind == "symptom":  # a red flag treated before the work-up names its cause
                ok = any(isinstance(f, SymptomFact) and f.symptom == key for e in upto for f in e.facts)
            elif kind == "with":
                ok = any(isinstance(f, MedicationFact) and f.drug == key and f.action == "start" for f in event.facts)
            elif kind == "history":  # a past disease's target (blood pressure after a stroke), the disease told
                ok = any(isinstance(f, HistoryFact) and f.history == key or isinstance(f, MedicationFact)
                         and f.reason == "long_term" and f.indication == ind for e in upto for f in e.facts)
            elif kind == "illness":  # diagnosed at the visit that gives the course
                ok = any(isinstance(f, DiagnosisFact) and f.status == "acute" and f.icd11 == kb.illnesses[key].icd11
                         for f in event.facts)
            else:
                ok = False
            if not ok:
                failures.append(fail("indication_on_record", year, event, f"{fact.drug} started for '{ind}'"))
    check(failures)


def test_mcd_response_time_every_causal_lab_link_is_beyond_the_labs_response_time(kb, years):
    failures = []
    for year in years:
        condition = kb.conditions[year.persona.condition]
        moves = {s.key: set(s.moves) | set(s.targets) for s in condition.care_path}
        by_id = {e.event_id: e for e in year.events}
        for event in year.events:
            labs = [f.lab for f in event.facts if isinstance(f, LabFact)]
            for cause_id in event.triggered_by:
                cause = by_id[cause_id]
                for fact in cause.facts:
                    # (a red flag treated at the turning point is no cause of the work-up's results: the tests that
                    # follow look for what brought the congestion on, not at the diuretic's effect)
                    changed = isinstance(fact, MedicationFact) and fact.step and \
                        (fact.action in ("start", "increase", "administer") or fact.reason == "adherence") and \
                        not (fact.reason.startswith("symptom:") and event.kind in ("diagnostic_test", "diagnosis"))
                    if not changed:
                        continue
                    for lab in labs:
                        if lab in moves[fact.step] and days_between(cause.date, event.date) < response_days(kb, lab):
                            failures.append(fail("mcd_response_time", year, event, f"{lab} linked to {cause_id} "
                                                 f"after {days_between(cause.date, event.date)} days"))
            lapse = next((f for f in event.facts if isinstance(f, AdherenceFact)), None)
            if lapse is not None:
                drug = kb.drugs[lapse.drug]
                step = next((f.step for e in year.events for f in e.facts
                             if isinstance(f, MedicationFact) and f.drug == lapse.drug and f.step), None)
                for lab in labs:
                    needed = (drug.wanes_days or 0) + response_days(kb, lab)
                    if step and lab in moves[step] and lapse.missed_days < needed:
                        failures.append(fail("mcd_response_time", year, event, f"{lab} shown after {lapse.missed_days} "
                                             f"missed days of {lapse.drug}"))
    check(failures)


# --- relatives and the skeleton -----------------------------------------------------------------


def test_relatives_are_eligible_adults_on_their_own_standard_drugs(kb, years):
    failures = []
    for year in years:
        for relative in year.persona.family:
            where = f"{relative.relation} aged {relative.age}"
            if relative.age < ADULT_AGE:
                failures.append(fail("relatives", year, None, f"{where} is a child"))
            for key in relative.conditions:
                if not is_eligible(kb, key, relative.sex, relative.age):
                    failures.append(fail("relatives", year, None, f"{where} cannot have {key}"))
            for drug in relative.drugs:
                if drug.drug not in standard_drugs(kb, drug.indication, relative.sex, relative.age):
                    failures.append(fail("relatives", year, None, f"{where} takes {drug.drug} for {drug.indication}"))
                if not any(drug.dose in spec.doses() for _, spec in kb.drugs[drug.drug].formulations()):
                    failures.append(fail("relatives", year, None, f"{where}: {drug.drug} {drug.dose} is no real dose"))
    check(failures)


def test_skeleton_no_session_index_holds_the_same_event_kind_in_over_30_percent_of_patients(years):
    """Over all 1,000 patients: the largest of ~500 (session, kind) shares over only 200 was mostly noise (one standard
    deviation is 3 points there): session 66's 'psychological' read 29.5 %, then 30.5 % after rules that touch no
    event kind, and 24.5-24.9 % over the 1,000 both times (2026-12-07)."""
    worst = skeleton_share(years)
    assert worst.share <= 0.30, (f"[skeleton] session {worst.index} is '{worst.kind}' in {worst.share:.0%} "
                                 f"of {len(years)} patients")


def test_corrections_some_facts_are_corrected_later_and_the_state_keeps_the_latest(kb, years):
    corrected = 0
    failures = []
    for year in years:
        for event, fact in given(year):
            if fact.action == "correct":
                corrected += 1
                end = state_on(year, year.events[-1].date).medications.get(fact.drug)
                later = [f for e in year.events if e.index > event.index for f in e.facts
                         if isinstance(f, MedicationFact) and f.drug == fact.drug]
                if end is not None and not later and end.dose != fact.dose:
                    failures.append(fail("corrections", year, event, f"state keeps {end.dose}, not {fact.dose}"))
    check(failures)
    assert corrected >= 200, f"[corrections] only {corrected} of 1,000 years correct a dose"


def test_budget_trap_bites_and_holds_a_real_number(years):
    for year in years[:100]:
        budget = next(t for t in year.persona.traps if t.category == "lifestyle_economic")
        assert isinstance(budget.fact, EconomicFact) and budget.fact.monthly_budget_usd > 0


def test_finding_values_no_finding_states_a_range_or_another_value_of_a_lab_its_visit_measured(kb, years):
    # physician review (issue 26/27): "calprotectin 497 µg/g" beside "above 800 µg/g", "AHI 30-55 events/h" beside
    # an AHI of 30.6; crafted violations in test_findings.py
    failures = [fail("finding_values", year, None, v) for year in years for v in finding_value_violations(kb, year)]
    check(failures)
    stated = sum(1 for year in years for event in year.events for f in event.facts
                 if isinstance(f, TestFact) and any(c.isdigit() for c in f.finding.en))
    assert stated >= 2000, f"[finding_values] only {stated} findings state a number: the check would prove little"


def test_finding_placeholders_every_finding_is_filled_in_both_languages(years):
    failures = [fail("finding_placeholders", year, None, v) for year in years for v in unfilled_violations(year)]
    check(failures)


def test_finding_scores_crb65_and_feverpain_agree_with_the_patients_age_and_signs(kb, years):
    # "CRB-65 '0' for an 84-year-old is wrong": a score is computed from the patient (age, the vital signs taken)
    failures = [fail("finding_scores", year, None, v) for year in years for v in score_violations(kb, year)]
    check(failures)
    older = [(year, event) for year in years if year.persona.age >= 65 for event in year.events
             if any(isinstance(f, TestFact) and f.test == "illness:community_pneumonia" for f in event.facts)]
    assert older, "[finding_scores] no pneumonia in a patient aged 65 or more: CRB-65 untested at the age criterion"
    for year, event in older:
        finding = next(f for f in event.facts if isinstance(f, TestFact)).finding.en
        assert "CRB-65 score of 0" not in finding, fail("finding_scores", year, event, finding)
