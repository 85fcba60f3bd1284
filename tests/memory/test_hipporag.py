"""HippoRAG 2 (the real hipporag 2.0.0a4 package) through the loopback endpoint, driven by a scripted backbone that
writes the NER and triple JSON a capable model would: a graph of phrase nodes and triples from dated passages, the
rare fact's session retrieved with its provenance, cumulative indexing that pays OpenIE only for new passages and
builds the same graph as indexing everything at once, patients apart, every call counted, parse failures counted,
a rebuild counted fresh (the package's own response cache bypassed), bad options refused."""

from __future__ import annotations

import importlib.util
import json
import re
import sys
import types
from collections import Counter

import pytest

from medmemorybench.errors import InputError
from medmemorybench.harness.cache import ResponseCache
from medmemorybench.memory import load_memory
from medmemorybench.memory._hipporag_package import FILTER_SYSTEM, stubbed_unused_imports
from medmemorybench.memory.hipporag import reply_token_bound, session_passages
from medmemorybench.render.models import ObservedSession
from tests.harness.conftest import RecordingBackbone
from tests.memory.conftest import FACT_QUESTION, FACT_SESSION_ID, bound_memory, make_session

STOP = {"because", "results", "morning", "something", "anything", "everything", "thank"}


def _entities(passage: str) -> list[str]:
    """What a capable NER model would list: the date and the passage's long words (the clinical terms)."""
    date = re.search(r"Consultation date: (\S+)", passage)[1]
    words = [w for w in re.findall(r"[a-z][a-z-]{7,}", passage.lower()) if w not in STOP]
    return [date, *dict.fromkeys(words)][:6]


def scripted(request) -> str:  # noqa: ANN001
    """Replies to the package's three prompts: NER, triples conditioned on the entities, the recognition filter."""
    system, last = request.messages[0]["content"], request.messages[-1]["content"]
    if system.startswith("Your task is to extract named entities"):
        return json.dumps({"named_entities": _entities(last)})
    if system.startswith("Your task is to construct an RDF"):
        entities = json.loads(last[last.rindex('{"named_entities"'):])["named_entities"]
        date, terms = entities[0], entities[1:]
        triples = [[f"consultation of {date}", "discussed", term] for term in terms]
        if "ceruloplasmin" in terms:
            triples.append(["serum ceruloplasmin", "measured at", "0.12 g/L"])
        return json.dumps({"triples": triples})
    if system == FILTER_SYSTEM:
        facts = json.loads(re.search(r"fact_before_filter ## \]\]\n(.*?)\n\nRespond", last, re.DOTALL)[1])["fact"]
        return json.dumps({"fact": facts[:1]})  # (the best-scored fact: what a capable model keeps)
    return "Answer: unknown"


def hipporag(folder, backbone, **options):  # noqa: ANN001, ANN003, ANN201
    """A memory bound to a working folder of its own under `folder`."""
    folder.mkdir(exist_ok=True)
    return bound_memory("hipporag", folder, backbone, **options)


def observed(sessions) -> list[ObservedSession]:  # noqa: ANN001
    return [ObservedSession(session_id=s.session_id, date=s.date, turns=s.turns) for s in sessions]


def passages(sessions, turns: int = 4) -> int:  # noqa: ANN001
    return len({p for s in sessions for p in session_passages(s, turns)})


def requests_of(backbone: RecordingBackbone) -> list:
    return [r for batch in backbone.batches for r in batch]


def test_the_package_builds_a_graph_and_retrieves_the_rare_fact(stream, tmp_path):
    sessions = observed(stream[3:8])  # (the fact session among real ones)
    backbone = RecordingBackbone(scripted)
    memory, cost = bound_memory("hipporag", tmp_path, backbone)
    memory.ingest(sessions)
    graph = memory.graph_stats()
    assert graph["passages"] == memory.size() == passages(sessions)
    assert graph["phrase_nodes"] > 10 and graph["triples"] > 10 and graph["edges"] > graph["triples"]
    assert cost.llm_calls == 2 * memory.size() and cost.parse_failures == 0  # NER + triples per passage
    asked = requests_of(backbone)
    assert all(r.response_schema is not None for r in asked)  # the endpoint supplied the package's schemas
    assert all(r.max_tokens == reply_token_bound(10, 10) for r in asked)
    assert all("Consultation date: 20" in r.messages[-1]["content"] for r in asked)  # dates inside the passages

    (retrieval,) = memory.retrieve([FACT_QUESTION], k=3)
    top = retrieval.items[0]
    assert top.session_ids == (FACT_SESSION_ID,) and "ceruloplasmin" in top.text
    assert top.text.startswith("Consultation date: 2024-05-02")
    assert [i.score for i in retrieval.items] == sorted((i.score for i in retrieval.items), reverse=True)
    (recognition,) = requests_of(backbone)[len(asked):]  # one filter call per question, its items the candidates
    assert recognition.messages[0]["content"] == FILTER_SYSTEM
    assert recognition.response_schema["properties"]["fact"]["items"]["enum"]
    assert cost.llm_calls == 2 * memory.size() + 1 and cost.parse_failures == 0
    assert memory.session_ids() == {s.session_id for s in sessions}
    prompts = "\n".join(m["content"] for r in requests_of(backbone) for m in r.messages)
    dates = set(re.findall(r"\d{4}-\d{2}-\d{2}", prompts))
    assert dates <= {s.date for s in sessions}  # no wall clock in any prompt (the package's examples use "May 2008")


def _edges(memory) -> Counter:  # noqa: ANN001
    """The graph's edges as (node name, node name) -> summed weight to 3 decimals, direction and parallel edges
    aside (the embedder's floats differ in their sixth digit between batches of other sizes; a doubled edge doubles
    its weight)."""
    graph, out = memory.rag.graph, Counter()
    names = graph.vs["name"]
    for edge in graph.es:
        out[tuple(sorted((names[edge.source], names[edge.target])))] += edge["weight"]
    return Counter({pair: round(weight, 3) for pair, weight in out.items()})


