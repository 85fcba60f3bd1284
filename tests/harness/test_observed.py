"""The observed view: memories are asked what the patient asked and see opaque, dated, unlabelled sessions;
the harness maps the ids they name back to the dataset's before the guard, the prompt and Recall@k."""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Sequence

import pytest

from medmemorybench.errors import InputError
from medmemorybench.harness.observed import LeakageError, ObservedStream, retrieval_query
from medmemorybench.harness.results import read_samples
from medmemorybench.harness.stream import guard as _guard
from medmemorybench.memory.base import MemoryItem, MemorySystem, Retrieval
from medmemorybench.memory.bm25 import BM25Memory
from medmemorybench.memory.long_context import LongContext
from medmemorybench.render.models import ObservedSession, Session, Turn
from tests.harness.conftest import dataset_questions, run, run_config, stream_rows

OPAQUE = re.compile(r"^P\d{4}-X\d{4}$")


def _session(session_id: str, date: str | None = None) -> Session:
    kind = "regular" if "-S" in session_id else "health_noise"
    return Session(session_id=session_id, kind=kind, date=date,
                   turns=[Turn(role="patient", text=f"About {session_id}."), Turn(role="doctor", text="I see.")])


def _observe_all(dataset_dir, mode: str = "mixed") -> dict[str, tuple[ObservedStream, list[tuple[dict, list]]]]:
    """Each patient's stream observed the way the runner does it: (stream, [(row, observed sessions)])."""
    out: dict[str, tuple[ObservedStream, list[tuple[dict, list]]]] = {}
    for row in stream_rows(dataset_dir, mode):
        stream, seen = out.setdefault(row["persona_id"], (ObservedStream(row["persona_id"]), []))
        seen.append((row, stream.observe([Session.model_validate(s) for s in row["sessions"]])))
    return out


class SpyBM25(BM25Memory):
    """Real BM25 retrieval; records every session and query the runner hands it."""

    sessions: list = []
    queries: list[str] = []

    def ingest(self, sessions: Sequence[ObservedSession]) -> None:
        SpyBM25.sessions.extend(sessions)
        super().ingest(sessions)

    def retrieve(self, questions: Sequence[str], k: int, token_budget: int | None = None) -> list[Retrieval]:
        SpyBM25.queries.extend(questions)
        return super().retrieve(questions, k, token_budget)


def test_mq_retrieval_query_holds_the_options_and_is_recorded(dataset_dir, tmp_path):
    SpyBM25.queries = []
    runner = run(run_config(dataset_dir, tmp_path, tasks=["medmemorybench_efficient_mq"], limit=1),
                 memory_factory=SpyBM25)
    samples = read_samples(runner.config.output_path / "samples.jsonl")
    questions = {q["query_id"]: q for q in dataset_questions(dataset_dir) if q["query_type"] == "MQ"}
    assert samples and SpyBM25.queries == [s["retrieval_query"] for s in samples]
    for sample in samples:
        question = questions[sample["query_id"]]
        assert question["options"] and sample["retrieval_query"] == retrieval_query(question)
        assert sample["retrieval_query"].startswith(question["question"])
        assert all(option in sample["retrieval_query"].splitlines() for option in question["options"])
    assert retrieval_query({"question": "When did I start it?", "options": []}) == "When did I start it?"


def test_memories_see_opaque_dated_unlabelled_sessions(dataset_dir, tmp_path):
    SpyBM25.sessions = []
    run(run_config(dataset_dir, tmp_path, tasks=["medmemorybench_mixed_eem"]), memory_factory=SpyBM25)
    seen = SpyBM25.sessions
    assert len(seen) == sum(len(row["sessions"]) for row in stream_rows(dataset_dir, "mixed"))
    for session in seen:
        assert type(session) is ObservedSession and set(type(session).model_fields) == {"session_id", "date", "turns"}
        assert not any(hasattr(session, name) for name in ("kind", "family_member", "event_ids", "renderer"))
        assert OPAQUE.match(session.session_id) and dt.date.fromisoformat(session.date)
    # Per patient (the runner goes checkpoint by checkpoint over all): exactly what the view gives,
    # numbered in the order given, dates never going back.
    by_patient = sorted(seen, key=lambda s: s.session_id[:5])
    expected = [s for _, rows in _observe_all(dataset_dir).values() for _, observed in rows for s in observed]
    assert [s.model_dump_json() for s in by_patient] == [s.model_dump_json() for s in expected]
    for persona in {s.session_id[:5] for s in seen}:
        own = [s for s in seen if s.session_id.startswith(persona)]
        assert [s.session_id for s in own] == [f"{persona}-X{n:04d}" for n in range(1, len(own) + 1)]
        assert [s.date for s in own] == sorted(s.date for s in own)


def test_noise_is_dated_between_visits_never_on_one(dataset_dir):
    noise = 0
    for stream, rows in _observe_all(dataset_dir).values():
        visits = {s["date"] for row, _ in rows for s in row["sessions"] if s["kind"] == "regular"}
        previous = ""
        for row, _ in rows:
            last = max(s["date"] for s in row["sessions"] if s["kind"] == "regular")
            for session in row["sessions"]:
                date = stream.dates[session["session_id"]]
                if session["kind"] == "regular":
                    assert date == session["date"]
                else:
                    noise += 1
                    assert date not in visits and previous < date < last  # within its own checkpoint
            previous = last
    assert noise == 3 * 20  # the fixture's 10 health and 10 family sessions per patient


def test_observed_view_is_deterministic(dataset_dir):
    def dump() -> list[str]:
        return [s.model_dump_json() for stream, rows in _observe_all(dataset_dir).values()
                for _, observed in rows for s in observed]

    assert dump() == dump()


