"""MIRIX, natively: the meta manager routes each consultation to some of the six stores, each store's manager
writes its typed items (semantic concepts merged by name, the core profile rewritten), dated and with their
sessions; at question time a topic call and a search of every store put the items into the system prompt, and
the answering LLM answers."""

from __future__ import annotations

import json

import pytest

from medmemorybench.errors import InputError
from medmemorybench.memory.base import NativeQuestion
from medmemorybench.memory.context import MemoryCost, MemoryLLM
from medmemorybench.memory.mirix import CORE_PROMPT, MANAGERS, ROUTE_PROMPT, TOPIC_PROMPT
from medmemorybench.models.base import ChatRequest
from tests.harness.conftest import RecordingBackbone
from tests.memory.conftest import bound_memory, make_session
from tests.memory.test_letta import LAB, RAISE, START, observed


def managers(request: ChatRequest) -> str:
    """Capable managers: the meta manager sends dose talk to core and semantic, results to episodic and the
    vault; each manager writes what its store holds."""
    system, user = request.messages[0]["content"], request.messages[-1]["content"]
    dose = "1000 mg" if "1000 mg" in user else "500 mg"
    if system == ROUTE_PROMPT:
        stores = ["core", "semantic"] if "metformin" in user else ["episodic", "knowledge_vault"]
        return json.dumps({"stores": stores})
    if system == CORE_PROMPT:
        return json.dumps({"human": f"Type 2 diabetes. Metformin {dose} twice daily."})
    if system == MANAGERS["semantic"][0]:
        return json.dumps({"concepts": [{"name": "Metformin", "summary": f"taken at {dose} twice daily",
                                         "details": "for type 2 diabetes"}]})
    if system == MANAGERS["episodic"][0]:
        return json.dumps({"events": [{"event_type": "test", "summary": "Ceruloplasmin result reviewed.",
                                       "details": "0.12 g/L, low"}]})
    if system == MANAGERS["knowledge_vault"][0]:
        return json.dumps({"secrets": [{"caption": "ceruloplasmin", "value": "0.12 g/L", "sensitivity": "low"}]})
    return "prose"


def mirix(tmp_path, reply=managers, **options):  # noqa: ANN001, ANN201
    backbone = RecordingBackbone(reply)
    memory, cost = bound_memory("mirix", tmp_path, backbone, **options)
    return memory, cost, backbone


def test_the_meta_manager_routes_and_each_store_keeps_its_typed_dated_items(tmp_path):
    memory, cost, _backbone = mirix(tmp_path)
    memory.ingest([START, RAISE, LAB])
    by_store = {e.store: [] for e in memory.entries}
    for entry in memory.entries:
        by_store[entry.store].append((entry.text, sorted(entry.session_ids)))
    # one concept, updated by the second visit (merged by name), with both visits' provenance
    assert by_store["semantic"] == [("[2024-03-02] Metformin: taken at 1000 mg twice daily for type 2 diabetes",
                                     ["P0999-X001", "P0999-X002"])]
    assert by_store["episodic"] == [("[2024-05-02] test: Ceruloplasmin result reviewed. 0.12 g/L, low",
                                     ["P0999-X003"])]
    assert by_store["knowledge_vault"] == [("[2024-05-02] ceruloplasmin: 0.12 g/L (sensitivity low)", ["P0999-X003"])]
    # the rewrite kept the diagnosis word for word (its first visit's) and changed the dose (the second visit's)
    assert memory.core == [("Type 2 diabetes.", {"P0999-X001"}), ("Metformin 1000 mg twice daily.", {"P0999-X002"})]
    assert memory.routed == {"core": 2, "episodic": 1, "semantic": 2, "procedural": 0, "resource": 0,
                             "knowledge_vault": 1}
    assert cost.llm_calls == 3 + 6 and cost.parse_failures == 0  # a route and two managers per visit
    assert memory.size() == 5


def test_an_item_a_manager_writes_twice_is_kept_once(tmp_path):
    def twice(request: ChatRequest) -> str:
        reply = json.loads(managers(request))
        if "events" in reply:
            reply["events"] *= 2  # (a small model repeats itself)
        return json.dumps(reply)

    memory, _cost, _backbone = mirix(tmp_path, twice)
    memory.ingest([LAB])
    (event,) = [e for e in memory.entries if e.store == "episodic"]
    assert event.session_ids == {"P0999-X003"}


