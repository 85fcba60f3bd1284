"""Letta, natively: the agent edits core memory blocks (pinned, re-rendered after each edit) and saves dated
archival passages through tools, within a step limit; every turn is searchable in recall memory; it answers
natively under its core memory, searching before `send_message`, and says which items it used."""

from __future__ import annotations

import json

import pytest

from medmemorybench.errors import InputError
from medmemorybench.memory.base import NativeQuestion
from medmemorybench.memory.context import MemoryCost, MemoryLLM
from medmemorybench.models.base import ChatRequest
from medmemorybench.render.models import ObservedSession
from tests.harness.conftest import RecordingBackbone
from tests.memory.conftest import bound_memory, make_session


def call(tool: str, **arguments) -> str:
    return json.dumps({"tool": tool, "arguments": arguments})


def observed(session) -> ObservedSession:  # noqa: ANN001
    return ObservedSession(session_id=session.session_id, date=session.date, turns=session.turns)


START = observed(make_session("P0999-X001", "I take metformin 500 mg twice a day.", "Good, keep taking it.",
                              date="2024-01-10"))
RAISE = observed(make_session("P0999-X002", "My sugars are still high.", "Let's raise metformin to 1000 mg.",
                              date="2024-03-02"))
LAB = observed(make_session("P0999-X003", "Any results?", "Your ceruloplasmin came back at 0.12 g/L, which is low.",
                            date="2024-05-02"))


def agent(request: ChatRequest) -> str:
    """A capable memory agent: one edit or save per consultation, then `finish`."""
    user = request.messages[1]["content"]
    if len(request.messages) > 2:  # (it has acted once already)
        return call("finish")
    if "500 mg" in user:
        return call("core_memory_append", label="human", content="Takes metformin 500 mg twice daily.")
    if "1000 mg" in user:
        return call("core_memory_replace", label="human", old="500 mg", new="1000 mg")
    return call("archival_memory_insert", content="Ceruloplasmin 0.12 g/L, low.")


def letta(tmp_path, reply, **options):  # noqa: ANN001, ANN201
    backbone = RecordingBackbone(reply)
    memory, cost = bound_memory("letta", tmp_path, backbone, **options)
    return memory, cost, backbone


def test_the_agent_keeps_the_profile_current_in_core_memory_and_saves_dated_passages(tmp_path):
    memory, cost, backbone = letta(tmp_path, agent)
    memory.ingest([START, RAISE, LAB])
    core = memory.core_text()
    assert "Takes metformin 1000 mg twice daily." in core and "500 mg" not in core
    (line,) = [item for item in memory.core_items() if "metformin" in item.text]
    assert line.session_ids == ("P0999-X001", "P0999-X002")  # written by the first visit, changed by the second
    assert [r.text for r in memory.archival] == ["[2024-05-02] Ceruloplasmin 0.12 g/L, low."]
    assert cost.llm_calls == 6 and cost.parse_failures == 0  # an action and a finish per consultation
    # the second step of the second visit already shows the corrected profile in its system message
    second_visit = [r for batch in backbone.batches for r in batch if "1000 mg" in r.messages[1]["content"]]
    assert "metformin 500 mg" in second_visit[0].messages[0]["content"]
    assert "metformin 1000 mg" in second_visit[1].messages[0]["content"]
    assert all(r.tools and r.tool_choice == "required" for r in second_visit[:1])
    assert memory.size() == 2 and memory.session_ids() == {"P0999-X001", "P0999-X002", "P0999-X003"}


def test_an_agent_that_never_finishes_stops_at_the_step_limit_whose_last_call_must_finish(tmp_path):
    memory, cost, backbone = letta(tmp_path, lambda _r: call("archival_memory_insert", content="again"),
                                   max_steps=3)
    memory.ingest([START])
    requests = [r for batch in backbone.batches for r in batch]
    assert len(requests) == 3 and cost.llm_calls == 3
    assert requests[-1].tool_choice == {"type": "function", "function": {"name": "finish"}}
    # under a real constraint the forced last step is a finish; a backend that ignores it does not act again
    assert len(memory.archival) == 2 and cost.parse_failures == 1


