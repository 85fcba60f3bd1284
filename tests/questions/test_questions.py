"""Questions: schedule, gold from the ground truth, evidence before the checkpoint, traps covered."""

from __future__ import annotations

from collections import Counter

import pytest

from medmemorybench.normalize import normalize_text
from medmemorybench.render.models import regular_session_id, session_text
from medmemorybench.simulate import state_on
from medmemorybench.simulate.models import TRAP_CATEGORIES


@pytest.fixture(scope="module")
def patients(cohort):
    return cohort


def test_schedule_per_checkpoint(patients):
    # the same quota at every checkpoint (SPEC §2), never more; MCD only every 20 sessions
    for patient in patients:
        for checkpoint in patient.checkpoints:
            counts = Counter(q.query_type for q in patient.questions if q.checkpoint == checkpoint)
            assert counts["EEM"] <= 2 and counts["TLA"] <= 2 and counts["SUA"] <= 1 and counts["ABS"] <= 1
            assert counts["MQ"] <= 2 and counts["IG"] <= 2
            assert counts["MCD"] == 0 or checkpoint % 20 == 0
        total = Counter(q.query_type for q in patient.questions)
        assert total["EEM"] >= 15 and total["TLA"] >= 18 and total["SUA"] >= 8 and total["ABS"] >= 5


def test_evidence_is_never_after_the_checkpoint(patients):
    for patient in patients:
        for q in patient.questions:
            assert all(int(sid.rpartition("-S")[2]) <= q.checkpoint for sid in q.evidence_session_ids), q.query_id


def test_key_facts_appear_in_the_evidence_sessions(patients):
    for patient in patients:
        texts = {s.session_id: normalize_text(session_text(s)) for s in patient.regular}
        for q in patient.questions:
            evidence = " ".join(texts[sid] for sid in q.evidence_session_ids)
            for fact in q.key_facts:
                assert normalize_text(fact) in evidence, (q.query_id, fact)


def test_all_six_trap_categories_are_tested_for_every_patient(patients):
    for patient in patients:
        tested = {q.trap_category for q in patient.questions if q.trap_category}
        assert tested == set(TRAP_CATEGORIES), patient.year.persona.persona_id


def test_current_dose_answers_match_the_state_timeline(kb, patients):
    # SUA gold comes from the structured state, not from text.
    for patient in patients:
        for q in (q for q in patient.questions if q.template == "sua.current_dose" and not q.abstain):
            date = patient.year.events[q.checkpoint - 1].date
            doses = state_on(patient.year, date).medications
            assert any(q.answer == f"{d.dose:g} {d.unit}" for d in doses.values()), q.query_id


def test_mq_has_four_options_with_one_to_three_correct(patients):
    for patient in patients:
        for q in (q for q in patient.questions if q.query_type == "MQ"):
            assert len(q.options) == 4 and 1 <= len(q.correct_options) <= 3
            assert q.answer == ", ".join(q.correct_options)


def test_a_stopped_drug_offered_as_current_has_its_stop_in_the_evidence(kb, patients):
    # (seed 67's ceiling: amlodipine, stopped at the checkpoint's last visit, was a wrong option of "which are part of
    # my current treatment?" whose evidence held only the right drug's visit, so a reader of the evidence alone took
    # amlodipine for current)
    from medmemorybench.simulate.models import MedicationFact

    checked = 0
    for patient in patients:
        for q in (q for q in patient.questions if q.template == "mq.current_drugs"):
            wrong = [o.partition(". ")[2] for o in q.options if o.partition(". ")[0] not in q.correct_options]
            for event in patient.year.events[:q.checkpoint]:
                for fact in event.facts:
                    if isinstance(fact, MedicationFact) and fact.action == "stop" and \
                            any(kb.drugs[fact.drug].name.en in option for option in wrong):
                        checked += 1
                        assert regular_session_id(event.event_id) in q.evidence_session_ids or any(
                            f.drug == fact.drug and f.action != "stop" for e in patient.year.events[
                                event.index:q.checkpoint] for f in e.facts if isinstance(f, MedicationFact)), \
                            (q.query_id, fact.drug)
    assert checked  # (the cohort offers stopped drugs as wrong options)


