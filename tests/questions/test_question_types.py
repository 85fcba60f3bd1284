"""The question-type registry, the leak-free rules of the schedule, and the memory-less audit's probes."""

from __future__ import annotations

import re
from collections import Counter

import pytest

from medmemorybench.dataset.audit import (
    _polarity,
    abs_wording,
    audit_questions,
    cohort_prior,
    constant,
    date_in_question,
    duplicates,
    evidence_age,
    question_only,
)
from medmemorybench.questions.facts import Draft
from medmemorybench.questions.generate import generate_questions
from medmemorybench.questions.phrasing import PHRASING_DIR
from medmemorybench.questions.spec import QuestionType, paper_codes, register, type_codes, unregister
from medmemorybench.simulate import simulate_patient


@pytest.fixture(scope="module")
def patients(cohort):
    return cohort


@pytest.fixture(scope="module")
def rows(patients):
    return [q.model_dump() for p in patients for q in p.questions]


def test_registry_lists_the_paper_types_in_order_and_abs_last():
    assert type_codes() == ("EEM", "TLA", "SUA", "MQ", "IG", "MCD", "ABS")
    assert paper_codes() == ("EEM", "TLA", "SUA", "MQ", "IG", "MCD")


def test_a_toy_type_needs_only_its_spec_and_phrasing(kb, tmp_path, monkeypatch):
    # the toy type's phrasing file sits beside the real ones (a copy of the folder); nothing else is edited
    folder = tmp_path / "phrasings"
    for language in PHRASING_DIR.iterdir():
        (folder / language.name).mkdir(parents=True)
        for path in language.glob("*.yaml"):
            (folder / language.name / path.name).write_text(path.read_text())
    (folder / "en" / "toy.yaml").write_text('age:\n  - "How old did I say I was?"\n')
    import medmemorybench.questions.generate as generate
    from medmemorybench.questions.phrasing import load_phrasing

    monkeypatch.setattr(generate, "load_phrasing", lambda language: load_phrasing(language, folder))

    def make(finder, checkpoint, rng):  # noqa: ANN001, ANN202
        first = finder.upto(checkpoint)[:1]
        return [Draft("TOY", "toy.age", {}, str(finder.year.persona.age), first, [], "toy:age")] if first else []

    register(QuestionType(code="TOY", name="toy", order=99, make=make, quota=1, paper=False))
    try:
        year = simulate_patient(kb, 0, 0)
        questions = generate_questions(kb, year, [], [10, 20])
        toys = [q for q in questions if q.query_type == "TOY"]
        assert [q.question for q in toys] == ["How old did I say I was?"]
        assert "TOY" in type_codes()
        # scoring, aggregation and the card read the same registry
        from medmemorybench.dataset.card import render_card  # noqa: F401  (imports cleanly with the toy type)
        from medmemorybench.scoring import aggregate, score_answer

        scores = score_answer(toys[0], toys[0].answer)
        assert scores["correct"].value == 1.0 and "key_fact_rubric" in scores
        rows = [{"query_type": "TOY", "mode": "efficient", "checkpoint": 10, "value": 1.0}]
        assert aggregate(rows, macro_types=None).macro[0].mean == 1.0
    finally:
        unregister("TOY")
    assert "TOY" not in type_codes()


def test_ig_golds_are_balanced_yes_and_no(rows):
    polarity = Counter(_polarity(q["answer"]) for q in rows if q["query_type"] == "IG")
    assert polarity["yes"] and abs(polarity["yes"] - polarity["no"]) <= 0.2 * (polarity["yes"] + polarity["no"])


def test_abs_questions_borrow_answerable_wording(rows):
    answerable = {q["question"] for q in rows if q["query_type"] != "ABS"}
    templates = {q["template"] for q in rows if q["query_type"] != "ABS"}
    for q in (q for q in rows if q["query_type"] == "ABS"):
        assert q["template"] in templates and not q["template"].startswith("abs.")
    assert answerable  # (the same phrasings, different slots)


def test_no_gold_carries_an_internal_code(rows):
    code = re.compile(r"\b[a-z]+_[a-z_]+\b|\(first_line\)|\(titration\)")
    for q in rows:
        assert not code.search(q["answer"]), (q["query_id"], q["answer"])


def test_a_patient_never_gets_the_same_question_twice(rows):
    assert duplicates(rows)[0].passed


def test_default_shaped_cohort_passes_every_question_probe(rows):
    # (the schedule's leak rules and the IG trimming are what make the question-only solver fail)
    probes = (question_only, cohort_prior, evidence_age, date_in_question, abs_wording, constant)
    for result in (r for probe in probes for r in probe(rows)):
        assert not result.blocks, result  # (an advisory probe is reported, not enforced)


def _row(**fields):
    base = {"query_id": "q", "persona_id": "P1", "checkpoint": 60, "query_type": "EEM", "question": "What?",
            "options": [], "answer": "1 mg", "correct_options": [], "evidence_session_ids": ["P1-S055"],
            "key_facts": ["1 mg"], "abstain": False, "template": "eem.x"}
    return {**base, **fields}


def test_probe_question_only_fails_when_another_question_states_the_answer():
    rows = [_row(query_id="a", key_facts=["500 mg"], answer="500 mg"),
            _row(query_id="b", question="When was my metformin raised from 500 mg?", query_type="TLA")]
    result = next(r for r in question_only(rows) if r.scope == "EEM")
    assert not result.passed and result.value == 1.0


