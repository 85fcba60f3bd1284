"""BM25: finds the session holding a literal fact, maps chunk hits to sessions, indexes once per checkpoint."""

from __future__ import annotations

import bm25s
import pytest

from medmemorybench.memory.bm25 import BM25Memory
from tests.memory.conftest import FACT_QUESTION, FACT_SESSION_ID, make_session


@pytest.fixture
def index_builds(monkeypatch):
    """Counts `bm25s.BM25.index` calls."""
    calls = []
    original = bm25s.BM25.index

    def counting(self, *args, **kwargs):
        calls.append(1)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(bm25s.BM25, "index", counting)
    return calls


def test_finds_the_session_holding_a_rare_lab(stream):
    memory = BM25Memory()
    memory.ingest(stream)
    [retrieval] = memory.retrieve([FACT_QUESTION], k=5)
    assert retrieval.items[0].session_ids == (FACT_SESSION_ID,)


def test_chunk_hits_carry_their_session(stream):
    memory = BM25Memory(chunking="turns", window=4, stride=2)
    memory.ingest(stream)
    [retrieval] = memory.retrieve([FACT_QUESTION], k=5)
    top = retrieval.items[0]
    assert "ceruloplasmin came back at 0.12 g/L" in top.text
    assert top.text.count("\n") == 4  # the date header and one window of 4 turns, not the whole session
    assert all(item.session_ids and item.score > 0 for item in retrieval.items)
    valid = {s.session_id for s in stream}
    assert all(set(item.session_ids) <= valid for item in retrieval.items)


def test_session_chunking_returns_whole_sessions(stream):
    memory = BM25Memory(chunking="session")
    memory.ingest(stream)
    [retrieval] = memory.retrieve([FACT_QUESTION], k=3)
    assert retrieval.items[0].session_ids == (FACT_SESSION_ID,)
    assert retrieval.items[0].text.startswith("Date: 2024-05-02\nPatient: Good morning")


def test_no_reindex_between_retrieves_without_ingest(stream, index_builds):
    memory = BM25Memory()
    memory.ingest(stream[:5])
    memory.ingest(stream[5:8])
    assert index_builds == []  # ingest never indexes
    memory.retrieve([FACT_QUESTION], k=5)
    memory.retrieve(["blood pressure"], k=5)
    assert len(index_builds) == 1
    memory.ingest(stream[8:])
    memory.retrieve([FACT_QUESTION], k=5)
    memory.retrieve([FACT_QUESTION], k=5)
    assert len(index_builds) == 2


def test_questions_are_retrieved_in_one_batched_call(stream, monkeypatch):
    memory = BM25Memory()
    memory.ingest(stream)
    questions = [FACT_QUESTION, "What dose of metformin do I take?", "How is my blood pressure?"]
    one_by_one = [memory.retrieve([q], k=5)[0] for q in questions]
    calls = []
    original = bm25s.BM25.retrieve
    monkeypatch.setattr(bm25s.BM25, "retrieve", lambda self, *a, **kw: calls.append(1) or original(self, *a, **kw))
    batched = memory.retrieve(questions, k=5)
    assert len(calls) == 1
    assert batched == one_by_one


def test_fewer_chunks_than_k_returns_what_exists():
    memory = BM25Memory(chunking="session")
    memory.ingest([make_session("P1-S001", "my ferritin is low", "ferritin was 9 ug/L"),
                   make_session("P1-S002", "ferritin again please", "ferritin now 30 ug/L")])
    [retrieval] = memory.retrieve(["ferritin"], k=5)
    assert sorted(item.session_ids[0] for item in retrieval.items) == ["P1-S001", "P1-S002"]


def test_chunks_sharing_no_term_with_the_question_are_left_out():
    memory = BM25Memory(chunking="session")
    memory.ingest([make_session("P1-S001", "my ferritin is low", "ferritin was 9 ug/L"),
                   make_session("P1-S002", "knee pain", "try physiotherapy")])
    [retrieval] = memory.retrieve(["ferritin"], k=5)
    assert [item.session_ids for item in retrieval.items] == [("P1-S001",)]


def test_stemming_matches_inflections():
    memory = BM25Memory(chunking="session")
    memory.ingest([make_session("P1-S001", "my knees were swelling", "rest them")])
    assert memory.retrieve(["knee swelled"], k=1)[0].items


def test_reset_forgets(stream):
    memory = BM25Memory()
    memory.ingest(stream)
    memory.retrieve([FACT_QUESTION], k=5)
    memory.reset()
    assert memory.session_ids() == set()
    assert memory.retrieve([FACT_QUESTION], k=5)[0].items == []
    memory.ingest(stream[:2])
    assert memory.session_ids() == {s.session_id for s in stream[:2]}
    assert all(item.session_ids[0] in memory.session_ids() for item in memory.retrieve(["test"], k=5)[0].items)


def test_bad_parameters_are_rejected():
    with pytest.raises(ValueError, match="b <= 1"):
        BM25Memory(b=2.0)


def test_unknown_stopword_list_is_rejected():
    with pytest.raises(ValueError, match="en_plus"):
        BM25Memory(stopwords="klingon")
