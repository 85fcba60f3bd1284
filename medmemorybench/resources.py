"""Where the editable resources live: `prompts/` and `tasks/` at the top of the repository.

They sit beside the package (not inside it) so users edit them as in lm-eval; $MEDMEMORYBENCH_HOME
points elsewhere when the package is installed without the repository.
"""

from __future__ import annotations

import os
from pathlib import Path

from medmemorybench.errors import InputError

HOME_ENV = "MEDMEMORYBENCH_HOME"


def project_home() -> Path:
    """The folder holding `prompts/` and `tasks/`."""
    candidates = [Path(p) for p in (os.environ.get(HOME_ENV),) if p] + [Path(__file__).resolve().parents[1]]
    for candidate in candidates:
        if (candidate / "prompts").is_dir():
            return candidate
    raise InputError(f"cannot find the prompts/ folder; set ${HOME_ENV} to a MedMemoryBench checkout")


def prompts_dir() -> Path:
    """`prompts/`."""
    return project_home() / "prompts"


def tasks_dir() -> Path:
    """`tasks/`."""
    return project_home() / "tasks"
