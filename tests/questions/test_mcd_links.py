"""MCD chains are causal: each step tells a fact the next step's decision rests on (`mcd_links`), not only what
prompted the next visit (`Event.triggered_by`); read against the seed-83 physician review
(docs/reviews/2026-12-07-questions-seed83/review.md)."""

from __future__ import annotations

import random

import pytest

from medmemorybench.questions.facts import FactFinder
from medmemorybench.questions.phrasing import load_phrasing
from medmemorybench.questions.types.mcd_links import is_causal_link
from medmemorybench.render.templates import load_templates
from medmemorybench.simulate import simulate_patient
from medmemorybench.simulate.models import DiagnosisFact, Event, LabFact, MedicationFact, SymptomFact

# (`mcd` is imported inside each test, as in test_questions.py: importing it at collection registers MCD and SUA
# before the registry discovers every question type)


def _finder(kb, seed: int, index: int) -> FactFinder:
    return FactFinder(kb, simulate_patient(kb, seed, index), load_phrasing("en"), load_templates("en"), {})


def _event(finder: FactFinder, number: int) -> Event:
    return finder.events[number - 1]


def _only(event: Event, kind: type, **fields: object) -> Event:
    """The event told with only its facts of `kind` matching `fields` (a chain step keeps part of its visit)."""
    facts = [f for f in event.facts if isinstance(f, kind) and all(getattr(f, k) == v for k, v in fields.items())]
    assert facts, (event.event_id, kind, fields)
    return event.model_copy(update={"facts": facts})


@pytest.fixture(scope="module")
def p0002(kb) -> FactFinder:
    return _finder(kb, 83, 1)


def test_every_drafted_chain_link_rests_on_the_step_before(kb):
    # every MCD chain of seed 83's cohort, at every MCD checkpoint: a reason step (why a drug was passed over) links
    # to the step that cites it, every other step to the one after it
    from medmemorybench.questions.types import mcd

    chains = 0
    for index in range(20):
        finder = _finder(kb, 83, index)
        for checkpoint in range(20, 101, 20):
            for draft in mcd.make(finder, checkpoint, random.Random(0)):
                if draft.template == "mcd.why_lab_change":
                    continue  # (a window, not a chain of causes: the reading before and every change since, each of
                    # which moved the lab; test_questions' lab-change test reads it)
                steps = [s for s in draft.evidence if not mcd._is_reason(finder, s, draft.evidence)]
                assert len(draft.evidence) >= 3
                for earlier, later in zip(steps, steps[1:], strict=False):
                    assert is_causal_link(finder, earlier, later), (draft.answer, earlier.event_id, later.event_id)
                chains += 1
    assert chains > 300  # (most chains survive: the check is not met by asking nothing)


def test_a_wrong_diagnosis_rests_on_its_own_findings_not_a_lab_of_the_same_week(p0002):
    # P0002-C020-MCD2: "essential hypertension" (S012) was made on the raised systolic of 146 (S007), not on the
    # post-meal fatigue told that day nor on the ALT of 49 (S008) that the wrong MASLD label would rest on
    hypertension = _event(p0002, 12)
    assert is_causal_link(p0002, _only(_event(p0002, 7), LabFact, lab="systolic_bp"), hypertension)
    assert not is_causal_link(p0002, _only(_event(p0002, 7), SymptomFact), hypertension)
    assert not is_causal_link(p0002, _only(_event(p0002, 8), LabFact, lab="alt"), hypertension)
    # (132 is below the 140 a clinic reading must reach for it: NICE NG136)
    assert not is_causal_link(p0002, _only(_event(p0002, 8), LabFact, lab="systolic_bp"), hypertension)


def test_the_review_wrong_golds_are_not_asked(kb, p0002):
    # the chains the physician rejected no longer make a question or no longer skip the cause: hydrochlorothiazide
    # "because of fatigue and ALT" (P0002-C020), June's UPCR put down to March's mycophenolate across the May flare
    # (P0012-C080: now told with the flare and the switch to cyclophosphamide), orthostatic
    # hypotension put down to the Parkinson's work-up (P0007-C100)
    from medmemorybench.questions.types import mcd

    assert not [d for d in mcd.make(p0002, 20, random.Random(0)) if d.fields.get("drug") == "hydrochlorothiazide"]
    june = [d for d in mcd.make(_finder(kb, 83, 11), 80, random.Random(0))
            if d.template == "mcd.why_lab_change" and d.evidence[-1].date[5:7] == "06"]
    # (asked again since the lab-change chains run from the reading before: the May flare and its switch are in it)
    assert all("P0012-E052" in [e.event_id for e in d.evidence] for d in june), [d.answer for d in june]
    assert not [d for d in mcd.make(_finder(kb, 83, 6), 100, random.Random(0)) if d.template == "mcd.why_complication"]


