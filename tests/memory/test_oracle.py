"""OracleMemory, the ceiling: each question's evidence sessions plus exactly N seeded distractors it has read, whole
and in date order; the same retrieval whatever order questions come in; a bad option is one clear line."""

from __future__ import annotations

import random

import pytest

from medmemorybench.errors import InputError
from medmemorybench.memory import load_memory
from medmemorybench.memory.base import EvidenceQuestion
from medmemorybench.memory.context import MemoryContext, MemoryCost
from medmemorybench.memory.oracle import OracleMemory
from medmemorybench.render.models import ObservedSession, Turn, session_text


def _session(number: int, date: str) -> ObservedSession:
    return ObservedSession(session_id=f"P0001-X{number:04d}", date=date,
                           turns=[Turn(role="patient", text=f"Visit {number}."), Turn(role="doctor", text="Noted.")])


def _stream() -> list[ObservedSession]:
    """Twelve sessions, one a day from 2024-01-01, in stream (date) order."""
    return [_session(n, f"2024-01-{n:02d}") for n in range(1, 13)]


def _oracle(distractors: int = 4, patient: str = "P0001") -> OracleMemory:
    """An oracle bound as the runner binds one: its RNG seeded by the patient and the memory's name."""
    memory = load_memory("oracle", {"distractors": distractors})
    cost = MemoryCost()
    memory.bind(MemoryContext(llm=None, embedder=None, workdir=None, cost=cost,  # (it uses neither)
                              rng=random.Random(f"0/{patient}/memory/oracle")))
    return memory


def _ids(retrieval) -> list[str]:  # noqa: ANN001
    return [sid for item in retrieval.items for sid in item.session_ids]


QUESTIONS = [EvidenceQuestion("P0001-C010-EEM1", "What was my dose?", ("P0001-X0009", "P0001-X0002")),
             EvidenceQuestion("P0001-C010-TLA1", "When did it start?", ("P0001-X0005",)),
             EvidenceQuestion("P0001-C010-ABS1", "What did my dentist say?", ())]


def test_the_evidence_and_exactly_n_distractors_whole_and_in_date_order():
    memory = _oracle()
    memory.ingest(_stream())
    eem, tla, _abs = memory.retrieve_with_evidence(QUESTIONS, k=5)
    for question, retrieval in ((QUESTIONS[0], eem), (QUESTIONS[1], tla)):
        ids = _ids(retrieval)
        assert set(question.evidence_session_ids) <= set(ids) and len(ids) == len(question.evidence_session_ids) + 4
        assert ids == sorted(ids) and len(set(ids)) == len(ids)  # (one item per session, oldest first)
    assert all(len(item.session_ids) == 1 for item in eem.items)
    assert eem.items[0].text == session_text(_stream()[int(eem.items[0].session_ids[0][-4:]) - 1])


def test_an_abstention_question_gets_the_distractors_alone():
    memory = _oracle(distractors=3)
    memory.ingest(_stream())
    [retrieval] = memory.retrieve_with_evidence(QUESTIONS[2:], k=5)
    assert len(_ids(retrieval)) == 3 and _ids(retrieval) == sorted(_ids(retrieval))


def test_distractors_come_only_from_sessions_already_read():
    memory = _oracle()
    memory.ingest(_stream()[:6])
    for question in QUESTIONS:
        [early] = memory.retrieve_with_evidence([EvidenceQuestion(question.query_id, question.query, ())], k=5)
        assert set(_ids(early)) <= {f"P0001-X{n:04d}" for n in range(1, 7)}
    memory.ingest(_stream()[6:])
    assert len(_ids(memory.retrieve_with_evidence(QUESTIONS[1:2], k=5)[0])) == 5


def test_fewer_other_sessions_than_asked_gives_them_all():
    memory = _oracle(distractors=10)
    memory.ingest(_stream()[:3])
    [retrieval] = memory.retrieve_with_evidence([EvidenceQuestion("q", "q", ("P0001-X0002",))], k=5)
    assert _ids(retrieval) == ["P0001-X0001", "P0001-X0002", "P0001-X0003"]
    assert _ids(_oracle(distractors=0).retrieve_with_evidence([EvidenceQuestion("q", "q", ())], k=5)[0]) == []


def test_the_same_retrieval_twice_and_whatever_the_order_of_questions():
    def retrieve(questions: list[EvidenceQuestion]) -> dict[str, list[str]]:
        memory = _oracle()
        memory.ingest(_stream())
        return {q.query_id: _ids(r) for q, r in zip(questions, memory.retrieve_with_evidence(questions, k=5),
                                                     strict=True)}

    first = retrieve(QUESTIONS)
    assert retrieve(QUESTIONS) == first and retrieve(QUESTIONS[::-1]) == first
    assert retrieve(QUESTIONS[2:]) == {QUESTIONS[2].query_id: first[QUESTIONS[2].query_id]}
    memory = _oracle()
    memory.ingest(_stream())
    asked = memory.retrieve_with_evidence(QUESTIONS, k=5)
    assert [_ids(r) for r in memory.retrieve_with_evidence(QUESTIONS, k=5)] == [_ids(r) for r in asked]


def test_the_draw_depends_on_the_question_and_the_option():
    memory = _oracle(distractors=3)
    memory.ingest(_stream())
    draws = {tuple(_ids(r)) for r in memory.retrieve_with_evidence(
        [EvidenceQuestion(f"P0001-C010-ABS{n}", "q", ()) for n in range(8)], k=5)}
    assert len(draws) > 1  # (each question its own distractors, not one fixed set)
    assert _oracle(distractors=3).spec() == {"memory": "oracle", "distractors": 3}


def test_an_evidence_session_never_read_is_refused():
    memory = _oracle()
    memory.ingest(_stream()[:3])
    with pytest.raises(ValueError, match="q1: evidence P0001-X0009 was never ingested"):
        memory.retrieve_with_evidence([EvidenceQuestion("q1", "q", ("P0001-X0009",))], k=5)


def test_plain_retrieve_is_refused_and_it_reads_the_gold_alone():
    memory = _oracle()
    with pytest.raises(NotImplementedError, match="retrieve_with_evidence"):
        memory.retrieve(["q"], k=5)
    assert OracleMemory.reads_gold_evidence and not load_memory("bm25", {}).reads_gold_evidence
    assert OracleMemory.answer_modes == ("shared",)  # (no native answering)


def test_reset_forgets():
    memory = _oracle()
    memory.ingest(_stream())
    memory.reset()
    assert memory.session_ids() == set() and memory.size() == 0


@pytest.mark.parametrize("value", [-1, "abc", 1.5, True])
def test_a_bad_distractors_option_is_one_line_naming_it(value):
    with pytest.raises(InputError) as error:
        load_memory("oracle", {"distractors": value})
    message = str(error.value)
    assert "\n" not in message and message.startswith("--memory_args for 'oracle': distractors must be")
    assert repr(value) in message
