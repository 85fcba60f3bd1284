"""A submission bundle: the files one verified run becomes in a results folder or repo, where they go, and how
they are read back without trusting them (bounded sizes, no path outside the folder, declared shapes).

    submissions/<system>/<backbone>/<id>/run.json         the run header, as the run wrote it
                                        samples.jsonl    every answer, as the run wrote it
                                        summary.json     re-computed from the samples by `submit`
                                        system.json      the system's self-description (`SystemDescription`)
                                        submission.json  what was verified (`Manifest`)
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path, PurePosixPath
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, ValidationInfo, field_validator

from medmemorybench.errors import InputError
from medmemorybench.files import loads_json
from medmemorybench.harness.results import RUN_HEADER, SAMPLES, SUMMARY
from medmemorybench.leaderboard.systems import paradigm_keys

SUBMISSIONS_DIR = "submissions"
SYSTEM_FILE = "system.json"
MANIFEST_FILE = "submission.json"
BUNDLE_FILES = (RUN_HEADER, SAMPLES, SUMMARY, SYSTEM_FILE, MANIFEST_FILE)
FORMAT_VERSION = 1

MAX_BYTES = {RUN_HEADER: 1 << 20, SAMPLES: 256 << 20, SUMMARY: 32 << 20, SYSTEM_FILE: 64 << 10,
             MANIFEST_FILE: 64 << 10}
"""Largest accepted file, by name (a full run of both modes writes ~25 MB of samples)."""
MAX_LINE_BYTES = 1 << 20
"""Largest accepted samples.jsonl line."""
SLUG_CHARS = 48

_SLUG_DROP = re.compile(r"[^a-z0-9._-]+")
_SLUG = re.compile(r"^[a-z0-9](?:[a-z0-9._-]{0,46}[a-z0-9])?$")
_URL = re.compile(r"^https?://[^\s<>\"'`]+$")
_HUB_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,95}/[A-Za-z0-9][A-Za-z0-9._-]{0,95}$")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def slug(text: str) -> str:
    """A path part made of `text`: lower case, [a-z0-9._-] only, no leading dot, at most 48 characters."""
    cleaned = re.sub(r"\.{2,}", ".", _SLUG_DROP.sub("-", text.lower()))
    cleaned = re.sub(r"-{2,}", "-", cleaned).strip("-._")[:SLUG_CHARS].strip("-._")
    return cleaned or "unnamed"


def is_slug(text: str) -> bool:
    """Whether `text` is a path part `slug` could have made (so a folder named `..` or `.git` never is)."""
    return bool(_SLUG.match(text)) and ".." not in text


def bundle_path(system: str, backbone: str, samples_sha256: str) -> PurePosixPath:
    """Where a bundle goes, relative to the results root: names made safe, the id from the samples' hash."""
    return PurePosixPath(SUBMISSIONS_DIR, slug(system), slug(backbone), samples_sha256[:12])


TEXT_LIMITS = {"name": 80, "version": 40, "description": 500}
"""Most characters of each free-text field of a self-description."""


def _text(value: str, limit: int) -> str:
    if not value.strip():
        raise ValueError("empty")
    if len(value) > limit:
        raise ValueError(f"longer than {limit} characters")
    if _CONTROL.search(value):
        raise ValueError("holds control characters")
    return value


class SystemClaim(BaseModel):
    """What a submitter says of their system (`submit --system FILE`, YAML or JSON); every key optional."""

    model_config = ConfigDict(extra="forbid")
    name: str | None = None
    """Display name."""
    version: str | None = None
    """The system's own version."""
    paradigm: str | None = None
    """One of `systems.yaml`'s paradigms."""
    link: str | None = None
    """Where to read about it (http or https)."""
    description: str | None = None
    """One or two sentences."""
    answering_model_hub_id: str | None = None
    """The answering model's Hub repo (ORG/NAME), when it has one: `.eval_results` entries are written for it."""

    @field_validator("name", "version", "description")
    @classmethod
    def _plain_text(cls, value: str | None, info: ValidationInfo) -> str | None:
        return None if value is None else _text(value, TEXT_LIMITS[info.field_name])

    @field_validator("paradigm")
    @classmethod
    def _paradigm(cls, value: str | None) -> str | None:
        if value is not None and value not in paradigm_keys():
            raise ValueError(f"'{value}' is not one of {', '.join(paradigm_keys())}")
        return value

    @field_validator("link")
    @classmethod
    def _link(cls, value: str | None) -> str | None:
        if value is not None and (len(value) > 300 or not _URL.match(value)):
            raise ValueError(f"'{value[:80]}' is not an http(s) URL of at most 300 characters")
        return value

    @field_validator("answering_model_hub_id")
    @classmethod
    def _hub_id(cls, value: str | None) -> str | None:
        if value is not None and not _HUB_ID.match(value):
            raise ValueError(f"'{value[:80]}' is not a Hub repo id (ORG/NAME)")
        return value


