"""Shared builders for tests."""

from __future__ import annotations

import shutil
from pathlib import Path

from medmemorybench.knowledge import DATA_DIR


def copy_knowledge(tmp_path: Path) -> Path:
    """A writable copy of the packaged knowledge base, to break on purpose."""
    target = tmp_path / "knowledge"
    shutil.copytree(DATA_DIR, target)
    return target


def export_small_dataset(out: Path, personas: int = 2, seed: int = 0) -> Path:
    """Build and export a small dataset (full years, little noise) under `out`; returns the dataset folder."""
    from medmemorybench.dataset import BuildOptions, build_dataset, export_dataset
    from medmemorybench.knowledge import default_knowledge
    from medmemorybench.render.templates import load_templates

    options = BuildOptions(seed=seed, personas=personas, health_sessions=5, family_sessions=5)
    return export_dataset(build_dataset(default_knowledge(), load_templates("en"), options), out)