def test_abstention_questions_ask_about_what_the_patient_never_said(patients):
    for patient in patients:
        own = normalize_text(" ".join(session_text(s) for s in patient.regular))
        for q in (q for q in patient.questions if q.abstain):
            assert q.absent_fact and normalize_text(q.absent_fact) not in own
            assert not q.evidence_session_ids and not q.key_facts


def test_mcd_chains_span_separate_sessions_and_a_week(patients):
    from datetime import date

    from medmemorybench.questions.types.mcd import MIN_SPAN_DAYS

    for patient in patients:
        dates = {s.session_id: s.date for s in patient.regular}
        for q in (q for q in patient.questions if q.query_type == "MCD"):
            sessions = [n.session_id for n in q.reasoning_chain]
            assert 3 <= len(sessions) <= 5 and len(set(sessions)) >= 2
            span = date.fromisoformat(dates[sessions[-1]]) - date.fromisoformat(dates[sessions[0]])
            assert span.days >= MIN_SPAN_DAYS


def test_mcd_steps_tell_causes_not_what_a_visit_happened_to_hold(patients):
    # a disclosure made at a chain's visit (a budget told at the visit about the first symptoms) is not why the
    # chain went on: a step tells it only at a disclosure visit or when a later step avoided a drug for it
    from medmemorybench.questions.phrasing import load_phrasing
    from medmemorybench.simulate.models import AvoidedFact

    phrasing = load_phrasing("en")
    lead = {c: phrasing.answer("disclosed", c).split("{detail}")[0] for c in TRAP_CATEGORIES}  # "about my habit: "
    told, checked = 0, 0
    for patient in patients:
        events = {regular_session_id(e.event_id): e for e in patient.year.events}
        for q in (q for q in patient.questions if q.query_type == "MCD"):
            nodes = [events[n.session_id] for n in q.reasoning_chain]
            for position, (node, event) in enumerate(zip(q.reasoning_chain, nodes, strict=True)):
                avoided = {c for later in nodes[position:] for f in later.facts if isinstance(f, AvoidedFact)
                           for c in f.traps}
                held = [t for t in patient.year.persona.traps if t.fact in event.facts and t.category not in avoided]
                if event.kind != "trap_disclosure" and held:
                    checked += 1
                    assert not any(f"I told you {lead[t.category]}" in node.node for t in held), (q.query_id, node)
                told += "I told you" in node.node
    assert checked and told  # (chains do pass visits holding disclosures, and disclosures that matter are told)


def test_mcd_a_told_reason_a_drug_was_passed_over_must_be_answered(patients):
    # "why was I given what I got?" is answered by the disclosure a later step passed the usual drug over for: a step
    # telling only such disclosures is one an answer must tell (WHY group), and no other step is
    from medmemorybench.questions.phrasing import load_phrasing
    from medmemorybench.scoring.facts import WHY_GROUP
    from medmemorybench.simulate.models import AvoidedFact

    phrasing = load_phrasing("en")
    lead = {c: "I told you " + phrasing.answer("disclosed", c).split("{detail}")[0] for c in TRAP_CATEGORIES}
    reasons = 0
    for patient in patients:
        events = {regular_session_id(e.event_id): e for e in patient.year.events}
        for q in (q for q in patient.questions if q.query_type == "MCD"):
            nodes = [events[n.session_id] for n in q.reasoning_chain]
            for position, node in enumerate(q.reasoning_chain):
                cited = {c for later in nodes[position + 1:] for f in later.facts if isinstance(f, AvoidedFact)
                         for c in f.traps}
                told = {t.category for t in patient.year.persona.traps if t.fact in nodes[position].facts
                        and lead[t.category] in node.node}
                why = bool(told) and len(node.facts) == len(told) and told <= cited  # (the step tells only them)
                assert any(f.group == WHY_GROUP for f in node.facts) == why, (q.query_id, node.node)
                reasons += why
    assert reasons


