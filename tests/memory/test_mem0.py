"""Mem0 (the real mem0ai 1.0.11 package) through the loopback endpoint: extraction then the update decision per
session, a superseded dose UPDATEd and a stopped drug DELETEd by Mem0's own pipeline, dated facts and prompts,
every call and embedding counted, an unusable reply counted as a parse failure."""

from __future__ import annotations

import json
import re

from medmemorybench.memory.mem0 import FACTS_PROMPT
from tests.harness.conftest import RecordingBackbone
from tests.memory.conftest import bound_memory, make_session

SESSIONS = [
    make_session("P0999-S001", "I take metformin 500 mg twice a day.", "Good, stay on 500 mg.", date="2024-03-04"),
    make_session("P0999-S002", "My sugar is still high.", "We raise metformin to 1000 mg twice a day.",
                 date="2024-04-08"),
    make_session("P0999-S003", "The metformin upsets my stomach.", "Then we stop metformin.", date="2024-05-06"),
]


def scripted(request) -> str:  # noqa: ANN001
    """What a capable model would answer to Mem0's two calls."""
    text = "\n".join(m["content"] for m in request.messages)
    if request.messages[0]["content"].startswith(FACTS_PROMPT[:40]):
        date = re.search(r"took place on (\d{4}-\d{2}-\d{2})", text)[1]
        if "1000 mg" in text:
            return json.dumps({"facts": [f"{date}: metformin raised to 1000 mg twice a day"]})
        if "stop metformin" in text:
            return json.dumps({"facts": [f"{date}: metformin stopped (stomach upset)"]})
        return json.dumps({"facts": [f"{date}: takes metformin 500 mg twice a day"]})
    if "metformin stopped" in text:
        return json.dumps({"memory": [{"id": "0", "text": "metformin 1000 mg", "event": "DELETE"}]})
    if "raised to 1000 mg" in text and "500 mg" in text:
        return json.dumps({"memory": [{"id": "0", "text": "2024-04-08: metformin raised to 1000 mg twice a day",
                                       "event": "UPDATE"}]})
    return json.dumps({"memory": [{"id": "0", "text": "2024-03-04: takes metformin 500 mg twice a day",
                                   "event": "ADD"}]})


def mem0(tmp_path, backbone):  # noqa: ANN001, ANN201
    return bound_memory("mem0", tmp_path, backbone)


def test_mem0_updates_a_superseded_dose_then_deletes_the_stopped_drug(tmp_path):
    backbone = RecordingBackbone(scripted)
    memory, cost = mem0(tmp_path, backbone)
    memory.ingest(SESSIONS[:1])
    assert memory.size() == 1 and cost.llm_calls == 2  # extraction, then the update decision
    memory.ingest(SESSIONS[1:2])
    (only,) = memory._all()
    assert only["memory"] == "2024-04-08: metformin raised to 1000 mg twice a day"
    assert memory.session_ids() == {"P0999-S002"}  # an updated memory cites the session that updated it
    (retrieval,) = memory.retrieve(["What is my metformin dose?"], k=3)
    assert retrieval.items[0].session_ids == ("P0999-S002",) and "1000 mg" in retrieval.items[0].text
    memory.ingest(SESSIONS[2:])
    assert memory.size() == 0 and cost.llm_calls == 6 and cost.parse_failures == 0
    assert cost.embedding_calls > 0  # Mem0's embeddings came through the endpoint, counted
    requests = [r for batch in backbone.batches for r in batch]
    assert all(r.response_schema is not None for r in requests)  # the endpoint supplied Mem0's schemas
    assert all(r.max_tokens == memory.max_tokens >= 700 for r in requests)  # room for a reply at the bounds
    dates = {d for r in requests for m in r.messages for d in re.findall(r"\d{4}-\d{2}-\d{2}", m["content"])}
    assert dates <= {s.date for s in SESSIONS}  # no wall clock in any prompt


def test_a_reply_mem0_cannot_use_stores_nothing_and_is_counted(tmp_path):
    memory, cost = mem0(tmp_path, RecordingBackbone("I am not sure what to say."))
    memory.ingest(SESSIONS[:1])
    assert memory.size() == 0 and cost.llm_calls == 1 and cost.parse_failures == 1  # no facts: no update call
