"""Finding and loading a built dataset: a local folder first, else the Hub id."""

from __future__ import annotations

import json
import os
from pathlib import Path

from medmemorybench.dataset.schema import (
    ALL_CONFIGS,
    FEATURES,
    LANGUAGES,
    METADATA_FILE,
    NULL_CHECKED,
    NULLABLE,
    PERSONAS_SPLIT,
    RENDERED,
    config_name,
)
from medmemorybench.errors import InputError
from medmemorybench.files import loads_json

HUB_ID = "medmemorybench/MedMemoryBench"
DATASET_DIRNAME = "medmemorybench"
ENV_VAR = "MEDMEMORYBENCH_DATA"


def find_local(path: str | Path | None = None) -> Path | None:
    """The dataset folder to use: `path`, $MEDMEMORYBENCH_DATA, ./medmemorybench, ./out/medmemorybench, then the
    folder of the build registered under the bare name (`register.py`) while it still holds that build.

    A folder counts when it holds a README.md card; a parent holding `medmemorybench/` also works.
    """
    from medmemorybench.dataset.register import registered

    candidates = [Path(p) for p in (path, os.environ.get(ENV_VAR)) if p]
    candidates += [Path.cwd() / DATASET_DIRNAME, Path.cwd() / "out" / DATASET_DIRNAME]
    for candidate in candidates:
        for folder in (candidate, candidate / DATASET_DIRNAME):
            if is_build(folder):
                return folder
    if path is None:
        registration = registered()
        if registration is not None and is_build(Path(registration.folder)) \
                and _fingerprint(Path(registration.folder)) == registration.fingerprint:
            return Path(registration.folder)
    return None