def test_mcd_asks_why_the_patient_came_back_after_the_first_treatment(patients):
    # the first two months hold few chains of a week: the visit a patient came back to when what was first thought
    # and given had not helped ends one (symptoms, the first diagnosis, what was still wrong)
    asked = 0
    for patient in patients:
        events = {regular_session_id(e.event_id): e for e in patient.year.events}
        for q in (q for q in patient.questions if q.template == "mcd.why_back"):
            asked += 1
            nodes = [events[n.session_id] for n in q.reasoning_chain]
            first_thought = [n.event_id for n in nodes if n.kind == "misdiagnosis"]
            assert first_thought and set(first_thought) & set(nodes[-1].triggered_by)
            assert "was suspected" in q.answer and q.reasoning_chain[-1].node.startswith("I reported")
    assert asked >= len(patients) // 2


def test_ig_questions_carry_the_common_wrong_answer(patients):
    from medmemorybench.questions.phrasing import load_phrasing

    same_kind = load_phrasing("en").answer("ig", "same_kind").partition("{")[0]  # "No, you already take "
    for patient in patients:
        for q in (q for q in patient.questions if q.query_type == "IG"):
            assert q.common_wrong_answer
            # (a question on what a drug taken bars, or on a hypothetical course, names no trap category)
            assert q.trap_category or q.template in ("ig.take_now", "ig.dispensed_dose", "ig.over_the_counter",
                                                     "ig.illness_drug", "ig.other_condition") \
                or q.answer.startswith(same_kind)


def test_question_ids_are_unique(patients):
    ids = [q.query_id for p in patients for q in p.questions]
    assert len(ids) == len(set(ids))



def test_over_the_counter_yes_only_when_nothing_bars_or_qualifies_it(kb, monkeypatch):
    # "yes, it is fine" for a remedy only when no rule bars it and no drug the patient takes combines with it only
    # with care: calcium carbonate is a plain yes, but not for someone on levothyroxine (doses must be 4 h apart)
    from dataclasses import replace

    from medmemorybench.questions.facts import FactFinder
    from medmemorybench.questions.phrasing import load_phrasing
    from medmemorybench.questions.types import ig
    from medmemorybench.render.templates import load_templates
    from medmemorybench.simulate import simulate_patient

    def remedies(year, taking: set[str]) -> dict[str, str]:  # noqa: ANN001
        finder = FactFinder(kb, year, load_phrasing("en"), load_templates("en"), {})
        monkeypatch.setattr(finder, "patient_at", lambda checkpoint: replace(finder.patient, taking=taking))
        return {d.fields["drug"]: d.kind for d in ig._remedies(finder, 100) if d.template == "ig.over_the_counter"}

    name = kb.drugs["calcium_carbonate"].name.en
    year = next(y for y in (simulate_patient(kb, 11, i) for i in range(20))
                if remedies(y, set()).get(name) == "over_the_counter:yes")
    assert remedies(year, set())[name] == "over_the_counter:yes"
    assert name not in remedies(year, {"levothyroxine"})


def test_cirrhosis_bars_nsaids_and_qualifies_paracetamol(kb):
    # a remedy question must not call ibuprofen "fine" for a cirrhotic patient, nor paracetamol without its cap
    from medmemorybench.simulate.safety import Constraint, Patient, verdict

    patient = Patient(age=60, sex="male", condition="knee_osteoarthritis",
                      constraints=[Constraint("disease_history", "chronic_liver_disease")])
    for nsaid in ("ibuprofen", "naproxen", "celecoxib"):
        assert any("chronic_liver_disease" in b.rule for b in verdict(kb, nsaid, patient).blocks), nsaid
    paracetamol = verdict(kb, "paracetamol", patient)
    assert paracetamol.is_allowed and any("chronic_liver_disease" in c.rule for c in paracetamol.cautions)


def test_a_drug_is_asked_about_once_as_a_suggestion_or_a_remedy(kb, patients):
    # (the take-now questions may ask again once the drug's state changed: they are SUA-like by design)
    names = {d.name.en for d in kb.drugs.values()}
    names = {n for n in names if not any(n != other and n in other for other in names)}  # (no name inside another)
    checked = 0
    for patient in patients:
        asked = [q.question for q in patient.questions if q.template in ("ig.drug_suggestion", "ig.over_the_counter")]
        for name in names:
            times = sum(name in q for q in asked)
            assert times <= 1, (patient.year.persona.persona_id, name)
            checked += times
    assert checked >= 20  # (most yes golds now ask about other conditions' drugs and courses, checked elsewhere)


