"""Test-wide settings: everything offline, and the Hugging Face caches the tests write kept apart from the user's."""

import atexit
import os
import shutil
import tempfile

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
