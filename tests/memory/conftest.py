"""Sessions for memory tests: a real rendered patient, plus one hand-written session holding a rare fact."""

from __future__ import annotations

import pytest

from medmemorybench.knowledge import default_knowledge
from medmemorybench.render.conversation import SessionRenderer
from medmemorybench.render.models import Session, Turn
from medmemorybench.render.templates import load_templates
from medmemorybench.simulate import simulate_patient

FACT_QUESTION = "What was my ceruloplasmin level?"
FACT_SESSION_ID = "P0999-S050"


def make_session(session_id: str, *texts: str, date: str | None = "2024-05-02") -> Session:
    """A session alternating patient and doctor turns, patient first."""
    roles = ("patient", "doctor")
    return Session(session_id=session_id, kind="regular" if date else "health_noise", date=date,
                   turns=[Turn(role=roles[i % 2], text=text) for i, text in enumerate(texts)])


@pytest.fixture(scope="session")
def rendered_sessions() -> list[Session]:
    """The first 12 consultations of a simulated patient (real template rendering, many lab values)."""
    kb = default_knowledge()
    year = simulate_patient(kb, 3, 1)
    return SessionRenderer(kb, load_templates("en"), year).render_year()[:12]


@pytest.fixture(scope="session")
def fact_session() -> Session:
    """A consultation whose one rare lab (ceruloplasmin) is stated late, in turn 6 of 8."""
    return make_session(
        FACT_SESSION_ID,
        "Good morning, I'm back for the results of the blood tests you ordered.",
        "Good morning. Before we look, how has your energy been this month?",
        "A bit low in the afternoons, but I'm sleeping fine.",
        "Any tremor, or changes in your handwriting?",
        "No, nothing like that.",
        "Your serum ceruloplasmin came back at 0.12 g/L, which is below the normal range, "
        "so I'd like to repeat it with a 24-hour urine copper.",
        "All right, I'll collect the sample this week.",
        "Good, we'll review both results together next time.",
    )


@pytest.fixture(scope="session")
def stream(rendered_sessions, fact_session) -> list[Session]:
    """The fact session in the middle of real consultations."""
    return [*rendered_sessions[:6], fact_session, *rendered_sessions[6:]]


def bound_memory(name: str, tmp_path, backbone, *, cache=None, seed: int = 0, **options):  # noqa: ANN001, ANN201
    """A fresh memory `name` bound to a context over `backbone` (a unit-test double), its cost, as the runner
    binds one: the real embedder, a working folder named after the patient, a seeded RNG."""
    import random

    from medmemorybench.memory import load_memory
    from medmemorybench.memory.context import Embedder, MemoryContext, MemoryCost, MemoryLLM

    cost = MemoryCost()
    memory = load_memory(name, options)
    workdir = tmp_path / "P0999"
    workdir.mkdir(exist_ok=True)
    memory.bind(MemoryContext(llm=MemoryLLM(backbone, cost, cache),
                              embedder=Embedder("all-minilm-l6-v2", cost, tmp_path / "vectors"), workdir=workdir,
                              rng=random.Random(seed), cost=cost))
    return memory, cost
