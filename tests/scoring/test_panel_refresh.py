"""`scripts/make_panel.py refresh`: a panel's question rows replaced by a build's where question and gold are
unchanged; a bad panel or build is one `error:` line and exit 2, and the panel is left as it was."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from pathlib import Path

from medmemorybench.scoring.panel import load_panel, with_fresh_rows, write_panel

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "make_panel.py"
PANEL = Path(__file__).resolve().parents[2] / "panels" / "heldout.jsonl"


def _refresh(panel: Path, build: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), "refresh", "--panel", str(panel), "--build", str(build)],
                          capture_output=True, text=True, timeout=120)


def test_a_bad_panel_or_build_is_one_line_and_exit_2(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "x"}\n', encoding="utf-8")
    copy = tmp_path / "panel.jsonl"
    copy.write_text(PANEL.read_text(encoding="utf-8"), encoding="utf-8")
    for panel, build, names in ((bad, tmp_path, "bad.jsonl:1"), (copy, tmp_path / "no_build", "no_build"),
                                (tmp_path / "missing.jsonl", tmp_path, "missing.jsonl")):
        done = _refresh(panel, build)
        lines = done.stderr.strip().splitlines()
        assert done.returncode == 2 and len(lines) == 1 and lines[0].startswith("error:") and names in lines[0], \
            done.stderr
        assert "Traceback" not in done.stderr
    assert copy.read_text(encoding="utf-8") == PANEL.read_text(encoding="utf-8")


def test_a_written_panel_reads_back_the_same(tmp_path):
    panel = load_panel(PANEL)
    out = tmp_path / "panel.jsonl"
    write_panel(panel, out)
    assert load_panel(out) == panel
    assert [json.loads(line)["id"] for line in out.read_text(encoding="utf-8").splitlines()] == [a.id for a in panel]


def test_only_rows_whose_question_and_gold_are_unchanged_are_replaced(tmp_path, monkeypatch):
    load = importlib.import_module("medmemorybench.dataset.load")  # (the package's `load` names a function too)

    english = [a for a in load_panel(PANEL) if a.language == "en"]
    first = english[0]
    second = next(a for a in english if a.question["query_id"] != first.question["query_id"])
    same, changed = dict(first.question), dict(second.question)
    same["facts"] = [{"text": "fresh", "kind": "name"}]
    changed["answer"] = "another gold"
    monkeypatch.setattr(load, "read_rows", lambda build: {"questions": {"checkpoint_10": [same, changed]}})
    fresh, replaced = with_fresh_rows([first, second], tmp_path)
    assert replaced == 1 and fresh[0].question is same and fresh[1].question is second.question
