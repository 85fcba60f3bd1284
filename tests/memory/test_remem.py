"""ReMem-style memory: one call per session for its gist and its facts with entities, verbatim/gist/fact/entity
nodes with synonymy edges, personalized PageRank seeded at the question's facts and gists, cumulative across
checkpoints, parse failures counted."""

from __future__ import annotations

import json

import numpy as np
import pytest

from medmemorybench.errors import InputError
from medmemorybench.memory import load_memory
from medmemorybench.memory.remem import EPISODE_PROMPT
from tests.harness.conftest import RecordingBackbone
from tests.memory.conftest import FACT_QUESTION, FACT_SESSION_ID, bound_memory, make_session

# A later result for the same test under another name: only the shared entity joins it to the question.
REPEAT = make_session("P0999-S070", "The hospital sent me a letter about a blood result.",
                      "Yes, the copper-binding protein came back at 0.10 g/L, still low.", "Should I worry about it?",
                      "We will refer you to the liver clinic.", date="2024-07-01")
GARBLED = make_session("P0999-S051", "garbled words from me", "and from the doctor", date="2024-05-09")


def scripted(request) -> str:  # noqa: ANN001
    """A capable model's gist and facts: the ceruloplasmin result (entities ceruloplasmin, copper), its repeat under
    another name (entity ceruloplasmin), prose for the garbled session, a routine visit elsewhere."""
    text = request.messages[-1]["content"]
    if "garbled" in text:
        return "The patient said many things."
    if "ceruloplasmin" in text:
        gist, facts = "Low ceruloplasmin; urine copper to follow.", [
            {"fact": "Serum ceruloplasmin was 0.12 g/L, below normal.", "entities": ["Ceruloplasmin", "copper"]},
            {"fact": "A 24-hour urine copper is planned.", "entities": ["urine copper"]},
            {"fact": "A 24-hour urine copper is planned.", "entities": ["urine copper"]}]  # (said twice: stored once)
    elif "copper-binding" in text:
        gist, facts = "A repeat blood result; referral to the liver clinic.", [
            {"fact": "The repeat result was 0.10 g/L, still low.", "entities": ["ceruloplasmin."]}]
    else:
        gist, facts = "A routine consultation.", [{"fact": "The patient feels well overall.", "entities": []}]
    return json.dumps({"gist": gist, "facts": facts})


def remem(tmp_path, backbone=None, **options):  # noqa: ANN001, ANN201
    return bound_memory("remem", tmp_path, backbone or RecordingBackbone(scripted), **options)


def fact_session(stream):  # noqa: ANN001, ANN201
    return next(s for s in stream if s.session_id == FACT_SESSION_ID)


def node_of(memory, text: str):  # noqa: ANN001, ANN201
    return next(node for node, m in memory.memories.items() if text in m.text)


@pytest.fixture(scope="module")
def folder(tmp_path_factory):  # noqa: ANN001, ANN201
    """One folder for the module, so its embedding cache is shared: each text is embedded once."""
    return tmp_path_factory.mktemp("memory")

