"""The wheel carries what an installed package reads: the top-level prompts/, tasks/ and dataset_cards/ (copied in by
setup.py), and the `evaluate` metric module."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOURCES = ("medmemorybench", "prompts", "tasks", "dataset_cards", "pyproject.toml", "setup.py", "README.md")


def test_the_wheel_ships_the_resources_and_the_metric_module(tmp_path):
    source = tmp_path / "src"  # (a copy: the build writes build/ and *.egg-info beside the sources)
    for name in SOURCES:
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, source / name, ignore=shutil.ignore_patterns("__pycache__", "_resources"))
        else:
            shutil.copy2(ROOT / name, source / name)
    result = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                             "-w", str(tmp_path / "wheel"), str(source)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[-2000:]
    (wheel,) = (tmp_path / "wheel").glob("medmemorybench-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    for folder in ("prompts", "tasks", "dataset_cards"):
        expected = {f"medmemorybench/_resources/{p.relative_to(ROOT).as_posix()}" for p in (ROOT / folder).rglob("*")
                    if p.is_file() and "__pycache__" not in p.parts}
        assert expected and expected <= names, sorted(expected - names)[:5]
    assert "medmemorybench/integrations/evaluate_metric/medmemorybench.py" in names
    assert "medmemorybench/_resources/dataset_cards/README.md.jinja" in names
    assert "medmemorybench/sweep/costs.yaml" in names  # (`sweep --plan` reads it)
