"""Shared fixtures of the question tests: the knowledge base, and a built cohort of a seed."""

from __future__ import annotations

import pytest

from medmemorybench.dataset.build import BuildOptions, PatientBuild, build_patient
from medmemorybench.knowledge import default_knowledge
from medmemorybench.knowledge.base import KnowledgeBase
from medmemorybench.render.templates import load_templates
from medmemorybench.simulate import simulate_patient


@pytest.fixture(scope="session")
def kb() -> KnowledgeBase:
    return default_knowledge()


def build_cohort(kb: KnowledgeBase, seed: int, size: int = 20) -> list[PatientBuild]:
    """Every roster condition once (20 patients) under `seed`, rendered and asked, as `build` does."""
    templates = load_templates("en")
    return [build_patient(kb, templates, simulate_patient(kb, seed, index), BuildOptions()) for index in range(size)]
