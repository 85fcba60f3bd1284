"""lm-evaluation-harness runs MedMemoryBench (`lm_eval run --include_path tasks`) with our stream, prompts and
scorers: on the same slice, with the same model, its numbers are our runner's."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

from medmemorybench.dataset import BuildOptions, build_dataset, export_dataset
from medmemorybench.errors import InputError
from medmemorybench.harness.config import RunConfig
from medmemorybench.harness.results import read_samples
from medmemorybench.harness.runner import run_evaluation
from medmemorybench.knowledge import default_knowledge
from medmemorybench.models.embedded import embedded_model_path
from medmemorybench.render.templates import load_templates
from medmemorybench.resources import HOME_ENV, prompts_dir, tasks_dir

pytest.importorskip("lm_eval")
from medmemorybench.integrations.lm_eval_task import task_settings  # noqa: E402 - needs lm_eval

SLICE_TASK = """include: medmemorybench_efficient.yaml
task: medmemorybench_ci_slice
tag: []
generation_kwargs:
  until: []
  max_gen_toks: 12
  temperature: 0.0
  do_sample: false
metadata:
  version: ci
  patients: 1
  checkpoints: [10]
"""
"""One patient, checkpoint 10, every type, short answers: small enough for CI."""
COMPARED = ("correct", "selective", "recall_at_k", "mrr", "token_f1", "rouge_l", "hallucinated", "trap_safe",
            "trap_abstained")


@pytest.fixture(scope="module")
def home(tmp_path_factory):
    """A MedMemoryBench home (prompts and tasks) holding the CI slice task beside the shipped ones."""
    root = tmp_path_factory.mktemp("home")
    shutil.copytree(prompts_dir(), root / "prompts")
    shutil.copytree(tasks_dir(), root / "tasks")
    (root / "tasks" / "medmemorybench_ci_slice.yaml").write_text(SLICE_TASK, encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    built = build_dataset(default_knowledge(), load_templates("en"),
                          BuildOptions(seed=6, personas=2, health_sessions=5, family_sessions=5))
    return export_dataset(built, tmp_path_factory.mktemp("lm-eval-data"))


def lm_eval_run(home, dataset, out, *args: str) -> dict:
    env = {**os.environ, HOME_ENV: str(home), "MEDMEMORYBENCH_DATA": str(dataset), "HF_HUB_OFFLINE": "1",
           "TRANSFORMERS_OFFLINE": "1"}
    result = subprocess.run([sys.executable, "-m", "lm_eval", "run", "--tasks", "medmemorybench_ci_slice",
                             "--include_path", str(home / "tasks"), "--output_path", str(out), "--log_samples", *args],
                            capture_output=True, text=True, env=env, cwd=out.parent, timeout=900)
    assert result.returncode == 0, (result.stdout + result.stderr)[-3000:]
    (results,) = out.rglob("results_*.json")
    (samples,) = out.rglob("samples_medmemorybench_ci_slice_*.jsonl")
    return {"results": json.loads(results.read_text())["results"]["medmemorybench_ci_slice"],
            "samples": [json.loads(line) for line in samples.read_text().splitlines()]}


@pytest.mark.slow  # (about 100 s: SmolLM2 answers the slice twice; `make test-all`)
def test_lm_eval_with_smollm2_matches_our_runner_on_a_slice(home, dataset, tmp_path, monkeypatch):
    model = embedded_model_path()
    theirs = lm_eval_run(home, dataset, tmp_path / "lm-eval", "--model", "hf", "--model_args",
                         f"pretrained={model},dtype=float32", "--apply_chat_template")
    monkeypatch.setenv(HOME_ENV, str(home))
    summary = json.loads(run_evaluation(RunConfig(
        tasks=["medmemorybench_ci_slice"], output_path=tmp_path / "ours", model="hf",
        model_args={"pretrained": str(model), "batch_size": 1}, memory="bm25", dataset_path=str(dataset), limit=1,
        checkpoints=[10], use_cache=False)).read_text())
    ours = {s["query_id"]: s for s in read_samples(tmp_path / "ours" / "samples.jsonl")}

    # the same questions, the same prompts (what the model reads), the same answers
    # (seven on this build: what a first patient's first ten sessions hold to ask about)
    assert sorted(s["doc"]["query_id"] for s in theirs["samples"]) == sorted(ours) and len(ours) >= 6
    for sample in theirs["samples"]:
        mine = ours[sample["doc"]["query_id"]]
        from medmemorybench.harness.prompting import prompt_hash
        from medmemorybench.models.base import ChatRequest

        messages = [{"role": "system", "content": sample["doc"]["system"]},
                    {"role": "user", "content": sample["doc"]["prompt"]}]
        assert prompt_hash(ChatRequest(messages=messages)) == mine["prompt_hash"]
        assert sample["filtered_resps"][0].strip() == mine["output"]

    # and the same numbers, overall and per type
    task = summary["tasks"]["medmemorybench_ci_slice"]["metrics"]
    results = theirs["results"]
    for metric in COMPARED:
        if metric in task:
            assert results[f"{metric},none"] == pytest.approx(task[metric]["overall"][0]["mean"]), metric
    for metric in ("correct", "recall_at_k"):
        for group in task[metric]["by_type"]:
            assert results[f"{metric}_{group['query_type']},none"] == pytest.approx(group["mean"])
    assert str(results.get("alias")) == "medmemorybench_ci_slice"


def test_a_mistake_under_the_lm_eval_command_is_one_line_not_a_traceback(home, tmp_path):
    env = {**{k: v for k, v in os.environ.items() if k != "MEDMEMORYBENCH_DATA"}, HOME_ENV: str(home),
           "HF_HUB_OFFLINE": "1", "HF_DATASETS_CACHE": str(tmp_path / "hf")}  # (no build anywhere, none registered)
    result = subprocess.run([sys.executable, "-m", "lm_eval", "run", "--tasks", "medmemorybench_ci_slice",
                             "--include_path", str(home / "tasks"), "--model", "dummy"],
                            capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300)
    assert result.returncode != 0
    assert "Traceback" not in result.stderr, result.stderr[-2000:]
    (line,) = [line for line in result.stderr.splitlines() if line.startswith("error: ")]
    assert "dataset_path: no MedMemoryBench build found" in line


def test_runtime_metadata_is_checked(home):
    source = str(home / "tasks" / "medmemorybench_ci_slice.yaml")
    with pytest.raises(InputError, match=r"metadata.memory: 'mem0' needs an LLM"):
        task_settings({"task": "t", "metadata": {"config_source": source, "memory": "mem0"}})
    with pytest.raises(InputError, match=r"metadata.patients: "):
        task_settings({"task": "t", "metadata": {"config_source": source, "patients": 0}})
    with pytest.raises(InputError, match="read from their YAML file"):
        task_settings({"task": "t", "metadata": {"config_source": "inline"}})
    # lm-eval passes --model_args along in the metadata: keys that are not ours are left alone
    task = task_settings({"task": "t", "metadata": {"config_source": source, "pretrained": "x", "memory": "dense"}})
    assert task.metadata.memory == "dense" and task.metadata.patients == 1