def build_metadata(folder: Path) -> dict:
    """A build folder's `medmemorybench.json` as a dict; empty when it is missing, unreadable or not an object (for
    questions about a folder, such as `dataset.hidden.is_hidden`, whose answer is "no" for a broken one)."""
    try:
        meta = loads_json((Path(folder) / METADATA_FILE).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return {}
    return meta if isinstance(meta, dict) else {}


def read_build_metadata(folder: Path) -> dict:
    """A build folder's `medmemorybench.json`, checked: empty when the folder has none.

    Raises:
        InputError: naming the file when it is there but not a JSON object (damaged, nested too deeply, a list).
    """
    path = Path(folder) / METADATA_FILE
    if not path.exists():
        return {}
    try:
        meta = loads_json(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise InputError(f"{path}: not the dataset's metadata JSON ({exc.msg})") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"{path}: not the dataset's metadata JSON ({exc.__class__.__name__})") from None
    if not isinstance(meta, dict):
        raise InputError(f"{path}: not the dataset's metadata JSON (a JSON {type(meta).__name__}, not an object)")
    return meta


def dataset_source(folder: Path) -> dict | None:
    """The public benchmark a build folder was imported from (`stats.source` of its metadata: name, title, variant,
    version, licence ...), or None for a MedMemoryBench build."""
    stats = build_metadata(folder).get("stats")
    source = stats.get("source") if isinstance(stats, dict) else None
    return source if isinstance(source, dict) else None


def is_build(folder: Path) -> bool:
    """Whether `folder` holds a build (its card and its personas, or the metadata of a hidden-gold release)."""
    from medmemorybench.dataset.hidden import is_hidden

    # (personas/, not efficient/: a Chinese-only build has efficient_zh/ only)
    return (folder / "README.md").is_file() and ((folder / "personas").is_dir() or is_hidden(folder))


def _fingerprint(folder: Path) -> str | None:
    from medmemorybench.dataset.register import fingerprint_of

    try:
        return fingerprint_of(folder)
    except InputError:
        return None


def check_config_split(config: str, split: str | None, folder: Path | None = None) -> None:
    """Raise InputError naming the valid configs or splits."""
    if config not in ALL_CONFIGS:
        raise InputError(f"unknown config '{config}'; valid configs: {', '.join(ALL_CONFIGS)}")
    if split is None or folder is None:
        return
    if not (folder / config).is_dir():
        built = ", ".join(c for c in ALL_CONFIGS if (folder / c).is_dir())
        raise InputError(f"config '{config}' is not in this build ({folder}); it holds: {built} "
                         "(`medmemorybench build --language both` builds English and Chinese)")
    available = sorted(p.stem for p in (folder / config).glob("*.parquet"))
    if split not in available:
        raise InputError(f"unknown split '{split}' for config '{config}'; valid splits: {', '.join(available)}")


def load(config: str = "efficient", split: str | None = None, path: str | Path | None = None):  # noqa: ANN201
    """Load a config (and split) of MedMemoryBench with `datasets`.

    Uses a local build when one is found (see `find_local`; the registered build's own folder among them), else the
    Hub id `HUB_ID`. A registration whose folder is gone, or holds another build now, is an error naming that
    folder, never a silent load of a copy nobody can look at (a temporary build's, often) or of another build.

    Raises:
        InputError: for an unknown config or split, a registered build whose folder is gone, or when no build is
            found and the Hub cannot be reached.
    """
    from datasets import load_dataset

    from medmemorybench.dataset.register import registered

    folder = find_local(path)
    if folder is None and path is None:
        registration = registered()
        if registration is not None:
            _check_still_there(registration)
    check_config_split(config, split, folder)
    if folder is not None:
        # (a cache of its own: `datasets` names a folder's cache after the folder, which would shadow the bare name)
        return load_dataset(str(folder), config, split=split, cache_dir=str(_folder_cache()))
    try:
        return load_dataset(HUB_ID, config, split=split)
    except Exception as exc:  # noqa: BLE001 - datasets raises many kinds when offline
        raise InputError(
            f"no local build found (looked in {looked_in(path)}) and the Hub dataset {HUB_ID} could not be loaded "
            f"({exc.__class__.__name__}); "
            "run `medmemorybench build --output_path out` first"
        ) from None


def _check_still_there(registration) -> None:  # noqa: ANN001
    """A registration whose build folder is gone, or holds another build now, is an error naming that folder: the
    name would otherwise give a copy of a build nobody can look at any more (a temporary build's, often)."""
    from medmemorybench.dataset.register import FOLDER_STATES, folder_state

    state = folder_state(registration)
    if state != "here":
        raise InputError(f"the build registered under 'medmemorybench' (fingerprint {registration.fingerprint[:12]}) "
                         f"came from {registration.folder}, which {FOLDER_STATES[state]}; register the build you mean "
                         "with `medmemorybench register FOLDER`, or pass its folder (path=...)")


def looked_in(path: str | Path | None) -> str:
    """Where `find_local` looked, for a message when it found nothing (the registered build's folder named, and
    whether it is gone)."""
    from medmemorybench.dataset.register import folder_state, registered

    places = [str(path) if path else None, f"${ENV_VAR}" if os.environ.get(ENV_VAR) else None,
              f"./{DATASET_DIRNAME}", f"./out/{DATASET_DIRNAME}"]
    registration = registered() if path is None else None
    if registration is not None:
        state = folder_state(registration)
        places.append(f"the registered build {registration.folder}" + ("" if state == "here" else f" ({state})"))
    return ", ".join(p for p in places if p)


def _folder_cache() -> Path:
    import datasets.config

    return Path(datasets.config.HF_DATASETS_CACHE).expanduser() / "medmemorybench_folders"


MAX_SESSION_CHARS = 200_000
"""Most characters one session's turns may hold: the longest of a default build is ~2,800, an LLM-rendered one a few
times that; a 200 MB session would otherwise be accepted, and read into every memory (3.7 GB of RAM was seen)."""
MAX_SPLIT_BYTES = 4 << 30
"""Largest split file read, uncompressed (a 1,000-patient build's largest is ~100 MB)."""


def read_split(file: Path, config: str) -> list[dict]:
    """The rows of one split file, checked: a readable parquet file of the config's schema, with no null where
    the schema needs a value (`NULLABLE` lists the fields that may be null), no session over `MAX_SESSION_CHARS`.

    Raises:
        InputError: naming the file (and the row and field) that is missing, unreadable or of another schema.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq
    from datasets import Features

    if not file.is_file():
        raise InputError(f"{file}: missing or not a file")
    try:
        meta = pq.ParquetFile(file).metadata
        size = sum(meta.row_group(i).total_byte_size for i in range(meta.num_row_groups))
        if size > MAX_SPLIT_BYTES:
            raise InputError(f"{file}: {size:,} bytes uncompressed, over the {MAX_SPLIT_BYTES:,} a split may hold")
        table = pq.read_table(file)
    except (pa.ArrowInvalid, OSError) as exc:
        raise InputError(f"{file}: corrupted or not a parquet file ({str(exc)[:160]})") from None
    try:
        found = Features.from_arrow_schema(table.schema)
    except (TypeError, ValueError) as exc:
        raise InputError(f"{file}: columns of an unknown type ({str(exc)[:160]})") from None
    if found != FEATURES[config]:
        expected, have = _fields(FEATURES[config]), _fields(found)
        missing, extra = [f for f in expected if f not in have], [f for f in have if f not in expected]
        parts = [f"missing {', '.join(missing)}" if missing else "", f"unexpected {', '.join(extra)}" if extra else ""]
        detail = "; ".join(p for p in parts if p) or "a column has another type"
        raise InputError(f"{file}: columns do not match the '{config}' schema ({detail})")
    rows = table.to_pylist()
    if config in NULL_CHECKED:
        for index, row in enumerate(rows):
            where = _first_null(row)
            if where is not None:
                raise InputError(f"{file}: row {index}: {where} is null")
    for index, row in enumerate(rows):
        for session in row.get("sessions") or []:
            chars = sum(len(turn["text"]) for turn in session["turns"])
            if chars > MAX_SESSION_CHARS:
                raise InputError(f"{file}: row {index}: session {str(session['session_id'])[:80]} holds {chars:,} "
                                 f"characters, over the {MAX_SESSION_CHARS:,} a session may hold")
    return rows


def _fields(features: object) -> list[str]:
    """Field names, nested ones as parent.child, for naming what a schema lacks."""
    def walk(value: object, prefix: str) -> list[str]:
        inner = getattr(value, "feature", value)  # List(...) holds its item type in `.feature`
        if isinstance(inner, dict):
            return [name for key, sub in inner.items() for name in [f"{prefix}{key}", *walk(sub, f"{prefix}{key}.")]]
        return []
    return walk(features, "")


def _first_null(value: object, path: str = "") -> str | None:
    """The path of the first null value that the schema does not allow to be null."""
    if isinstance(value, dict):
        for key, item in value.items():
            if item is None and key not in NULLABLE:
                return f"{path}{key}"
            found = _first_null(item, f"{path}{key}.")
            if found:
                return found
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found = _first_null(item, f"{path[:-1]}[{index}].")
            if found:
                return found
    return None


def read_rows(folder: Path) -> dict[str, dict[str, list[dict]]]:
    """Every row of a dataset folder, read with pyarrow and checked against the schema (`read_split`).

    Raises:
        InputError: naming the file that is missing, unreadable (corrupted) or of another schema.
    """
    if not (folder / "README.md").is_file():
        raise InputError(f"{folder}: not a MedMemoryBench dataset folder (no README.md card)")
    rows: dict[str, dict[str, list[dict]]] = {}
    languages = [lang for lang in LANGUAGES if any((folder / config_name(c, lang)).is_dir() for c in RENDERED)]
    if not languages:
        raise InputError(f"{folder}: no rendered configs (efficient, mixed, questions, or their _zh twins)")
    from medmemorybench.dataset.hidden import is_hidden

    hidden = is_hidden(folder)  # (the public half of a hidden-gold release has no personas: they are the gold)
    wanted = [config_name(c, lang) for lang in languages for c in RENDERED] + ([] if hidden else ["personas"])
    for config in wanted:
        files = sorted((folder / config).glob("*.parquet"))
        if not files:
            raise InputError(f"{folder / config}: no parquet files for config '{config}'")
        rows[config] = {file.stem: read_split(file, config) for file in files}
    if hidden and (folder / "personas").exists():
        raise InputError(f"{folder / 'personas'}: a hidden-gold release must not hold the ground truth")
    if not hidden and PERSONAS_SPLIT not in rows["personas"]:
        raise InputError(f"{folder / 'personas'}: missing split '{PERSONAS_SPLIT}'")
    return rows
