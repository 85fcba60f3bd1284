"""The worked plugin example (`examples/medmemorybench-visit-digest`): installed as a package of its own, it is
listed by `medmemorybench ls memories`, and a run with it gets the memory LLM, the embedder and the cost meter
like a built-in."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from medmemorybench.harness.results import read_samples
from tests.harness.conftest import RecordingBackbone, run, run_config

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "medmemorybench-visit-digest"


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Path:
    """The example installed with pip into a folder of its own (not into the environment)."""
    target = tmp_path_factory.mktemp("plugin")
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation",
                    "--target", str(target), str(EXAMPLE)], check=True, capture_output=True)
    return target


def test_the_installed_example_is_listed_by_the_cli(installed):
    env = {**os.environ, "PYTHONPATH": f"{installed}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    listed = subprocess.run([sys.executable, "-m", "medmemorybench.cli", "ls", "memories"], env=env,
                            capture_output=True, text=True, check=True).stdout
    assert "visit_digest" in listed


def test_a_run_with_the_example_gets_the_context_and_its_cost_is_recorded(installed, dataset_dir, tmp_path,
                                                                           monkeypatch):
    monkeypatch.syspath_prepend(str(installed))

    def reply(request) -> str:  # noqa: ANN001
        if request.response_schema:
            return json.dumps({"digest": "Reviewed diabetes; metformin continued.", "medicines": ["metformin"]})
        return "That is not in my records."

    config = run_config(dataset_dir, tmp_path, memory="visit_digest", limit=1, checkpoints=[10],
                        tasks=["medmemorybench_efficient_sua"])
    run(config, backbone=RecordingBackbone(reply))
    samples = read_samples(config.output_path / "samples.jsonl")
    cost = samples[0]["memory_cost"]
    assert cost["llm_calls"] == 10 and cost["items"] == 10 and cost["embedding_calls"] >= 1
    assert samples[0]["retrieved"][0]["text"].endswith("Medicines: metformin.")
    assert json.loads((config.output_path / "run.json").read_text())["memory"]["memory"] == "visit_digest"
