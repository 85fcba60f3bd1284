"""Loads the knowledge-base YAML files into a `KnowledgeBase`, collecting every error before raising."""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from medmemorybench.errors import KnowledgeError
from medmemorybench.files import load_yaml
from medmemorybench.knowledge.base import KnowledgeBase
from medmemorybench.knowledge.models import (
    Advice,
    Aliases,
    AllergyGroup,
    CodeCheck,
    Condition,
    Contraindication,
    DietHabit,
    Drug,
    DrugClass,
    EconomicProfile,
    Gists,
    HistoryCondition,
    Illness,
    Interaction,
    Lab,
    MedicationPreference,
    MoodScreen,
    PatientRule,
    People,
    RelativeTemplate,
    RenalBaseline,
    Score,
    Topic,
    UnitWords,
)
from medmemorybench.knowledge.validate import check_completeness, check_references

DATA_DIR = Path(__file__).parent / "data"
UNITS_FILE = "units.yaml"
"""How units are said in each language (read by the simulator's findings and the renderer's phrasings alike)."""

M = TypeVar("M", bound=BaseModel)

# file (relative to the data folder) -> top-level key -> record model
_SECTIONS: dict[str, dict[str, type[BaseModel]]] = {
    "labs.yaml": {"labs": Lab},
    "drug_classes.yaml": {"classes": DrugClass},
    "allergies.yaml": {"allergy_groups": AllergyGroup},
    "history.yaml": {"history_conditions": HistoryCondition, "contraindications": Contraindication},
    "interactions.yaml": {"interactions": Interaction},
    "diet.yaml": {"advice": Advice, "habits": DietHabit},
    "preferences.yaml": {"medication_preferences": MedicationPreference, "economic_profiles": EconomicProfile},
    "noise_topics.yaml": {"topics": Topic},
    "relatives.yaml": {"relatives": RelativeTemplate},
    "patient_rules.yaml": {"rules": PatientRule, "renal_baseline": RenalBaseline, "mood_screen": MoodScreen},
    "code_checks.yaml": {"codes": CodeCheck},
    "intercurrent.yaml": {"illnesses": Illness},
    "scores.yaml": {"scores": Score},
}


def _read_yaml(path: Path, errors: list[str]) -> Any:
    try:
        with path.open(encoding="utf-8") as handle:
            raw = load_yaml(handle)
    except FileNotFoundError:
        errors.append(f"{path}: file is missing")
    except UnicodeDecodeError as exc:
        errors.append(f"{path}: not UTF-8 text (byte {exc.start})")
    except yaml.YAMLError as exc:
        errors.append(f"{path}: not valid YAML: {exc}".replace("\n", " "))
    except OSError as exc:  # a folder where the file should be, unreadable
        errors.append(f"{path}: cannot be read ({exc.strerror or exc})")
    else:
        if raw is None:
            errors.append(f"{path}: the file is empty")
        return raw
    return None


def _format_validation(path: Path, prefix: str, exc: ValidationError) -> list[str]:
    lines = []
    for err in exc.errors():
        where = ".".join(str(part) for part in (prefix, *err["loc"]) if part != "")
        lines.append(f"{path}: {where}: {err['msg']}")
    return lines


def _parse_records(
    path: Path, section: str, raw: Any, model: type[M], errors: list[str]
) -> list[M]:
    if not isinstance(raw, list):
        errors.append(f"{path}: {section}: expected a list of records, got {type(raw).__name__}")
        return []
    records = []
    for index, item in enumerate(raw):
        try:
            records.append(model.model_validate(item))
        except ValidationError as exc:
            errors.extend(_format_validation(path, f"{section}[{index}]", exc))
    return records


def _index(records: list[M], key: Callable[[M], str], path: str, errors: list[str]) -> dict[str, M]:
    out: dict[str, M] = {}
    for record in records:
        name = key(record)
        if name in out:
            errors.append(f"{path}: duplicate key '{name}'")
        out[name] = record
    return out


REQUIRE_COMPLETE = True
"""Whether loading also demands every clinical rule (kinetics, regimens, purposes...); see `check_completeness`."""


