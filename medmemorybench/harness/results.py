"""Run results on disk: `samples.jsonl` (one line per question, flushed as written) and `run.json`.

A killed run is resumed from the lines already written: nothing is asked twice and nothing counted
twice. A last line cut off by the kill is dropped, and samples whose generation failed are dropped too, so
the resume asks them again; the kept lines are written to a new file that replaces the old one by an
atomic rename, so a kill during the resume's own start leaves either file whole, never an empty one.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from pathlib import Path

from medmemorybench.errors import InputError, OutputError
from medmemorybench.files import loads_json, write_atomic

SAMPLES = "samples.jsonl"
RUN_HEADER = "run.json"
SUMMARY = "summary.json"


def read_samples(path: Path) -> list[dict]:
    """Every complete line of a samples file (a cut-off last line is skipped)."""
    return list(_complete_lines(path))


def _complete_lines(path: Path) -> Iterator[dict]:
    if not path.exists():
        return
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                record = loads_json(line)
            except json.JSONDecodeError as exc:
                if not line.endswith("\n"):  # the kill cut the last line: tolerated, rewritten on resume
                    return
                raise InputError(f"{path}: line {number} is not valid JSON ({exc.msg})") from None
            if not isinstance(record, dict) or not isinstance(record.get("task"), str) \
                    or not isinstance(record.get("query_id"), str):
                raise InputError(f"{path}: line {number} is not a sample (a JSON object with its task and query_id)")
            yield record


def _ends_cleanly(path: Path) -> bool:
    """Whether a samples file is absent, empty or ends with a newline (no cut-off last line)."""
    if not path.exists() or path.stat().st_size == 0:
        return True
    with path.open("rb") as handle:
        handle.seek(-1, 2)
        return handle.read(1) == b"\n"


def sample_key(record: dict) -> tuple[str, str]:
    """What identifies a sample across a resume."""
    return (record["task"], record["query_id"])


class SampleWriter:
    """Appends sample lines; knows which samples exist already."""

    def __init__(self, run_dir: Path, resume: bool) -> None:
        self.path = run_dir / SAMPLES
        try:
            run_dir.mkdir(parents=True, exist_ok=True)
            existing = read_samples(self.path)
        except OSError as exc:  # a file where the folder should be, a read-only place, samples.jsonl a folder
            raise InputError(f"--output_path: cannot use {exc.filename or run_dir} ({exc.strerror or exc})") from None
        if existing and not resume:
            raise InputError(f"--output_path: {run_dir} already holds {len(existing)} results; pass --resume to "
                             "continue that run or choose another folder")
        # A resume asks again what failed (a backbone error is not an answer) and keeps the rest.
        kept = [r for r in existing if r.get("status") != "error"]
        self.done = {sample_key(r) for r in kept}
        if (self.path.exists() and len(kept) != len(existing)) or not _ends_cleanly(self.path):
            # (also drops a cut-off last line, so appends start on a clean line)
            write_atomic(self.path, "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in kept))
        try:
            self._handle = self.path.open("a", encoding="utf-8")
        except OSError as exc:
            raise InputError(f"--output_path: cannot append to {self.path} ({exc.strerror or exc})") from None

    def write(self, record: dict) -> None:
        """Append one sample and flush it to disk.

        Raises:
            OutputError: when the disk is full or the file cannot be written; every sample before is kept.
        """
        key = sample_key(record)
        if key in self.done:
            raise RuntimeError(f"sample {key} written twice")
        line = json.dumps(record, ensure_ascii=False) + "\n"
        try:
            self._handle.write(line)
            self._handle.flush()
        except OSError as exc:
            self.close()  # (a cut line left behind is dropped by the resume)
            raise OutputError(f"{self.path}: could not append a sample ({exc.strerror or exc}); the {len(self.done)} "
                              "written before are kept: free space, then rerun with --resume") from None
        self.done.add(key)

    def close(self) -> None:
        """Close the file; a final flush that fails is not raised again (`write` reported it)."""
        with contextlib.suppress(OSError):
            self._handle.close()
