"""Units however an answer spells them, each with a kind and a factor, so values compare as values: "97 percent" is
"97 %", "85 beats per minute" is "85 bpm", "0.5 g" is "500 mg", "$60" and "60 dollars" are "60 USD", "毫摩尔/升" is
"mmol/L". A unit of a kind that a natural answer may leave unsaid (a score, a ratio, a count) lets a bare number stand
for it ("a PHQ-9 of 10").

Every unit the knowledge base gives a lab or a dose is here (`tests/scoring/test_units.py` checks it); kinds with no
conversion between them (mmol/L and mg/dL) never compare equal.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache


@dataclass(frozen=True)
class Unit:
    """A unit an answer may state."""

    key: str
    """Canonical spelling ("mmol/L")."""
    kind: str
    """What it measures; two units compare only within a kind ("mass", "percent", "rate")."""
    factor: float = 1.0
    """Size in the kind's base unit (mg in grams: 0.001)."""
    bare_ok: bool = False
    """A correct answer may give the number alone ("a score of 10", "a ratio of 2.6")."""


# (unit, spellings after normalization: lower case, NFKC; regular-expression fragments)
_TABLE: tuple[tuple[Unit, tuple[str, ...]], ...] = (
    (Unit("mcg", "mass", 1e-6), (r"mcg", r"µg", r"μg", r"ug", r"micrograms?", r"微克")),
    (Unit("mg", "mass", 1e-3), (r"mg", r"mgs", r"milligrams?", r"milligrammes?", r"毫克")),
    (Unit("g", "mass", 1.0), (r"g", r"grams?", r"grammes?", r"克")),
    (Unit("kg", "body_mass", 1.0), (r"kg", r"kgs", r"kilograms?", r"kilos?", r"公斤", r"千克")),
    (Unit("jin", "body_mass", 0.5), (r"斤",)),
    (Unit("mL", "volume", 1e-3), (r"ml", r"millilit(?:re|er)s?", r"毫升")),
    (Unit("mmol/L", "conc_mmol", 1.0), (r"mmol\s*/\s*l", r"mmol\s*(?:per|a)\s*lit(?:re|er)", r"millimol(?:e|es)?"
                                         r"\s*(?:/|per|a)\s*(?:l|lit(?:re|er))", r"毫摩尔\s*(?:/|每)\s*升",
                                         r"mmol\s*/\s*升")),
    (Unit("µmol/L", "conc_mmol", 1e-3), (r"[µμu]mol\s*/\s*l", r"micromol(?:e|es)?\s*(?:/|per|a)\s*(?:l|lit(?:re|er))",
                                         r"微摩尔\s*(?:/|每)\s*升")),
    (Unit("nmol/L", "conc_mmol", 1e-6), (r"nmol\s*/\s*l", r"nanomol(?:e|es)?\s*(?:/|per|a)\s*(?:l|lit(?:re|er))",
                                         r"纳摩尔\s*(?:/|每)\s*升")),
    (Unit("pmol/L", "conc_mmol", 1e-9), (r"pmol\s*/\s*l", r"picomol(?:e|es)?\s*(?:/|per|a)\s*(?:l|lit(?:re|er))",
                                         r"皮摩尔\s*(?:/|每)\s*升")),
    (Unit("mg/dL", "conc_mg_dl", 1.0), (r"mg\s*/\s*dl", r"milligrams?\s*(?:per|a)\s*decilit(?:re|er)",)),
    (Unit("mg/L", "conc_mass", 1e-3), (r"mg\s*/\s*l", r"milligrams?\s*(?:per|a)\s*lit(?:re|er)",
                                       r"毫克\s*(?:/|每)\s*升")),
    (Unit("g/L", "conc_mass", 1.0), (r"g\s*/\s*l", r"grams?\s*(?:per|a)\s*lit(?:re|er)", r"克\s*(?:/|每)\s*升")),
    (Unit("pg/mL", "conc_mass", 1e-9), (r"pg\s*/\s*ml", r"picograms?\s*(?:per|a)\s*millilit(?:re|er)",
                                        r"皮克\s*(?:/|每)\s*毫升")),
    (Unit("ng/mL", "conc_mass", 1e-6), (r"ng\s*/\s*ml", r"nanograms?\s*(?:per|a)\s*millilit(?:re|er)",
                                        r"纳克\s*(?:/|每)\s*毫升")),
    (Unit("µg/g", "ratio_mass", 1e-6), (r"(?:[µμu]g|mcg)\s*/\s*g", r"micrograms?\s*(?:per|a)\s*gram",
                                        r"微克\s*(?:/|每)\s*克")),
    (Unit("mg/g", "ratio_mass", 1e-3), (r"mg\s*/\s*g", r"milligrams?\s*(?:per|a)\s*gram", r"毫克\s*(?:/|每)\s*克")),
    (Unit("mg/mmol", "ratio_molar", 1.0), (r"mg\s*/\s*mmol", r"milligrams?\s*(?:per|a)\s*millimole",
                                           r"毫克\s*(?:/|每)\s*毫摩尔")),
    (Unit("mIU/L", "activity_l", 1e-3), (r"m[iu]u\s*/\s*l", r"miu\s*/\s*l", r"mu\s*/\s*l",
                                         r"milli(?:-?international)?\s*units?\s*(?:per|a)\s*lit(?:re|er)",
                                         r"毫(?:国际)?单位\s*(?:/|每)\s*升")),
    (Unit("U/L", "activity_l", 1.0), (r"i?u\s*/\s*l", r"(?:international\s+)?units?\s*(?:per|a)\s*lit(?:re|er)",
                                      r"(?:国际)?单位\s*(?:/|每)\s*升")),
    (Unit("IU/mL", "activity_ml", 1.0), (r"i?u\s*/\s*ml",
                                         r"(?:international\s+)?units?\s*(?:per|a)\s*millilit(?:re|er)",
                                         r"(?:国际)?单位\s*(?:/|每)\s*毫升")),
    (Unit("x10^9/L", "count_l", 1.0), (r"x10\^9\s*/\s*l", r"(?:billion|thousand million)\s*(?:cells\s*)?(?:per|a)\s*"
                                       r"lit(?:re|er)")),
    (Unit("%", "percent", 1.0), (r"%", r"percent", r"per\s*cent")),
    (Unit("mmHg", "pressure_hg", 1.0), (r"mm\s*hg", r"millimet(?:re|er)s?\s*of\s*mercury", r"毫米汞柱")),
    (Unit("kPa", "pressure_pa", 1.0), (r"kpa", r"kilopascals?", r"千帕")),
    (Unit("cmH2O", "pressure_water", 1.0), (r"cm\s*h2o", r"cm\s*(?:of\s*)?water", r"centimet(?:re|er)s?\s*of\s*water",
                                            r"厘米水柱")),
    (Unit("/min", "rate", 1.0), (r"bpm", r"beats?\s*(?:per|a|/|every)\s*min(?:ute)?", r"breaths?\s*(?:per|a|/|every)\s*"
                                 r"min(?:ute)?", r"/\s*min(?:ute)?", r"per\s*minute", r"a\s*minute",
                                 r"次\s*(?:/|每)\s*分(?:钟)?")),
    (Unit("/h", "rate_h", 1.0), (r"events?\s*(?:per|an|a|/|every)\s*h(?:ou)?r", r"/\s*h(?:ou)?r?(?=\W|$)",
                                 r"per\s*hour", r"an\s*hour", r"次\s*(?:/|每)\s*小时")),
    (Unit("mL/min/1.73m²", "gfr", 1.0), (r"ml\s*/\s*min(?:ute)?\s*(?:/|per)\s*1\.73\s*m(?:2|²|\^2)",
                                         r"ml\s*/\s*min(?:ute)?", r"millilit(?:re|er)s?\s*(?:per|a)\s*minute"
                                         r"(?:\s*per\s*1\.73\s*(?:square\s*met(?:re|er)s?|m2))?",
                                         r"毫升\s*(?:/|每)\s*分(?:钟)?(?:\s*(?:/|每)\s*1\.73\s*(?:平方米|m2))?")),
    (Unit("kg/m²", "bmi", 1.0, bare_ok=True), (r"kg\s*/\s*m(?:2|²|\^2)",
                                               r"kilograms?\s*(?:per|a)\s*square\s*met(?:re|er)",
                                               r"(?:千克|公斤)\s*(?:/|每)\s*平方米")),
    (Unit("dB/m", "attenuation", 1.0), (r"db\s*/\s*m", r"decibels?\s*(?:per|a)\s*met(?:re|er)",
                                        r"分贝\s*(?:/|每)\s*米")),
    (Unit("mm/h", "esr", 1.0), (r"mm\s*/\s*h(?:ou)?r?", r"millimet(?:re|er)s?\s*(?:per|an|a)\s*hour",
                                r"毫米\s*(?:/|每)\s*小时")),
    (Unit("cm", "length", 1.0), (r"cm", r"centimet(?:re|er)s?", r"厘米")),
    (Unit("ms", "duration_ms", 1.0), (r"ms", r"msecs?", r"millisec(?:ond)?s?", r"毫秒")),
    (Unit("°C", "temperature", 1.0), (r"°\s*c", r"degrees?(?:\s*c(?:elsius)?)?", r"摄氏度", r"度")),
    (Unit("units", "insulin_units", 1.0), (r"units?", r"iu", r"国际单位", r"单位")),
    (Unit("puffs", "puffs", 1.0), (r"puffs?", r"inhalations?", r"喷")),
    (Unit("points", "score", 1.0, bare_ok=True), (r"points?", r"分(?!钟)")),
    (Unit("SD", "sd", 1.0, bare_ok=True), (r"sd", r"standard\s*deviations?", r"个?标准差")),
    (Unit("USD", "money", 1.0), (r"usd", r"dollars?", r"bucks", r"美元", r"美金")),
    (Unit("days", "days", 1.0, bare_ok=True), (r"days?", r"天")),
    (Unit("weeks", "weeks", 1.0), (r"weeks?", r"周", r"星期")),
    (Unit("MBq", "activity_bq", 1.0), (r"mbq", r"megabecquerels?")),
    (Unit("mg/24h", "rate_day", 1.0), (r"mg\s*/\s*24\s*h(?:ours?)?", r"mg\s*(?:per|a)\s*(?:24\s*hours|day)",
                                       r"mg\s*/\s*24\s*小时")),
    (Unit("mcg/h", "rate_hour_mass", 1.0), (r"mcg\s*/\s*h(?:ou)?r?", r"micrograms?\s*(?:per|an)\s*hour",
                                            r"mcg\s*/\s*小时")),
    (Unit("times", "times", 1.0), (r"times", r"次")),
)

