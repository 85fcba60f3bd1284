"""Fixtures shared by the scoring tests: three simulated patients and their generated questions."""

from __future__ import annotations

import pytest

from medmemorybench.dataset.build import BuildOptions, PatientBuild, build_patient
from medmemorybench.knowledge import default_knowledge
from medmemorybench.questions.models import Question
from medmemorybench.render.templates import load_templates
from medmemorybench.simulate import simulate_patient


@pytest.fixture(scope="session")
def generated_patients() -> list[PatientBuild]:
    kb, templates = default_knowledge(), load_templates("en")
    return [build_patient(kb, templates, simulate_patient(kb, 11, index), BuildOptions()) for index in range(3)]


@pytest.fixture(scope="session")
def generated_questions(generated_patients: list[PatientBuild]) -> list[Question]:
    return [q for patient in generated_patients for q in patient.questions]
