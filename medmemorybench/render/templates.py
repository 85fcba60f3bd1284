"""Phrasing data for the template renderer: one YAML file per language, validated on load.

A file has four sections:

- `intents`: the fact intents (`fact.lab`, `fact.medication.start`, ...), whose variants state a ground-truth
  fact verbatim; `PLACEHOLDERS` declares the slots each may use and `REQUIRED` the substrings every variant
  must contain (the value beside its unit, the drug's name ...), outside any choice, so every expansion says it;
- `acts`: the dialogue acts of `acts.ACTS` and `acts.NOISE_ACTS` (greetings, history questions and answers,
  results, the patient's questions, safety-netting, closings ...), with the slots each may use;
- `grammar`: named sub-phrases the variants refer to as `<name>`;
- `words`: word tables (frequencies, statuses, month names ...).

Variants use the phrase grammar of `grammar.py` (`[a|b]` choices, `<name>` sub-phrases, `{slot}` values). Every
problem is reported at once with the file and key: a missing or unknown intent or act, a short variant list, a
slot the act may not use, a required substring inside a choice, a sub-phrase that is missing or never used.
"""

from __future__ import annotations

import random
import re
from functools import lru_cache
from pathlib import Path

import yaml

from medmemorybench.errors import InputError
from medmemorybench.files import load_yaml
from medmemorybench.knowledge.loader import unit_words
from medmemorybench.render.acts import ACTS, FAMILY_SLOTS, HEALTH_SLOTS, NOISE_ACTS, SESSION_SLOTS
from medmemorybench.render.grammar import (
    Grammar,
    GrammarSyntaxError,
    fill,
    finish,
    parse,
    refs_of,
    slots_of,
    tidy,
    top_level_text,
)
from medmemorybench.simulate.models import TRAP_CATEGORIES

TEMPLATE_DIR = Path(__file__).parent / "templates"
FRAGMENTS = ("trap_reason.", "reason.", "aid.", "body.")
"""Intents and acts said inside another sentence (no capital, no tidying of their own)."""
MIN_VARIANTS = 5
"""Variants (lines) each fact intent needs."""
MIN_ACT_VARIANTS = 3
"""Variants each act needs (a line usually holds choices of its own)."""

_DRUG = {"drug", "dose", "unit", "frequency", "reason"}

PLACEHOLDERS: dict[str, set[str]] = {
    "fact.symptom": {"lay"},
    "ack.symptom": {"name", "lay"},
    "fact.lab": {"lab", "lab_lay", "value", "unit", "status"},
    "fact.diagnosis.suspected": {"diagnosis"},
    "fact.diagnosis.confirmed": {"diagnosis", "diagnosis_lay"},
    "fact.diagnosis.ruled_out": {"diagnosis"},
    "fact.diagnosis.revised": {"diagnosis"},
    "fact.diagnosis.complication": {"diagnosis", "diagnosis_lay"},
    "fact.diagnosis.acute": {"diagnosis", "diagnosis_lay"},
    "fact.diagnosis.recurrent": {"diagnosis", "diagnosis_lay"},
    "fact.test": {"test", "finding"},
    "fact.medication.start": _DRUG,
    "fact.medication.increase": _DRUG | {"previous_dose"},
    "fact.medication.decrease": _DRUG | {"previous_dose"},
    "fact.medication.stop": _DRUG,
    "fact.medication.continue": _DRUG,
    "fact.medication.repeat": _DRUG,
    "fact.medication.start_course": _DRUG | {"days"},
    "fact.medication.start_course.as_needed": _DRUG | {"days"},
    "fact.medication.long_term": _DRUG | {"condition"},
    "fact.medication.administer": _DRUG,
    "fact.medication.correct": _DRUG | {"previous_dose"},
    "ack.medication.correct": {"drug", "dose", "unit"},
    "fact.avoided": {"drug", "instead", "trap_reason"},
    "fact.avoided_several": {"drugs", "instead", "trap_reason"},
    "fact.avoided_rule": {"drug", "instead", "reason"},
    "fact.caution": {"drug", "caution"},
    "fact.caution_given": {"drug", "caution", "reason"},
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
    "fact.advice_safety": {"advice"},
    "fact.stressor": {"text"},
    "ack.stressor": {"text"},
    "fact.adherence": {"drug", "days"},
    "ack.adherence": {"drug", "days"},
    "ack.adherence_serious": {"drug", "days"},
    "fact.refill": {"drug"},
    "ack.refill": {"drug"},
    "today": {"date"},
    **{f"trap_reason.{category}": {"detail"} for category in TRAP_CATEGORIES},
    "trap_reason.medication_history_for": {"detail", "condition"},
    "reason.adverse_effect_of": {"cause"},
    "body.bmi": {"bmi", "unit", "grade"},
    "family.open": {"relative", "name", "age", "condition"},
    "family.drug": {"relative", "drug", "dose", "unit", "frequency"},
    "family.lab": {"relative", "lab", "value", "unit"},
    "family.allergy": {"relative", "agent", "reaction"},
}
"""Every intent a template file must define, with the placeholders its variants may use."""

