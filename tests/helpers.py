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
