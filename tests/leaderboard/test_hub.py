"""The Hub side against a loopback server speaking the endpoints huggingface_hub calls: `submit` opens a pull
request with the bundle, `publish` sends eval.yaml, `publish --space` a static Space (payloads checked)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
import yaml
from huggingface_hub import HfApi, constants

from medmemorybench.dataset.eval_yaml import check_eval_yaml
from medmemorybench.dataset.load import HUB_ID
from medmemorybench.dataset.publish import publish
from medmemorybench.errors import InputError
from medmemorybench.leaderboard import load_board, prepare_submission, publish_space, send_to_hub, write_to_folder
from medmemorybench.leaderboard.bundle import sha256
from tests.leaderboard.conftest import copy_run
from tests.leaderboard.hub_server import TOKEN, serve_hub


@pytest.fixture
def online(monkeypatch):
    """huggingface_hub allowed to call the loopback server in this process (the suite runs offline)."""
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)


def test_submit_opens_a_pull_request_with_the_verified_bundle(answered_run, tmp_path):
    run = copy_run(answered_run, tmp_path)
    claim = tmp_path / "system.yaml"
    claim.write_text("name: Half-knowing BM25\nlink: https://example.org/half\n"
                     "answering_model_hub_id: my-org/half-knowing-7b\n", encoding="utf-8")
    with serve_hub() as hub:
        env = {**os.environ, "HF_ENDPOINT": hub.url, "HF_TOKEN": TOKEN, "HF_HUB_OFFLINE": "0",
               "HF_HUB_DISABLE_TELEMETRY": "1"}
        done = subprocess.run([sys.executable, "-m", "medmemorybench.cli", "submit", str(run), "--repo_id",
                               "my-org/medmemorybench-results", "--system", str(claim)],
                              env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert [p.split(" ")[1] for p in hub.paths()] == [
        "/api/datasets/my-org/medmemorybench-results/preupload/main",
        "/api/datasets/my-org/medmemorybench-results/commit/main"]
    assert all(query == {"create_pr": ["1"]} for _, _, query, _, _ in hub.requests)
    (commit,) = hub.commits
    assert (commit.repo_type, commit.repo_id, commit.create_pr) == ("dataset", "my-org/medmemorybench-results", True)
    assert f"pull request: {hub.url}/datasets/my-org/medmemorybench-results/discussions/1" in done.stdout
    folder = {path.rpartition("/")[0] for path in commit.files}
    (bundle,) = folder
    assert bundle.startswith("submissions/half-knowing-bm25/half-knowing-double/")
    files = {path.rpartition("/")[2]: data for path, data in commit.files.items()}
    assert sorted(files) == ["run.json", "samples.jsonl", "submission.json", "summary.json", "system.json"]
    assert files["samples.jsonl"] == (run / "samples.jsonl").read_bytes()
    assert json.loads(files["summary.json"])["tasks"] == json.loads((run / "summary.json").read_text())["tasks"]
    manifest = json.loads(files["submission.json"])
    assert manifest["files"] == {name: sha256(data) for name, data in files.items() if name != "submission.json"}
    system = json.loads(files["system.json"])
    assert (system["name"], system["paradigm"], system["memory"]) == ("Half-knowing BM25", "unstructured", "bm25")
    assert commit.summary == f"Add Half-knowing BM25 / half-knowing-double ({bundle.rpartition('/')[2]})"
    entries = yaml.safe_load((run / ".eval_results" / "medmemorybench.yaml").read_text())
    assert [e["dataset"]["task_id"] for e in entries] == ["overall", "efficient", "mixed"]
    assert {e["dataset"]["id"] for e in entries} == {HUB_ID}
    assert entries[0]["source"]["url"].endswith(bundle)


def test_a_hub_refusal_is_one_error_naming_the_repo(answered_run, online):
    submission = prepare_submission(answered_run)
    with serve_hub() as hub, pytest.raises(InputError, match=r"^--repo_id my-org/results: the Hub refused or could "
                                                             r"not be reached \(.*401"):
        send_to_hub(submission, "my-org/results", api=HfApi(endpoint=hub.url, token=False))  # (no token sent)
    assert not hub.commits and hub.requests[0][3].get("Authorization") is None


def test_publish_sends_eval_yaml_at_the_repo_root(dataset_dir, online):
    with serve_hub() as hub:
        publish(dataset_dir, "my-org/MedMemoryBench", create_pr=True, api=HfApi(endpoint=hub.url, token=TOKEN))
    assert hub.created == [{"name": "MedMemoryBench", "organization": "my-org", "visibility": "public",
                            "type": "dataset"}]
    (commit,) = hub.commits
    assert commit.create_pr and "README.md" in commit.files and "/api/validate-yaml" in " ".join(hub.paths())
    splits = {config: sorted(p.stem for p in (dataset_dir / config).glob("*.parquet"))
              for config in ("efficient", "mixed")}
    declared = check_eval_yaml(commit.files["eval.yaml"].decode(), splits)
    assert [t["id"] for t in declared["tasks"]] == ["overall", "efficient", "mixed"]


def test_publish_space_uploads_the_board_as_a_static_space(answered_run, tmp_path, online):
    write_to_folder(prepare_submission(answered_run), tmp_path / "results")
    board = load_board(tmp_path / "results")
    with serve_hub() as hub:
        publish_space(board, "results", "my-org/board", api=HfApi(endpoint=hub.url, token=TOKEN))
    assert hub.created == [{"name": "board", "organization": "my-org", "type": "space", "sdk": "static"}]
    (commit,) = hub.commits
    assert commit.repo_type == "space" and sorted(commit.files) == ["README.md", "index.html"]
    assert "sdk: static" in commit.files["README.md"].decode()
    assert b'<script id="board-data" type="application/json">' in commit.files["index.html"]


def test_the_board_reads_a_results_repo_and_links_its_samples_there(answered_run, tmp_path):
    submission = prepare_submission(answered_run)
    with serve_hub() as hub:
        hub.repos["datasets/my-org/results"] = {**submission.file_paths(), "README.md": b"# results\n"}
        env = {**os.environ, "HF_ENDPOINT": hub.url, "HF_HUB_OFFLINE": "0", "HF_HOME": str(tmp_path / "hf-home"),
               "HF_HUB_DISABLE_TELEMETRY": "1"}
        done = subprocess.run([sys.executable, "-m", "medmemorybench.cli", "leaderboard", "--repo_id", "my-org/results",
                               "--html", str(tmp_path / "board"), "--no-verify"], env=env, capture_output=True,
                              text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "1 runs and 13 paper reference rows" in done.stdout
    downloaded = {path.split("/resolve/", 1)[1].partition("/")[2] for _, path, _, _, _ in hub.requests
                  if "/resolve/" in path and path.startswith("/datasets/")}
    assert downloaded == set(submission.file_paths())  # (submissions/ only: not the README)
    page = (tmp_path / "board" / "index.html").read_text()
    assert f"{hub.url}/datasets/my-org/results/blob/main/{submission.path}/samples.jsonl" in page
