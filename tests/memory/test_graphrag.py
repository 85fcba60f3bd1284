"""GraphRAG (the paper's chunk graph): character chunks with their date, the LLM's concepts per chunk as nodes,
similarity edges weighted by shared concepts, best-first traversal from the question's chunks and concepts, an
incremental build, parse failures counted."""

from __future__ import annotations

import json

import numpy as np
import pytest

from medmemorybench.errors import InputError
from medmemorybench.memory import load_memory
from medmemorybench.memory.graphrag import CONCEPT_PROMPT, edge_weight, split_turns
from medmemorybench.render.models import turn_line
from tests.harness.conftest import RecordingBackbone
from tests.memory.conftest import FACT_QUESTION, FACT_SESSION_ID, bound_memory, make_session

# The value, with a concept naming the test but no word of it in the text: only the graph can find it.
HIDDEN = make_session("P0999-S060", "The hospital sent me a letter about a blood result.",
                      "Yes, it came back at 0.12 g/L, lower than we would like.", "Should I worry about it?",
                      "We will repeat it in a month.", date="2024-06-01")


def scripted(request) -> str:  # noqa: ANN001
    """Concepts a capable model would give: ceruloplasmin for the two chunks about it (one never says the word),
    prose for a garbled chunk, a routine pair for the rest."""
    text = request.messages[-1]["content"]
    if "ceruloplasmin" in text or "0.12 g/L" in text:
        return json.dumps({"concepts": ["Ceruloplasmin.", "copper"] if "ceruloplasmin" in text else ["ceruloplasmin"]})
    if "garbled" in text:
        return "These are the concepts: many."
    return json.dumps({"concepts": ["blood test", "follow-up visit"]})


def graphrag(tmp_path, backbone=None, **options):  # noqa: ANN001, ANN201
    return bound_memory("graphrag", tmp_path, backbone or RecordingBackbone(scripted), **options)


def dense_rank(memory, session_id: str, question: str) -> int:  # noqa: ANN001
    """Where plain cosine similarity would rank the session's chunk (0: first)."""
    row = memory.chunk_vectors.similarities(memory.embedder.encode([question]))[0]
    order = np.argsort(-row, kind="stable").tolist()
    return next(rank for rank, i in enumerate(order) if memory.chunks[i].session_id == session_id)


@pytest.fixture(scope="module")
def folder(tmp_path_factory):  # noqa: ANN001, ANN201
    """One folder for the module, so its embedding cache is shared: each text is embedded once."""
    return tmp_path_factory.mktemp("memory")

def test_long_sessions_are_cut_on_turns_with_overlap_and_every_chunk_is_dated(folder):
    session = make_session("P0999-S001", *[f"turn {n} " + "x" * 80 for n in range(8)], date="2024-02-03")
    parts = split_turns(session.turns, chunk_chars=300, overlap_chars=100)
    assert [len(p) for p in parts] == [3, 3, 3, 2] and parts[1][0] == parts[0][-1]  # one turn carried over
    memory, cost = graphrag(folder, chunk_chars=300, overlap_chars=100)
    memory.ingest([session])
    assert cost.llm_calls == 4 and memory.size() == 4
    assert all(c.text.startswith("Date: 2024-02-03\nPatient: turn") or c.text.startswith("Date: 2024-02-03\nDoctor:")
               for c in memory.chunks)


def test_the_graph_holds_chunks_their_concepts_and_weighted_similarity_edges(stream, folder):
    backbone = RecordingBackbone(scripted)
    memory, cost = graphrag(folder, backbone, edges_threshold=0.01)  # (every positive pair linked)
    sessions = [*stream[:2], next(s for s in stream if s.session_id == FACT_SESSION_ID), HIDDEN]
    memory.ingest(sessions)
    (requests,) = backbone.batches
    assert len(requests) == 4 and all(r.messages[0]["content"] == CONCEPT_PROMPT for r in requests)
    assert all(r.response_schema == memory.schema and r.max_tokens == memory.max_tokens >= 100 for r in requests)
    graph = memory.graph.graph
    assert {n for n in graph if n[0] == "concept"} == {("concept", c) for c in
                                                      ("ceruloplasmin", "copper", "blood test", "follow-up visit")}
    fact, hidden = 2, 3  # ("Ceruloplasmin." normalized into the hidden chunk's concept)
    assert set(graph[("concept", "ceruloplasmin")]) == {("chunk", fact), ("chunk", hidden)}
    assert graph[("chunk", 0)][("concept", "blood test")]["weight"] == 1.0
    similarity = float(memory.chunk_vectors.matrix[fact] @ memory.chunk_vectors.matrix[hidden])
    # shared: {ceruloplasmin} of the smaller set ({ceruloplasmin}): 0.7 x cosine + 0.3 x 1
    assert graph[("chunk", fact)][("chunk", hidden)]["weight"] == pytest.approx(0.7 * similarity + 0.3)
    assert edge_weight(0.9, frozenset({"a", "b"}), frozenset({"a", "c", "d"})) == pytest.approx(0.63 + 0.15)
    assert [c.session_id for c in memory.chunks] == [s.session_id for s in sessions]
    assert cost.embedding_calls == 1  # the chunks and the concepts in one call