def test_each_session_is_one_call_giving_verbatim_gist_and_fact_nodes_joined_by_entities(stream, folder):
    backbone = RecordingBackbone(scripted)
    memory, cost = remem(folder, backbone)
    memory.ingest([stream[0], fact_session(stream), REPEAT])
    (requests,) = backbone.batches
    assert len(requests) == 3 == cost.llm_calls and all(r.messages[0]["content"] == EPISODE_PROMPT for r in requests)
    assert all(r.response_schema == memory.schema and r.max_tokens == memory.max_tokens >= 500 for r in requests)
    assert [memory.count(kind) for kind in ("verbatim", "gist", "fact", "entity")] == [3, 3, 4, 3]
    graph = memory.graph.graph
    verbatim, gist = node_of(memory, "Patient: Good morning, I'm back"), node_of(memory, "Gist: Low cerulo")
    fact, repeat = node_of(memory, "Serum ceruloplasmin"), node_of(memory, "repeat result")
    assert memory.memories[fact].text == "[2024-05-02] Serum ceruloplasmin was 0.12 g/L, below normal."
    assert memory.memories[gist].text.startswith("[2024-05-02] Gist: ") and memory.memories[verbatim].text.startswith(
        "Date: 2024-05-02\n")
    assert {verbatim, fact} <= set(graph[gist]) and ("entity", "copper") in graph[fact]
    # one entity node for "Ceruloplasmin" and "ceruloplasmin.", joining the two sessions' facts
    assert set(graph[("entity", "ceruloplasmin")]) >= {fact, repeat}
    assert verbatim in graph[("entity", "ceruloplasmin")]  # the session's text names it
    assert node_of(memory, "copper-binding") not in graph[("entity", "ceruloplasmin")]  # the repeat's does not
    assert {m.session_id for m in memory.memories.values()} == memory.session_ids() == {
        stream[0].session_id, FACT_SESSION_ID, REPEAT.session_id}
    assert cost.embedding_calls == 1  # every new node in one call


def test_synonymy_edges_join_similar_entities_and_gists(stream, folder):
    memory, _ = remem(folder, synonymy_threshold=0.5)
    memory.ingest([stream[0], fact_session(stream), REPEAT])
    graph = memory.graph.graph
    vectors = memory.vectors["entity"]
    a, b = vectors.nodes.index(("entity", "copper")), vectors.nodes.index(("entity", "urine copper"))
    similarity = float(vectors.matrix[a] @ vectors.matrix[b])
    assert similarity >= 0.5 and graph[("entity", "copper")][("entity", "urine copper")]["weight"] == \
        pytest.approx(similarity)
    none, _ = remem(folder, synonymy_topk=0)
    none.ingest([stream[0], fact_session(stream), REPEAT])
    assert not any(u[0] == v[0] == "entity" for u, v in none.graph.graph.edges)


def test_the_pagerank_is_seeded_at_the_questions_facts_gists_and_their_entities(stream, folder):
    memory, _ = remem(folder, linking_top_k=1)
    memory.ingest([*stream[:3], fact_session(stream), REPEAT])
    query = memory.embedder.encode([FACT_QUESTION])[0]
    seeds = memory.seed_weights(query)
    fact, gist = node_of(memory, "Serum ceruloplasmin"), node_of(memory, "Gist: Low cerulo")
    fact_score = float(memory.vectors["fact"].matrix[memory.vectors["fact"].nodes.index(fact)] @ query)
    assert seeds[fact] == pytest.approx(fact_score)
    assert seeds[("entity", "ceruloplasmin")] == pytest.approx(fact_score / 2)  # (named by two facts)
    assert seeds[("entity", "copper")] == pytest.approx(fact_score)
    assert gist in seeds and [n for n in seeds if n[0] in ("fact", "gist")] == [fact, gist]  # linking_top_k each
    verbatim = memory.vectors["verbatim"]
    cosines = verbatim.matrix @ query
    assert [seeds[n] for n in verbatim.nodes] == pytest.approx(0.05 * np.maximum(cosines, 0))


def test_the_repeat_result_is_reached_through_the_shared_entity(stream, folder):
    memory, _ = remem(folder, linking_top_k=1, passage_node_weight=0.0)
    memory.ingest([*stream, REPEAT])
    repeat = node_of(memory, "repeat result")
    query = memory.embedder.encode([FACT_QUESTION])[0]
    assert repeat not in memory.seed_weights(query)  # not among the question's facts
    (retrieval,) = memory.retrieve([FACT_QUESTION], k=5)
    texts = [item.text for item in retrieval.items]
    assert texts[0] == "[2024-05-02] Serum ceruloplasmin was 0.12 g/L, below normal."
    assert memory.memories[repeat].text in texts  # through ("entity", "ceruloplasmin")
    assert retrieval.items[texts.index(memory.memories[repeat].text)].session_ids == (REPEAT.session_id,)
    scores = [item.score for item in retrieval.items]
    assert scores == sorted(scores, reverse=True) and all(0 < s < 1 for s in scores)


