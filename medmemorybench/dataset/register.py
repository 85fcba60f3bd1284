"""Registering a build under the bare name, so that `load_dataset("medmemorybench", "mixed")` works offline from any
folder, as it would after a download.

Offline, `datasets` resolves a Hub name from its own cache (`$HF_DATASETS_CACHE/<name>/<config>/<version>/<hash>/`,
the Arrow files a download prepares, the newest one winning). Registering prepares every config of a local build
there, with `datasets`' own builder, under the hash of the build's *revision* (the first 40 hex digits of its
fingerprint, where a download would use the commit sha), and removes every other prepared copy of that name: right
after a build, the bare name gives exactly that build. A `registered.json` beside the configs records what was
registered (and what it replaced), so `register` says which build it displaced and how to point the name back,
`ls registration` shows the active one, and `medmemorybench.load` refuses a registration whose folder is gone or
holds another build now instead of loading a copy nobody can look at. `docs/dataset.md` has the whole story.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import asdict, dataclass
from pathlib import Path

from medmemorybench.dataset.schema import ALL_CONFIGS, METADATA_FILE
from medmemorybench.errors import InputError, OutputError
from medmemorybench.files import loads_json

DATASET_NAME = "medmemorybench"
"""The bare name `load_dataset` is given."""
MARKER = "registered.json"


@dataclass(frozen=True)
class Registration:
    """What the bare name resolves to."""

    revision: str
    """The first 40 hex digits of the fingerprint: the hash folder the prepared files sit in."""
    fingerprint: str
    folder: str
    """The build that was registered (it may be moved or deleted since: the prepared copy stands alone)."""
    cache: str
    """`<HF_DATASETS_CACHE>/medmemorybench`."""
    replaced: tuple[str, ...] = ()
    """Hash folders of other copies that were removed."""
    previous: dict | None = None
    """The registration this one replaced (its fields), when it was of another build: `register` names it, and how
    to point the name back at it."""


def revision_of(fingerprint: str) -> str:
    """The revision a build is registered under."""
    return fingerprint[:40]


def cache_root(cache_dir: str | Path | None = None) -> Path:
    """`<cache_dir or HF_DATASETS_CACHE>/medmemorybench`."""
    import datasets.config

    return Path(cache_dir or datasets.config.HF_DATASETS_CACHE).expanduser() / DATASET_NAME


def fingerprint_of(folder: Path) -> str:
    """The fingerprint a build records in its metadata file.

    Raises:
        InputError: naming the file when it is missing or holds no fingerprint.
    """
    path = Path(folder) / METADATA_FILE
    try:
        fingerprint = loads_json(path.read_text(encoding="utf-8")).get("fingerprint")
    except (OSError, json.JSONDecodeError, AttributeError):
        raise InputError(f"{path}: missing or not JSON (is {folder} a MedMemoryBench build?)") from None
    if not isinstance(fingerprint, str) or len(fingerprint) < 40:
        raise InputError(f"{path}: fingerprint: missing or too short")
    return fingerprint


def register_build(folder: Path, cache_dir: str | Path | None = None) -> Registration:
    """Prepare every config of the build at `folder` under the bare name, and remove other copies of that name.

    Raises:
        InputError: `folder` is not a build.
        OutputError: the cache cannot be written.
    """
    from datasets.load import dataset_module_factory, get_dataset_builder_class
    from datasets.utils.logging import disable_progress_bar

    disable_progress_bar()
    folder = Path(folder).resolve()
    fingerprint = fingerprint_of(folder)
    revision = revision_of(fingerprint)
    root = cache_root(cache_dir)
    module = dataset_module_factory(str(folder))
    kwargs = {k: v for k, v in module.builder_kwargs.items() if k != "dataset_name"}
    builder_class = get_dataset_builder_class(module, dataset_name=DATASET_NAME)
    try:
        for config in (c for c in ALL_CONFIGS if (folder / c).is_dir()):  # (a build may hold one language)
            builder = builder_class(cache_dir=str(root.parent), dataset_name=DATASET_NAME, config_name=config,
                                    hash=revision, **kwargs)
            builder.info.description = f"MedMemoryBench build {fingerprint} (registered from {folder})"
            builder.download_and_prepare()
        before = registered(cache_dir)
        previous = {k: v for k, v in asdict(before).items() if k != "previous"} \
            if before is not None and before.fingerprint != fingerprint else None
        replaced = _remove_others(root, revision)
        registration = Registration(revision, fingerprint, str(folder), str(root), tuple(replaced), previous)
        (root / MARKER).write_text(json.dumps(asdict(registration), indent=1) + "\n", encoding="utf-8")
    except OSError as exc:
        raise OutputError(f"{root}: cannot register the build there ({exc.strerror or exc}); set HF_DATASETS_CACHE "
                          "to a writable folder") from None
    return registration


def _remove_others(root: Path, revision: str) -> list[str]:
    """Remove every prepared copy under `root` whose hash is not `revision`; returns their hashes."""
    removed = []
    for path in sorted(root.glob("*/*/*")):
        if path.is_dir() and path.name != revision:
            shutil.rmtree(path, ignore_errors=True)
            removed.append(path.name)
    return sorted(set(removed))


FOLDER_STATES = {"gone": "is gone", "changed": "holds another build now"}
"""What a registration's folder has become, where it no longer holds the build (`folder_state`), in words."""


def folder_state(registration: Registration) -> str:
    """Whether the registered build's folder still holds it: "here", "gone" or "changed" (another build there)."""
    from medmemorybench.dataset.load import is_build

    folder = Path(registration.folder)
    if not is_build(folder):
        return "gone"
    try:
        return "here" if fingerprint_of(folder) == registration.fingerprint else "changed"
    except InputError:
        return "changed"


def registered(cache_dir: str | Path | None = None) -> Registration | None:
    """The registration recorded in the cache, or None."""
    path = cache_root(cache_dir) / MARKER
    try:
        data = loads_json(path.read_text(encoding="utf-8"))
        return Registration(**{**data, "replaced": tuple(data.get("replaced", ()))})  # (no "previous": older file)
    except (OSError, json.JSONDecodeError, TypeError):
        return None
