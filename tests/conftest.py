"""Test-wide settings: everything offline, the Hugging Face caches the tests write kept apart from the user's, and
the small real dataset the harness and leaderboard tests share."""

import atexit
import os
import shutil
import tempfile

import pytest

from tests.once import SHARED_FIXTURES

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

# Set before `datasets` is imported (it reads them once); child processes inherit them. A build registers itself
# in the datasets cache (`dataset/register.py`), and `evaluate` copies metric modules into its modules cache:
# neither may touch the user's own caches.
_HF_CACHES = tempfile.mkdtemp(prefix="medmemorybench-tests-hf-")
os.environ["HF_DATASETS_CACHE"] = os.path.join(_HF_CACHES, "datasets")
os.environ["HF_MODULES_CACHE"] = os.path.join(_HF_CACHES, "modules")
atexit.register(shutil.rmtree, _HF_CACHES, ignore_errors=True)


@pytest.fixture(scope="session")
def dataset_dir(tmp_path_factory):
    """A built dataset folder: 3 patients, 10 health and 10 family noise sessions each."""
    from medmemorybench.dataset import BuildOptions, build_dataset, export_dataset
    from medmemorybench.knowledge import default_knowledge
    from medmemorybench.render.templates import load_templates

    built = build_dataset(default_knowledge(), load_templates("en"),
                          BuildOptions(seed=5, personas=3, health_sessions=10, family_sessions=10))
    return export_dataset(built, tmp_path_factory.mktemp("data"))


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Under `--dist loadgroup` (`make test`): each file is one unit of work, as under `--dist loadfile`, but the
    files that use a shared fixture (`once.SHARED_FIXTURES`) are one unit together. Under loadfile, two workers both
    reached such a fixture in their first minute and the second sat idle ~30 s while the first made it, twice a run.
    (tryfirst: xdist reads the marks in its own hook of this name.)"""
    if config.getoption("dist", default="no") != "loadgroup":
        return
    groups: dict[str, str] = {}
    for item in items:
        file = item.nodeid.split("::")[0]
        shared = next((name for name in SHARED_FIXTURES if name in getattr(item, "fixturenames", ())), None)
        if shared or file not in groups:
            groups[file] = shared or groups.get(file) or file
    for item in items:
        if item.get_closest_marker("xdist_group") is None:
            item.add_marker(pytest.mark.xdist_group(groups[item.nodeid.split("::")[0]]))
