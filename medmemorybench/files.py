"""Writing files and folders atomically: a temporary one beside the target, then a rename, so nothing
half-written remains and a failure (a full disk) names the target; and reading JSON and YAML that a hostile file
cannot turn into a traceback."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

from medmemorybench.errors import OutputError


@contextmanager
def atomic_path(path: Path, mode: int = 0o644) -> Iterator[Path]:
    """A temporary path beside `path` to write to; renamed onto `path` when the block ends, removed if it fails.

    Raises:
        OutputError: naming `path` when the folder cannot be made or the file cannot be written (full disk).
    """
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        os.close(fd)
    except OSError as exc:
        raise OutputError(f"{path}: cannot write here ({exc.strerror or exc})") from None
    try:
        yield Path(tmp)
        os.chmod(tmp, mode)  # mkstemp makes it owner-only; results and sheets are meant to be shared (0o644)
        os.replace(tmp, path)
    except OSError as exc:
        raise OutputError(f"{path}: could not be written ({exc.strerror or exc}); the previous file, if any, "
                          "is unchanged") from None
    finally:
        Path(tmp).unlink(missing_ok=True)


def write_atomic(path: Path, text: str, encoding: str = "utf-8") -> None:
    """Write `text` to `path` through a temporary file in the same folder (see `atomic_path`)."""
    with atomic_path(path) as tmp, tmp.open("w", encoding=encoding, newline="") as handle:
        handle.write(text)
        handle.flush()
        os.fsync(handle.fileno())  # the rename must not land before the data


@contextmanager
def atomic_folder(target: Path, overwrite: bool, flag: str = "--output_path") -> Iterator[Path]:
    """A fresh `<target>.partial` folder to fill; it replaces `target` when the block ends, and is removed if
    the block fails, so a folder that exists is always complete.

    Raises:
        InputError: when `target` exists and `overwrite` is false (naming `flag`).
        OutputError: naming `target` when the folder cannot be made or filled (read-only place, full disk).
    """
    from medmemorybench.errors import InputError

    if target.exists() and not overwrite:
        raise InputError(f"{flag}: {target} already exists; choose another {flag} or pass --overwrite")
    partial = target.with_name(target.name + ".partial")
    try:
        if partial.exists():
            shutil.rmtree(partial)
        partial.mkdir(parents=True)
    except OSError as exc:
        raise OutputError(f"{flag}: cannot write {target} ({exc.strerror or exc})") from None
    try:
        yield partial
        if target.exists():
            shutil.rmtree(target)
        os.replace(partial, target)
    except OSError as exc:
        raise OutputError(f"{target}: could not be written ({exc.strerror or exc}); nothing was left "
                          "half-written") from None
    finally:
        shutil.rmtree(partial, ignore_errors=True)


NESTED_TOO_DEEPLY = "nested too deeply to read (a hostile or broken file)"


def loads_json(text: str | bytes) -> Any:
    """`json.loads`, where a structure nested beyond Python's recursion limit is the `JSONDecodeError` every caller
    already turns into one line naming its file (instead of a `RecursionError` traceback)."""
    try:
        return json.loads(text)
    except RecursionError:
        raise json.JSONDecodeError(NESTED_TOO_DEEPLY, "", 0) from None


def safe_yaml_loader() -> type:
    """PyYAML's safe loader on libyaml's parser where PyYAML was built with it (about 10x faster: the knowledge base
    took ~3 s a load in pure Python), else the pure-Python one; subclass it to add tags."""
    import yaml

    return getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def load_yaml(text: str | IO[str], loader: type | None = None) -> Any:
    """`yaml.safe_load` through `safe_yaml_loader()` (or `loader`, a subclass of it), deep nesting reported as the
    `YAMLError` callers name their file in (see `loads_json`; libyaml itself stops at 1,000 levels with a
    `ScannerError`)."""
    import yaml

    loader = loader or safe_yaml_loader()
    try:
        return yaml.load(text, Loader=loader)  # noqa: S506 - a safe loader, C or Python
    except RecursionError:
        raise yaml.YAMLError(NESTED_TOO_DEEPLY) from None
    except yaml.MarkedYAMLError as exc:
        if "maximum nesting depth" in str(exc.problem):  # libyaml's own limit: the same one line as Python's
            raise yaml.YAMLError(NESTED_TOO_DEEPLY) from None
        raise

