"""Ships the top-level `prompts/`, `tasks/` and `dataset_cards/` inside the wheel (as `medmemorybench/_resources/`).

setuptools' package-data reaches only folders inside a package, and these stay at the top of the repository
where users edit them (`medmemorybench/resources.py` reads the checkout's own copy when there is one).
Everything else about the package is declared in pyproject.toml.
"""

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

RESOURCE_DIRS = ("prompts", "tasks", "dataset_cards")


class BuildPyWithResources(build_py):
    """`build_py`, then a copy of each resource folder into the built package."""

    def run(self) -> None:
        super().run()
        root = Path(__file__).resolve().parent
        target = Path(self.build_lib) / "medmemorybench" / "_resources"
        for name in RESOURCE_DIRS:
            shutil.rmtree(target / name, ignore_errors=True)
            shutil.copytree(root / name, target / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))


setup(cmdclass={"build_py": BuildPyWithResources})
