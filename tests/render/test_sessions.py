"""Rendered sessions: shape, every fact stated verbatim, noise marked, early-weighted insertion."""

from __future__ import annotations

import random
import re
from collections import Counter

import pytest

from medmemorybench.knowledge import default_knowledge
from medmemorybench.render.conversation import SessionRenderer
from medmemorybench.render.fields import dose_with_unit, lab_with_unit, spoken_date
from medmemorybench.render.models import Session, Turn, session_text
from medmemorybench.render.noise import render_family_sessions, render_health_sessions
from medmemorybench.render.stream import bucket_sizes, checkpoints_of, insert_noise, split_by_checkpoint
from medmemorybench.render.templates import load_templates
from medmemorybench.simulate import simulate_patient
from medmemorybench.simulate.models import (
    AdherenceFact,
    AdviceFact,
    AllergyFact,
    CareYear,
    Event,
    LabFact,
    MedicationFact,
    SettingFact,
)


@pytest.fixture(scope="module")
def kb():
    return default_knowledge()


@pytest.fixture(scope="module")
def rendered(kb):
    out = []
    for index in (0, 4, 10, 17):
        year = simulate_patient(kb, 3, index)
        out.append((year, SessionRenderer(kb, load_templates("en"), year).render_year()))
    return out


def test_sessions_alternate_six_to_ten_turns_patient_first(rendered):
    for _, sessions in rendered:
        for session in sessions:
            roles = [t.role for t in session.turns]
            assert 6 <= len(roles) <= 10, session.session_id
            assert roles[0] == "patient"
            assert all(a != b for a, b in zip(roles, roles[1:], strict=False)), session.session_id


def test_every_lab_and_dose_is_stated_with_its_unit(kb, rendered):
    unit = load_templates("en").unit  # (a ratio or an index is a bare number: "INR 2.6")
    for year, sessions in rendered:
        for event, session in zip(year.events, sessions, strict=True):
            text = session_text(session)
            for fact in event.facts:
                if isinstance(fact, LabFact):
                    assert lab_with_unit(kb, fact.lab, fact.value, unit(fact.unit)) in text, (session.session_id, fact)
                if isinstance(fact, MedicationFact):
                    assert kb.drugs[fact.drug].name.en in text, (session.session_id, fact)
                    if fact.action != "stop":
                        assert dose_with_unit(fact.dose, unit(fact.unit)) in text, (session.session_id, fact)
                if isinstance(fact, AllergyFact):
                    assert fact.agent.en in text


def test_later_sessions_refer_back_to_earlier_ones(rendered):
    for year, sessions in rendered:
        back_references = [s for i, s in enumerate(sessions) if i >= 30 and any(
            f" {spoken_date(e.date)}" in s.turns[-1].text for e in year.events[:i] if e.date != year.events[i].date)]
        assert len(back_references) >= 5, year.persona.persona_id


def test_sessions_are_dated_regular_and_linked_to_their_event(rendered):
    for year, sessions in rendered:
        for event, session in zip(year.events, sessions, strict=True):
            assert session.kind == "regular" and session.date == event.date
            assert session.event_ids == [event.event_id]
            assert session.session_id == event.event_id.replace("-E", "-S")


def test_noise_is_undated_and_marked(kb):
    year = simulate_patient(kb, 0, 1)
    templates = load_templates("en")
    health = render_health_sessions(kb, templates, year, 30, random.Random(1))
    family = render_family_sessions(kb, templates, year, 20, random.Random(2))
    assert all(s.kind == "health_noise" and s.date is None for s in health)
    assert len({s.session_id for s in health}) == 30
    assert all(s.kind == "family_noise" and s.family_member for s in family)
    relations = Counter(s.family_member for s in family)
    assert set(relations) == {r.relation for r in year.persona.family}


def test_bucket_sizes_follow_3_3_2_1_1():
    assert bucket_sizes(200) == [60, 60, 40, 20, 20]
    assert sum(bucket_sizes(7)) == 7


