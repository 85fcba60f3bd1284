"""The 1,000-patient cohort every invariant module reads (every roster condition under 50 seeds), simulated once per
test run (`tests/once.py`): each module used to simulate it again (about 45 s each on this machine)."""

from __future__ import annotations

import pytest

from medmemorybench.knowledge import default_knowledge
from medmemorybench.render.fact_acts import FactSlots
from medmemorybench.render.templates import load_templates
from medmemorybench.simulate import simulate_patient
from tests.once import made_once
from tests.simulate.clinical import N_SEEDS


@pytest.fixture(scope="session")
def kb():
    return default_knowledge()


@pytest.fixture(scope="session")
def years(kb, tmp_path_factory):
    return made_once(tmp_path_factory, "years", lambda: [simulate_patient(kb, seed, index) for seed in range(N_SEEDS)
                                                         for index in range(20)])


@pytest.fixture(scope="module")
def slots(kb, years):
    """Each year's slot filler per language (what the renderer says a fact with)."""
    return {lang: [FactSlots(kb, load_templates(lang), year) for year in years] for lang in ("en", "zh")}