def test_a_manager_reply_that_does_not_fit_is_counted_and_stores_nothing(tmp_path):
    def lazy(request: ChatRequest) -> str:
        if request.messages[0]["content"] == ROUTE_PROMPT:
            return json.dumps({"stores": ["episodic"]})
        return json.dumps({"events": [{"summary": "no type, no details"}]})

    memory, cost, _backbone = mirix(tmp_path, lazy)
    memory.ingest([LAB])
    assert cost.parse_failures == 1 and memory.size() == 0


def test_it_answers_natively_with_every_store_searched_for_the_topic(tmp_path):
    memory, _cost, _backbone = mirix(tmp_path, per_store=1)
    memory.ingest([START, RAISE, LAB])

    def answering(request: ChatRequest) -> str:
        if request.messages[0]["content"] == TOPIC_PROMPT:
            return json.dumps({"topic": "ceruloplasmin copper test"})
        return "0.12 g/L"

    answerer = RecordingBackbone(answering)
    memory.context.answerer = MemoryLLM(answerer, MemoryCost())
    task = ChatRequest(messages=[{"role": "system", "content": "Answer from the records."},
                                 {"role": "user", "content": "Question: What was my ceruloplasmin?"}])
    (answer,) = memory.answer([NativeQuestion("What was my ceruloplasmin?", task)])
    assert answer.completion.text == "0.12 g/L" and answer.steps == 2
    system = answerer.batches[1][0].messages[0]["content"]
    assert "Core memory (patient profile): Metformin 1000 mg twice daily." in system
    assert "ceruloplasmin: 0.12 g/L (sensitivity low)" in system and "Ceruloplasmin result reviewed." in system
    assert system.endswith("Answer from the records.")
    assert [i.session_ids for i in answer.items][:2] == [("P0999-X001",), ("P0999-X002",)]  # the profile first
    assert len(answer.items) == 5  # the profile's two sentences, then one of each store that holds anything


def test_shared_mode_gives_the_core_profile_then_the_best_items_over_all_stores(tmp_path):
    memory, _cost, _backbone = mirix(tmp_path)
    memory.ingest([START, RAISE, LAB])
    (retrieval,) = memory.retrieve(["What was my ceruloplasmin level?"], k=1)
    *core, best = retrieval.items
    assert len(core) == 2 and all(item.text.startswith("Core memory (patient profile)") for item in core)
    assert "eruloplasmin" in best.text and best.session_ids == ("P0999-X003",)


@pytest.mark.parametrize("options", [{"per_store": 0}, {"core_chars": 50}, {"stores": 3}])
def test_bad_options_are_refused(tmp_path, options):
    with pytest.raises(InputError, match="--memory_args"):
        bound_memory("mirix", tmp_path, RecordingBackbone(), **options)


def test_a_question_about_a_relative_is_routed_to_episodic_memory_and_leaves_the_profile_alone(tmp_path):
    """The meta manager's choice is what is written: a session about the patient's mother goes to episodic memory
    only, so the patient's core profile never takes the mother's warfarin."""
    family = observed(make_session("P0999-X004", "My mother was started on warfarin, is that safe with her pills?",
                                   "For her, that is a question for her own doctor.", date="2024-06-01"))

    def routing(request: ChatRequest) -> str:
        user = request.messages[-1]["content"]
        if request.messages[0]["content"] == ROUTE_PROMPT and "mother" in user:
            return json.dumps({"stores": ["episodic"]})
        if request.messages[0]["content"] == MANAGERS["episodic"][0] and "mother" in user:
            return json.dumps({"events": [{"event_type": "question", "summary": "Asked about the mother's warfarin.",
                                           "details": "a relative's medicine, not the patient's"}]})
        return managers(request)

    memory, _cost, backbone = mirix(tmp_path, routing)
    memory.ingest([START, family])
    assert memory.core_text() == "Type 2 diabetes. Metformin 500 mg twice daily."
    assert memory.routed["core"] == 1 and memory.routed["episodic"] == 1
    (event,) = [e for e in memory.entries if e.store == "episodic"]
    assert event.session_ids == {"P0999-X004"} and "mother's warfarin" in event.text
    systems = [r.messages[0]["content"] for batch in backbone.batches for r in batch
               if "mother" in r.messages[-1]["content"]]
    assert systems == [ROUTE_PROMPT, MANAGERS["episodic"][0]]  # no core or semantic manager was asked
