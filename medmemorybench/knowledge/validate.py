"""Cross-reference and sanity checks over a loaded knowledge base; every problem is collected."""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

from medmemorybench.knowledge.models import KNOWN_UNITS

if TYPE_CHECKING:
    from medmemorybench.knowledge.base import KnowledgeBase

ICD11_CODE = re.compile(r"^[0-9A-Z]{4}(\.[0-9A-Z]{1,2})?$")
LOINC_CODE = re.compile(r"^\d{1,7}-\d$")
ATC_CODE = re.compile(r"^[A-Z]\d{2}[A-Z]{2}\d{2}$")
ATC_PREFIX = re.compile(r"^[A-Z](\d{2}([A-Z]([A-Z](\d{2})?)?)?)?$")


def _check_range(where: str, name: str, value: tuple[float, float], errors: list[str]) -> bool:
    low, high = value
    if low > high:
        errors.append(f"{where}: {name}: range [{low}, {high}] is not ordered")
        return False
    return True


def _within(where: str, name: str, value: tuple[float, float], bounds: tuple[float, float],
            errors: list[str]) -> None:
    if value[0] < bounds[0] or value[1] > bounds[1]:
        errors.append(f"{where}: {name}: range {list(value)} falls outside plausible {list(bounds)}")


def _check_labs(kb: KnowledgeBase, errors: list[str]) -> None:
    for lab in kb.labs.values():
        where = f"labs.yaml: {lab.key}"
        if lab.loinc is not None and not LOINC_CODE.match(lab.loinc):
            errors.append(f"{where}: loinc: '{lab.loinc}' is not a LOINC code (NNNNN-N)")
        if lab.unit not in KNOWN_UNITS:
            errors.append(f"{where}: unit: unknown unit '{lab.unit}'")
        if _check_range(where, "reference", lab.reference, errors) and _check_range(
            where, "plausible", lab.plausible, errors
        ):
            _within(where, "reference", lab.reference, lab.plausible, errors)


def _check_drugs(kb: KnowledgeBase, errors: list[str]) -> None:
    for key in sorted(set(kb.drugs) & set(kb.classes)):
        errors.append(f"drugs/*.yaml: {key}: the same key names a drug and a drug class")
    for cls in kb.classes.values():
        if cls.atc_prefix is not None and not ATC_PREFIX.match(cls.atc_prefix):
            errors.append(f"drug_classes.yaml: {cls.key}: atc_prefix: '{cls.atc_prefix}' is not an ATC prefix")
    for drug in kb.drugs.values():
        where = f"drugs/*.yaml: {drug.key}"
        if drug.drug_class not in kb.classes:
            errors.append(f"{where}: drug_class: unknown class '{drug.drug_class}'")
        is_device = all(form.form == "device" for form in drug.forms)
        if drug.atc is None and not is_device:
            errors.append(f"{where}: atc: required for a drug that is not a device")
        if drug.atc is not None and not ATC_CODE.match(drug.atc):
            errors.append(f"{where}: atc: '{drug.atc}' is not a 7-character ATC code")
        if drug.dose.unit not in KNOWN_UNITS:
            errors.append(f"{where}: dose.unit: unknown unit '{drug.dose.unit}'")
        for effect in drug.adverse_effects:
            if effect.lab is not None and effect.lab not in kb.labs:
                errors.append(f"{where}: adverse_effects.{effect.key}.lab: unknown lab '{effect.lab}'")
            if (effect.lab is None) != (effect.lab_delta is None):
                errors.append(f"{where}: adverse_effects.{effect.key}: lab and lab_delta go together")


def _check_refs(where: str, field: str, refs: list[str], kb: KnowledgeBase, errors: list[str]) -> None:
    for ref in refs:
        if ref not in kb.drugs and ref not in kb.classes:
            errors.append(f"{where}: {field}: '{ref}' is neither a drug nor a drug class")


