"""Where the editable resources live: `prompts/`, `tasks/` and `dataset_cards/` at the top of the repository.

They sit beside the package (not inside it) so users edit them as in lm-eval. The wheel carries a copy of all
three inside the package (`medmemorybench/_resources/`, put there by `setup.py` at build time), so an installed
package works without the repository; $MEDMEMORYBENCH_HOME points at another folder holding them (your variants).
"""

from __future__ import annotations

import os
from pathlib import Path

from medmemorybench.errors import InputError

HOME_ENV = "MEDMEMORYBENCH_HOME"
RESOURCE_DIRS = ("prompts", "tasks", "dataset_cards")
"""The top-level folders the package reads (and the wheel ships under `_resources/`)."""
PACKAGED = Path(__file__).resolve().parent / "_resources"
"""The copy a wheel carries; absent in a checkout (the repository's own folders are used there)."""


def project_home() -> Path:
    """The folder holding `prompts/`, `tasks/` and `dataset_cards/`: $MEDMEMORYBENCH_HOME, else the checkout the
    package runs from, else the copy inside an installed wheel."""
    candidates = [Path(p) for p in (os.environ.get(HOME_ENV),) if p]
    candidates += [Path(__file__).resolve().parents[1], PACKAGED]
    for candidate in candidates:
        if (candidate / "prompts").is_dir():
            return candidate
    raise InputError(f"cannot find the prompts/ folder; set ${HOME_ENV} to a MedMemoryBench checkout")


def prompts_dir() -> Path:
    """`prompts/`."""
    return project_home() / "prompts"


def tasks_dir() -> Path:
    """`tasks/` (what `lm_eval --include_path` takes, too)."""
    return project_home() / "tasks"


def dataset_cards_dir() -> Path:
    """`dataset_cards/`: the dataset card template."""
    return project_home() / "dataset_cards"