def _session(sid: str, kind: str) -> Session:
    return Session(session_id=sid, kind=kind, turns=[Turn(role="patient", text="a"), Turn(role="doctor", text="b")])


def test_insertion_is_early_weighted_and_never_after_the_last_regular():
    regular = [_session(f"P-S{i:03d}", "regular") for i in range(1, 101)]
    noise = [_session(f"P-H{i:03d}", "health_noise") for i in range(200)]
    stream = insert_noise(regular, noise, random.Random(0))
    assert [s for s in stream if s.kind == "regular"] == regular
    assert stream[-1].session_id == "P-S100"
    before_first_fifth = sum(1 for s in stream[: stream.index(regular[19]) + 1] if s.kind != "regular")
    after_four_fifths = sum(1 for s in stream[stream.index(regular[79]):] if s.kind != "regular")
    assert before_first_fifth > after_four_fifths * 2


def test_split_by_checkpoint_keeps_every_session_once_in_order():
    regular = [_session(f"P-S{i:03d}", "regular") for i in range(1, 36)]
    noise = [_session(f"P-H{i:03d}", "health_noise") for i in range(40)]
    stream = insert_noise(regular, noise, random.Random(5))
    checkpoints = checkpoints_of(35)
    assert checkpoints == [10, 20, 30, 35]
    parts = split_by_checkpoint(stream, checkpoints)
    assert [s for c in checkpoints for s in parts[c]] == stream
    assert [s.session_id for s in parts[10] if s.kind == "regular"][-1] == "P-S010"


def test_an_admission_is_closed_with_urgent_safety_netting(kb):
    # an acute complication sent to hospital must not close with "we'll review everything at your next visit"
    year = simulate_patient(kb, 3, 3)
    renderer = SessionRenderer(kb, load_templates("en"), year)
    urgent = next(e for e in year.events if any(isinstance(f, SettingFact) and f.setting == "admission"
                                               for f in e.facts))
    for event in year.events[: urgent.index - 1]:
        renderer.render(event)
    keys = [a.key for beat in renderer.plan(urgent) for a in beat]
    assert "safety.admission" in keys and "greet.doctor.urgent" in keys
    assert "safety.general" not in keys
    # (going in by ambulance today: no "a taxi, or an ambulance if it gets worse", no tablets to pick up, no desk;
    # the seed-37 and seed-47 reads, P0004 E043 and E052)
    assert "safety.urgent" not in keys and "bye.patient" not in keys and "teachback.admission" in keys
    for lang, worse in (("en", "if it gets worse"), ("zh", "加重")):
        templates = load_templates(lang)
        for seed in range(40):
            text = templates.realize("safety.admission", random.Random(seed), {})
            assert worse not in text, (lang, text)


def test_a_scan_or_a_sample_is_never_called_a_blood_test():
    templates = load_templates("en")
    for kind in ("imaging", "urine", "stool", "breath", "sleep_study", "score", "vital"):
        for key in (f"open.lab_check.{kind}", f"results.{kind}"):
            for seed in range(60):
                text = templates.realize(key, random.Random(seed), {"weekday": "Monday"})
                assert "blood" not in text.lower(), (key, text)


def test_patient_turns_are_rarely_stock_filler(kb):
    year = simulate_patient(kb, 3, 10)
    renderer = SessionRenderer(kb, load_templates("en"), year)
    renderer.render_year()
    assert renderer.stats["patient_turns"] >= 300
    assert renderer.stats["filler_turns"] / renderer.stats["patient_turns"] <= 0.10


def test_noise_doctors_never_repeat_a_reply_within_a_session(kb):
    year = simulate_patient(kb, 0, 1)
    templates = load_templates("en")
    sessions = render_health_sessions(kb, templates, year, 30, random.Random(1)) + \
        render_family_sessions(kb, templates, year, 30, random.Random(2))
    for session in sessions:
        replies = [t.text for t in session.turns if t.role == "doctor"]
        assert len(replies) == len(set(replies)), session.session_id
        assert 6 <= len(session.turns) <= 10 and session.turns[0].role == "patient", session.session_id


