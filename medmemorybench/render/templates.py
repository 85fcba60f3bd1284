"""Phrasing data for the template renderer: one YAML file per language, validated on load.

A file maps intents (`open.lab_check`, `fact.medication.start`, ...) to lists of variants. Variants are
`str.format` strings; the placeholders an intent may use are declared in `PLACEHOLDERS`, and a variant
using any other is an error naming the file and intent, so a typo cannot ship.
"""

from __future__ import annotations

import string
from functools import lru_cache
from pathlib import Path

import yaml

from medmemorybench.errors import InputError
from medmemorybench.simulate.models import EVENT_KINDS, TRAP_CATEGORIES

TEMPLATE_DIR = Path(__file__).parent / "templates"
MIN_VARIANTS = 5

_DRUG = {"drug", "dose", "unit", "frequency", "reason"}

PLACEHOLDERS: dict[str, set[str]] = {
    **{f"open.{kind}": set() for kind in EVENT_KINDS},
    **{f"ask.{kind}": set() for kind in EVENT_KINDS},
    "fact.symptom": {"lay"},
    "ack.symptom": {"name", "lay"},
    "fact.lab": {"lab", "lab_lay", "value", "unit", "status"},
    "fact.diagnosis.suspected": {"diagnosis"},
    "fact.diagnosis.confirmed": {"diagnosis", "diagnosis_lay", "icd11"},
    "fact.diagnosis.ruled_out": {"diagnosis"},
    "fact.diagnosis.complication": {"diagnosis", "diagnosis_lay"},
    "fact.diagnosis.acute": {"diagnosis", "diagnosis_lay"},
    "fact.test": {"test", "finding"},
    "fact.medication.start": _DRUG,
    "fact.medication.increase": _DRUG | {"previous_dose"},
    "fact.medication.decrease": _DRUG | {"previous_dose"},
    "fact.medication.stop": _DRUG,
    "fact.medication.continue": _DRUG,
    "fact.medication.start_course": _DRUG | {"days"},
    "fact.medication.long_term": _DRUG | {"condition"},
    "fact.medication.administer": _DRUG,
    "fact.medication.correct": _DRUG | {"previous_dose"},
    "ack.medication.correct": {"drug", "dose", "unit"},
    "fact.avoided": {"drug", "instead", "trap_reason"},
    "fact.avoided_rule": {"drug", "instead", "reason"},
    "fact.caution": {"drug", "caution"},
    "fact.setting.emergency": set(),
    "fact.setting.admission": set(),
    "fact.complication_finding": {"diagnosis", "finding"},
    "fact.allergy_correction": {"agent", "reaction", "previous"},
    "ack.allergy_correction": {"agent", "reaction"},
    "fact.allergy": {"agent", "reaction"},
    "ack.allergy": {"agent", "reaction"},
    "fact.history": {"history", "history_lay"},
    "ack.history": {"history", "history_lay"},
    "fact.preference": {"text"},
    "ack.preference": {"text"},
    "fact.diet": {"text"},
    "ack.diet": {"text"},
    "fact.economic": {"text", "budget"},
    "ack.economic": {"text", "budget"},
    "fact.adverse": {"drug", "effect", "effect_lay"},
    "fact.advice": {"advice"},
    "fact.stressor": {"text"},
    "ack.stressor": {"text"},
    "fact.adherence": {"drug", "days"},
    "ack.adherence": {"drug", "days"},
    "backref": {"date", "earlier"},
    "today": {"date"},
    "react.patient": set(),
    "close.patient": set(),
    "close.doctor": set(),
    "filler.doctor": set(),
    "filler.patient": set(),
    **{f"trap_reason.{category}": {"detail"} for category in TRAP_CATEGORIES},
    "health.open": {"question"},
    "health.follow": set(),
    "health.close": set(),
    "family.open": {"relative", "name", "age", "condition"},
    "family.drug": {"relative", "drug", "dose", "unit", "frequency"},
    "family.lab": {"relative", "lab", "value", "unit"},
    "family.allergy": {"relative", "agent", "reaction"},
    "family.doctor": {"relative"},
    "family.close": {"relative"},
}
"""Every intent a template file must define, with the placeholders its variants may use."""