def test_no_yes_gold_for_a_drug_a_rule_qualifies(kb, patients):
    # "Yes, suitable / fine" only for a drug that no rule qualifies (caution, dose cap) on the checkpoint's record
    from dataclasses import replace

    from medmemorybench.questions.facts import FactFinder
    from medmemorybench.questions.phrasing import load_phrasing
    from medmemorybench.render.templates import load_templates
    from medmemorybench.simulate.safety import verdict

    by_name = {d.name.en: key for key, d in kb.drugs.items()}
    checked = 0
    for patient in patients:
        finder = FactFinder(kb, patient.year, load_phrasing("en"), load_templates("en"), {})
        for q in patient.questions:
            if q.template not in ("ig.drug_suggestion", "ig.over_the_counter") or not q.answer.startswith("Yes"):
                continue
            drug = by_name[max((name for name in by_name if name in q.question), key=len)]  # (the longest named)
            taking = set(state_on(patient.year, finder.upto(q.checkpoint)[-1].date).medications)
            result = verdict(kb, drug, replace(finder.patient, taking=taking), finder.asked_regimen(drug))
            assert result.is_allowed and not result.cautions and result.max_daily_dose is None, (q.query_id, drug)
            checked += 1
    # (most yes golds ask about other conditions' drugs and courses, checked elsewhere; a remedy nearly always
    # allowed, as paracetamol for one headache is, is not asked at all)
    assert checked >= 5


def test_a_remedy_dose_is_not_barred_by_a_once_a_day_routine_or_a_budget(kb):
    """A paracetamol for a headache is one dose: a patient who can manage medicines only once a day, or whose budget
    is spent, may still take it; as a regimen (four times a day, month after month) it is barred; a preference that
    rules the drug out itself (needles, a form) still bars the single dose."""
    from medmemorybench.questions.facts import REMEDY_REGIMEN
    from medmemorybench.simulate.safety import DOSES_PER_DAY, Constraint, Patient, verdict

    once_a_day = Patient(age=40, sex="female", condition="knee_osteoarthritis",
                         constraints=[Constraint("medication_preference", "once_daily_only")])
    assert DOSES_PER_DAY[kb.drugs["paracetamol"].dose.frequency] > 1
    assert not verdict(kb, "paracetamol", once_a_day).is_allowed
    assert verdict(kb, "paracetamol", once_a_day, REMEDY_REGIMEN).is_allowed
    spent = Patient(age=40, sex="female", condition="knee_osteoarthritis", spending_usd=50.0,
                    constraints=[Constraint("lifestyle_economic", "uninsured_part_time", budget_usd=10)])
    assert not verdict(kb, "capsaicin_cream", spent).is_allowed
    assert verdict(kb, "capsaicin_cream", spent, REMEDY_REGIMEN).is_allowed
    needles = [p.key for p in kb.preferences.values() if "injection" in p.excludes_forms]
    injected = [d.key for d in kb.drugs.values() if all(f.form == "injection" for f in d.forms)]
    assert needles and injected
    phobic = Patient(age=40, sex="female", condition="knee_osteoarthritis",
                     constraints=[Constraint("medication_preference", needles[0])])
    assert not verdict(kb, injected[0], phobic, "one_off").is_allowed


def test_a_chain_holds_the_record_values_of_its_units_kind_not_only_its_spelling(kb, patients):
    """The scorer compares a chain's values by the unit's kind, so a chain measured in "% predicted" (FEV1) holds the
    record's SpO2 in "%" too: a true "SpO2 94 %" told beside it was scored a value the record never had
    (P0005-C060-MCD1); a value of another kind (pg/mL) is no part of it."""
    from types import SimpleNamespace

    from medmemorybench.questions.facts import FactFinder
    from medmemorybench.questions.phrasing import load_phrasing
    from medmemorybench.questions.types.mcd import _record_values
    from medmemorybench.render.templates import load_templates
    from medmemorybench.simulate.models import LabFact

    finder = FactFinder(kb, patients[0].year, load_phrasing("en"), load_templates("en"), {})
    chain = [SimpleNamespace(facts=[LabFact(lab="fev1_percent", value=62, unit="% predicted")])]
    measured = [LabFact(lab="fev1_percent", value=62, unit="% predicted"), LabFact(lab="spo2", value=94, unit="%"),
                LabFact(lab="nt_probnp", value=911, unit="pg/mL")]
    visit = SimpleNamespace(date="2024-03-01")
    held = _record_values(finder, chain, SimpleNamespace(measured=[(visit, f) for f in measured]), set())
    assert [f.text for f in held] == [finder.lab_value(measured[0]), finder.lab_value(measured[1])]
    assert all(f.aliases == ["2024-03-01"] for f in held)  # (the day it was measured: `scoring.facts._measured_on`)