def _check_safety_rules(kb: KnowledgeBase, errors: list[str]) -> None:
    for group in kb.allergy_groups.values():
        where = f"allergies.yaml: {group.key}"
        _check_refs(where, "classes", group.classes, kb, errors)
        _check_refs(where, "drugs", group.drugs, kb, errors)
        if not group.classes and not group.drugs:
            errors.append(f"{where}: names no drug or class, so it can never conflict with care")
    for index, rule in enumerate(kb.contraindications):
        where = f"history.yaml: contraindications[{index}]"
        if rule.history not in kb.history_conditions:
            errors.append(f"{where}: history: unknown history condition '{rule.history}'")
        _check_refs(where, "classes", rule.classes, kb, errors)
        _check_refs(where, "drugs", rule.drugs, kb, errors)
    for hist in kb.history_conditions.values():
        if not ICD11_CODE.match(hist.icd11):
            errors.append(f"history.yaml: {hist.key}: icd11: '{hist.icd11}' is not an ICD-11 code")
    for index, rule in enumerate(kb.interactions):
        where = f"interactions.yaml: interactions[{index}]"
        _check_refs(where, "a", rule.a, kb, errors)
        _check_refs(where, "b", rule.b, kb, errors)
    for habit in kb.habits.values():
        where = f"diet.yaml: habits.{habit.key}"
        _check_refs(where, "conflicts_with", habit.conflicts_with, kb, errors)
        for advice in habit.undermines_advice:
            if advice not in kb.advice:
                errors.append(f"{where}: undermines_advice: unknown advice '{advice}'")
    for profile in kb.economic_profiles.values():
        where = f"preferences.yaml: economic_profiles.{profile.key}"
        _check_range(where, "monthly_budget_usd", profile.monthly_budget_usd, errors)
        if "{budget}" not in profile.text.en or "{budget}" not in profile.text.zh:
            errors.append(f"{where}: text: must contain '{{budget}}' in every language")
    for relative in kb.relatives.values():
        for key in relative.typical_conditions:
            if key not in kb.conditions and key not in kb.history_conditions:
                errors.append(f"relatives.yaml: {relative.relation}: typical_conditions: unknown '{key}'")


def _check_condition(kb: KnowledgeBase, data_dir: Path, errors: list[str]) -> None:
    rosters: dict[int, str] = {}
    for cond in kb.conditions.values():
        where = f"{data_dir / 'conditions' / (cond.key + '.yaml')}"
        if cond.roster in rosters:
            errors.append(f"{where}: roster: {cond.roster} is also used by '{rosters[cond.roster]}'")
        rosters[cond.roster] = cond.key
        if not ICD11_CODE.match(cond.icd11.code) or cond.icd11.system != "ICD-11":
            errors.append(f"{where}: icd11.code: '{cond.icd11.code}' is not an ICD-11 code")
        _check_range(where, "age", cond.age, errors)
        for mis in cond.misdiagnoses:
            if not ICD11_CODE.match(mis.icd11):
                errors.append(f"{where}: misdiagnoses.icd11: '{mis.icd11}' is not an ICD-11 code")
            if mis.drug is not None and mis.drug not in kb.drugs:
                errors.append(f"{where}: misdiagnoses.drug: unknown drug '{mis.drug}'")
        for test in cond.diagnostic_tests:
            if test.loinc is not None and not LOINC_CODE.match(test.loinc):
                errors.append(f"{where}: diagnostic_tests.{test.key}.loinc: '{test.loinc}' is not LOINC")
        monitored = set()
        for mon in cond.monitored:
            lab = kb.labs.get(mon.lab)
            if lab is None:
                errors.append(f"{where}: monitored.lab: unknown lab '{mon.lab}'")
                continue
            monitored.add(mon.lab)
            for name in ("onset", "untreated", "treated"):
                value = getattr(mon, name)
                if _check_range(where, f"monitored.{mon.lab}.{name}", value, errors):
                    _within(where, f"monitored.{mon.lab}.{name}", value, lab.plausible, errors)
        if len(monitored) < 4:
            errors.append(f"{where}: monitored: needs at least 4 distinct labs/vitals, has {len(monitored)}")
        steps = {}
        for step in cond.care_path:
            if step.key in steps:
                errors.append(f"{where}: care_path: duplicate step key '{step.key}'")
            steps[step.key] = step
            for drug in step.candidates:
                if drug not in kb.drugs:
                    errors.append(f"{where}: care_path.{step.key}.candidates: unknown drug '{drug}'")
        for comp in cond.complications:
            if comp.lab not in monitored:
                errors.append(f"{where}: complications.{comp.key}.lab: '{comp.lab}' is not monitored")
            if comp.treatment not in steps:
                errors.append(f"{where}: complications.{comp.key}.treatment: unknown care step")
            if not ICD11_CODE.match(comp.icd11):
                errors.append(f"{where}: complications.{comp.key}.icd11: '{comp.icd11}' is not ICD-11")
        for advice in cond.lifestyle_advice:
            if advice not in kb.advice:
                errors.append(f"{where}: lifestyle_advice: unknown advice '{advice}'")


def check_references(kb: KnowledgeBase, data_dir: Path) -> list[str]:
    """Every reference resolves, codes are well formed, units known, ranges sane.

    Returns:
        One message per problem, naming the file and field; empty when the base is consistent.
    """
    errors: list[str] = []
    _check_labs(kb, errors)
    _check_drugs(kb, errors)
    _check_safety_rules(kb, errors)
    _check_condition(kb, data_dir, errors)
    return errors
