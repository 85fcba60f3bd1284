"""LongContext: everything, oldest first; a token budget drops the oldest sessions and says how many."""

from __future__ import annotations

from medmemorybench.memory.long_context import LongContext
from medmemorybench.render.models import session_text
from tests.memory.conftest import make_session


def _sessions():
    return [make_session(f"P1-S{i:03d}", "x" * 100, "y" * 100) for i in range(1, 6)]


def test_without_budget_every_session_oldest_first():
    memory = LongContext()
    sessions = _sessions()
    memory.ingest(sessions[:2])
    memory.ingest(sessions[2:])
    [retrieval] = memory.retrieve(["q"], k=1)
    assert [item.session_ids for item in retrieval.items] == [(s.session_id,) for s in sessions]
    assert retrieval.items[0].text == session_text(sessions[0])
    assert retrieval.truncated_sessions == 0


def test_budget_drops_oldest_sessions_and_reports_the_count():
    memory = LongContext(count_tokens=lambda text: 10)
    memory.ingest(_sessions())
    first, second = memory.retrieve(["q1", "q2"], k=5, token_budget=25)
    assert [item.session_ids[0] for item in first.items] == ["P1-S004", "P1-S005"]
    assert first.truncated_sessions == 3
    assert second.items == first.items and second.truncated_sessions == 3


def test_default_counter_is_a_quarter_of_the_characters():
    memory = LongContext()
    sessions = _sessions()
    memory.ingest(sessions)
    per_session = len(session_text(sessions[0])) // 4
    [retrieval] = memory.retrieve(["q"], k=5, token_budget=2 * per_session)
    assert len(retrieval.items) == 2 and retrieval.truncated_sessions == 3


def test_budget_below_the_newest_session_keeps_nothing():
    memory = LongContext(count_tokens=lambda text: 10)
    memory.ingest(_sessions())
    [retrieval] = memory.retrieve(["q"], k=5, token_budget=9)
    assert retrieval.items == [] and retrieval.truncated_sessions == 5


def test_reset_forgets():
    memory = LongContext()
    memory.ingest(_sessions())
    assert len(memory.session_ids()) == 5
    memory.reset()
    assert memory.session_ids() == set()
    assert memory.retrieve(["q"], k=5)[0].items == []