REQUIRED: dict[str, tuple[str, ...]] = {
    "fact.symptom": ("{lay}",),
    "ack.symptom": ("{name}",),
    "fact.lab": ("{lab}", "{value} {unit}"),
    "fact.diagnosis.suspected": ("{diagnosis}",),
    "fact.diagnosis.confirmed": ("{diagnosis}",),
    "fact.diagnosis.ruled_out": ("{diagnosis}",),
    "fact.diagnosis.revised": ("{diagnosis}",),
    "fact.diagnosis.complication": ("{diagnosis}",),
    "fact.diagnosis.acute": ("{diagnosis}",),
    "fact.diagnosis.recurrent": ("{diagnosis}",),
    "fact.test": ("{test}", "{finding}"),
    "fact.medication.start": ("{drug}", "{dose} {unit}", "{frequency}"),
    "fact.medication.increase": ("{drug}", "{dose} {unit}", "{previous_dose}", "{frequency}"),
    "fact.medication.decrease": ("{drug}", "{dose} {unit}", "{previous_dose}", "{frequency}"),
    "fact.medication.stop": ("{drug}",),
    "fact.medication.continue": ("{drug}", "{dose} {unit}", "{frequency}"),
    "fact.medication.repeat": ("{drug}", "{dose} {unit}", "{frequency}"),
    "fact.medication.start_course": ("{drug}", "{dose} {unit}", "{frequency}", "{days}"),
    "fact.medication.start_course.as_needed": ("{drug}", "{dose} {unit}", "{frequency}", "{days}"),
    "fact.medication.long_term": ("{drug}", "{dose} {unit}", "{frequency}", "{condition}"),
    "fact.medication.administer": ("{drug}", "{dose} {unit}"),
    "fact.medication.correct": ("{drug}", "{dose} {unit}", "{previous_dose}"),
    "ack.medication.correct": ("{drug}", "{dose} {unit}"),
    "fact.avoided": ("{drug}", "{instead}", "{trap_reason}"),
    "fact.avoided_several": ("{drugs}", "{instead}", "{trap_reason}"),
    "fact.avoided_rule": ("{drug}", "{instead}", "{reason}"),
    "fact.caution": ("{drug}", "{caution}"),
    "fact.caution_given": ("{drug}", "{caution}", "{reason}"),
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
    "fact.advice_safety": ("{advice}",),
    "fact.stressor": ("{text}",),
    "fact.adherence": ("{drug}", "{days}"),
    "fact.refill": ("{drug}",),
    "today": ("{date}",),
    **{f"trap_reason.{category}": ("{detail}",) for category in TRAP_CATEGORIES},
    "trap_reason.medication_history_for": ("{detail}", "{condition}"),
    "reason.adverse_effect_of": ("{cause}",),
    "family.open": ("{relative}", "{condition}"),
    "family.drug": ("{drug}", "{dose} {unit}", "{frequency}"),
    "family.lab": ("{lab}", "{value} {unit}"),
    "family.allergy": ("{agent}", "{reaction}"),
}
"""Exact substrings every variant of an intent must contain outside any choice, so the facts questions rest on are
stated verbatim in every expansion (a value and its unit side by side, the drug's name, the dose before and after)."""

WORD_TABLES = ("frequency", "status", "reason", "toxicity", "release", "joiner", "form", "next", "interval",
               "relation", "pronoun", "pronoun_obj", "pronoun_pos", "month", "weekday", "date", "in_days", "address",
               "lay_articles", "place", "aid_beside")
"""Word tables a template file holds besides its phrasings (`words.frequency.once_daily`, ...); how a unit is said
is the knowledge base's (units.yaml), shared with the findings the simulator fills."""
EXPANDABLE_WORDS = ("status", "reason", "next", "place", "aid_beside")
"""Word tables whose entries may hold `[a|b]` choices (none of them reaches a gold answer: frequencies, which do,
stay fixed)."""