def test_a_lab_moves_with_the_last_change_to_a_drug_that_moves_it(kb):
    # P0012: June's UPCR (S054) follows the flare's switch to cyclophosphamide (S052), not the March start of
    # mycophenolate (S023) that the switch stopped
    finder = _finder(kb, 83, 11)
    upcr = _only(_event(finder, 54), LabFact, lab="urine_protein_creatinine")
    assert is_causal_link(finder, _only(_event(finder, 52), MedicationFact, drug="cyclophosphamide"), upcr)
    assert not is_causal_link(finder, _only(_event(finder, 23), MedicationFact, drug="mycophenolate_mofetil"), upcr)


@pytest.fixture(scope="module")
def p0002_89(kb) -> FactFinder:
    return _finder(kb, 89, 1)


def test_a_first_thought_ruled_out_is_no_cause_of_what_followed(p0002_89):
    # seed 89 P0002-C060-MCD2 (panel seed89_mcd): MASLD suspected on 17 Feb (E016) and ruled out on 20 Apr (E033),
    # when type 2 diabetes was diagnosed; the diabetic kidney disease of 28 Jun (E049) does not rest on it
    suspected = _only(_event(p0002_89, 16), DiagnosisFact, status="suspected")
    assert not is_causal_link(p0002_89, suspected, _event(p0002_89, 49))
    assert not is_causal_link(p0002_89, suspected, _event(p0002_89, 33))  # (the diagnosis rests on its own tests)
    # while it still stood, the patient still unwell after it is a step on from it (the March return, E021)
    assert is_causal_link(p0002_89, suspected, _event(p0002_89, 21))


def test_no_chain_holds_a_withdrawn_first_thought_as_a_cause_and_the_gold_says_it_was_withdrawn(p0002_89):
    from medmemorybench.questions.types import mcd

    drafts = mcd.make(p0002_89, 100, random.Random(0))
    assert not [d for d in drafts if d.template == "mcd.why_complication" and "E016" in str(d.evidence)]
    told = [d for d in drafts if any(isinstance(f, DiagnosisFact) and f.status == "suspected"
                                     for e in d.evidence for f in e.facts)]
    assert told and all("was suspected (later ruled out)" in d.answer for d in told), [d.answer for d in told]
    # (before the results ruled it out, the gold only tells it suspected)
    early = [d for d in mcd.make(p0002_89, 30, random.Random(0)) if "steatotic" in d.answer]
    assert early and not [d for d in early if "ruled out" in d.answer]


def test_a_month_that_holds_another_reading_is_asked_by_its_date(kb):
    # "what changed my fasting sugar by the check in May?" where the record holds two May readings is two checks: the
    # question names the day once a second reading of that month is on record by its checkpoint (the seed-89 read had
    # 7.8 on 10 May and 6.6 on 25 May in P0002), and it keeps one key at every checkpoint
    from medmemorybench.questions.types import mcd

    finder = _finder(kb, 89, 9)
    readings = [e for e in finder.events if any(isinstance(f, LabFact) for f in e.facts)]
    one, same_month = readings[0], readings[0].model_copy(update={"event_id": "P0010-E999"})
    assert finder.when(one, [one]) == f"in {finder.month_of(one)}"
    assert finder.when(one, [one, same_month]) == f"on {one.date}"
    dated = []
    for index in range(20):
        finder = _finder(kb, 89, index)
        late = {d.fact_key: d for d in mcd.make(finder, 100, random.Random(0)) if d.template == "mcd.why_lab_change"}
        for key, draft in late.items():
            event = draft.evidence[-1]
            assert draft.fields["when"] in (f"on {event.date}", f"in {finder.month_of(event)}"), draft.fields
            if draft.fields["when"].startswith("on "):
                number = int(event.event_id.rpartition("E")[2])
                first = {d.fact_key for d in mcd.make(finder, -(-number // 10) * 10, random.Random(0))}
                assert key in first  # (the same question at the checkpoint that first could ask it)
                dated.append(event.event_id)
    assert dated, "no lab-change question of seed 89 is asked by its date"