def test_a_chain_holds_the_record_values_its_findings_state(kb):
    """A finding states its visit's values ("ALT 72 U/L and AST 38 U/L" of a liver panel), so the chain holds the
    record's values of their kind, each with the days it was measured: a true ALT of 95 U/L from another visit was
    scored a value the record never had (seed 59, P0013-C060-MCD1); a kind no fact holds (pg/mL) is no part of it."""
    from types import SimpleNamespace

    from medmemorybench.questions.facts import FactFinder
    from medmemorybench.questions.phrasing import load_phrasing
    from medmemorybench.questions.types.mcd import _record_values
    from medmemorybench.render.templates import load_templates
    from medmemorybench.scoring.facts import Fact, value_kinds
    from medmemorybench.simulate import simulate_patient
    from medmemorybench.simulate.models import LabFact

    kinds = value_kinds([Fact("ALT 72 U/L and AST 38 U/L; hepatitis B and C negative", "finding")])
    assert kinds == value_kinds([Fact("95 U/L", "quantity")]) and kinds
    finder = FactFinder(kb, simulate_patient(kb, 59, 0), load_phrasing("en"), load_templates("en"), {})
    alt = [LabFact(lab="alt", value=95, unit="U/L"), LabFact(lab="alt", value=72, unit="U/L")]
    measured = [(SimpleNamespace(date="2024-04-08"), alt[0]), (SimpleNamespace(date="2024-03-29"), alt[1]),
                (SimpleNamespace(date="2024-06-01"), alt[0]),
                (SimpleNamespace(date="2024-04-08"), LabFact(lab="nt_probnp", value=911, unit="pg/mL"))]
    held = _record_values(finder, [], SimpleNamespace(measured=measured), kinds)
    assert [(f.text, f.aliases) for f in held] == [(finder.lab_value(alt[0]), ["2024-04-08", "2024-06-01"]),
                                                   (finder.lab_value(alt[1]), ["2024-03-29"])]


def test_an_illness_chain_ends_with_the_illness(kb):
    """"How was my back sprain handled?" is told up to the check after its course: a complication of the chronic
    condition found a fortnight later was the chain's last step (seed 59, P0003-C060-MCD2), whose conclusion no
    answer about the sprain tells."""
    import random

    from medmemorybench.questions.facts import FactFinder
    from medmemorybench.questions.phrasing import load_phrasing
    from medmemorybench.questions.types import mcd
    from medmemorybench.render.templates import load_templates
    from medmemorybench.simulate import simulate_patient

    finder = FactFinder(kb, simulate_patient(kb, 59, 2), load_phrasing("en"), load_templates("en"), {})
    courses = [d for d in mcd.make(finder, 60, random.Random(0)) if d.template == "mcd.course_of_illness"]
    assert courses
    for draft in courses:
        assert finder.illness_of(draft.evidence[-1]) is not None, draft.answer
        assert not any(f.status == "complication" for e in draft.evidence for f in e.facts
                       if type(f).__name__ == "DiagnosisFact"), draft.answer