def test_a_full_block_refuses_the_append_and_tells_the_agent(tmp_path):
    memory, _cost, backbone = letta(tmp_path, lambda r: call("core_memory_append", label="human", content="x" * 150)
                                    if len(r.messages) < 5 else call("finish"), block_chars=200)
    memory.ingest([START])
    assert len(memory.core_items()) == 1
    last = [r for batch in backbone.batches for r in batch][-1]
    assert "the human block is full (200 characters)" in last.messages[-1]["content"]


def test_a_reply_that_is_no_tool_call_is_counted_and_saves_nothing(tmp_path):
    memory, cost, _backbone = letta(tmp_path, "The patient takes metformin.")
    memory.ingest([START, LAB])
    assert cost.parse_failures == 2 and cost.llm_calls == 2 and memory.size() == 0
    assert len(memory.recall) == 4  # (recall memory holds every turn whatever the agent does)


def test_it_answers_natively_after_searching_and_names_what_it_used(tmp_path):
    memory, _cost, _backbone = letta(tmp_path, agent)
    memory.ingest([START, RAISE, LAB])

    def answering(request: ChatRequest) -> str:
        if len(request.messages) == 2:
            return call("archival_memory_search", query="ceruloplasmin result")
        assert "Ceruloplasmin 0.12 g/L" in request.messages[-1]["content"]  # the search result came back
        return call("send_message", message="It was 0.12 g/L on 2024-05-02, below normal.")

    answerer_backbone = RecordingBackbone(answering)
    memory.context.answerer = MemoryLLM(answerer_backbone, MemoryCost())
    task_prompt = ChatRequest(messages=[{"role": "system", "content": "Answer from the patient's records."},
                                        {"role": "user", "content": "Question: What was my ceruloplasmin?"}],
                              max_tokens=64)
    (answer,) = memory.answer([NativeQuestion("What was my ceruloplasmin?", task_prompt)])
    assert answer.completion.text == "It was 0.12 g/L on 2024-05-02, below normal." and answer.steps == 2
    assert answer.completion.prompt_tokens == 20  # both steps
    first = answerer_backbone.batches[0][0]
    assert "metformin 1000 mg" in first.messages[0]["content"]  # the core memory is pinned
    assert first.messages[0]["content"].endswith("Answer from the patient's records.")  # the task's instructions
    assert first.messages[1]["content"] == "Question: What was my ceruloplasmin?"
    assert [item.session_ids for item in answer.items] == [("P0999-X001", "P0999-X002"), ("P0999-X003",)]


def test_shared_mode_retrieves_the_core_lines_then_the_nearest_passages(tmp_path):
    memory, _cost, _backbone = letta(tmp_path, agent)
    memory.ingest([START, RAISE, LAB])
    (retrieval,) = memory.retrieve(["What was my ceruloplasmin?"], k=1)
    assert [item.text for item in retrieval.items] == ["Core memory (human): Takes metformin 1000 mg twice daily.",
                                                       "[2024-05-02] Ceruloplasmin 0.12 g/L, low."]


def test_conversation_search_finds_turns_by_their_words(tmp_path):
    memory, _cost, _backbone = letta(tmp_path, "prose")
    memory.ingest([START, RAISE, LAB])
    (best, *_rest) = memory.conversation_search("raise metformin")
    assert best.text == "[2024-03-02] Doctor: Let's raise metformin to 1000 mg." and best.session_ids == ("P0999-X002",)


@pytest.mark.parametrize("options", [{"max_steps": 0}, {"block_chars": 10}, {"page_size": "5"}, {"colour": 1}])
def test_bad_options_are_refused(tmp_path, options):
    with pytest.raises(InputError, match="--memory_args"):
        bound_memory("letta", tmp_path, RecordingBackbone(), **options)


def test_a_passage_found_twice_is_used_once(tmp_path):
    memory, _cost, _backbone = letta(tmp_path, agent)
    memory.ingest([START, RAISE, LAB])
    memory.context.answerer = MemoryLLM(RecordingBackbone(lambda r: call("archival_memory_search", query="copper")),
                                        MemoryCost())
    task_prompt = ChatRequest(messages=[{"role": "user", "content": "Question: What was my ceruloplasmin?"}])
    (answer,) = memory.answer([NativeQuestion("What was my ceruloplasmin?", task_prompt)])
    assert answer.steps == 3 and [i.text for i in answer.items].count("[2024-05-02] Ceruloplasmin 0.12 g/L, low.") == 1
