"""NoMemory: the floor retrieves nothing, one empty retrieval per question."""

from __future__ import annotations

from medmemorybench.memory.none import NoMemory


def test_no_memory_retrieves_nothing(stream):
    memory = NoMemory()
    memory.ingest(stream)
    retrievals = memory.retrieve(["a?", "b?"], k=5)
    assert [r.items for r in retrievals] == [[], []]
    assert memory.session_ids() == set()