def test_probe_question_only_fails_when_ig_subjects_reveal_mq_answers():
    rows = []
    for n in range(40):
        names = ["alpha", "beta", "gamma"]
        names.insert(n % 4, "delta")  # the drug IG asks about, at a rotating letter (no constant answer wins)
        options = [f"{letter}. {name}" for letter, name in zip("ABCD", names, strict=True)]
        correct = [letter for letter, name in zip("ABCD", names, strict=True) if name != "delta"]
        rows.append(_row(query_id=f"mq{n}", persona_id=f"P{n}", query_type="MQ", question="Which are safe?",
                         options=options, correct_options=correct, answer=", ".join(correct), key_facts=[]))
        rows.append(_row(query_id=f"ig{n}", persona_id=f"P{n}", query_type="IG", question="Could delta help?",
                         answer="No. delta is not suitable.", key_facts=[]))
    result = next(r for r in question_only(rows) if r.scope == "MQ")
    assert not result.passed


def test_probe_constant_fails_on_one_sided_ig_golds():
    rows = [_row(query_id=f"i{n}", query_type="IG", answer="No. It is not suitable.") for n in range(30)]
    assert not next(r for r in constant(rows) if r.scope == "IG").passed


def test_probe_abs_wording_fails_when_abs_has_its_own_phrase():
    rows = [_row(query_id=f"a{n}", query_type="ABS", question=f"How often do I take my drug{n}?", abstain=True)
            for n in range(20)] + [_row(query_id=f"e{n}", question=f"What was my lab{n}?") for n in range(20)]
    assert not abs_wording(rows)[0].passed


def test_probe_date_in_question_fails_when_most_name_a_date():
    rows = [_row(query_id=f"t{n}", query_type="TLA", question=f"What happened on 2024-03-0{n}?") for n in range(1, 9)]
    assert not date_in_question(rows)[0].passed


def test_probe_evidence_age_fails_when_everything_is_recent():
    rows = [_row(query_id=f"e{n}", checkpoint=60, evidence_session_ids=["P1-S058"]) for n in range(10)]
    assert not all(r.passed for r in evidence_age(rows))


def test_probe_duplicates_fails_on_a_repeated_question():
    rows = [_row(query_id="a"), _row(query_id="b")]
    assert not duplicates(rows)[0].passed


def test_audit_runs_every_probe(rows):
    assert {r.probe for r in audit_questions(rows)} == {"question_only", "cohort_prior", "constant", "abs_wording",
                                                        "date_in_question", "evidence_age", "duplicates"}


def test_dispensed_dose_asks_the_dose_now_or_the_one_before_by_a_fair_coin(kb):
    """"The pharmacy gave me X D: is that my dose?": yes names the dose taken on the checkpoint's last visit, no
    names another dose and corrects it to that one; the side of a drug's dose is the same at every checkpoint, and
    over a cohort's drafts neither side dominates."""
    import random

    from medmemorybench.questions.facts import FactFinder
    from medmemorybench.questions.phrasing import load_phrasing
    from medmemorybench.questions.types import ig
    from medmemorybench.render.templates import load_templates
    from medmemorybench.simulate.timeline import state_on

    sides: Counter = Counter()
    for index in range(20):
        year = simulate_patient(kb, 0, index)
        finder = FactFinder(kb, year, load_phrasing("en"), load_templates("en"), {})
        answers: dict[str, str] = {}
        for checkpoint in (30, 60, 100):
            taken = state_on(year, finder.upto(checkpoint)[-1].date).medications
            for draft in ig._dispensed(finder, checkpoint):
                side = draft.kind.partition(":")[2]
                drug = next(k for k in taken if finder.drug(k) == draft.fields["drug"])
                now = f"{finder.format_number(taken[drug].dose)} {taken[drug].unit}"
                assert draft.key_facts == [now] and draft.side_by_coin and draft.template == "ig.dispensed_dose"
                assert kb.drugs[drug].forms[0].form in ig.DISPENSED_FORMS  # (a box that states its strength)
                assert (draft.fields["dose"] == now) is (side == "yes")
                assert draft.answer.startswith("Yes" if side == "yes" else "No") and now in draft.answer
                assert answers.setdefault(draft.fact_key, draft.answer) == draft.answer  # (the same coin every time)
                sides[side] += 1
        assert ig.make(finder, 100, random.Random(0))  # (the maker still runs with them in)
    assert sides["yes"] + sides["no"] >= 40 and 0.35 <= sides["yes"] / (sides["yes"] + sides["no"]) <= 0.65


def test_a_wording_that_states_another_questions_key_fact_is_found_in_any_language():
    """Another language's wording can give an answer away where the first's does not (a lay name holding the
    diagnosis another question asks for); `_revealing` finds the question whose text does it, and only that one."""
    from medmemorybench.questions.generate import _revealing

    asked = Draft("EEM", "eem.first_diagnosis", {}, "2型糖尿病", [], ["2型糖尿病"], "eem:first")
    revealer = Draft("IG", "ig.other_condition", {}, "可以", [], [], "ig:pioglitazone")
    bystander = Draft("TLA", "tla.x", {}, "2024年3月1日", [], ["2024年3月1日"], "tla:x")
    kept = [(20, asked, "我的毛病一开始被认为是什么？"),
            (60, revealer, "假如我有一天得了身体对胰岛素不敏感的2型糖尿病：用吡格列酮对我合适吗？"),
            (60, bystander, "我哪天开始吃药的？")]
    assert _revealing(kept) == {"ig:pioglitazone"}
    assert _revealing([kept[0], kept[2]]) == set()
