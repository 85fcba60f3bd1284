"""The known memory systems (display name, paradigm) and the paper's reported numbers, from `systems.yaml`."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict, field_validator

from medmemorybench.questions.spec import paper_codes

SYSTEMS_FILE = Path(__file__).parent / "systems.yaml"


class PaperSource(BaseModel):
    """Where the reference rows come from."""

    model_config = ConfigDict(extra="forbid")
    title: str
    url: str
    backbone: str
    """The model that answered in the paper."""
    note: str
    """The label every reference row carries."""


class KnownSystem(BaseModel):
    """A built-in memory system."""

    model_config = ConfigDict(extra="forbid")
    memory: str
    """Registry name (`--memory`)."""
    name: str
    """Display name, as the paper writes it."""
    paradigm: str
    """A key of `paradigms`."""
    reported: dict[str, dict[str, float]] | None = None
    """The paper's accuracy (%) per mode (efficient, mixed), per question type and their mean (`mean`), on its own
    data; None: not in the paper."""

    @field_validator("reported")
    @classmethod
    def _paper_columns(cls, reported: dict[str, dict[str, float]] | None) -> dict[str, dict[str, float]] | None:
        for mode, figures in (reported or {}).items():
            if mode not in ("efficient", "mixed"):
                raise ValueError(f"reported: '{mode}' is not a mode (efficient, mixed)")
            unknown = set(figures) - {*paper_codes(), "mean"}
            if unknown or "mean" not in figures:
                raise ValueError(f"reported.{mode}: the paper's types and 'mean' ({', '.join(sorted(unknown))})")
        return reported


class SystemsFile(BaseModel):
    """`systems.yaml`."""

    model_config = ConfigDict(extra="forbid")
    paper: PaperSource
    paradigms: dict[str, str]
    """Paradigm key -> label."""
    systems: list[KnownSystem]


@lru_cache(maxsize=1)
def load_systems() -> SystemsFile:
    """The parsed file; every system's paradigm is checked against the paradigms it declares."""
    data = SystemsFile.model_validate(yaml.safe_load(SYSTEMS_FILE.read_text(encoding="utf-8")))
    for system in data.systems:
        if system.paradigm not in data.paradigms:
            raise ValueError(f"{SYSTEMS_FILE}: systems[{system.memory}].paradigm: unknown '{system.paradigm}'")
    return data


def known_system(memory: str) -> KnownSystem | None:
    """The built-in system registered as `memory`, or None for a third-party one."""
    return next((s for s in load_systems().systems if s.memory == memory), None)


def paradigm_keys() -> list[str]:
    """Every paradigm a system may declare."""
    return list(load_systems().paradigms)