def test_noise_next_to_consecutive_visits_gets_the_nearest_free_days():
    stream = ObservedStream("P0001")
    observed = stream.observe([_session("P0001-H001"), _session("P0001-S001", "2024-01-01"),
                               _session("P0001-S002", "2024-01-02"), _session("P0001-F001"),
                               _session("P0001-S003", "2024-01-03"), _session("P0001-S004", "2024-01-08")])
    assert [s.session_id for s in observed] == [f"P0001-X{n:04d}" for n in range(1, 7)]
    real = [stream.real_id(s.session_id) for s in observed]
    assert real[:3] == ["P0001-S001", "P0001-S002", "P0001-S003"] and real[5] == "P0001-S004"
    noise_dates = {stream.dates["P0001-H001"], stream.dates["P0001-F001"]}
    assert len(noise_dates) == 2 and noise_dates <= {"2024-01-04", "2024-01-05", "2024-01-06", "2024-01-07"}
    assert stream.latest == "2024-01-08"
    with pytest.raises(InputError, match="P0001-H002: every day of its checkpoint has a visit"):
        stream.observe([_session("P0001-H002"), _session("P0001-S005", "2024-01-09")])


def test_recall_is_scored_on_real_ids(dataset_dir, tmp_path):
    # The memory cites each question's evidence by the opaque ids it was given; the run scores them as hits.
    stream, rows = _observe_all(dataset_dir)["P0001"]
    opaque = {stream.real_id(s.session_id): s.session_id for _, observed in rows for s in observed}
    evidence: dict[str, set[str]] = {}
    for question in dataset_questions(dataset_dir, "mixed"):
        if question["persona_id"] == "P0001":
            evidence.setdefault(retrieval_query(question), set()).update(question["evidence_session_ids"])

    class EvidenceMemory(LongContext):
        def retrieve(self, questions: Sequence[str], k: int, token_budget: int | None = None) -> list[Retrieval]:
            held = self.session_ids()
            return [Retrieval([MemoryItem("evidence", tuple(sorted(opaque[r] for r in evidence[q]
                                                                   if opaque[r] in held)))]) for q in questions]

    runner = run(run_config(dataset_dir, tmp_path, tasks=["medmemorybench_mixed"], limit=1),
                 memory_factory=EvidenceMemory)
    samples = [s for s in read_samples(runner.config.output_path / "samples.jsonl") if s["recall_at_k"] is not None]
    assert samples and all(s["recall_at_k"] == 1.0 and s["mrr"] == 1.0 for s in samples)
    assert all(re.match(r"^P0001-S\d{3}$", sid) for s in samples for sid in s["retrieved"][0]["session_ids"])


def test_a_memory_naming_ids_it_was_not_given_is_stopped():
    stream = ObservedStream("P0001")
    stream.observe([_session("P0001-S001", "2024-01-01")])
    with pytest.raises(LeakageError, match="names P0001-S001, a session it was never given"):
        stream.to_real(Retrieval([MemoryItem("guessed", ("P0001-S001",))]))
    assert stream.to_real(Retrieval([MemoryItem("given", ("P0001-X0001",))])).items[0].session_ids == ("P0001-S001",)


def test_leakage_guard_checks_the_real_ids_behind_the_opaque_ones():
    stream = ObservedStream("P0001")
    memory: MemorySystem = LongContext()
    memory.ingest(stream.observe([_session("P0001-S011", "2024-02-01")]))
    _guard(memory, stream, 20)
    with pytest.raises(LeakageError, match="holds P0001-S011 while answering checkpoint 10"):
        _guard(memory, stream, 10)


def test_opaque_ids_map_dataset_ids_to_the_ones_given_and_refuse_a_session_not_given():
    stream = ObservedStream("P0001")
    stream.observe([_session("P0001-S001", "2024-01-01"), _session("P0001-S002", "2024-01-05")])
    assert stream.opaque_ids(["P0001-S002", "P0001-S001"]) == ("P0001-X0002", "P0001-X0001")
    with pytest.raises(InputError, match="P0001-S003: not in P0001's stream up to this checkpoint"):
        stream.opaque_ids(["P0001-S001", "P0001-S003"])


def test_the_oracle_alone_gets_the_gold_evidence_and_shows_it_with_distractors_already_read(dataset_dir, tmp_path):
    # Mixed mode, so the distractors may be noise; every answerable question's evidence is shown whole, with
    # exactly 4 other sessions read by its checkpoint, in the dates the memory saw.
    runner = run(run_config(dataset_dir, tmp_path, tasks=["medmemorybench_mixed"], memory="oracle", limit=1))
    stream, _rows = _observe_all(dataset_dir)["P0001"]
    questions = {q["query_id"]: q for q in dataset_questions(dataset_dir, "mixed")}
    samples = read_samples(runner.config.output_path / "samples.jsonl")
    assert samples and {s["persona_id"] for s in samples} == {"P0001"}
    for sample in samples:
        shown = [sid for item in sample["retrieved"] for sid in item["session_ids"]]
        evidence = questions[sample["query_id"]]["evidence_session_ids"]
        assert set(evidence) <= set(shown) and len(shown) == len(evidence) + 4 == len(set(shown))
        assert all(int(sid[-3:]) <= sample["checkpoint"] for sid in shown if "-S" in sid)  # (never a later visit)
        dates = [stream.dates[sid] for sid in shown]
        assert dates == sorted(dates)
    assert any("-S" not in sid for s in samples for item in s["retrieved"] for sid in item["session_ids"])
    abstentions = [s for s in samples if s["abstain"]]
    assert abstentions and all(len(s["retrieved"]) == 4 and s["recall_at_k"] is None for s in abstentions)
