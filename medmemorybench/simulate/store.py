"""Writing and reading care years as JSON files, so that an interrupted run never looks complete.

Files go to `<out>.partial/` first; only when every patient is written does the folder get its
`manifest.json` and move to `<out>`.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable
from pathlib import Path

from pydantic import ValidationError

from medmemorybench.errors import InputError
from medmemorybench.files import atomic_folder
from medmemorybench.simulate.models import CareYear

MANIFEST = "manifest.json"


def care_year_json(year: CareYear) -> str:
    """The canonical JSON of a year (stable key order and formatting: equal years, equal bytes)."""
    return year.model_dump_json(indent=1) + "\n"


def write_cohort(
    years: Iterable[CareYear],
    out_dir: Path,
    *,
    overwrite: bool = False,
    on_written: Callable[[CareYear], None] | None = None,
    metadata: dict | None = None,
) -> list[Path]:
    """Write one `<persona_id>.json` per year into `out_dir`, atomically as a folder.

    Raises:
        InputError: if `out_dir` exists and `overwrite` is false.
        OutputError: naming `out_dir` when it cannot be written (read-only place, full disk).
    """
    out_dir = Path(out_dir)
    files = {}
    with atomic_folder(out_dir, overwrite) as partial:
        for year in years:
            text = care_year_json(year)
            name = f"{year.persona.persona_id}.json"
            (partial / name).write_text(text, encoding="utf-8")
            files[name] = hashlib.sha256(text.encode()).hexdigest()
            if on_written:
                on_written(year)
        manifest = {**(metadata or {}), "files": files}
        (partial / MANIFEST).write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return [out_dir / name for name in files]


def read_care_year(path: Path | str) -> CareYear:
    """Load one care-year JSON file.

    Raises:
        InputError: naming the file and the first invalid field.
    """
    path = Path(path)
    try:
        raw = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError(f"{path}: no such file") from None
    except (IsADirectoryError, UnicodeDecodeError) as exc:
        raise InputError(f"{path}: not a readable care-year JSON file ({exc.__class__.__name__})") from None
    try:
        return CareYear.model_validate_json(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "(top level)"
        more = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
        raise InputError(f"{path}: {where}: {first['msg']}{more}") from None
