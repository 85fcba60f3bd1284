"""Test-wide settings (everything offline) and the small real dataset the harness and leaderboard tests share."""

import os

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


@pytest.fixture(scope="session")
def dataset_dir(tmp_path_factory):
    """A built dataset folder: 3 patients, 10 health and 10 family noise sessions each."""
    from medmemorybench.dataset import BuildOptions, build_dataset, export_dataset
    from medmemorybench.knowledge import default_knowledge
    from medmemorybench.render.templates import load_templates

    built = build_dataset(default_knowledge(), load_templates("en"),
                          BuildOptions(seed=5, personas=3, health_sessions=10, family_sessions=10))
    return export_dataset(built, tmp_path_factory.mktemp("data"))
