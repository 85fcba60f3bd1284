"""A-Mem: a note per session annotated by the LLM, evolution that links the new note to its neighbours and
rewrites their context (then re-embeds them), cosine search over content and annotations, optional link
expansion; every call counted."""

from __future__ import annotations

import json

import pytest

from medmemorybench.errors import InputError
from medmemorybench.memory import load_memory
from medmemorybench.memory.amem import ANALYSE_PROMPT
from tests.harness.conftest import RecordingBackbone
from tests.memory.conftest import FACT_QUESTION, FACT_SESSION_ID, bound_memory

REWRITTEN = "Copper studies follow the low ceruloplasmin."


def scripted(request) -> str:  # noqa: ANN001
    """Annotations naming ceruloplasmin for its session; an evolution that links the newest note to its first
    neighbour and rewrites that neighbour's context, for notes after the ceruloplasmin one."""
    text = request.messages[-1]["content"]
    if request.messages[0]["content"] == ANALYSE_PROMPT:
        copper = "ceruloplasmin" in text
        return json.dumps({"keywords": ["ceruloplasmin"] if copper else ["visit"],
                           "context": "Low ceruloplasmin result." if copper else "A routine visit.", "tags": []})
    evolve = "Low ceruloplasmin" in text
    return json.dumps({"should_evolve": evolve, "connections": [0] if evolve else [],
                       "neighbour_contexts": [REWRITTEN] if evolve else []})


def amem(tmp_path, backbone, **options):  # noqa: ANN001, ANN201
    return bound_memory("amem", tmp_path, backbone, **options)


def test_notes_are_annotated_in_one_batch_then_each_evolves_the_network(stream, tmp_path):
    backbone = RecordingBackbone(scripted)
    memory, cost = amem(tmp_path, backbone)
    sessions = stream[:10]  # the ceruloplasmin session is the 7th
    memory.ingest(sessions)
    assert len(backbone.batches[0]) == 10  # the annotations: one batch
    assert cost.llm_calls == 10 + 9  # and an evolution call for every note that has neighbours
    fact = next(i for i, n in enumerate(memory.notes) if n.session_id == FACT_SESSION_ID)
    # the note whose evolution prompt held the low ceruloplasmin (it, or a later one whose neighbours included it:
    # which is the embedder's call) linked to a neighbour and rewrote its context
    notes = memory.notes
    linked = [i for i in range(fact, len(notes)) if notes[i].links and notes[i].context != REWRITTEN]
    assert linked and memory.evolutions >= 1
    (neighbour,) = memory.notes[linked[0]].links
    assert linked[0] in memory.notes[neighbour].links and memory.notes[neighbour].context == REWRITTEN
    assert memory.notes[fact].keywords == ["ceruloplasmin"]
    (top, *_), = [r.items for r in memory.retrieve([FACT_QUESTION], k=2)]
    assert top.session_ids == (FACT_SESSION_ID,) and "0.12 g/L" in top.text


def test_link_expansion_adds_linked_notes_after_the_hits(stream, tmp_path):
    memory, _ = amem(tmp_path, RecordingBackbone(scripted), expand_links=True)
    memory.ingest(stream[:8])
    (retrieval,) = memory.retrieve([FACT_QUESTION], k=1)
    hit = next(i for i, n in enumerate(memory.notes) if n.session_id == retrieval.items[0].session_ids[0])
    assert len(retrieval.items) == 1 + len(memory.notes[hit].links)


def test_unparseable_replies_are_counted_and_the_note_is_kept_unannotated(stream, tmp_path):
    memory, cost = amem(tmp_path, RecordingBackbone("not json at all"))
    memory.ingest(stream[:3])
    assert memory.size() == 3 and cost.parse_failures == 3 + 2 and memory.evolutions == 0
    assert all(n.keywords == [] and not n.links for n in memory.notes)


def test_options_are_checked():
    with pytest.raises(InputError, match="neighbours=0 is not valid"):
        load_memory("amem", {"neighbours": 0})
    with pytest.raises(InputError, match="expand_links must be true or false"):
        load_memory("amem", {"expand_links": "maybe"})