class Templates:
    """The phrasings of one language, parsed."""

    def __init__(self, language: str, raw: dict[str, list[str]], parsed: dict[str, list[tuple]],
                 grammar: Grammar, words: dict[str, dict[str, str]]) -> None:
        self.language = language
        self.raw, self.parsed, self.grammar, self.words = raw, parsed, grammar, words
        self.parsed_words = {table: {key: parse(value) for key, value in words.get(table, {}).items()}
                             for table in EXPANDABLE_WORDS}
        self._kept: dict[tuple[str, re.Pattern[str]], list[int]] = {}
        """(key, avoid) -> the variants `avoid` leaves: read once, not at every realisation (a year renders ~10,000)."""

    def variants(self, key: str) -> list[str]:
        """All phrasings of an intent or act, as written."""
        return self.raw[key]

    def realize(self, key: str, rng: random.Random, slots: dict[str, str],
                used: set[tuple[str, int]] | None = None, avoid: re.Pattern[str] | None = None) -> str:
        """One phrasing of an intent or act, drawn with `rng` and filled with `slots` (a fragment, said inside
        another sentence, keeps its lower-case start). `used` holds the variants a session has said: a variant
        is not drawn twice while another is left (and the one drawn is added). `avoid`: variants whose text, as
        written, it matches are not drawn while another is left (what is untrue of this patient: work talk for
        a retired one, needles for one who faints at them)."""
        variants = self.parsed[key]
        indices = range(len(variants))
        if avoid is not None:
            if (key, avoid) not in self._kept:
                self._kept[key, avoid] = [i for i in indices if not avoid.search(self.raw[key][i])] or list(indices)
            indices = self._kept[key, avoid]
        if used is not None:
            indices = [i for i in indices if (key, i) not in used] or list(indices)
        index = rng.choice(indices)
        if used is not None:
            used.add((key, index))
        text = self.grammar.expand(variants[index], rng, used=used)
        if slots.get("unit") == "":  # (a bare number: "INR 2.6", not "2.6 ratio" nor "2.6 ,")
            text = text.replace(" {unit}", "").replace("{unit}", "")
        if key.startswith(FRAGMENTS):
            return fill(text, slots).strip()
        return finish(fill(tidy(text, self.language), slots), self.language)

    def lay(self, phrase: str) -> str:
        """A patient's name for something without its leading article or "my" (`words.lay_articles`)."""
        for article in self.words.get("lay_articles", {}).values():
            if phrase.lower().startswith(article):
                return phrase[len(article):]
        return phrase

    def word(self, table: str, key: str, rng: random.Random | None = None) -> str:
        """A word-table entry; falls back to the key with underscores as spaces. Entries of `EXPANDABLE_WORDS`
        may hold choices: drawn with `rng`, or the first of each without one."""
        parsed = self.parsed_words.get(table, {}).get(key)
        if parsed is not None:
            return self.grammar.expand(parsed, rng) if rng is not None else self.grammar.first(parsed)
        return self.words.get(table, {}).get(key, key.replace("_", " "))

    def unit(self, unit: str) -> str:
        """How a unit of the knowledge base is said in this language ("" for a bare number): the knowledge base's
        units.yaml, which the findings the simulator fills read too, so a value reads the same wherever it is said."""
        words = unit_words().get(unit)
        said = getattr(words, self.language, None) if words is not None else None
        return unit if said is None else said

    def joined(self, parts: list[str]) -> str:
        """Utterances of one turn, one after the other (a space between them, none in Chinese)."""
        return self.word("joiner", "space").join(p for p in parts if p)


def _parse_section(path: Path, section: str, entries: dict, declared: dict[str, set[str] | frozenset[str]],
                   minimum: int, problems: list[str]) -> dict[str, list[tuple]]:
    parsed: dict[str, list[tuple]] = {}
    for key in declared:
        variants = entries.get(key)
        if not isinstance(variants, list) or not variants or not all(isinstance(v, str) and v for v in variants):
            problems.append(f"{path}: {section}.{key}: missing or not a list of strings")
            continue
        if len(variants) < minimum:
            problems.append(f"{path}: {section}.{key}: {len(variants)} variants, need at least {minimum}")
        parsed[key] = []
        for index, variant in enumerate(variants):
            try:
                parsed[key].append(parse(variant))
            except GrammarSyntaxError as exc:
                problems.append(f"{path}: {section}.{key}[{index}]: {exc}")
    for key in sorted(set(entries) - set(declared)):
        problems.append(f"{path}: {section}.{key}: unknown {section[:-1]}")
    return parsed


