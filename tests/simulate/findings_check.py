"""Independent readings of the findings a year states, as a physician reads them (the physician review of issue 26/27):
the number beside a lab's name in a finding is the number the visit measured, no range is stated as a result, every
placeholder is filled, and a clinical score agrees with the patient.

These read the finding *text* and the visit's `LabFact`s, never the engine's templates or state: a knowledge-base
finding fixed as "AHI 30-55 events/h" or "calprotectin above 800 µg/g" fails them however it came about.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import date
from typing import NamedTuple

from medmemorybench.knowledge.base import KnowledgeBase
from medmemorybench.knowledge.models import Score, ScoreCriterion
from medmemorybench.simulate.models import CareYear, ComplicationFact, Event, LabFact, SymptomFact, TestFact

LANGUAGES = ("en", "zh")

SHORT_NAMES: dict[str, tuple[str, ...]] = {
    # lab -> how a finding may name it besides its own name (regular expressions), English and Chinese
    "hba1c": ("HbA1c",),
    "fasting_glucose": (r"fasting (?:plasma )?glucose", "空腹血糖"),
    "c_peptide": ("C-peptide", "C肽"),
    "gada": (r"GAD(?:65)? antibod", "GAD抗体"),
    "fasting_insulin": ("fasting insulin", "空腹胰岛素"),
    "homa_ir": ("HOMA-IR",),
    "systolic_bp": ("systolic blood pressure", r"(?<!肺动脉)收缩压"),
    "diastolic_bp": ("diastolic blood pressure", "舒张压"),
    "heart_rate": ("heart rate", "ventricular rate", "心率", "心室率"),
    "respiratory_rate": ("respiratory rate", "呼吸频率"),
    "body_temperature": ("temperature", "体温"),
    "spo2": ("oxygen saturation", "SpO2", "血氧饱和度"),
    "nadir_spo2": ("oxygen nadir", "最低血氧"),
    "egfr": ("eGFR",),
    "uacr": ("UACR", "albumin-to-creatinine ratio", "尿白蛋白/肌酐比值"),
    "urine_protein_creatinine": ("UPCR", "尿蛋白/肌酐比值"),
    "creatinine": (r"(?<![-/])creatinine", "血肌酐"),
    "potassium": ("potassium", "血钾"),
    "total_kidney_volume": ("total kidney volume", "总肾体积"),
    "nt_probnp": ("NT-proBNP",),
    "lvef": ("LVEF",),
    "e_e_prime_ratio": ("E/e'",),
    "fev1_percent": (r"FEV1(?!/)",),
    "fev1_fvc": ("FEV1/FVC",),
    "blood_eosinophils": ("eosinophil", "嗜酸性粒细胞"),
    "ahi": ("AHI", "apnoea-hypopnoea index"),
    "epworth_score": ("Epworth",),
    "updrs_motor": ("UPDRS",),
    "mmse": ("MMSE",),
    "moca": ("MoCA",),
    "phq9": ("PHQ-9",),
    "gad7": ("GAD-7",),
    "crp": (r"(?<![A-Za-z])CRP(?![A-Za-z])",),
    "anti_ccp": ("anti-CCP", "抗CCP"),
    "rheumatoid_factor": ("rheumatoid factor", "类风湿因子"),
    "complement_c3": (r"(?<![A-Za-z0-9])C3(?![0-9])",),
    "complement_c4": (r"(?<![A-Za-z0-9])C4(?![0-9])",),
    "anti_dsdna": ("anti-dsDNA", "抗双链DNA"),
    "alt": (r"(?<![A-Za-z])ALT(?![A-Za-z])",),
    "ast": (r"(?<![A-Za-z])AST(?![A-Za-z])",),
    "cap_score": (r"(?<![A-Za-z])CAP(?![A-Za-z])", "受控衰减参数"),
    "liver_stiffness": ("liver stiffness", "肝硬度"),
    "fecal_calprotectin": ("calprotectin", "钙卫蛋白"),
    "mayo_score": ("Mayo score", "Mayo评分"),
    "bmd_t_score_lumbar": ("lumbar spine T-score", "腰椎T值"),
    "bmd_t_score_hip": ("hip T-score", "髋部T值"),
    "ctx": (r"(?<![A-Za-z])CTX(?![A-Za-z])",),
    "vitamin_d": ("vitamin D", "维生素D"),
    "serum_calcium": ("calcium", "血钙"),
    "tsh": (r"(?<![A-Za-z])TSH(?![A-Za-z-])",),
    "free_t4": ("free T4", "游离T4"),
    "free_t3": ("free T3", "游离T3"),
    "trab": ("TRAb",),
    "total_testosterone": ("total testosterone", "总睾酮"),
    "shbg": ("SHBG",),
}
"""The short names a finding uses for a lab; a lab's own name (and the abbreviation in its brackets) always counts."""