DIMENSIONLESS = Unit("", "bare", 1.0, bare_ok=True)
"""A number written without a unit."""

_BY_KEY = {unit.key: unit for unit, _ in _TABLE}
_ALIASES_OF_KB = {"ratio": DIMENSIONLESS, "score": Unit("points", "score", 1.0, bare_ok=True),
                  "bpm": _BY_KEY["/min"], "breaths/min": _BY_KEY["/min"], "events/h": _BY_KEY["/h"],
                  "% predicted": _BY_KEY["%"], "×10⁹/L": _BY_KEY["x10^9/L"], "IU/L": _BY_KEY["U/L"],
                  "U/mL": _BY_KEY["IU/mL"], "application": _BY_KEY["times"], "puff": _BY_KEY["puffs"],
                  "$": _BY_KEY["USD"]}


@lru_cache(maxsize=1)
def _pattern() -> re.Pattern:
    spellings = sorted(((s, unit.key) for unit, forms in _TABLE for s in forms), key=lambda p: -len(p[0]))
    groups = "|".join(f"(?P<u{i}>{s})" for i, (s, _) in enumerate(spellings))
    return re.compile(rf"\s?(?:{groups})(?![a-z0-9])")


@lru_cache(maxsize=1)
def _group_units() -> dict[str, Unit]:
    spellings = sorted(((s, unit.key) for unit, forms in _TABLE for s in forms), key=lambda p: -len(p[0]))
    return {f"u{i}": _BY_KEY[key] for i, (_, key) in enumerate(spellings)}