def test_a_drug_a_kidney_rule_also_bars_names_the_kidney_function_the_record_states(kb):
    """Nitrofurantoin is barred for a vegan (a gelatin capsule) and, below an eGFR of 45, by the kidney rule: the
    gold named only the first, and a capable answer that gave the eGFR of 22 was wrong (seed 59, P0017-C020-IG1). A
    rule is named only where the record states its deciding value (the latest eGFR measured); an age is not stated."""
    from medmemorybench.questions.facts import FactFinder
    from medmemorybench.questions.phrasing import load_phrasing
    from medmemorybench.questions.types import ig
    from medmemorybench.render.templates import load_templates
    from medmemorybench.scoring import score_answer
    from medmemorybench.simulate import simulate_patient
    from medmemorybench.simulate.models import LabFact

    finder = FactFinder(kb, simulate_patient(kb, 59, 16), load_phrasing("en"), load_templates("en"), {})
    draft = next(d for d in ig._remedies(finder, 20) if d.fields["drug"].startswith("nitrofurantoin"))
    egfr = [(e, f) for e, f in finder.facts(20, LabFact) if f.lab == "egfr"]
    assert egfr and egfr[-1][1].value < 45 and egfr[-1][0] in draft.evidence
    reasons = [f for f in draft.facts if f.group == "reason"]
    assert [f.kind for f in reasons] == ["gist", "name"] and "eGFR" in reasons[1].aliases
    assert finder.lab_value(egfr[-1][1]) in draft.answer
    assert finder.stated_rules(["antibiotics_nitrofurantoin_egfr_45"], 20)
    ages = [r.key for r in kb.patient_rules if r.when.min_age is not None]
    assert ages and not finder.stated_rules(ages, 20)
    row = {"query_type": "IG", "subject": draft.fields["drug"], "question": "Could I be given nitrofurantoin?",
           "facts": [f.model_dump() for f in draft.facts]}
    for answer, right in [
        ("No. Your kidney function is too low for it: your eGFR was 22 mL/min/1.73m².", True),
        ("No: nitrofurantoin comes in a gelatin capsule and you are strictly vegan.", True),
        ("No, nitrofurantoin would clash with your furosemide.", False),  # (a reason the record does not give)
        ("No, because of your liver.", False),
        ("Yes, nitrofurantoin is fine for you.", False),
    ]:
        assert (score_answer(row, answer)["correct"].value == 1.0) is right, answer


def test_a_chain_holds_every_drug_taken_and_no_rival_among_them(patients):
    """An MCD row's last step holds every drug taken by the checkpoint (`TAKEN_GROUP`): the scorer fails an answer that
    tells another as given ("amoxicillin was started" for a patient who never had it); the chain's own drugs are among
    them and its rivals (never taken) are not."""
    from medmemorybench.scoring.facts import RIVAL_GROUP, TAKEN_GROUP
    from medmemorybench.simulate.models import MedicationFact

    checked = 0
    for patient in patients:
        events = {regular_session_id(e.event_id): e for e in patient.year.events}
        for q in (q for q in patient.questions if q.query_type == "MCD"):
            taken = {f.text for f in q.reasoning_chain[-1].facts if f.group == TAKEN_GROUP}
            rivals = {f.text for n in q.reasoning_chain for f in n.facts if f.group == RIVAL_GROUP}
            started = [f for n in q.reasoning_chain for f in events[n.session_id].facts
                       if isinstance(f, MedicationFact) and f.action == "start"]
            assert taken and not taken & rivals, q.query_id
            assert len(taken) >= len({f.drug for f in started}), q.query_id
            checked += bool(started)
    assert checked


def _unexplained_lab_moves(kb, year, chain: list[str], lab: str) -> list[str]:  # noqa: ANN001
    """The visits a "why did my <lab> change" chain (event ids, the reading last) leaves out: the reading before the
    last one, and every visit from then back (the lab's response time, a change not yet shown in it) to the last
    reading that changed a drug whose care step moves the lab, or had an adverse effect or a complication shown on
    it. Read from the structured truth on its own, not from the generator's helpers."""
    from datetime import date, timedelta

    from medmemorybench.simulate.models import AdverseFact, ComplicationFact, LabFact, MedicationFact

    condition = kb.conditions[year.persona.condition]
    steps = {s.key: (*s.moves, *s.targets) for s in condition.care_path}
    shown = {c.key for c in condition.complications if c.lab == lab}
    events = {e.event_id: e for e in year.events}
    end = events[chain[-1]]
    before = [e for e in year.events if e.index < end.index
              and any(isinstance(f, LabFact) and f.lab == lab for f in e.facts)][-1]
    since = date.fromisoformat(before.date) - timedelta(days=kb.labs[lab].kinetics.response_days)

    def moved(fact) -> bool:  # noqa: ANN001
        if isinstance(fact, MedicationFact):
            return fact.action not in ("continue",) and lab in steps.get(fact.step or "", ())
        if isinstance(fact, AdverseFact):
            return any(e.key == fact.effect and e.lab == lab for e in kb.drugs[fact.drug].adverse_effects)
        return isinstance(fact, ComplicationFact) and fact.complication in shown

    needed = [before.event_id] + [e.event_id for e in year.events if e.index < end.index
                                  and date.fromisoformat(e.date) >= since and any(moved(f) for f in e.facts)]
    return [n for n in dict.fromkeys(needed) if n not in chain]