NUMBER = re.compile(r"(?<![A-Za-z0-9.\-/'])-?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?![A-Za-z0-9]|-[^\d\s])")
"""A number standing on its own: not part of a name ("PHQ-9", "GAD65", "17-OHP", "12-lead", "4AT")."""
RANGE_AFTER = re.compile(r"^\s*%?\s*(?:-|–|~|至|to)\s*\d")
RANGE_BEFORE = re.compile(r"\d\s*%?\s*(?:-|–|~|至|to)\s*$")
SEPARATORS = ",;，；。()（）"
REACH = 40
"""How far after a lab's name its value may be ("Epworth Sleepiness Scale: score 13")."""
COMPARATORS = (
    (">=", ("at least", "≥", "不低于", "至少")),
    ("<=", ("at most", "≤", "不超过")),
    (">", ("above", "over", "more than", "greater than", ">", "高于", "大于", "超过")),
    ("<", ("below", "under", "less than", "<", "低于", "小于", "不足")),
)
"""A number after one of these is a threshold the value must pass, not the value itself."""
SHARED = {"", "%", "points", "分", "score", "ratio"}
"""Units said of too many things to tie a number to one lab by its unit alone."""
SCORE_WORDS = ("score", "total", "评分", "总分")
"""Words before a range of points that make it a score's range ("score 13-19")."""


OWN_NAMES_AMBIGUOUS = {"systolic_bp"}
"""Labs whose own name is part of another quantity's ("收缩压" in "肺动脉收缩压", a pulmonary pressure): only their
short names above count."""


def _names(kb: KnowledgeBase, lab: str) -> list[re.Pattern]:
    cached = kb.memo.get(("tests/finding_names", lab))
    if cached is not None:
        return cached
    spec = kb.labs[lab]
    names = list(SHORT_NAMES.get(lab, ()))
    if lab not in OWN_NAMES_AMBIGUOUS:
        names += [re.escape(spec.name.en), re.escape(spec.name.zh)]
        names += [re.escape(inner) for inner in re.findall(r"[(（]([^)）]+)[)）]", spec.name.en + spec.name.zh)]
    kb.memo[("tests/finding_names", lab)] = compiled = [re.compile(name) for name in names]
    return compiled


def _unique_units(kb: KnowledgeBase) -> dict[str, str]:
    """Said unit -> the one lab measured in it (a number beside it can only be that lab)."""
    if "tests/finding_units" in kb.memo:
        return kb.memo["tests/finding_units"]
    owners: dict[str, set[str]] = {}
    for key, lab in kb.labs.items():
        for language in LANGUAGES:
            owners.setdefault(kb.say_unit(lab.unit, language), set()).add(key)
    unique = {unit: next(iter(labs)) for unit, labs in owners.items() if len(labs) == 1 and unit not in SHARED}
    kb.memo["tests/finding_units"] = unique
    return unique


def _comparator(before: str) -> str | None:
    tail = before[-14:].lower()
    for sign, words in COMPARATORS:
        if any(word in tail for word in words):
            return sign
    return None


def _as_number(text: str) -> float:
    return float(text.replace(",", ""))


def _passes(value: float, sign: str, bound: float) -> bool:
    return {">": value > bound, "<": value < bound, ">=": value >= bound, "<=": value <= bound}[sign]


class Stated(NamedTuple):
    """A number a finding text ties to a lab."""

    lab: str
    words: str
    """The words around it."""
    number: float | None
    """The number (None: a range)."""
    comparator: str | None
    """'>', '<', '>=', '<=' when the number is a threshold ("above 800 µg/g"); None for a value."""
    by_name: bool
    """Tied by the lab's name (else only by a unit no other lab has)."""


def _mentions(kb: KnowledgeBase, text: str) -> list[tuple[int, int, str]]:
    """(start, end, lab) of every lab name in the text; of names that overlap, the longest."""
    found = sorted(((m.start(), m.end(), lab) for lab in kb.labs for pattern in _names(kb, lab)
                    for m in pattern.finditer(text)), key=lambda m: (m[0], -m[1]))
    kept: list[tuple[int, int, str]] = []
    for mention in found:
        if kept and mention[0] < kept[-1][1]:
            continue
        kept.append(mention)
    return kept