def load_knowledge(data_dir: Path | str = DATA_DIR, require_complete: bool | None = None) -> KnowledgeBase:
    """Load and validate the whole knowledge base.

    Args:
        data_dir: folder holding the YAML files (defaults to the packaged base).
        require_complete: also check that every clinical rule is filled in (default `REQUIRE_COMPLETE`).

    Returns:
        The validated knowledge base.

    Raises:
        KnowledgeError: listing every problem found, each naming its file and field.
    """
    data_dir = Path(data_dir)
    if require_complete is None:
        require_complete = REQUIRE_COMPLETE
    errors: list[str] = []
    sections: dict[str, list[Any]] = {}
    for filename, keys in _SECTIONS.items():
        path = data_dir / filename
        raw = _read_yaml(path, errors)
        if raw is None:
            continue
        if not isinstance(raw, dict):
            errors.append(f"{path}: expected a mapping with keys {sorted(keys)}")
            continue
        for unknown in sorted(set(raw) - set(keys)):
            errors.append(f"{path}: {unknown}: unknown top-level key (expected one of {sorted(keys)})")
        for section, model in keys.items():
            if section not in raw:
                errors.append(f"{path}: {section}: missing top-level key")
                continue
            sections[section] = _parse_records(path, section, raw[section], model, errors)

    drugs: list[Drug] = []
    drug_files = sorted((data_dir / "drugs").glob("*.yaml"))
    if not drug_files:
        errors.append(f"{data_dir / 'drugs'}: no drug files found")
    for path in drug_files:
        raw = _read_yaml(path, errors)
        if isinstance(raw, dict) and set(raw) == {"drugs"}:
            drugs.extend(_parse_records(path, "drugs", raw["drugs"], Drug, errors))
        elif raw is not None:
            errors.append(f"{path}: expected a mapping with the single key 'drugs'")

    conditions: list[Condition] = []
    condition_files = sorted((data_dir / "conditions").glob("*.yaml"))
    for path in condition_files:
        raw = _read_yaml(path, errors)
        if raw is None:
            continue
        try:
            condition = Condition.model_validate(raw)
        except ValidationError as exc:
            errors.extend(_format_validation(path, "", exc))
            continue
        if condition.key != path.stem:
            errors.append(f"{path}: key: '{condition.key}' must equal the file name '{path.stem}'")
        conditions.append(condition)

    people = _read_model(data_dir / "people.yaml", People, errors)
    # not records like _SECTIONS: one mapping per kind of disclosed fact, keyed by the records' keys
    gists = _read_model(data_dir / "gists.yaml", Gists, errors) or Gists()
    unit_words = _read_unit_words(data_dir / UNITS_FILE, errors)
    aliases = _read_model(data_dir / "aliases.yaml", Aliases, errors)

    def get(section: str) -> list[Any]:
        return sections.get(section, [])

    kb = KnowledgeBase(
        labs=_index(get("labs"), lambda r: r.key, "labs.yaml", errors),
        classes=_index(get("classes"), lambda r: r.key, "drug_classes.yaml", errors),
        drugs=_index(drugs, lambda r: r.key, "drugs/*.yaml", errors),
        allergy_groups=_index(get("allergy_groups"), lambda r: r.key, "allergies.yaml", errors),
        history_conditions=_index(get("history_conditions"), lambda r: r.key, "history.yaml", errors),
        contraindications=get("contraindications"),
        interactions=get("interactions"),
        advice=_index(get("advice"), lambda r: r.key, "diet.yaml advice", errors),
        habits=_index(get("habits"), lambda r: r.key, "diet.yaml habits", errors),
        preferences=_index(get("medication_preferences"), lambda r: r.key, "preferences.yaml", errors),
        economic_profiles=_index(get("economic_profiles"), lambda r: r.key, "preferences.yaml", errors),
        topics=_index(get("topics"), lambda r: r.key, "noise_topics.yaml", errors),
        relatives=_index(get("relatives"), lambda r: r.relation, "relatives.yaml", errors),
        conditions=_index(conditions, lambda r: r.key, "conditions/*.yaml", errors),
        people=people,  # type: ignore[arg-type]  # None only when errors is non-empty
        patient_rules=get("rules"),
        renal_baseline=get("renal_baseline"),
        mood_screen=next(iter(get("mood_screen")), None),
        code_checks=get("codes"),
        illnesses=_index(get("illnesses"), lambda r: r.key, "intercurrent.yaml", errors),
        gists=gists,
        aliases=aliases,  # type: ignore[arg-type]  # None only when errors is non-empty
        scores=_index(get("scores"), lambda r: r.key, "scores.yaml", errors),
        unit_words=unit_words,
    )
    if not errors:
        errors.extend(check_references(kb, data_dir))
    if not errors and require_complete:
        errors.extend(check_completeness(kb))
    if errors:
        raise KnowledgeError(errors)
    return kb


def _read_model(path: Path, model: type[M], errors: list[str]) -> M | None:
    """A whole-file model (people, gists, aliases), or None with its problems added to `errors`."""
    raw = _read_yaml(path, errors)
    if raw is None:
        return None
    try:
        return model.model_validate(raw)
    except ValidationError as exc:
        errors.extend(_format_validation(path, "", exc))
        return None


def _read_unit_words(path: Path, errors: list[str]) -> dict[str, UnitWords]:
    """units.yaml: unit -> how each language says it."""
    raw = _read_yaml(path, errors)
    if raw is None:
        return {}
    if not isinstance(raw, dict) or set(raw) != {"units"} or not isinstance(raw["units"], dict):
        errors.append(f"{path}: expected a mapping with the single key 'units' (unit -> {{en, zh}})")
        return {}
    out: dict[str, UnitWords] = {}
    for unit, words in raw["units"].items():
        try:
            out[str(unit)] = UnitWords.model_validate(words)
        except ValidationError as exc:
            errors.extend(_format_validation(path, f"units.{unit}", exc))
    return out


@lru_cache(maxsize=4)
def unit_words(data_dir: Path | str = DATA_DIR) -> dict[str, UnitWords]:
    """The unit words of a knowledge base folder (units.yaml), for the renderer's phrasings.

    Raises:
        KnowledgeError: when the file is missing or malformed.
    """
    errors: list[str] = []
    words = _read_unit_words(Path(data_dir) / UNITS_FILE, errors)
    if errors:
        raise KnowledgeError(errors)
    return words


@lru_cache(maxsize=4)
def default_knowledge() -> KnowledgeBase:
    """The packaged knowledge base, loaded once per process."""
    return load_knowledge(DATA_DIR)
