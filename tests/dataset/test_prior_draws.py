"""The cohort's questions are asked again, with the prior's coins drawn anew, when a draw leaves the other patients'
IG answers predicting a patient's (`dataset.build.cohort_questions`)."""

from dataclasses import replace

import medmemorybench.dataset.build as build
from medmemorybench.dataset.audit import ProbeResult
from medmemorybench.dataset.build import BuildOptions, build_dataset
from medmemorybench.knowledge import default_knowledge

# (a cohort whose first draw passes both probes: the test forces the failures it needs)
OPTIONS = BuildOptions(seed=0, personas=3, encounters=30, health_sessions=0, family_sessions=0)


def _ig(questions: list) -> list[tuple]:
    return [(q["query_id"], q["answer"]) for split in questions.values() for q in split if q["query_type"] == "IG"]


def test_a_failing_draw_is_drawn_again_and_recorded(monkeypatch):
    kb = default_knowledge()
    first = build_dataset(kb, None, OPTIONS)
    assert first.stats["prior_draws"] == 1
    draws = []

    def probe(questions, language="en"):  # fails the first draw only
        draws.append(len(questions))
        return [ProbeResult("cohort_prior", "IG", 0.9, 0.6, len(draws) > 1)]

    monkeypatch.setattr(build, "cohort_prior_probe", probe)
    again = build_dataset(kb, None, OPTIONS)
    assert again.stats["prior_draws"] == 2 and len(draws) == 2
    # the second draw is another set of coins: same patients and sessions, other IG answers kept
    assert again.rows["efficient"]["checkpoint_10"][0]["sessions"] == first.rows["efficient"]["checkpoint_10"][0][
        "sessions"]
    assert _ig(again.rows["questions"]) != _ig(first.rows["questions"])
    draws.clear()
    assert _ig(build_dataset(kb, None, OPTIONS).rows["questions"]) == _ig(again.rows["questions"])  # (seeded)


def test_draws_stop_at_the_limit_and_the_gate_then_refuses(monkeypatch):
    monkeypatch.setattr(build, "cohort_prior_probe",
                        lambda questions, language="en": [ProbeResult("cohort_prior", "IG", 0.9, 0.6, False)])
    monkeypatch.setattr(build, "PRIOR_DRAWS", 2)
    built = build_dataset(default_knowledge(), None, OPTIONS)
    assert built.stats["prior_draws"] == 2


def test_a_draw_whose_own_questions_predict_ig_answers_is_drawn_again(monkeypatch):
    """Seed 37's default build (2026-12-07): a patient's SUA questions named the drugs its IG questions asked about
    ("yes": the drug is taken) at 0.698 against a bar of 0.691, and the audit refused the export. The question-only
    IG probe now takes part in the redraw, as the cohort prior does."""
    kb = default_knowledge()
    draws = []
    real = build.question_only

    def probe(questions, language="en"):  # the IG result fails the first draw only
        results = real(questions, language)
        if any(r.scope == "IG" for r in results):
            draws.append(len(questions))
        return [replace(r, passed=False) if r.scope == "IG" and len(draws) == 1 else r for r in results]

    monkeypatch.setattr(build, "question_only", probe)
    # (the cohort probe passes: on this small cohort its advisory MQ result is itself chance, and a failing one would
    # draw again past the draw the IG probes pass)
    monkeypatch.setattr(build, "cohort_prior_probe",
                        lambda questions, language="en": [ProbeResult("cohort_prior", "IG", 0.5, 0.6, True)])
    built = build_dataset(kb, None, OPTIONS)
    assert built.stats["prior_draws"] == 2 and len(draws) == 2