def _unit_fits(kb: KnowledgeBase, lab: str, after: str) -> bool:
    """Whether the unit after a number (if it has one a lab is measured in) is this lab's ("by 41%" after "UPDRS"
    is no motor score)."""
    if "tests/all_units" not in kb.memo:
        said = {kb.say_unit(spec.unit, language) for spec in kb.labs.values() for language in LANGUAGES}
        kb.memo["tests/all_units"] = sorted(said - {""}, key=len, reverse=True)
    after = after.lstrip()
    unit = next((u for u in kb.memo["tests/all_units"] if after.startswith(u)), None)
    return unit is None or unit in {kb.say_unit(kb.labs[lab].unit, language) for language in LANGUAGES}


def stated_values(kb: KnowledgeBase, text: str, since: int = 0) -> Iterator[Stated]:
    """The numbers a text ties to labs (from `since` on: what comes before only names them): the first number after
    a lab's name in the same clause (a number belongs to the nearest name before it), and every number beside a
    unit only one lab is measured in."""
    mentions = _mentions(kb, text)
    units = _unique_units(kb)
    previous_end = 0
    for number in NUMBER.finditer(text, since):
        start, end = number.span()
        lab, by_name = None, False
        before = [m for m in mentions if m[1] <= start]
        if before:
            _, name_end, name_lab = before[-1]
            gap = text[name_end:start]
            if len(gap) <= REACH and not any(c in gap for c in SEPARATORS) and name_end >= previous_end \
                    and _unit_fits(kb, name_lab, text[end:]):
                lab, by_name = name_lab, True
        if lab is None:
            after = text[end:].lstrip()
            lab = next((owner for unit, owner in units.items()
                        if after.startswith(unit) and not re.match(r"[A-Za-z/]", after[len(unit):len(unit) + 1])),
                       None)
        previous_end = end
        if lab is None:
            continue
        words = text[max(0, start - 20):end + 12]
        if RANGE_AFTER.match(text[end:]) or RANGE_BEFORE.search(text[:start]):
            yield Stated(lab, words, None, None, by_name)
        else:
            yield Stated(lab, words, _as_number(text[start:end]), _comparator(text[:start]), by_name)


def stated_ranges(kb: KnowledgeBase, text: str) -> list[str]:
    """Every range a finding text states beside a lab's unit or a score's words ("score 13-19", "72%-82%"), whichever
    lab it is of: a textbook range, never a patient's result."""
    units = sorted({kb.say_unit(lab.unit, language) for lab in kb.labs.values() for language in LANGUAGES} - {""},
                   key=len, reverse=True)
    out = []
    for match in re.finditer(r"(?<![A-Za-z0-9.])\d+(?:\.\d+)?\s*%?\s*(?:-|–|~|至|to)\s*\d+(?:\.\d+)?(?![A-Za-z0-9.])",
                             text):
        after = text[match.end():].lstrip()
        before = text[max(0, match.start() - 8):match.start()].lower()
        if any(after.startswith(unit) for unit in units) or any(word in before for word in SCORE_WORDS):
            out.append(match.group(0))
    return out


def findings_of(event: Event) -> Iterator[tuple[str, object]]:
    """(what it is, the finding) of every finding an event states."""
    for fact in event.facts:
        if isinstance(fact, TestFact):
            yield f"test {fact.test}", fact.finding
        elif isinstance(fact, ComplicationFact) and fact.finding is not None:
            yield f"complication {fact.complication}", fact.finding


def _read(event: Event, what: str, finding: object, language: str) -> tuple[str, int]:
    """A finding as a session says it, after the test's name ("Epworth Sleepiness Scale — a score of 18"), and where
    the finding itself begins."""
    test = next((f for f in event.facts if isinstance(f, TestFact) and what == f"test {f.test}"), None)
    name = f"{getattr(test.name, language)} — " if test is not None else ""
    return name + getattr(finding, language), len(name)


def finding_value_violations(kb: KnowledgeBase, year: CareYear) -> list[str]:
    """Every finding that states a range of a lab, or a value (or a threshold the value fails) of a lab other than
    the one its own visit measured (a lab not measured there: the latest value on record)."""
    out: list[str] = []
    latest: dict[str, float] = {}
    for event in year.events:
        measured = {f.lab: f.value for f in event.facts if isinstance(f, LabFact)}
        for what, finding in findings_of(event):
            for language in LANGUAGES:
                text, since = _read(event, what, finding, language)
                out += [f"{event.event_id} {what} ({language}): states the range '{stated}' as the patient's result"
                        for stated in stated_ranges(kb, getattr(finding, language))]
                for lab, words, number, sign, by_name in stated_values(kb, text, since):
                    value = measured.get(lab, latest.get(lab))
                    if number is None:
                        out.append(f"{event.event_id} {what} ({language}): states a range of {lab} "
                                   f"('{words}') as the patient's result")
                    elif value is None:  # (a number in mL beside no lab's name is not a kidney volume)
                        if sign is None and by_name:
                            out.append(f"{event.event_id} {what} ({language}): states {lab} {number} "
                                       f"('{words}'), never measured")
                    elif sign is not None:
                        if not _passes(value, sign, number):
                            out.append(f"{event.event_id} {what} ({language}): {lab} {value} is not {sign} "
                                       f"{number} ('{words}')")
                    elif abs(number - value) > 1e-9:
                        out.append(f"{event.event_id} {what} ({language}): states {lab} {number} ('{words}') "
                                   f"where the record has {value}")
        latest |= measured
    return out