def _lab_changes(kb, patients) -> list[tuple]:  # noqa: ANN001
    """(year, chain event ids, lab) of every "why did my <lab> change" question: the lab the last visit measured that
    the question names."""
    from medmemorybench.questions.facts import FactFinder
    from medmemorybench.questions.phrasing import load_phrasing
    from medmemorybench.render.templates import load_templates
    from medmemorybench.simulate.models import LabFact

    out = []
    for patient in patients:
        finder = FactFinder(kb, patient.year, load_phrasing("en"), load_templates("en"), {})
        events = {regular_session_id(e.event_id): e for e in patient.year.events}
        for q in (q for q in patient.questions if q.template == "mcd.why_lab_change"):
            chain = [events[n.session_id].event_id for n in q.reasoning_chain]
            end = events[q.reasoning_chain[-1].session_id]
            lab = next(f.lab for f in end.facts if isinstance(f, LabFact) and finder.lab_lay(f.lab) in q.question)
            out.append((patient.year, chain, lab))
    return out


def test_a_lab_change_chain_holds_every_change_since_the_reading_before(kb, patients):
    """"Why was my protein-in-urine test different in September?" was answered by losartan started in May, leaving
    out June's 289 mg/g and the July doubling of losartan after the eGFR fell (seed 89, P0009-C100-MCD2), and a GAD-7
    by a paroxetine rise, paroxetine since stopped and switched (P0016-C060-MCD2). The chain runs from the reading
    before to the reading, with every change that moved the lab in between; a chain with one left out is caught."""
    changes = _lab_changes(kb, patients)
    assert changes
    for year, chain, lab in changes:
        assert not _unexplained_lab_moves(kb, year, chain, lab), (year.persona.persona_id, chain, lab)
    # (crafted omissions: the longest chain without the reading before, or without a change, is caught)
    year, chain, lab = max(changes, key=lambda c: len(c[1]))
    caught = [n for n in chain[:-1] if _unexplained_lab_moves(kb, year, [c for c in chain if c != n], lab) == [n]]
    assert len(caught) >= 2, chain


def test_a_lab_change_is_explained_from_the_reading_before_on_seed_89(kb):
    """Seed 89, P0004's May systolic of 146 after 136 in April, with no change between, is not asked (it was, credited
    to the January amlodipine start). (The panel's other seed-89 case, P0009's September UACR, left with h27i: its
    progression no longer falls in the sinus infection, so that year holds no such question now; the same class, a
    reading explained across a flare and a switch, is pinned on seed 83 P0012 in test_mcd_links.)"""
    import random

    from medmemorybench.questions.facts import FactFinder
    from medmemorybench.questions.phrasing import load_phrasing
    from medmemorybench.questions.types import mcd
    from medmemorybench.render.templates import load_templates
    from medmemorybench.simulate import simulate_patient

    def lab_changes(index: int, checkpoint: int) -> dict[str, list[str]]:
        finder = FactFinder(kb, simulate_patient(kb, 89, index), load_phrasing("en"), load_templates("en"), {})
        return {d.evidence[-1].event_id: [e.event_id for e in d.evidence]
                for d in mcd.make(finder, checkpoint, random.Random(0)) if d.template == "mcd.why_lab_change"}

    assert "P0004-E041" not in lab_changes(3, 50)