def test_ingest_is_cumulative_and_builds_the_graph_of_one_indexing(stream, tmp_path):
    ferritin = make_session("P0999-S060", "I'm here about the tiredness again.",
                            "Your ferritin came back at 9 ng/mL, which is low, so we start iron tablets.",
                            date="2024-06-03")
    first, second = observed(stream[4:7]), observed([*stream[7:9], ferritin])
    backbone = RecordingBackbone(scripted)
    memory, cost = hipporag(tmp_path / "a", backbone)
    memory.ingest(first)
    assert cost.llm_calls == 2 * passages(first)
    memory.ingest(second)
    assert cost.llm_calls == 2 * passages(first + second)  # OpenIE only for the new passages
    assert memory.session_ids() == {s.session_id for s in first + second}
    (fact, late) = memory.retrieve([FACT_QUESTION, "What was my ferritin level?"], k=3)
    assert fact.items[0].session_ids == (FACT_SESSION_ID,)  # the first checkpoint's session is still there
    assert late.items[0].session_ids == ("P0999-S060",)  # and the second's is retrieved

    at_once, _ = hipporag(tmp_path / "b", RecordingBackbone(scripted))
    at_once.ingest(first + second)
    assert _edges(memory) == _edges(at_once)  # (the package's own incremental path doubled synonymy edges)
    at_once.rag.prepare_retrieval_objects()
    memory.rag.prepare_retrieval_objects()
    assert memory.rag.ent_node_to_chunk_ids == at_once.rag.ent_node_to_chunk_ids


def test_two_patients_share_nothing(stream, tmp_path):
    one, _ = hipporag(tmp_path / "one", RecordingBackbone(scripted))
    other, _ = hipporag(tmp_path / "other", RecordingBackbone(scripted))
    one.ingest(observed(stream[5:7]))
    other.ingest(observed(stream[:2]))
    assert one.url != other.url and one.save_dir != other.save_dir
    assert one.session_ids().isdisjoint(other.session_ids())
    (retrieval,) = other.retrieve([FACT_QUESTION], k=5)
    assert all(FACT_SESSION_ID not in i.session_ids for i in retrieval.items)


def test_a_rebuild_is_counted_and_read_from_our_cache_not_the_packages(stream, tmp_path):
    sessions = observed(stream[5:7])
    cache = ResponseCache(tmp_path / "responses.sqlite")
    bound_memory("hipporag", tmp_path, RecordingBackbone(scripted), cache=cache)[0].ingest(sessions)
    again = RecordingBackbone(scripted)
    memory, cost = bound_memory("hipporag", tmp_path, again, cache=cache)  # (the same working folder)
    memory.ingest(sessions)
    assert again.batches == [] and cost.llm_calls == cost.cache_hits == 2 * passages(sessions) > 0
    assert not list(memory.save_dir.rglob("*.sqlite"))  # no package response cache to hide calls


def test_prose_is_counted_as_parse_failures_and_dense_retrieval_still_answers(stream, tmp_path):
    memory, cost = bound_memory("hipporag", tmp_path, RecordingBackbone("I am not sure what to say."))
    memory.ingest(observed(stream[5:8]))
    assert memory.graph_stats()["triples"] == 0
    assert cost.parse_failures == cost.llm_calls == 2 * memory.size()
    (retrieval,) = memory.retrieve([FACT_QUESTION], k=3)  # (no fact: the package falls back to passage cosine)
    assert retrieval.items[0].session_ids == (FACT_SESSION_ID,) and cost.llm_calls == 2 * memory.size()


def test_a_query_whose_seeds_the_package_refuses_falls_back_to_dense_retrieval(tmp_path):
    def keep_all(request) -> str:  # noqa: ANN001
        if request.messages[0]["content"] == FILTER_SYSTEM:  # (the lowest-scored fact weighs 0: the package asserts)
            last = request.messages[-1]["content"]
            return re.search(r"fact_before_filter ## \]\]\n(.*?)\n\nRespond", last, re.DOTALL)[1]
        return scripted(request)

    memory, _ = bound_memory("hipporag", tmp_path, RecordingBackbone(keep_all))
    memory.ingest(observed([make_session("P0999-S070", "My metformin upsets my stomach.",
                                         "Then we switch to extended-release metformin.")]))
    (retrieval,) = memory.retrieve(["Which medicine upsets my stomach?"], k=2)
    assert [i.session_ids for i in retrieval.items] == [("P0999-S070",)]


def test_unused_imports_are_stubbed_for_the_import_only_and_an_installed_module_is_left_alone(monkeypatch):
    assert importlib.util.find_spec("gritlm") is None  # (gone after hipporag's import: accelerate asks find_spec)
    real = types.ModuleType("litellm")
    monkeypatch.setitem(sys.modules, "litellm", real)
    with stubbed_unused_imports() as stubbed:
        assert "litellm" not in stubbed and sys.modules["litellm"] is real
        assert {"gritlm", "botocore.exceptions"} <= set(stubbed)
        with pytest.raises(ImportError, match="not installed"):
            sys.modules["gritlm"].GritLM()
    assert "gritlm" not in sys.modules and sys.modules["litellm"] is real


@pytest.mark.parametrize("options", [{"passage_turns": 0}, {"max_triples": "10"}, {"damping": 1.5},
                                     {"synonymy_edge_sim_threshold": -0.1}, {"linking_top_k": True}])
def test_bad_options_are_refused(options):
    with pytest.raises(InputError, match=next(iter(options))):
        load_memory("hipporag", options)