def test_a_question_from_the_knowledge_base_never_follows_a_comma_with_its_capital(kb):
    # "Also, Does looking at screens damage your eyes?": a question opening with a capital follows a colon or a stop
    year = simulate_patient(kb, 0, 4)
    sessions = render_health_sessions(kb, load_templates("en"), year, 100, random.Random(1))
    turns = [t.text for s in sessions for t in s.turns if t.role == "patient"]
    assert not [t for t in turns if re.search(r"\b(?:And|Also|but), (?!I\b)[A-Z][a-z]", t)]


def test_plans_and_wording_are_seeded(kb):
    year = simulate_patient(kb, 3, 4, n_encounters=20)
    first = SessionRenderer(kb, load_templates("en"), year).render_year()
    assert first == SessionRenderer(kb, load_templates("en"), year).render_year()


def test_one_plan_two_renderings(kb):
    # English and Chinese render the same acts in the same order: same turns, same roles, same facts stated
    year = simulate_patient(kb, 3, 7, n_encounters=20)
    english = SessionRenderer(kb, load_templates("en"), year)
    chinese = SessionRenderer(kb, load_templates("zh"), year)
    for event in year.events:
        plan_en, plan_zh = english.plan(event), chinese.plan(event)
        assert [[a.key for a in beat] for beat in plan_en] == [[a.key for a in beat] for beat in plan_zh]
        en, zh = english.render(event), chinese.render(event)
        assert [t.role for t in en.turns] == [t.role for t in zh.turns]
        text = session_text(zh)
        for fact in event.facts:
            if isinstance(fact, LabFact):
                assert lab_with_unit(kb, fact.lab, fact.value, chinese.templates.unit(fact.unit)) in text, \
                    (zh.session_id, fact)
            if isinstance(fact, MedicationFact):
                assert kb.drugs[fact.drug].name.zh in text, (zh.session_id, fact)


def test_drugs_avoided_for_the_same_reason_are_named_in_one_sentence(kb):
    """A visit that passes over four statins for one allergy says so once, naming each (and the drug given), not
    four sentences with the same reason; a drug avoided for a reason of its own keeps its own sentence."""
    from medmemorybench.render.fact_acts import AvoidedGroup, grouped_avoided
    from medmemorybench.render.fields import text_of
    from medmemorybench.simulate.models import AvoidedFact

    year = simulate_patient(kb, 0, 0)
    grouped = 0
    for language in ("en", "zh"):
        templates = load_templates(language)
        sessions = {s.session_id: s for s in SessionRenderer(kb, templates, year).render_year()}
        for event in year.events:
            runs = [f for f in grouped_avoided(list(event.facts)) if isinstance(f, AvoidedGroup)]
            for run in runs:
                text = session_text(sessions[event.event_id.replace("-E", "-S")])
                names = [text_of(kb.drugs[f.drug].name, language) for f in run.facts]
                sentences = re.split(r"(?<=[.。?？!！])\s*", text)
                said = [sentence for sentence in sentences if all(name in sentence for name in names)]
                assert said, (language, event.event_id, names)
                grouped += 1
    assert grouped >= 2
    alone = AvoidedFact(drug="naproxen", traps=["allergy"], rules=["allergy:nsaid"], instead="paracetamol")
    other = AvoidedFact(drug="ibuprofen", traps=["disease_history"], rules=["contraindication:x"],
                        instead="paracetamol")
    assert grouped_avoided([alone, other]) == [alone, other]
    assert grouped_avoided([alone, alone]) == [AvoidedGroup((alone, alone))]


