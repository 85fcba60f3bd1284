"""`medmemorybench import` as a user runs it: a fixture file in each format becomes a folder the harness runs on;
a wrong source or file is one line, exit 2."""

from __future__ import annotations

import json
from pathlib import Path

from tests.helpers import run_cli

FIXTURES = Path(__file__).parent / "fixtures"


def test_an_imported_conversation_runs_through_the_harness(tmp_path):
    done = run_cli("import", "locomo", str(FIXTURES / "locomo_tiny.json"), "--output_path", str(tmp_path / "imp"))
    assert done.returncode == 0, done.stderr
    assert "adversarial_questions: 2" in done.stdout and "written:" in done.stdout
    ran = run_cli("run", "--memory", "bm25", "--model", "none", "--tasks", "medmemorybench_efficient",
                  "--dataset_path", str(tmp_path / "imp" / "medmemorybench"), "--output_path", str(tmp_path / "run"))
    assert ran.returncode == 0, ran.stderr
    samples = [json.loads(line) for line in (tmp_path / "run" / "samples.jsonl").read_text().splitlines()]
    assert samples and any(s["recall_at_k"] is not None for s in samples)
    # the source's data under its own licence: never published as a MedMemoryBench build
    published = run_cli("publish", str(tmp_path / "imp" / "medmemorybench"), "--repo_id", "a/b", "--dry_run")
    assert published.returncode == 2 and "an import of LoCoMo" in published.stderr


def test_a_wrong_source_or_file_is_one_line(tmp_path):
    for args, names in ((["nope", str(FIXTURES / "locomo_tiny.json")], "SOURCE"),
                        (["longmemeval", str(FIXTURES / "locomo_tiny.json"), "--variant", "s"], "locomo_tiny.json"),
                        (["locomo", str(tmp_path / "missing.json")], "missing.json"),
                        (["longmemeval", str(FIXTURES / "longmemeval_tiny.json")], "--variant"),
                        (["locomo", str(FIXTURES / "locomo_tiny.json"), "--variant", "s"], "--variant")):
        done = run_cli("import", *args, "--output_path", str(tmp_path / "out"))
        assert done.returncode == 2 and names in done.stderr and "Traceback" not in done.stderr
        assert not (tmp_path / "out" / "medmemorybench").exists()
