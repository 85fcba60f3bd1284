"""Test-wide settings: everything offline, the Hugging Face caches the tests write kept apart from the user's, and
the small real dataset the harness and leaderboard tests share."""

import atexit
import os
import shutil
import tempfile

import pytest

from tests.once import FIRST_UNITS, SHARED_FIXTURE_FILES

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


def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object | None:
    """Under `--dist loadfile` (`make test`): each file is one unit of work, but the files that read a shared fixture
    (`once.SHARED_FIXTURE_FILES`) are one unit together. Per file, both workers reached such a fixture in their first
    minute and the second sat idle ~30 s while the first made it, twice a run. The slowest units (`once.FIRST_UNITS`)
    are handed out first, slowest first, so that neither worker is left with a long one at the end. (xdist's own
    `xdist_group` marks do not group under pytest 9.2: xdist renames the node id, which pytest 9 now derives.)"""
    if config.getoption("dist") != "loadfile":
        return None
    from fnmatch import fnmatch

    from xdist.scheduler import LoadFileScheduling

    class SharedFixtureScheduling(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            file = super()._split_scope(nodeid)
            if file in FIRST_UNITS:  # (a slow file of its own, out of its group)
                return file
            return next((group for group, pattern in SHARED_FIXTURE_FILES.items() if fnmatch(file, pattern)), file)

        def _assign_work_unit(self, node: object) -> None:
            # (xdist orders the units by their number of tests; the slowest have few)
            for unit in reversed(FIRST_UNITS):
                if unit in self.workqueue:
                    self.workqueue.move_to_end(unit, last=False)
            super()._assign_work_unit(node)

    return SharedFixtureScheduling(config, log)