def unit_at(text: str, position: int) -> tuple[Unit, int] | None:
    """The unit written at `position` (right after a number), with where it ends; None when none is.

    Chinese units need no space and no word boundary before them; English ones may follow one space.
    """
    m = _pattern().match(text, position)
    if m is None or m.lastgroup is None:
        return None
    return _group_units()[m.lastgroup], m.end()


def unit_after() -> re.Pattern:
    """Matches a unit at the start of a text (a number word before it is a number: "sixty dollars")."""
    return _pattern()


def unit_of(spelling: str) -> Unit | None:
    """The unit a knowledge-base unit or a gold string spells ("mmol/L", "×10⁹/L", "bpm", "%"); None if unknown."""
    if spelling in _ALIASES_OF_KB:
        return _ALIASES_OF_KB[spelling]
    if spelling in _BY_KEY:
        return _BY_KEY[spelling]
    text = normalize_unit_text(spelling.lower()).strip()
    found = unit_at(text, 0)
    return found[0] if found and found[1] == len(text) else None


_TIMES_TEN = re.compile(r"\s*[x×*]\s*10\s*(?:\^|\*\*)?\s*9\s*(?=/|\s*per\b|\s*/)|\s*[x×*]\s*109(?=\s*/)")


def normalize_unit_text(text: str) -> str:
    """Write "× 10⁹/L" (NFKC: "× 109/l"), "x 10^9/l", "*10**9/L" one way: "x10^9/l"."""
    return _TIMES_TEN.sub(" x10^9", text)


def same_kind(a: Unit, b: Unit) -> bool:
    return a.kind == b.kind


def in_unit(value: float, unit: Unit, target: Unit) -> float:
    """`value` in `unit`, expressed in `target` (same kind)."""
    return value * unit.factor / target.factor