def parse_templates(path: Path, raw: object) -> Templates:
    """Validate a template document.

    Raises:
        InputError: listing every problem (missing, unknown or short entries, bad syntax, slots an entry may not
            use, required substrings not said in every expansion, missing or unused sub-phrases, word tables).
    """
    if not isinstance(raw, dict) or not isinstance(raw.get("intents"), dict) or not isinstance(raw.get("acts"), dict):
        raise InputError(f"{path}: expected a mapping with 'intents', 'acts', 'grammar' and 'words'")
    intents, acts, words = raw["intents"], raw["acts"], raw.get("words") or {}
    rules_raw = raw.get("grammar") or {}
    problems: list[str] = []
    parsed = _parse_section(path, "intents", intents, PLACEHOLDERS, MIN_VARIANTS, problems)
    act_slots = {key: slots | SESSION_SLOTS for key, slots in ACTS.items()} | {
        key: slots | (FAMILY_SLOTS if key.startswith("family.") else HEALTH_SLOTS) for key, slots in NOISE_ACTS.items()}
    parsed |= _parse_section(path, "acts", acts, act_slots, MIN_ACT_VARIANTS, problems)
    grammar = Grammar()
    for name, variants in rules_raw.items():
        if not isinstance(variants, list) or not variants or not all(isinstance(v, str) for v in variants):
            problems.append(f"{path}: grammar.{name}: expected a list of strings")
            continue
        try:
            grammar.rules[name] = [parse(v) for v in variants]
        except GrammarSyntaxError as exc:
            problems.append(f"{path}: grammar.{name}: {exc}")
    allowed = {**PLACEHOLDERS, **act_slots}
    used: set[str] = set()
    for key, variants in parsed.items():
        section = "intents" if key in PLACEHOLDERS else "acts"
        for index, seq in enumerate(variants):
            where = f"{path}: {section}.{key}[{index}]"
            unknown = sorted(grammar.reachable_slots(seq) - set(allowed[key]))
            if unknown:
                problems.append(f"{where}: unknown slot(s) {unknown}; allowed: {sorted(allowed[key])}")
            missing_refs = sorted(r for r in _all_refs(grammar, seq) if r not in grammar.rules)
            if missing_refs:
                problems.append(f"{where}: no grammar entry {missing_refs}")
            missing = [part for part in REQUIRED.get(key, ()) if part not in top_level_text(seq)]
            if missing:
                problems.append(f"{where}: must contain {missing} outside any [..|..] choice")
            grammar.reachable_refs(seq, used)
    for name in sorted(set(grammar.rules) - used):
        problems.append(f"{path}: grammar.{name}: never used")
    for table in WORD_TABLES:
        if not isinstance(words.get(table), dict):
            problems.append(f"{path}: words.{table}: missing word table")
    for table in EXPANDABLE_WORDS:
        for key, value in (words.get(table) or {}).items():
            try:
                seq = parse(str(value))
            except GrammarSyntaxError as exc:
                problems.append(f"{path}: words.{table}.{key}: {exc}")
                continue
            if refs_of(seq) or slots_of(seq):
                problems.append(f"{path}: words.{table}.{key}: a word may hold [..|..] choices, not <names> or slots")
    for table in sorted(set(words) - set(WORD_TABLES)):
        problems.append(f"{path}: words.{table}: unknown word table")
    if problems:
        raise InputError("invalid templates:\n  " + "\n  ".join(problems))
    raw_variants = {key: list(entries[key]) for entries in (intents, acts) for key in entries}
    return Templates(path.stem, raw_variants, parsed, grammar, words)


def _all_refs(grammar: Grammar, seq: tuple) -> set[str]:
    """Every sub-phrase name an expansion may reach, whether or not it exists."""
    found: set[str] = set()
    todo = [seq]
    while todo:
        for name in refs_of(todo.pop()):
            if name not in found:
                found.add(name)
                todo.extend(grammar.rules.get(name, []))
    return found


@lru_cache(maxsize=8)
def load_templates(language: str = "en", folder: Path = TEMPLATE_DIR) -> Templates:
    """The template set of `language` (a file `<language>.yaml` in `folder`)."""
    path = folder / f"{language}.yaml"
    if not path.exists():
        known = sorted(p.stem for p in folder.glob("*.yaml"))
        raise InputError(f"--language: no templates for '{language}'; available: {', '.join(known)}")
    with path.open(encoding="utf-8") as handle:
        try:
            raw = load_yaml(handle)
        except yaml.YAMLError as exc:
            raise InputError(f"{path}: not valid YAML: {exc}".replace("\n", " ")) from None
    return parse_templates(path, raw)
