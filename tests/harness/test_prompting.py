"""The reader sees what a deployed assistant sees: every record is headed by the date its memory saw, in either
language, and never says which conversations were a general health question or about a relative."""

from __future__ import annotations

import re

import pytest

from medmemorybench.harness.prompting import PromptBuilder, item_dates
from medmemorybench.harness.results import read_samples
from medmemorybench.harness.tasks import resolve_tasks
from medmemorybench.memory.base import MemoryItem
from tests.harness.conftest import RecordingBackbone, run, run_config

QUESTION = {"query_id": "P0001-C010-EEM1", "query_type": "EEM", "question": "What dose am I on?", "options": []}
DATES = {"P0001-S001": "2024-01-02", "P0001-F004": "2024-03-04", "P0001-H002": "2024-03-04",
         "P0001-H007": "2024-05-06"}
"""Dataset id -> the date the memory saw: a visit, a question about a relative and two general health questions."""
ITEMS = [MemoryItem("Patient: I take 500 mg twice a day.", ("P0001-S001",)),
         MemoryItem("Patient: Is 10 mg a normal dose?", ("P0001-F004", "P0001-H002")),
         MemoryItem("Patient: How often should I exercise?", ("P0001-H007",))]

LANGUAGES = [
    ("medmemorybench_mixed", ["[1] consultation of 2024-01-02", "[2] consultation of 2024-03-04\n",
                              "[3] consultation of 2024-05-06"],
     ("relative", "general health", "mother", "family", "noise")),
    ("medmemorybench_mixed_zh", ["[1] 2024-01-02的就诊", "[2] 2024-03-04的就诊\n", "[3] 2024-05-06的就诊"],
     ("亲属", "一般健康", "母亲", "代")),
]


@pytest.mark.parametrize(("task_name", "headings", "never"), LANGUAGES)
def test_noise_records_are_headed_by_their_date_alone(task_name, headings, never):
    (task,) = resolve_tasks([task_name])
    request = PromptBuilder().build(task, QUESTION, ITEMS, DATES, "2024-05-06")
    records = request.messages[1]["content"]
    assert all(heading in records for heading in headings)
    assert not any(word in records for word in never)  # (the records block says nothing of a session's kind)


@pytest.mark.parametrize("task_name", ["medmemorybench_mixed", "medmemorybench_mixed_zh"])
def test_the_system_prompt_warns_of_relatives_without_marking_any(task_name):
    (task,) = resolve_tasks([task_name])
    system = PromptBuilder().build(task, QUESTION, ITEMS, DATES, "2024-05-06").messages[0]["content"]
    assert ("about a relative" in system and "no record is marked" in system) or \
        ("替亲属咨询" in system and "不会注明" in system)


def test_an_item_of_several_sessions_on_one_day_names_the_day_once():
    assert item_dates(ITEMS[1], DATES) == ["2024-03-04"]
    assert item_dates(MemoryItem("x", ("P0001-H007", "P0001-S001")), DATES) == ["2024-05-06", "2024-01-02"]


def test_a_mixed_run_heads_every_record_noise_included_with_a_date(dataset_dir, tmp_path):
    backbone = RecordingBackbone()
    runner = run(run_config(dataset_dir, tmp_path, tasks=["medmemorybench_mixed_eem"], memory="long_context",
                            limit=1, checkpoints=[10]), backbone=backbone)
    samples = read_samples(runner.config.output_path / "samples.jsonl")
    assert any(sid[6] in "HF" for s in samples for item in s["retrieved"] for sid in item["session_ids"])
    prompts = [r.messages[1]["content"] for batch in backbone.batches for r in batch]
    headings = [line for prompt in prompts for line in prompt.splitlines() if re.match(r"\[\d+\] ", line)]
    assert headings and all(re.fullmatch(r"\[\d+\] consultation of \d{4}-\d{2}-\d{2}", line) for line in headings)


@pytest.mark.parametrize("expression", ["'a' * 3000000000", "[1] * 10 ** 8", "10 ** 1000000"])
def test_a_template_that_would_exhaust_memory_is_one_error_naming_it(tmp_path, expression):
    import shutil

    from medmemorybench.harness.tasks import TaskConfigError
    from medmemorybench.resources import prompts_dir

    task = resolve_tasks(["medmemorybench_efficient"])[0]
    shutil.copytree(prompts_dir(), tmp_path, dirs_exist_ok=True)
    (tmp_path / task.system_prompt).write_text("{{ " + expression + " }}", encoding="utf-8")
    with pytest.raises(TaskConfigError, match=f"template '{task.system_prompt}'"):
        PromptBuilder(tmp_path).build(task, QUESTION, ITEMS, DATES, "2024-05-06")