class SystemDescription(SystemClaim):
    """`system.json`: the system's self-description, every field filled."""

    name: str
    version: str
    paradigm: str
    memory: str
    """Registry name the run used (`--memory`) and its options."""
    memory_args: dict[str, Any] = Field(default_factory=dict)
    memory_model: str | None = None
    """The model the memory built itself with (None: it needs none)."""
    answering_model: str
    """The backbone that answered ("none": a retrieval-only run)."""
    cost_per_session: dict[str, float | None]
    """Construction cost per session, from the samples (`report.cost_per_session`)."""


class Coverage(BaseModel):
    """Which of a task's questions a run answered."""

    model_config = ConfigDict(extra="forbid")
    questions: int
    of_questions: int
    """The questions of the run's tasks over every patient and checkpoint."""
    patients: int
    of_patients: int
    checkpoints: list[int]
    """The checkpoints asked."""

    @property
    def is_complete(self) -> bool:
        """Whether the run answered every question of its tasks."""
        return self.questions == self.of_questions


class Manifest(BaseModel):
    """`submission.json`: what `submit` verified, with the hash of every file it sent."""

    model_config = ConfigDict(extra="forbid")
    format: int = FORMAT_VERSION
    verified_by: str
    """The medmemorybench version that re-scored the samples."""
    submitted_at: str
    dataset_fingerprint: str
    dataset_revision: str | None = None
    """The dataset repo's commit on the Hub, when the submitter gave it."""
    tasks: list[dict[str, str]]
    """Each task's name, version and mode."""
    coverage: Coverage
    judge: str | None = None
    """The judge's model when one graded (its verdicts are taken as submitted: no judge re-runs them)."""
    verification: Literal["public gold", "unscored"] = "public gold"
    """"public gold": re-scored by `submit` against a public release (self-reported answers, consistency-checked);
    "unscored": a run on a hidden-gold release, scored only by the board's maintainers (`leaderboard --gold`)."""
    files: dict[str, str]
    """File name -> SHA-256 of the other bundle files."""


def sha256(data: bytes) -> str:
    """Hex SHA-256 of `data`."""
    return hashlib.sha256(data).hexdigest()


def read_bounded(path: Path, limit: int | None = None) -> bytes:
    """A regular file's bytes, refused beyond `limit` (by default its name's `MAX_BYTES`).

    Raises:
        InputError: naming the file when it is missing, not a plain file (a link or a folder) or too large.
    """
    limit = limit if limit is not None else MAX_BYTES.get(path.name, 1 << 20)
    if path.is_symlink() or not path.is_file():
        raise InputError(f"{path}: missing or not a plain file")
    size = path.stat().st_size
    if size > limit:
        raise InputError(f"{path}: {size:,} bytes, over the {limit:,} accepted")
    return path.read_bytes()


def read_json_object(path: Path) -> dict[str, Any]:
    """A bounded JSON file holding an object.

    Raises:
        InputError: naming the file when it is unreadable, not JSON or not an object.
    """
    try:
        value = loads_json(read_bounded(path).decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InputError(f"{path}: not JSON ({str(exc)[:120]})") from None
    if not isinstance(value, dict):
        raise InputError(f"{path}: not a JSON object")
    return value


def read_sample_lines(path: Path) -> list[dict[str, Any]]:
    """Every line of a bounded samples.jsonl, each a JSON object (line numbers start at 1).

    Raises:
        InputError: naming the file and line that is too long, not JSON or not an object.
    """
    data = read_bounded(path)
    samples = []
    for number, line in enumerate(data.split(b"\n"), start=1):
        if not line.strip():
            continue
        if len(line) > MAX_LINE_BYTES:
            raise InputError(f"{path}: line {number} is {len(line):,} bytes, over the {MAX_LINE_BYTES:,} accepted")
        try:
            value = loads_json(line.decode("utf-8"))
        except UnicodeDecodeError:
            raise InputError(f"{path}: line {number} is not UTF-8 text") from None
        except json.JSONDecodeError as exc:  # (says "nested too deeply" for a hostile nesting, as `submit` does)
            raise InputError(f"{path}: line {number} is not valid JSON ({exc.msg})") from None
        if not isinstance(value, dict):
            raise InputError(f"{path}: line {number} is not a JSON object")
        samples.append(value)
    return samples


def parse_model(model: type[BaseModel], value: object, where: str) -> Any:
    """`model.model_validate(value)`, its first problem as an InputError naming `where` and the field."""
    try:
        return model.model_validate(value)
    except ValidationError as exc:
        error = exc.errors()[0]
        field = ".".join(str(part) for part in error["loc"]) or "(top)"
        raise InputError(f"{where}: {field}: {error['msg'].removeprefix('Value error, ')}") from None