def test_a_fact_reached_only_through_a_shared_concept_is_retrieved(stream, folder):
    memory, _ = graphrag(folder, seeds=2)
    memory.ingest([*stream, HIDDEN])
    assert dense_rank(memory, HIDDEN.session_id, FACT_QUESTION) >= 3  # plain cosine would not return it in 3
    (retrieval,) = memory.retrieve([FACT_QUESTION], k=3)
    sessions = [item.session_ids for item in retrieval.items]
    assert (HIDDEN.session_id,) in sessions and (FACT_SESSION_ID,) in sessions
    assert "0.12 g/L" in retrieval.items[sessions.index((HIDDEN.session_id,))].text
    scores = [item.score for item in retrieval.items]
    assert scores == sorted(scores, reverse=True)  # cheapest first (score 1 / cost)


def test_without_concept_seeds_the_traversal_starts_at_the_nearest_chunks(stream, folder):
    memory, _ = graphrag(folder, seeds=1, concept_seeds=0)
    memory.ingest([*stream, HIDDEN])
    row = memory.chunk_vectors.similarities(memory.embedder.encode([FACT_QUESTION]))[0]
    concept_row = memory.concept_vectors.similarities(memory.embedder.encode([FACT_QUESTION]))[0]
    (seed, cost), = memory.seed_costs(row, concept_row).items()
    assert seed == ("chunk", int(np.argmax(row))) and cost == pytest.approx(1 / row.max())
    (retrieval,) = memory.retrieve([FACT_QUESTION], k=2)
    assert retrieval.items[0].session_ids == (FACT_SESSION_ID,)
    assert retrieval.items[1].session_ids == (HIDDEN.session_id,)  # through the fact chunk's concept


def test_a_second_checkpoint_adds_nodes_and_calls_only_for_its_sessions(stream, folder):
    backbone = RecordingBackbone(scripted)
    memory, cost = graphrag(folder, backbone)
    memory.ingest(stream[:7])  # the fact session is the 7th
    nodes, edges = set(memory.graph.graph.nodes), set(memory.graph.graph.edges)
    vectors = memory.chunk_vectors.matrix.copy()
    memory.ingest([*stream[7:], HIDDEN])
    assert [len(batch) for batch in backbone.batches] == [7, len(stream) - 7 + 1] and cost.llm_calls == len(stream) + 1
    new = [*stream[7:], HIDDEN]
    assert [r.messages[-1]["content"] for r in backbone.batches[1]] == \
        [f"Consultation date: {s.date}\n\n" + "\n".join(turn_line(t) for t in s.turns) for s in new]
    assert nodes < set(memory.graph.graph.nodes) and edges <= set(memory.graph.graph.edges)
    assert np.array_equal(memory.chunk_vectors.matrix[:7], vectors)  # nothing rebuilt
    (retrieval,) = memory.retrieve([FACT_QUESTION], k=3)
    assert (FACT_SESSION_ID,) in [item.session_ids for item in retrieval.items]  # checkpoint 1 still found
    assert memory.session_ids() == {s.session_id for s in [*stream[:7], *new]}


def test_prose_replies_are_counted_and_give_a_chunk_no_concepts(folder):
    garbled = make_session("P0999-S051", "garbled words from me", "and from the doctor", date="2024-05-09")
    memory, cost = graphrag(folder)
    memory.ingest([garbled, HIDDEN])
    assert cost.parse_failures == 1 and memory.size() == 2  # the chunk itself is the session's own text
    assert memory.chunks[0].concepts == frozenset() and list(memory.graph.graph[("chunk", 0)]) == []
    assert memory.concepts() == 1


def test_the_same_stream_gives_the_same_retrievals(stream, folder):
    def retrievals(seed: int) -> list:
        memory, _ = graphrag(folder, seed=seed)
        memory.ingest([*stream, HIDDEN])
        return memory.retrieve([FACT_QUESTION, "What did we decide about my blood pressure?"], k=4)

    assert retrievals(0) == retrievals(0)


def test_options_are_checked():
    for options, message in [({"chunk_chars": 10}, "chunk_chars=10 is not valid"),
                             ({"chunk_chars": 400, "overlap_chars": 300}, "overlap_chars=300 is not valid"),
                             ({"edges_threshold": 0}, "edges_threshold=0 is not valid"),
                             ({"seeds": 0}, "seeds=0 is not valid"), ({"max_concepts": "8"}, "max_concepts='8'"),
                             ({"hops": 2}, "unexpected keyword argument 'hops'")]:
        with pytest.raises(InputError, match=message):
            load_memory("graphrag", options)
