"""Publishing sends exactly the build's files in one commit (checked offline with a recording API)."""

from __future__ import annotations

import pytest

from medmemorybench.dataset import BuildOptions, build_dataset, export_dataset
from medmemorybench.dataset.publish import plan_operations, publish
from medmemorybench.errors import InputError
from medmemorybench.knowledge import default_knowledge
from medmemorybench.render.templates import load_templates


class RecordingApi:
    """Unit-test double of huggingface_hub.HfApi: records calls, sends nothing."""

    def __init__(self):
        self.calls = []

    def create_repo(self, repo_id, **kwargs):
        self.calls.append(("create_repo", repo_id, kwargs))

    def create_commit(self, **kwargs):
        self.calls.append(("create_commit", kwargs["repo_id"], kwargs))
        return "commit"


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    built = build_dataset(default_knowledge(), load_templates("en"),
                          BuildOptions(seed=0, personas=2, health_sessions=5, family_sessions=5))
    return export_dataset(built, tmp_path_factory.mktemp("pub"))


def test_operations_are_every_file_with_relative_paths_and_eval_yaml(folder):
    paths = [op.path_in_repo for op in plan_operations(folder, "org/MedMemoryBench")]
    assert "README.md" in paths and "medmemorybench.json" in paths
    assert "mixed/checkpoint_10.parquet" in paths and "personas/patients.parquet" in paths
    assert paths[-1] == "eval.yaml"  # (the benchmark declaration, made at publish time: `dataset/eval_yaml.py`)
    assert len(paths) == len([p for p in folder.rglob("*") if p.is_file()]) + 1


def test_publish_as_pull_request_creates_repo_then_one_commit(folder):
    api = RecordingApi()
    publish(folder, "org/MedMemoryBench", create_pr=True, api=api)
    assert [c[0] for c in api.calls] == ["create_repo", "create_commit"]
    _, repo_id, commit = api.calls[1]
    assert repo_id == "org/MedMemoryBench" and commit["create_pr"] is True and commit["repo_type"] == "dataset"
    assert len(commit["operations"]) == len(plan_operations(folder, "org/MedMemoryBench"))


def test_the_published_card_loads_the_repo_id(folder):
    # a local build's card shows the bare name it is registered under; on the Hub it must show the repo id
    assert 'load_dataset("medmemorybench", "mixed"' in (folder / "README.md").read_text()
    (card,) = [op for op in plan_operations(folder, "org/MedMemoryBench") if op.path_in_repo == "README.md"]
    text = card.path_or_fileobj.decode()
    assert 'load_dataset("org/MedMemoryBench", "mixed", split="checkpoint_30")' in text
    assert 'load_dataset("medmemorybench"' not in text
    assert text.split("---")[1] == (folder / "README.md").read_text().split("---")[1]  # the same Hub header


def test_bad_repo_id_and_incomplete_folder(folder, tmp_path):
    for bad in ("no-slash", "a/b/c", "/name", "org/"):
        with pytest.raises(InputError, match="--repo_id"):
            publish(folder, bad, api=RecordingApi())
    with pytest.raises(InputError, match="not a complete build"):
        plan_operations(tmp_path, "org/name")
