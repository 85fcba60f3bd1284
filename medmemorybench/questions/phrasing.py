"""Question and answer wording of one language: `phrasings/<language>/<type>.yaml` plus `common.yaml`.

Each type's file maps an intent to its question variants (`lab_at_anchor: ["What was my {lab_lay} ..."]`).
`common.yaml` holds what every type shares: answer sentences (`answers.<table>.<key>`), the references a
patient uses for a visit (`answers.anchor`), month names and the articles a lay name drops. No English
sentence of a question or a gold lives in Python, so a language is a folder of YAML files.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import yaml

from medmemorybench.errors import InputError
from medmemorybench.files import load_yaml

PHRASING_DIR = Path(__file__).parent / "phrasings"


class Phrasing:
    """The wording of one language."""

    def __init__(self, language: str, folder: Path, intents: dict[str, dict[str, list[str]]], common: dict) -> None:
        self.language, self.folder = language, folder
        self._intents, self._common = intents, common

    def variants(self, template: str) -> list[str]:
        """The question variants of `<type>.<intent>`."""
        group, _, intent = template.partition(".")
        try:
            variants = self._intents[group][intent]
        except KeyError:
            raise InputError(f"{self.folder / (group + '.yaml')}: {intent}: no such phrasing") from None
        return variants

    def answer(self, table: str, key: str) -> str:
        try:
            return self._common["answers"][table][key]
        except KeyError:
            raise InputError(f"{self.folder / 'common.yaml'}: answers.{table}.{key}: missing") from None

    def common(self, key: str):  # noqa: ANN201
        try:
            return self._common[key]
        except KeyError:
            raise InputError(f"{self.folder / 'common.yaml'}: {key}: missing") from None


def _read(path: Path) -> dict:
    try:
        raw = load_yaml(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise InputError(f"{path}: not valid YAML: {exc}".replace("\n", " ")) from None
    if not isinstance(raw, dict):
        raise InputError(f"{path}: expected a mapping of intent -> list of phrasings")
    return raw


@lru_cache(maxsize=8)
def load_phrasing(language: str = "en", root: Path = PHRASING_DIR) -> Phrasing:
    """The phrasing files of `language`; every intent must have at least one non-empty variant."""
    folder = root / language
    if not folder.is_dir():
        known = sorted(p.name for p in root.iterdir() if p.is_dir())
        raise InputError(f"--language: no question phrasings for '{language}'; available: {', '.join(known)}")
    intents: dict[str, dict[str, list[str]]] = {}
    for path in sorted(folder.glob("*.yaml")):
        if path.stem == "common":
            continue
        raw = _read(path)
        for intent, variants in raw.items():
            if not isinstance(variants, list) or not variants or not all(isinstance(v, str) and v for v in variants):
                raise InputError(f"{path}: {intent}: expected a non-empty list of phrasings")
        intents[path.stem] = raw
    common_path = folder / "common.yaml"
    if not common_path.exists():
        raise InputError(f"{common_path}: missing (answer sentences, anchors, months)")
    return Phrasing(language, folder, intents, _read(common_path))
