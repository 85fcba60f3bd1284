"""MemRL: a distilled experience per session keyed by the session, similarity + Q ranking above a threshold, seeded
epsilon-greedy exploration, and Q values that move with feedback."""

from __future__ import annotations

import json

import pytest

from medmemorybench.errors import InputError
from medmemorybench.memory import load_memory
from tests.harness.conftest import RecordingBackbone
from tests.memory.conftest import FACT_QUESTION, FACT_SESSION_ID, bound_memory


def distil(request) -> str:  # noqa: ANN001
    copper = "ceruloplasmin" in request.messages[-1]["content"]
    return json.dumps({"script": "Ceruloplasmin was low at 0.12 g/L; repeat with urine copper." if copper
                       else "Routine visit."})


def memrl(tmp_path, seed=0, **options):  # noqa: ANN001, ANN201
    return bound_memory("memrl", tmp_path, RecordingBackbone(distil), seed=seed, **options)


def test_each_session_is_a_distilled_experience_found_by_similarity(stream, tmp_path):
    memory, cost = memrl(tmp_path, epsilon=0.0)
    memory.ingest(stream)
    assert memory.size() == len(stream) and cost.llm_calls == len(stream)
    (top, *_), = [r.items for r in memory.retrieve([FACT_QUESTION], k=2)]
    assert top.session_ids == (FACT_SESSION_ID,) and top.text.startswith("[2024-05-02] Ceruloplasmin was low")
    assert all(e.q_value == 0.5 for e in memory.items)  # no reward in the benchmark: Q stays at q_init


def test_exploration_is_seeded_and_happens_at_its_rate(stream, tmp_path):
    def picks(seed: int, epsilon: float) -> list[tuple]:
        memory, _ = memrl(tmp_path, seed=seed, epsilon=epsilon, threshold=-1.0)
        memory.ingest(stream)
        return [tuple(i.session_ids for i in r.items) for r in memory.retrieve([FACT_QUESTION] * 200, k=2)]

    greedy = picks(0, 0.0)
    assert len(set(greedy)) == 1  # without exploration every identical question gets the same items
    explored = picks(0, 0.5)
    assert explored == picks(0, 0.5)  # the same seed explores the same way
    swapped = sum(p != greedy[0] for p in explored) / len(explored)
    assert 0.35 < swapped < 0.65


def test_feedback_moves_q_and_q_changes_the_ranking(stream, tmp_path):
    memory, _ = memrl(tmp_path, epsilon=0.0, weight_q=1.0, alpha=1.0, threshold=-1.0)
    memory.ingest(stream)
    (before,) = memory.retrieve([FACT_QUESTION], k=1)
    assert before.items[0].session_ids == (FACT_SESSION_ID,)
    memory.update_values([FACT_SESSION_ID], reward=-5.0)  # a bad outcome: its utility drops
    fact = next(e for e in memory.items if e.session_id == FACT_SESSION_ID)
    assert fact.q_value == -5.0
    (after,) = memory.retrieve([FACT_QUESTION], k=1)
    assert after.items[0].session_ids != (FACT_SESSION_ID,)


def test_options_are_checked():
    with pytest.raises(InputError, match="epsilon=2 is not valid"):
        load_memory("memrl", {"epsilon": 2})
    with pytest.raises(InputError, match="candidates=0 is not valid"):
        load_memory("memrl", {"candidates": 0})
