"""Task YAML: every shipped task loads; bad files are reported by file and key with near matches."""

from __future__ import annotations

import shutil

import pytest

from medmemorybench.harness.tasks import TaskConfigError, load_registry, resolve_tasks
from medmemorybench.questions.spec import type_codes
from medmemorybench.resources import tasks_dir


@pytest.fixture
def task_copy(tmp_path):
    target = tmp_path / "tasks"
    shutil.copytree(tasks_dir(), target)
    return target


def test_every_shipped_task_loads_and_group_expands():
    registry = load_registry()
    assert {"medmemorybench", "medmemorybench_efficient", "medmemorybench_mixed"} <= set(registry)
    tasks = resolve_tasks(["medmemorybench"])
    assert [t.task for t in tasks] == ["medmemorybench_efficient", "medmemorybench_mixed"]
    assert all(t.types() == list(type_codes()) for t in tasks)


def test_subtasks_inherit_through_include():
    (task,) = resolve_tasks(["medmemorybench_mixed_mcd"])
    assert task.dataset_name == "mixed" and task.types() == ["MCD"] and task.retrieval_k == 5
    assert task.template_for("MCD") == "qa/mcd.jinja"


def test_tags_select_tasks():
    names = [t.task for t in resolve_tasks(["medmemorybench_efficient_types"])]
    assert len(names) == 7 and all(n.startswith("medmemorybench_efficient_") for n in names)


def test_unknown_task_suggests_near_match():
    expected = r"unknown task 'medmemorybench_mixd'; did you mean 'medmemorybench_mixed'"
    with pytest.raises(TaskConfigError, match=expected):
        resolve_tasks(["medmemorybench_mixd"])


def test_unknown_key_is_named_with_file(task_copy):
    path = task_copy / "medmemorybench_mixed.yaml"
    path.write_text(path.read_text() + "retrieval_depth: 9\n")
    with pytest.raises(TaskConfigError, match=r"medmemorybench_mixed.yaml: retrieval_depth: unknown key"):
        load_registry(task_copy)


def test_unknown_metric_suggests_the_right_one(task_copy):
    path = task_copy / "_defaults.yaml"
    path.write_text(path.read_text().replace("metric: rouge_l", "metric: rougel"))
    expected = r"metric_list\[5\].metric: unknown metric 'rougel'; did you mean 'rouge_l'"
    with pytest.raises(TaskConfigError, match=expected):
        load_registry(task_copy)


def test_missing_template_is_named(task_copy):
    path = task_copy / "medmemorybench_efficient_eem.yaml"
    path.write_text(path.read_text() + 'doc_to_text: "qa/{query_type}_v2.jinja"\n')
    expected = r"medmemorybench_efficient_eem.yaml: doc_to_text \(EEM\): template 'qa/eem_v2.jinja' not found"
    with pytest.raises(TaskConfigError, match=expected):
        load_registry(task_copy)


def test_bad_split_and_type_values(task_copy):
    path = task_copy / "medmemorybench_efficient_eem.yaml"
    original = path.read_text()
    path.write_text(original.replace("query_types: [EEM]", "query_types: [EMM]"))
    with pytest.raises(TaskConfigError, match=r"metadata.query_types\[0\]: unknown type 'EMM'; did you mean 'EEM'"):
        load_registry(task_copy)
    path.write_text(original + "test_split: [checkpoint-10]\n")
    with pytest.raises(TaskConfigError, match=r"test_split\[0\]: 'checkpoint-10' is not a split name"):
        load_registry(task_copy)


def test_our_keys_live_under_metadata_where_lm_eval_keeps_free_keys(task_copy):
    # lm-eval's TaskConfig refuses unknown top-level keys (query_types, retrieval_k, ... were once top-level)
    lm_eval_keys = {"task", "tag", "class", "include", "dataset_path", "dataset_name", "test_split", "output_type",
                    "doc_to_text", "generation_kwargs", "metric_list", "metadata", "group", "aggregate_metric_list"}
    for path in sorted(task_copy.glob("*.yaml")):
        keys = {line.split(":")[0] for line in path.read_text().splitlines() if line and line[0].isalpha()}
        assert keys <= lm_eval_keys, (path.name, keys - lm_eval_keys)
    path = task_copy / "medmemorybench_mixed.yaml"
    path.write_text(path.read_text() + "retrieval_k: 9\n")
    with pytest.raises(TaskConfigError, match=r"medmemorybench_mixed.yaml: retrieval_k: unknown key"):
        load_registry(task_copy)


def test_metadata_keys_are_checked_and_merged_through_include(task_copy):
    (task,) = resolve_tasks(["medmemorybench_mixed_eem"], task_copy)
    assert task.metadata.memory == "bm25" and task.version == "1.2" and task.types() == ["EEM"]
    path = task_copy / "medmemorybench_mixed_eem.yaml"
    path.write_text(path.read_text() + "  retreival_k: 9\n")
    with pytest.raises(TaskConfigError, match=r"medmemorybench_mixed_eem.yaml: metadata.retreival_k: unknown key"):
        load_registry(task_copy)


def test_generation_kwargs_use_lm_eval_names(task_copy):
    (task,) = resolve_tasks(["medmemorybench_mixed"], task_copy)
    assert task.generation_kwargs.lm_eval_kwargs() == {"until": [], "max_gen_toks": 128, "temperature": 0.0,
                                                       "do_sample": False}
    path = task_copy / "_defaults.yaml"
    path.write_text(path.read_text().replace("  do_sample: false", "  do_sample: true"))
    with pytest.raises(TaskConfigError, match=r"generation_kwargs.do_sample: must be true exactly when temperature"):
        load_registry(task_copy)


def test_include_of_missing_file(task_copy):
    path = task_copy / "medmemorybench_mixed.yaml"
    path.write_text(path.read_text().replace("include: _defaults.yaml", "include: _nope.yaml"))
    with pytest.raises(TaskConfigError, match=r"medmemorybench_mixed.yaml: include: file '_nope.yaml' does not exist"):
        load_registry(task_copy)