def test_returning_verbatim_ranks_the_sessions_by_their_pagerank_mass(stream, folder):
    memory, _ = remem(folder, returns="verbatim")
    memory.ingest([*stream, REPEAT])
    (retrieval,) = memory.retrieve([FACT_QUESTION], k=3)
    assert all(item.text.startswith("Date: ") for item in retrieval.items)
    assert retrieval.items[0].session_ids == (FACT_SESSION_ID,)
    assert retrieval.items[0].text == memory.memories[node_of(memory, "Patient: Good morning, I'm back")].text


def test_a_second_checkpoint_calls_only_for_its_sessions_and_keeps_the_first(stream, folder):
    backbone = RecordingBackbone(scripted)
    memory, cost = remem(folder, backbone)
    memory.ingest(stream[:7])  # the fact session is the 7th
    nodes, edges = set(memory.graph.graph.nodes), set(memory.graph.graph.edges)
    fact_vectors = memory.vectors["fact"].matrix.copy()
    memory.ingest([*stream[7:], REPEAT])
    new = [*stream[7:], REPEAT]
    assert [len(batch) for batch in backbone.batches] == [7, len(new)] and cost.llm_calls == 7 + len(new)
    assert [r.messages[-1]["content"].split("\n")[0] for r in backbone.batches[1]] == \
        [f"Consultation date: {s.date}" for s in new]
    assert all(r.messages[-1]["content"].split("\n")[2].endswith(s.turns[0].text)
               for r, s in zip(backbone.batches[1], new, strict=True))
    assert nodes < set(memory.graph.graph.nodes) and edges <= set(memory.graph.graph.edges)
    assert np.array_equal(memory.vectors["fact"].matrix[:len(fact_vectors)], fact_vectors)  # nothing rebuilt
    assert memory.count("verbatim") == len(stream) + 1  # cumulative (the paper's adapter kept the last unit only)
    (retrieval,) = memory.retrieve([FACT_QUESTION], k=3)
    assert FACT_SESSION_ID in {sid for item in retrieval.items for sid in item.session_ids}


def test_prose_replies_are_counted_and_leave_only_the_verbatim_session(folder):
    memory, cost = remem(folder)
    memory.ingest([GARBLED])
    assert cost.parse_failures == 1 and memory.size() == 1 and memory.count("fact") == memory.count("gist") == 0
    (retrieval,) = memory.retrieve(["What did I say?"], k=3)  # the verbatim session still answers (dense restart)
    assert [item.session_ids for item in retrieval.items] == [(GARBLED.session_id,)]


def test_the_same_stream_gives_the_same_retrievals(stream, folder):
    def retrievals(seed: int) -> list:
        memory, _ = remem(folder, seed=seed)
        memory.ingest([*stream, REPEAT])
        return memory.retrieve([FACT_QUESTION, "What did we decide about my blood pressure?"], k=5)

    assert retrievals(0) == retrievals(0)


def test_options_are_checked():
    for options, message in [({"damping": 1}, "damping=1 is not valid"), ({"linking_top_k": 0}, "linking_top_k=0"),
                             ({"synonymy_threshold": 0}, "synonymy_threshold=0 is not valid"),
                             ({"passage_node_weight": -1}, "passage_node_weight=-1"),
                             ({"max_facts": 100}, "max_facts=100"), ({"top_k": 5}, "unexpected keyword"),
                             ({"returns": "facts"}, "returns='facts' is not valid; expected 'all' or 'verbatim'")]:
        with pytest.raises(InputError, match=message):
            load_memory("remem", options)
