"""Shared fixtures of the question tests: the knowledge base, and a built cohort of a seed."""

from __future__ import annotations

import pytest

from medmemorybench.dataset.build import BuildOptions, PatientBuild, cohort_prior, cohort_questions, render_patient
from medmemorybench.knowledge import default_knowledge
from medmemorybench.knowledge.base import KnowledgeBase
from medmemorybench.render.templates import load_templates
from medmemorybench.simulate import simulate_patient
from tests.once import made_once


@pytest.fixture(scope="session")
def kb() -> KnowledgeBase:
    return default_knowledge()


def build_cohort(kb: KnowledgeBase, seed: int, size: int = 20) -> list[PatientBuild]:
    """Every roster condition once (20 patients) under `seed`, rendered and asked, as `build` does (the answers
    balanced over the cohort by its prior, its coins drawn again while the prior still predicts them)."""
    templates, options = {"en": load_templates("en")}, BuildOptions(seed=seed)
    years = [simulate_patient(kb, seed, index) for index in range(size)]
    prior = cohort_prior(kb, years, options)
    builds, _ = cohort_questions(kb, [(year, render_patient(kb, templates, year, options)) for year in years], prior)
    return [build["en"] for build in builds]


@pytest.fixture(scope="session")
def cohort(kb: KnowledgeBase, tmp_path_factory: pytest.TempPathFactory) -> list[PatientBuild]:
    """One default-shaped cohort (seed 3) shared by the question tests: building it is the slow part."""
    return made_once(tmp_path_factory, "question-cohort", lambda: build_cohort(kb, 3))