def test_a_visit_never_looks_back_on_a_drug_it_stops_or_a_diagnosis_ruled_out(kb, monkeypatch):
    import medmemorybench.render.conversation as conversation
    from medmemorybench.simulate.models import WITHDRAWN, DiagnosisFact

    monkeypatch.setattr(conversation, "BACKREF_PROBABILITY", 1.0)  # (every visit that can look back does)
    seen: list = []

    class Recording(SessionRenderer):
        def _backref(self, event, rng):  # noqa: ANN001, ANN202
            acts = super()._backref(event, rng)
            seen.append((event, acts))
            return acts

    stopping_visits = 0
    # (seed 0: montelukast stopped when COPD replaces asthma, drugs switched; the others until four stopping visits)
    for index in (0, 4, 6, 7, *range(8, 20)):
        if stopping_visits >= 4 and index > 7:
            break
        year = simulate_patient(kb, 0, index)
        seen.clear()
        Recording(kb, load_templates("en"), year).render_year()
        ruled_out: set[str] = set()
        for event, acts in seen:
            touched = {f.drug for f in event.facts if isinstance(f, MedicationFact)}
            stopping_visits += any(isinstance(f, MedicationFact) and f.action == "stop" for f in event.facts)
            for act in acts:
                if "drug" in act.slots:
                    assert act.slots["drug"].key not in touched, (event.event_id, act)
                if "diagnosis" in act.slots:
                    assert act.slots["diagnosis"].en not in ruled_out, (event.event_id, act)
            ruled_out |= {f.name.en for f in event.facts if isinstance(f, DiagnosisFact) and f.status in WITHDRAWN}
    assert stopping_visits >= 4


def test_an_acute_flare_treated_at_home_is_not_sent_to_hospital(kb, monkeypatch):
    # a COPD exacerbation managed at home must not close with "They're expecting you; go straight there, today"
    import medmemorybench.render.conversation as conversation
    from medmemorybench.simulate.models import ComplicationFact

    monkeypatch.setattr(conversation, "BACKREF_PROBABILITY", 1.0)  # (a visit that may look back does)

    year = simulate_patient(kb, 3, 4)
    renderer = SessionRenderer(kb, load_templates("en"), year)
    flare = next(e for e in year.events if any(isinstance(f, ComplicationFact) for f in e.facts))
    assert not any(isinstance(f, SettingFact) for f in flare.facts)
    for event in year.events[: flare.index - 1]:
        renderer.render(event)
    keys = [a.key for beat in renderer.plan(flare) for a in beat]
    assert "safety.acute_home" in keys and "safety.urgent" not in keys
    assert not any(key.startswith("backref.") for key in keys)  # (no "you've done well" on an acute visit)


def test_units_are_said_the_way_each_language_says_them(kb):
    # a Chinese doctor says "13 次/分", not "13 breaths/min"; nobody says "INR 2.6 ratio"
    year = simulate_patient(kb, 0, 4)  # (COPD: respiratory rate, SpO2, FEV1/FVC)
    english = " ".join(t.text for s in SessionRenderer(kb, load_templates("en"), year).render_year() for t in s.turns)
    chinese = " ".join(t.text for s in SessionRenderer(kb, load_templates("zh"), year).render_year() for t in s.turns)
    assert "breaths/min" in english and not re.search(r"\d ratio\b", english)
    assert "次/分" in chinese
    assert not re.search(r"\d (breaths/min|bpm|points|ratio|score|puff|units)\b", chinese)


