"""scripts/bench_scorer.py with a judge's written replies: the judge's prompts go out, its replies come back through
the same requests and verdict parser as a judge model's, and a bad replies file is one line and exit 2."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "bench_scorer.py"


def _run(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, env=env, timeout=300,
                          check=False)


def test_written_replies_are_scored_as_a_judges(tmp_path):
    lines = (ROOT / "panels" / "seed89_mcd.jsonl").read_text(encoding="utf-8").splitlines()[:6]
    panel = tmp_path / "panel.jsonl"
    panel.write_text("\n".join(lines) + "\n", encoding="utf-8")
    labels = {json.loads(line)["id"]: json.loads(line)["label"] for line in lines}
    prompts = tmp_path / "prompts.jsonl"
    done = _run("--panel", str(panel), "--write_judge_prompts", str(prompts))
    assert done.returncode == 0, done.stderr
    written = [json.loads(line) for line in prompts.read_text(encoding="utf-8").splitlines()]
    assert len(written) == len(labels) and all(set(p) == {"key", "query_id", "content"} for p in written)
    assert all("<<<ANSWER" in p["content"] and len(p["key"]) == 64 for p in written)
    assert not any(answer_id in prompts.read_text(encoding="utf-8") for answer_id in labels)  # (ids tell intent)
    # (a judge that agrees with every label but one, which it gets wrong, and one answer left unjudged)
    replies = []
    for number, (prompt, label) in enumerate(zip(written[:-1], labels.values(), strict=False)):
        veto = (label == "wrong") != (number == 0)
        replies.append({"key": prompt["key"], "reply": json.dumps(
            {"ncr": 1, "crc": 1, "cc": 1, "same_conclusion": True, "veto": veto, "reason": "r"})})
    path = tmp_path / "replies.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in replies), encoding="utf-8")
    done = _run("--panel", str(panel), "--judge_replies", str(path), "--output", str(tmp_path / "f.json"))
    assert done.returncode == 0, done.stderr
    assert f"{list(labels)[-1]}: no verdict (judge error: no written reply for key" in done.stderr
    judge = json.loads((tmp_path / "f.json").read_text(encoding="utf-8"))["judge"]["overall"]
    assert judge["n"] == 5 and judge["false_rejects"] + judge["false_accepts"] == 1


def test_a_bad_replies_file_is_one_line_and_exit_2(tmp_path):
    path = tmp_path / "replies.jsonl"
    path.write_text('{"key": "abc"}\n', encoding="utf-8")
    done = _run("--panel", str(ROOT / "panels" / "seed89_mcd.jsonl"), "--judge_replies", str(path))
    assert done.returncode == 2
    assert done.stderr.strip() == f'error: {path}:1: expected {{"key": str, "reply": str}}'
    done = _run("--judge", "hf", "--judge_replies", str(path))
    assert done.returncode == 2 and done.stderr.strip() == "error: --judge and --judge_replies: give one judge"