def unfilled_violations(year: CareYear) -> list[str]:
    """Every finding of the record that still holds a brace (an unfilled placeholder)."""
    return [f"{event.event_id} {what} ({language}): '{getattr(finding, language)}'"
            for event in year.events for what, finding in findings_of(event) for language in LANGUAGES
            if "{" in getattr(finding, language) or "}" in getattr(finding, language)]


def _met(criterion: ScoreCriterion, labs: dict[str, float], age: int, told: set[str], days: int | None) -> bool:
    """One item of a score, read from the record (a second reading, apart from the engine's)."""
    if criterion.lab is not None:
        if criterion.lab not in labs:
            return False
        value = labs[criterion.lab]
        bound = next(b for b in (criterion.at_least, criterion.above, criterion.at_most, criterion.below)
                     if b is not None)
        return (value >= bound if criterion.at_least is not None else value > bound if criterion.above is not None
                else value <= bound if criterion.at_most is not None else value < bound)
    if criterion.any:
        return any(_met(c, labs, age, told, days) for c in criterion.any)
    if criterion.age_at_least is not None:
        return age >= criterion.age_at_least
    if criterion.symptom is not None:
        return criterion.symptom in told
    if criterion.onset_within_days is not None:
        return days is not None and days <= criterion.onset_within_days
    return True  # a sign the finding states


def expected_score(score: Score, labs: dict[str, float], age: int, told: set[str], days: int | None) -> int:
    return sum(_met(c, labs, age, told, days) for c in score.criteria)


def _episode(year: CareYear, event: Event, illness: str) -> tuple[set[str], int | None]:
    """The symptoms told at the visit an illness began, and the days since (read from the record)."""
    prefix = f"{illness}."
    for other in year.events:
        if other.event_id in event.triggered_by:
            told = {f.symptom.removeprefix(prefix) for f in other.facts
                    if isinstance(f, SymptomFact) and f.symptom.startswith(prefix)}
            if told:
                return told, (date.fromisoformat(event.date) - date.fromisoformat(other.date)).days
    return set(), None


def score_violations(kb: KnowledgeBase, year: CareYear) -> list[str]:
    """Every score a finding states (CRB-65, FeverPAIN) that disagrees with the patient's age, the vital signs taken at
    the visit and the episode's symptoms; a score stated without its vital signs measured is one too."""
    out: list[str] = []
    record: dict[str, float] = {}
    condition = kb.conditions[year.persona.condition]
    kept = {m.lab for m in condition.monitored if m.diagnostic}  # (not measured before the work-up)
    work_up = next((e.index for e in year.events if e.kind == "diagnostic_test"), len(year.events) + 1)
    for event in year.events:
        labs = {f.lab: f.value for f in event.facts if isinstance(f, LabFact)}
        record |= labs
        for what, finding in findings_of(event):
            illness = what.removeprefix("test illness:").partition(":")[0] if what.startswith("test illness:") else ""
            told, days = _episode(year, event, illness) if illness else (set(), None)
            for score in kb.scores.values():
                for language in LANGUAGES:
                    name = getattr(score.name, language)
                    pattern = re.escape(name).replace("\\-", "-?") + r"[^0-9]{0,12}?(\d+)"  # (CRB-65 or CRB65)
                    for match in re.finditer(pattern, getattr(finding, language)):
                        missing = [lab for lab in score.labs if lab not in labs]
                        if [lab for lab in missing if lab not in kept or event.index > work_up]:
                            out.append(f"{event.event_id} {what}: {name} stated without {missing} measured")
                            continue
                        known = {lab: record[lab] for lab in missing if lab in record} | labs
                        expected = expected_score(score, known, year.persona.age, told, days)
                        if int(match.group(1)) != expected:
                            out.append(f"{event.event_id} {what} ({language}): {name} {match.group(1)} for a patient "
                                       f"aged {year.persona.age} with {labs}: it is {expected}")
    return out
