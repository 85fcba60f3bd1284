"""Shared builders for tests."""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from medmemorybench.knowledge import DATA_DIR


def run_cli(*args: str, cwd: Path | None = None, timeout: float | None = None) -> subprocess.CompletedProcess:
    """`medmemorybench ARGS` in a fresh interpreter, as a user runs it."""
    return subprocess.run([sys.executable, "-m", "medmemorybench.cli", *args], capture_output=True, text=True,
                          cwd=cwd, timeout=timeout)


def copy_knowledge(tmp_path: Path) -> Path:
    """A writable copy of the packaged knowledge base, to break on purpose."""
    target = tmp_path / "knowledge"
    shutil.copytree(DATA_DIR, target)
    return target


def knowledge_problems(tmp_path: Path, file: str, change: Callable[[dict], None]) -> str:
    """Load a copy of the packaged knowledge base whose `file` (e.g. "aliases.yaml") `change` edited in place; the
    problems the loader reported, joined (it must refuse the copy)."""
    return edited_knowledge_problems(tmp_path, {file: change})


def edited_knowledge_problems(tmp_path: Path, edits: dict[str, Callable[[dict], None]]) -> str:
    """`knowledge_problems` with several files edited at once (file -> change)."""
    import pytest
    import yaml

    from medmemorybench.errors import KnowledgeError
    from medmemorybench.knowledge import load_knowledge

    data = copy_knowledge(tmp_path)
    for file, change in edits.items():
        path = data / file
        doc = yaml.safe_load(path.read_text(encoding="utf-8"))
        change(doc)
        path.write_text(yaml.safe_dump(doc, allow_unicode=True), encoding="utf-8")
    with pytest.raises(KnowledgeError) as info:
        load_knowledge(data)
    return str(info.value)


def export_small_dataset(out: Path, personas: int = 2, seed: int = 0) -> Path:
    """Build and export a small dataset (full years, little noise) under `out`; returns the dataset folder."""
    from medmemorybench.dataset import BuildOptions, build_dataset, export_dataset
    from medmemorybench.knowledge import default_knowledge
    from medmemorybench.render.templates import load_templates

    options = BuildOptions(seed=seed, personas=personas, health_sessions=5, family_sessions=5)
    return export_dataset(build_dataset(default_knowledge(), load_templates("en"), options), out)