def test_a_caution_names_what_of_the_patients_it_is_about(kb):
    """"Non-selective beta-blockers block bronchodilator effect" said to a patient on nadolol names the nadolol (and
    a caution from an interaction with a drug started during the year names that drug), in both languages; a
    caution on the drug alone (pregnancy, age) needs no partner."""
    from medmemorybench.render.fact_acts import caution_is_personal, caution_partner
    from medmemorybench.render.fields import text_of
    from medmemorybench.simulate.models import CautionFact

    checked = 0
    for seed, index in ((0, 0), (0, 4), (0, 1), (0, 9)):
        year = simulate_patient(kb, seed, index)
        traps = {t.category: t for t in year.persona.traps}
        for language in ("en", "zh"):
            sessions = {s.session_id: s for s in SessionRenderer(kb, load_templates(language), year).render_year()}
            for event in year.events:
                for fact in (f for f in event.facts if isinstance(f, CautionFact)):
                    if not caution_is_personal(fact) or fact.trap not in (None, "medication_history"):
                        continue
                    partner = traps[fact.trap].option if fact.trap else caution_partner(fact)
                    text = session_text(sessions[event.event_id.replace("-E", "-S")])
                    sentences = re.split(r"(?<=[.。?？!！])\s*", text)
                    drug, taken = (text_of(kb.drugs[d].name, language) for d in (fact.drug, partner))
                    assert any(drug in s and taken in s for s in sentences), (language, event.event_id, drug, taken)
                    checked += 1
    assert checked >= 4
    assert not caution_is_personal(CautionFact(drug="lisinopril", rule="rule:teratogen_raas_blockers"))
    assert caution_partner(CautionFact(drug="ibuprofen", rule="interaction:duloxetine+ibuprofen")) == "duloxetine"


def test_a_doctor_never_reads_out_a_diagnosis_code(kb):
    # "ICD-11 code CA22" is for the record, not for the patient (either language)
    from medmemorybench.simulate.models import DiagnosisFact

    year = simulate_patient(kb, 0, 4)
    codes = {f.icd11 for e in year.events for f in e.facts if isinstance(f, DiagnosisFact) and f.icd11}
    assert codes
    for language in ("en", "zh"):
        text = "\n".join(session_text(s) for s in SessionRenderer(kb, load_templates(language), year).render_year())
        assert not [code for code in codes if re.search(rf"(?<![A-Za-z0-9]){re.escape(code)}(?![A-Za-z0-9])", text)]
        assert "ICD" not in text


ACTED_ON_LAPSE = {"long_qt_missed_beta_blocker", "missed_doses_after_suicidal_ideation"}
"""The advice of missed doses acted on twice over: a beta-blocker skipped in long QT, after suicidal ideation."""


def lapse_acted_on(kb) -> tuple[CareYear, Event]:  # noqa: ANN001
    """The first year of the cohort's depression persona (P0015, seeds 0-99) with missed doses told with both of
    `ACTED_ON_LAPSE`'s advice, and that visit: searched, since any change to the year's draws moves the one year that
    has it."""
    for seed in range(100):
        year = simulate_patient(kb, seed, 14)
        lapse = next((e for e in year.events if any(isinstance(f, AdherenceFact) for f in e.facts)
                      and {f.advice for f in e.facts if isinstance(f, AdviceFact)} >= ACTED_ON_LAPSE), None)
        if lapse is not None:
            return year, lapse
    raise AssertionError("no year of P0015 over seeds 0-99 skips its beta-blocker in long QT after suicidal ideation")


@pytest.mark.parametrize("language", ["en", "zh"])
def test_missed_doses_acted_on_are_never_answered_restart_as_usual(kb, language):
    # (the seed-47 read, P0015 E061: a week of skipped propranolol in long QT, a month after suicidal ideation,
    # answered "That's understandable … Let's restart propranolol as usual and see how it goes")
    year, lapse = lapse_acted_on(kb)  # (depression in long QT: skipped propranolol after suicidal ideation)
    advice = [f.advice for f in lapse.facts if isinstance(f, AdviceFact)]
    renderer = SessionRenderer(kb, load_templates(language), year)
    sessions = renderer.render_year()
    keys = [a.key for beat in renderer.plan(lapse) for a in beat]
    assert "ack.adherence_serious" in keys and "ack.adherence" not in keys
    text = session_text(sessions[lapse.index - 1])
    for key in advice:
        assert getattr(kb.advice[key].text, language) in text
    assert ("as usual" if language == "en" else "照常恢复") not in text