REQUIRED: dict[str, tuple[str, ...]] = {
    "fact.symptom": ("{lay}",),
    "ack.symptom": ("{name}",),
    "fact.lab": ("{lab}", "{value} {unit}"),
    "fact.diagnosis.suspected": ("{diagnosis}",),
    "fact.diagnosis.confirmed": ("{diagnosis}",),
    "fact.diagnosis.ruled_out": ("{diagnosis}",),
    "fact.diagnosis.complication": ("{diagnosis}",),
    "fact.diagnosis.acute": ("{diagnosis}",),
    "fact.test": ("{test}", "{finding}"),
    "fact.medication.start": ("{drug}", "{dose} {unit}", "{frequency}"),
    "fact.medication.increase": ("{drug}", "{dose} {unit}", "{previous_dose}", "{frequency}"),
    "fact.medication.decrease": ("{drug}", "{dose} {unit}", "{previous_dose}", "{frequency}"),
    "fact.medication.stop": ("{drug}",),
    "fact.medication.continue": ("{drug}", "{dose} {unit}", "{frequency}"),
    "fact.medication.start_course": ("{drug}", "{dose} {unit}", "{frequency}", "{days}"),
    "fact.medication.long_term": ("{drug}", "{dose} {unit}", "{frequency}", "{condition}"),
    "fact.medication.administer": ("{drug}", "{dose} {unit}"),
    "fact.medication.correct": ("{drug}", "{dose} {unit}", "{previous_dose}"),
    "ack.medication.correct": ("{drug}", "{dose} {unit}"),
    "fact.avoided": ("{drug}", "{instead}", "{trap_reason}"),
    "fact.avoided_rule": ("{drug}", "{instead}", "{reason}"),
    "fact.caution": ("{drug}", "{caution}"),
    "fact.complication_finding": ("{finding}",),
    "fact.allergy_correction": ("{agent}", "{reaction}"),
    "fact.allergy": ("{agent}", "{reaction}"),
    "fact.history": ("{history_lay}",),
    "ack.history": ("{history}",),
    "fact.preference": ("{text}",),
    "fact.diet": ("{text}",),
    "fact.economic": ("{text}",),
    "fact.adverse": ("{drug}", "{effect}"),
    "fact.advice": ("{advice}",),
    "fact.stressor": ("{text}",),
    "fact.adherence": ("{drug}", "{days}"),
    "backref": ("{date}", "{earlier}"),
    "today": ("{date}",),
    **{f"trap_reason.{category}": ("{detail}",) for category in TRAP_CATEGORIES},
    "health.open": ("{question}",),
    "family.open": ("{relative}", "{condition}"),
    "family.drug": ("{drug}", "{dose} {unit}", "{frequency}"),
    "family.lab": ("{lab}", "{value} {unit}"),
    "family.allergy": ("{agent}", "{reaction}"),
}
"""Exact substrings every variant of an intent must contain, so the facts questions rest on are stated
verbatim (a value and its unit side by side, the drug's name, the dose before and after)."""

WORD_TABLES = ("frequency", "status", "reason", "toxicity", "release", "joiner")
"""Word tables a template file holds besides intents (`words.frequency.once_daily`, ...)."""


class Templates:
    """The phrasings of one language."""

    def __init__(self, language: str, intents: dict[str, list[str]], words: dict[str, dict[str, str]]):
        self.language = language
        self.intents = intents
        self.words = words

    def variants(self, intent: str) -> list[str]:
        """All phrasings of an intent."""
        return self.intents[intent]

    def word(self, table: str, key: str) -> str:
        """A word-table entry; falls back to the key with underscores as spaces."""
        return self.words.get(table, {}).get(key, key.replace("_", " "))


def _placeholders(variant: str) -> set[str]:
    return {field for _, field, _, _ in string.Formatter().parse(variant) if field}


def parse_templates(path: Path, raw: object) -> Templates:
    """Validate a template document.

    Raises:
        InputError: listing every missing intent, short variant list and unknown placeholder.
    """
    if not isinstance(raw, dict) or not isinstance(raw.get("intents"), dict):
        raise InputError(f"{path}: expected a mapping with 'intents' and 'words'")
    intents, words = raw["intents"], raw.get("words") or {}
    problems = []
    for intent, allowed in PLACEHOLDERS.items():
        variants = intents.get(intent)
        if not isinstance(variants, list) or not all(isinstance(v, str) and v for v in variants):
            problems.append(f"{path}: intents.{intent}: missing or not a list of strings")
            continue
        if len(variants) < MIN_VARIANTS:
            problems.append(f"{path}: intents.{intent}: {len(variants)} variants, need at least {MIN_VARIANTS}")
        for index, variant in enumerate(variants):
            try:
                unknown = _placeholders(variant) - allowed
            except ValueError as exc:
                problems.append(f"{path}: intents.{intent}[{index}]: bad format string ({exc})")
                continue
            if unknown:
                problems.append(f"{path}: intents.{intent}[{index}]: unknown placeholder(s) {sorted(unknown)}; "
                                f"allowed: {sorted(allowed)}")
            missing = [part for part in REQUIRED.get(intent, ()) if part not in variant]
            if missing:
                problems.append(f"{path}: intents.{intent}[{index}]: must contain {missing}")
    for intent in sorted(set(intents) - set(PLACEHOLDERS)):
        problems.append(f"{path}: intents.{intent}: unknown intent")
    for table in WORD_TABLES:
        if not isinstance(words.get(table), dict):
            problems.append(f"{path}: words.{table}: missing word table")
    if problems:
        raise InputError("invalid templates:\n  " + "\n  ".join(problems))
    return Templates(path.stem, intents, words)


@lru_cache(maxsize=8)
def load_templates(language: str = "en", folder: Path = TEMPLATE_DIR) -> Templates:
    """The template set of `language` (a file `<language>.yaml` in `folder`)."""
    path = folder / f"{language}.yaml"
    if not path.exists():
        known = sorted(p.stem for p in folder.glob("*.yaml"))
        raise InputError(f"--language: no templates for '{language}'; available: {', '.join(known)}")
    with path.open(encoding="utf-8") as handle:
        try:
            raw = yaml.safe_load(handle)
        except yaml.YAMLError as exc:
            raise InputError(f"{path}: not valid YAML: {exc}".replace("\n", " ")) from None
    return parse_templates(path, raw)
