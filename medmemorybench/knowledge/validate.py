"""Cross-reference and sanity checks over a loaded knowledge base; every problem is collected."""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from medmemorybench.knowledge.findings import DAYS, KINDS, LANGUAGES, labs_named, placeholders
from medmemorybench.knowledge.models import (
    KNOWN_UNITS,
    SERIOUS_EFFECTS,
    CareStep,
    Condition,
    DrawnValue,
    LabRange,
    Monitored,
    ScoreCriterion,
    Text,
)

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
        _check_part_of(where, lab, kb, errors)
        if lab.population and abs(sum(band.share for band in lab.population) - 1) > 1e-9:
            errors.append(f"{where}: population: the shares do not sum to 1")
        for band in lab.population:
            if _check_range(where, "population", band.range, errors):
                _within(where, "population", band.range, lab.plausible, errors)
        errors += [f"{where}: known_from: unknown history condition '{key}'" for key in lab.known_from
                   if key not in kb.history_conditions]
        if lab.without_drug is not None and not lab.plausible[0] <= lab.without_drug <= lab.plausible[1]:
            errors.append(f"{where}: without_drug: outside the plausible range")
        if lab.decline is not None and lab.decline.advice not in kb.advice:
            errors.append(f"{where}: decline.advice: unknown advice '{lab.decline.advice}'")
        if lab.harm_care is not None and lab.harm_care.advice not in kb.advice:
            errors.append(f"{where}: harm_care.advice: unknown advice '{lab.harm_care.advice}'")
        if lab.harm_care is not None and lab.harm_below is None and lab.harm_above is None:
            errors.append(f"{where}: harm_care: no harm_below or harm_above to call a value harmful")


def _check_part_of(where: str, lab, kb: KnowledgeBase, errors: list[str]) -> None:  # noqa: ANN001
    """A part's total exists, is not itself a part, has the part's unit; its usual shares are ordered, below its
    largest one; the parts of one total can all be at their lowest usual share together."""
    part = lab.part_of
    if part is None:
        return
    total = kb.labs.get(part.total)
    if total is None:
        errors.append(f"{where}: part_of.total: unknown lab '{part.total}'")
        return
    if total.part_of is not None or total.unit != lab.unit:
        errors.append(f"{where}: part_of.total: '{part.total}' is a part itself or has another unit")
    if _check_range(where, "part_of.share", part.share, errors) and part.share[1] > part.max_share:
        errors.append(f"{where}: part_of.share: its usual share is above its max_share")
    if sum(o.part_of.share[0] for o in kb.labs.values() if o.part_of and o.part_of.total == part.total) > 1:
        errors.append(f"{where}: part_of: the parts of '{part.total}' add up to more than it at their lowest shares")


PLACEHOLDER_FREE = re.compile(r"\{[a-z_]+:[A-Za-z0-9_]+\}")
"""Any placeholder (removed before a text is read for stray braces and stated ranges)."""
_STATED_RANGE = re.compile(r"(?<![A-Za-z0-9.])\d+(?:\.\d+)?\s*%?\s*(?:-|–|~|至|to)\s*\d+(?:\.\d+)?(?![A-Za-z0-9.])")
"""Two numbers joined as a range ("30-55", "72%-82%", "600 to 1800")."""
_SCORE_WORDS = ("score", "total", "评分", "总分")
"""Words before a range of points that make it a score's range ("score 13-19")."""


def _stated_ranges(text: str, units: list[str]) -> list[str]:
    """The ranges of a finding text beside a unit a lab is measured in (or a score's points): a range stated as the
    patient's result, which a finding never does (`units`: longest first)."""
    found = []
    for match in _STATED_RANGE.finditer(text):
        after = text[match.end():].lstrip()
        unit = next((u for u in units if after.startswith(u)), None)
        before = text[max(0, match.start() - 8):match.start()].lower()
        if unit is not None or any(word in before for word in _SCORE_WORDS):
            found.append(match.group(0) + (f" {unit}" if unit else ""))
    return found


def check_finding(kb: KnowledgeBase, where: str, text: Text, drawn: dict[str, DrawnValue],
                  days_allowed: bool = False) -> list[str]:
    """A finding template: every placeholder names something that exists (a lab of labs.yaml, a grade the lab has,
    a drawn value the record declares, a score of scores.yaml), both languages name the same ones, and no range
    beside a lab's unit is stated as a result.

    Returns:
        One message per problem, each starting with `where` (file and field).
    """
    errors: list[str] = []
    seen: dict[str, set] = {}
    said_units = {lab.unit for lab in kb.labs.values()} | {kb.say_unit(lab.unit, lang) for lab in kb.labs.values()
                                                            for lang in LANGUAGES}
    lab_units = sorted(said_units - {"", "ratio", "score"}, key=len, reverse=True)
    for language in LANGUAGES:
        said = getattr(text, language)
        holders = placeholders(said)
        seen[language] = set(holders)
        for holder in holders:
            if holder.kind not in KINDS:
                errors.append(f"{where}.{language}: {holder}: unknown placeholder kind '{holder.kind}' "
                              f"(one of {', '.join(KINDS)})")
            elif holder.kind in ("lab", "value", "grade") and holder.name not in kb.labs:
                errors.append(f"{where}.{language}: {holder}: unknown lab '{holder.name}'")
            elif holder.kind == "grade" and kb.labs[holder.name].grades is None:
                errors.append(f"{where}.{language}: {holder}: lab '{holder.name}' has no grades in labs.yaml")
            elif holder.kind == "drawn" and holder.name not in drawn:
                errors.append(f"{where}.{language}: {holder}: no drawn value '{holder.name}' is declared")
            elif holder.kind == "score" and holder.name not in kb.scores:
                errors.append(f"{where}.{language}: {holder}: unknown score '{holder.name}' (scores.yaml)")
            elif holder.kind == "days" and (not days_allowed or holder.name not in DAYS):
                errors.append(f"{where}.{language}: {holder}: day counts ({', '.join(DAYS)}) are known only to an "
                              "illness's finding and outcome")
        if "{" in PLACEHOLDER_FREE.sub("", said) or "}" in PLACEHOLDER_FREE.sub("", said):
            errors.append(f"{where}.{language}: a brace that is not a placeholder")
        for stated in _stated_ranges(PLACEHOLDER_FREE.sub("", said), lab_units):
            errors.append(f"{where}.{language}: '{stated}' states a range as the patient's result; name the value "
                          "measured at the visit ({lab:<key>}) or draw one ({drawn:<name>})")
    if seen["en"] != seen["zh"]:
        errors.append(f"{where}: the languages fill different values: en {sorted(map(str, seen['en']))}, "
                      f"zh {sorted(map(str, seen['zh']))}")
    return errors


def _check_drawn(where: str, drawn: dict[str, DrawnValue], texts: list[Text], kb_labs: Iterable[str],
                 errors: list[str]) -> None:
    named = {h.name for text in texts for lang in LANGUAGES for h in placeholders(getattr(text, lang))
             if h.kind == "drawn"}
    for name, value in drawn.items():
        _check_range(where, f"drawn.{name}.range", value.range, errors)
        if value.female is not None:
            _check_range(where, f"drawn.{name}.female", value.female, errors)
        if name not in named:
            errors.append(f"{where}: drawn.{name}: declared but no finding states it")
        if value.offset_from is not None and value.offset_from not in kb_labs:
            errors.append(f"{where}: drawn.{name}.offset_from: unknown lab '{value.offset_from}'")


def _check_finding_labs(kb: KnowledgeBase, where: str, labs: list[LabRange], monitored: set[str],
                        finding: Text | None, errors: list[str]) -> None:
    named = set(labs_named(kb, finding)) if finding is not None else set()
    for lab_range in labs:
        at = f"{where}: labs.{lab_range.lab}"
        if lab_range.lab not in kb.labs:
            errors.append(f"{at}: unknown lab '{lab_range.lab}'")
            continue
        if lab_range.lab in monitored:
            errors.append(f"{at}: the condition follows this lab; its value comes from its course, not a range")
        if _check_range(at, "range", lab_range.range, errors):
            _within(at, "range", lab_range.range, kb.labs[lab_range.lab].plausible, errors)
        if lab_range.lab not in named:
            errors.append(f"{at}: the finding does not name it")
        if not lab_range.source:
            errors.append(f"{at}: source: required (where the range comes from)")


def _check_scores(kb: KnowledgeBase, errors: list[str]) -> None:
    symptoms = {s.key for illness in kb.illnesses.values() for s in illness.symptoms}

    def check(where: str, criterion: ScoreCriterion) -> None:
        if criterion.lab is not None and criterion.lab not in kb.labs:
            errors.append(f"{where}: lab: unknown lab '{criterion.lab}'")
        if criterion.symptom is not None and criterion.symptom not in symptoms:
            errors.append(f"{where}: symptom: no illness has a symptom '{criterion.symptom}'")
        for index, inner in enumerate(criterion.any):
            check(f"{where}.any[{index}]", inner)

    for score in kb.scores.values():
        for index, criterion in enumerate(score.criteria):
            check(f"scores.yaml: {score.key}: criteria[{index}]", criterion)


def _check_units(kb: KnowledgeBase, errors: list[str]) -> None:
    for unit in sorted(set(kb.unit_words) - KNOWN_UNITS):
        errors.append(f"units.yaml: units.{unit}: not a unit of the knowledge base")


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
        for monitored_lab in drug.monitoring:
            if monitored_lab.lab not in kb.labs:
                errors.append(f"{where}: monitoring: unknown lab '{monitored_lab.lab}'")
            if monitored_lab.recheck_until_days is not None and monitored_lab.recheck_days is None:
                errors.append(f"{where}: monitoring: {monitored_lab.lab}: recheck_until_days needs recheck_days")
        for partner in drug.co_prescribe:
            if partner not in kb.drugs:
                errors.append(f"{where}: co_prescribe: unknown drug '{partner}'")
        if drug.before_start is not None:
            checks = drug.before_start
            errors += [f"{where}: before_start: unknown lab '{lab}'" for lab in [*checks.once, *checks.not_low]
                       if lab not in kb.labs]
            errors += [f"{where}: before_start.not_low: '{lab}' has no harm_below to judge it by"
                       for lab in checks.not_low if lab in kb.labs and kb.labs[lab].harm_below is None]
        if any(f.capped_only for f in drug.forms) and not any(
                r.level == "max_dose" and drug.key in kb.expand(r.drugs) for r in kb.patient_rules):
            errors.append(f"{where}: forms: a capped_only form with no dose cap that could ever choose it")
        for moiety in drug.releases:  # (a prodrug does the harm its moiety does: sulfasalazine's 5-ASA, the kidneys)
            if moiety not in kb.drugs or moiety == drug.key:
                errors.append(f"{where}: releases: '{moiety}' is not another drug")
                continue
            if missing := set(kb.drugs[moiety].toxicities) - set(drug.toxicities):
                errors.append(f"{where}: toxicities: lacks {sorted(missing)}, which its moiety {moiety} carries")
            if unchecked := {m.lab for m in kb.drugs[moiety].monitoring} - {m.lab for m in drug.monitoring}:
                errors.append(f"{where}: monitoring: lacks {sorted(unchecked)}, which its moiety {moiety} needs")
        for effect in drug.adverse_effects:
            if effect.lab is not None and effect.lab not in kb.labs:
                errors.append(f"{where}: adverse_effects.{effect.key}.lab: unknown lab '{effect.lab}'")
            if (effect.lab is None) != (effect.lab_delta is None):
                errors.append(f"{where}: adverse_effects.{effect.key}: lab and lab_delta go together")
            if effect.advice is not None and effect.advice not in kb.advice:
                errors.append(f"{where}: adverse_effects.{effect.key}.advice: unknown advice '{effect.advice}'")
            errors += [f"{where}: adverse_effects.{effect.key}.workup: unknown lab '{lab}'" for lab in effect.workup
                       if lab not in kb.labs]
            if effect.keeps_drug and effect.advice is None:
                errors.append(f"{where}: adverse_effects.{effect.key}: management 'measures' needs the advice that "
                              "says them")
        if drug.start_advice is not None and drug.start_advice not in kb.advice:
            errors.append(f"{where}: start_advice: unknown advice '{drug.start_advice}'")
        _check_missed_doses(where, drug.missed_doses, kb, errors)
        for workup in drug.fall_workup:
            errors += [f"{where}: fall_workup: unknown lab '{lab}'" for lab in [workup.lab, *workup.labs]
                       if lab not in kb.labs]
            if workup.advice not in kb.advice:
                errors.append(f"{where}: fall_workup.advice: unknown advice '{workup.advice}'")


def _check_missed_doses(where: str, cares: list, kb: KnowledgeBase, errors: list[str]) -> None:
    """A `MissedDoseCare` list: its drugs, labs and advice exist."""
    for care in cares:
        _check_refs(where, "missed_doses.drugs", care.drugs, kb, errors)
        errors += [f"{where}: missed_doses.labs: unknown lab '{lab}'" for lab in care.labs if lab not in kb.labs]
        if care.advice not in kb.advice:
            errors.append(f"{where}: missed_doses.advice: unknown advice '{care.advice}'")


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
        if group.caution is not None:
            _check_refs(where, "caution.drugs", group.caution.drugs, kb, errors)
            both = kb.expand(group.caution.drugs) & kb.expand([*group.classes, *group.drugs])
            if both:
                errors.append(f"{where}: caution.drugs: {sorted(both)} are barred by the group too; a drug is either "
                              "barred or given with the caution")
        if group.from_harm is not None:
            barred = kb.expand([*group.classes, *group.drugs])
            if group.caution is None:
                errors.append(f"{where}: from_harm: gives the group's caution; give caution")
            if not any(e.toxicity == group.from_harm for d in sorted(barred) for e in kb.drugs[d].adverse_effects):
                errors.append(f"{where}: from_harm: no drug the group bars has an adverse effect of kind "
                              f"'{group.from_harm}', so it can never be had")
    for index, rule in enumerate(kb.contraindications):
        where = f"history.yaml: contraindications[{index}]"
        if rule.history not in kb.history_conditions and rule.history not in kb.conditions:
            errors.append(f"{where}: history: unknown history condition or condition '{rule.history}'")
        _check_refs(where, "classes", rule.classes, kb, errors)
        _check_refs(where, "drugs", rule.drugs, kb, errors)
        errors += [f"{where}: {field}: unknown lab '{lab}'" for field in ("monitoring", "not_low_before")
                   for lab in getattr(rule, field) if lab not in kb.labs]
        if (rule.monitoring or rule.not_low_before) and rule.level != "caution":
            errors.append(f"{where}: monitoring and not_low_before go with a caution (a contraindicated drug is "
                          "never started)")
        if bool(rule.monitoring) != (rule.recheck_days is not None):
            errors.append(f"{where}: monitoring and recheck_days go together")
        if (rule.every_days is not None or rule.recheck_on_rise) and not rule.monitoring:
            errors.append(f"{where}: every_days and recheck_on_rise repeat the monitoring labs; give monitoring")
        if rule.no_increase_above is not None and not rule.monitoring:
            errors.append(f"{where}: no_increase_above reads the first monitoring lab; give monitoring")
        if (first := rule.treat_first) is not None:
            if rule.level != "caution":
                errors.append(f"{where}: treat_first goes with a caution (a contraindicated drug is never started)")
            _check_refs(where, "treat_first.drugs", first.drugs, kb, errors)
            named = kb.expand(rule.drugs + rule.classes)
            errors += [f"{where}: treat_first.min_daily_dose: '{drug}' is not a drug the rule names"
                       for drug in first.min_daily_dose if drug not in named]
    # a rule id names only the history (`contraindication:<history>`): its words are the one rule of that history
    # naming the drug at that level, so two would leave the text said for the pair undecided
    first: dict[tuple[str, str, str], int] = {}
    for index, rule in enumerate(kb.contraindications):
        for drug in sorted(kb.expand([*rule.classes, *rule.drugs])):
            seen = first.setdefault((rule.history, rule.level, drug), index)
            if seen != index:
                errors.append(f"history.yaml: contraindications[{index}]: '{drug}' already has a {rule.level} rule "
                              f"for {rule.history} (contraindications[{seen}]); one rule per pair")
    for condition in kb.conditions.values():
        steps = {step.key for step in condition.care_path}
        errors += [f"conditions/{condition.key}.yaml: symptoms.{s.key}.red_flag_step: unknown care step "
                   f"'{s.red_flag_step}'" for s in condition.symptoms
                   if s.red_flag_step and s.red_flag_step not in steps]
        errors += [f"conditions/{condition.key}.yaml: stressors.{s.key}.{field}: unknown relation '{r}'"
                   for s in condition.stressors for field, relations in (("family", s.family),
                                                                         ("without_family", s.without_family))
                   for r in relations if r not in kb.relatives]
        for s in condition.stressors:
            _check_range(f"conditions/{condition.key}.yaml: stressors.{s.key}", "age", s.age, errors)
        if sum(1 for s in condition.stressors
               if not (s.requires or s.family or s.without_family or s.lives_alone or s.age != (18, 100))) < 2:
            errors.append(f"conditions/{condition.key}.yaml: stressors: fewer than two fit every patient (no "
                          "`requires`): a retired or jobless patient would have nothing to bring up")
    for hist in kb.history_conditions.values():
        where = f"history.yaml: {hist.key}"
        effects = {e.key for d in kb.drugs.values() for e in d.adverse_effects}
        _check_missed_doses(where, hist.missed_doses, kb, errors)
        if hist.baseline is not None:
            errors += [f"{where}: baseline.labs: unknown lab '{lab}'" for lab in hist.baseline.labs
                       if lab not in kb.labs]
        for workup in hist.harm_workup:
            errors += [f"{where}: harm_workup.labs: unknown lab '{lab}'" for lab in workup.labs if lab not in kb.labs]
            errors += [f"{where}: harm_workup.effects: no drug has the adverse effect '{key}'"
                       for key in workup.effects if key not in effects]
        if not ICD11_CODE.match(hist.icd11):
            errors.append(f"{where}: icd11: '{hist.icd11}' is not an ICD-11 code")
        _check_range(where, "age", hist.age, errors)
        for drug_key in hist.treatments:
            if drug_key not in kb.drugs:
                errors.append(f"{where}: treatments: unknown drug '{drug_key}'")
        for lab_range in hist.labs:
            if lab_range.lab not in kb.labs:
                errors.append(f"{where}: labs: unknown lab '{lab_range.lab}'")
        for target in hist.treat_to:
            errors += [f"{where}: treat_to.candidates: unknown drug '{d}'"
                       for d in target.candidates if d not in kb.drugs]
            errors += [f"{where}: treat_to.{field}: '{key}' is not an advice key"
                       for field, key in (("advice", target.advice), ("no_drug_advice", target.no_drug_advice))
                       if key not in kb.advice]
            if target.lab not in kb.labs:
                errors.append(f"{where}: treat_to.lab: unknown lab '{target.lab}'")
            _check_range(where, "treat_to.treated", target.treated, errors)
            if target.treated[1] > target.above:
                errors.append(f"{where}: treat_to.treated: {target.treated} is not under the target {target.above:g}")
            _check_range(where, f"labs.{lab_range.lab}", lab_range.range, errors)
    for key in sorted(set(kb.history_conditions) & set(kb.conditions)):
        errors.append(f"history.yaml: {key}: the same key names a history condition and a condition")
    for rule in kb.patient_rules:
        where = f"patient_rules.yaml: {rule.key}"
        _check_refs(where, "drugs", rule.drugs, kb, errors)
        for key in rule.when.conditions:
            if key not in kb.conditions and key not in kb.history_conditions:
                errors.append(f"{where}: when.conditions: unknown condition '{key}'")
        errors += [f"{where}: when.lab_below: unknown lab '{lab}'" for lab in rule.when.lab_below if lab not in kb.labs]
        factors = rule.when.risk_factors
        if factors is not None:
            errors += [f"{where}: when.risk_factors.conditions: unknown condition '{key}'" for key in factors.conditions
                       if key not in kb.conditions and key not in kb.history_conditions]
            errors += [f"{where}: when.risk_factors.habits: unknown habit '{key}'" for key in factors.habits
                       if key not in kb.habits]
            _check_refs(where, "when.risk_factors.taking", factors.taking, kb, errors)
            if factors.at_least > len(factors.conditions) + len(factors.habits) + len(kb.expand(factors.taking)):
                errors.append(f"{where}: when.risk_factors.at_least is more than the factors listed")
        if (rule.level == "max_dose") != (rule.max_daily_dose is not None):
            errors.append(f"{where}: max_daily_dose goes with level max_dose, and only with it")
        if rule.frequency is not None and rule.level != "max_dose":
            errors.append(f"{where}: frequency goes with level max_dose")
        if (rule.level == "start_dose") != (rule.start_dose is not None):
            errors.append(f"{where}: start_dose goes with level start_dose, and only with it")
        if bool(rule.monitoring) != (rule.recheck_days is not None) or (rule.monitoring and rule.level != "caution"):
            errors.append(f"{where}: monitoring and recheck_days go together, with level caution")
        errors += [f"{where}: monitoring: unknown lab '{lab}'" for lab in rule.monitoring if lab not in kb.labs]
        if rule.release is not None and (rule.level != "avoid" or not all(
                any(f.release == rule.release for f in kb.drugs[d].forms) for d in kb.expand(rule.drugs)
                if d in kb.drugs)):
            errors.append(f"{where}: release goes with level avoid, on drugs that have a form of that release")
    for index, rule in enumerate(kb.interactions):
        where = f"interactions.yaml: interactions[{index}]"
        _check_refs(where, "a", rule.a, kb, errors)
        _check_refs(where, "b", rule.b, kb, errors)
        members = kb.expand(rule.a) | kb.expand(rule.b)
        for number, entry in enumerate(rule.by_partner):
            _check_refs(f"{where}.by_partner[{number}]", "partners", entry.partners, kb, errors)
            if not kb.expand(entry.partners) <= members:
                errors.append(f"{where}.by_partner[{number}]: partners: names a drug that is on neither side")
    for advice in kb.advice.values():
        if advice.instead is not None:
            where = f"diet.yaml: advice.{advice.key}.instead"
            if advice.instead.advice not in kb.advice or advice.instead.advice == advice.key:
                errors.append(f"{where}: advice: unknown advice '{advice.instead.advice}' (or the advice itself)")
            errors += [f"{where}: conditions: unknown condition '{key}'" for key in advice.instead.conditions
                       if key not in kb.conditions and key not in kb.history_conditions]
    on_start = [advice.on_start for advice in kb.advice.values() if advice.on_start is not None]
    errors += [f"diet.yaml: advice: more than one advice is said on the start of a {kind} drug"
               for kind in sorted(set(on_start)) if on_start.count(kind) > 1]
    if not any(m.drawn for m in kb.meals.values()):
        errors.append("diet.yaml: meals: none is drawn, so a patient without a meal habit has no meals to speak of")
    lifestyles = {ls.key for ls in kb.people.lifestyles}
    errors += [f"diet.yaml: meals.{m.key}: excludes_lifestyles: unknown lifestyle '{key}'"
               for m in kb.meals.values() for key in m.excludes_lifestyles if key not in lifestyles]
    for habit in kb.habits.values():
        where = f"diet.yaml: habits.{habit.key}"
        if habit.meals is not None and habit.meals not in kb.meals:
            errors.append(f"{where}: meals: unknown meals '{habit.meals}'")
        _check_refs(where, "conflicts_with", habit.conflicts_with, kb, errors)
        _check_refs(where, "cautions", habit.cautions, kb, errors)
        for advice in habit.undermines_advice:
            if advice not in kb.advice:
                errors.append(f"{where}: undermines_advice: unknown advice '{advice}'")
        if habit.stop is not None:
            _check_refs(where, "stop.taking", habit.stop.taking, kb, errors)
            if habit.stop.advice not in kb.advice:
                errors.append(f"{where}: stop.advice: unknown advice '{habit.stop.advice}'")
            errors += [f"{where}: stop.conditions: unknown condition '{key}'" for key in habit.stop.conditions
                       if key not in kb.conditions and key not in kb.history_conditions]
            if not habit.stop.taking and habit.stop.egfr_below is None and not habit.stop.conditions:
                errors.append(f"{where}: stop: names no risk (taking, egfr_below or conditions), so it is never due")
        if habit.brief_intervention is not None and habit.brief_intervention.advice not in kb.advice:
            errors.append(f"{where}: brief_intervention.advice: unknown advice '{habit.brief_intervention.advice}'")
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
            elif mis.kept_for is not None and kb.treating_step(cond, mis) is None:
                errors.append(f"{where}: misdiagnoses.kept_for: no care step treats '{mis.kept_for}' above a threshold "
                              "(to keep the drug for, or switch it to)")
        for test in cond.diagnostic_tests:
            if test.loinc is not None and not LOINC_CODE.match(test.loinc):
                errors.append(f"{where}: diagnostic_tests.{test.key}.loinc: '{test.loinc}' is not LOINC")
        followed = {mon.lab for mon in cond.monitored}
        for test in cond.diagnostic_tests:
            at = f"{where}: diagnostic_tests.{test.key}"
            if test.gives is not None and test.gives not in kb.drugs:
                errors.append(f"{at}: gives: unknown drug '{test.gives}'")
            errors.extend(check_finding(kb, f"{at}.finding", test.finding, test.drawn))
            _check_drawn(at, test.drawn, [test.finding], kb.labs, errors)
            _check_finding_labs(kb, at, test.labs, followed, test.finding, errors)
        for comp in cond.complications:
            at = f"{where}: complications.{comp.key}"
            if comp.finding is not None:
                errors.extend(check_finding(kb, f"{at}.finding", comp.finding, comp.drawn))
            _check_drawn(at, comp.drawn, [comp.finding] if comp.finding else [], kb.labs, errors)
            _check_finding_labs(kb, at, comp.labs, followed, comp.finding, errors)
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
            for drug in step.drug_keys:
                if drug not in kb.drugs:
                    errors.append(f"{where}: care_path.{step.key}.candidates: unknown drug '{drug}'")
            for candidate in step.candidates:
                for gone in candidate.replaces:
                    if gone not in kb.drugs and gone not in kb.classes:
                        errors.append(f"{where}: care_path.{step.key}.candidates.{candidate.drug}.replaces: "
                                      f"unknown drug or class '{gone}'")
                errors += _taper_problems(f"{where}: care_path.{step.key}.candidates.{candidate.drug}", candidate,
                                          kb)
                drug = kb.drugs.get(candidate.drug)
                if candidate.dosing is not None and drug is not None and any(
                        spec.frequency == candidate.dosing.frequency for _, spec in drug.formulations()):
                    # (a dose taken finds its ladder by frequency, `prescribing.ladder_of`)
                    errors.append(f"{where}: care_path.{step.key}.candidates.{candidate.drug}.dosing: frequency "
                                  f"'{candidate.dosing.frequency}' is a formulation's own; a use's ladder needs one "
                                  "of its own")
        errors += _restart_problems(where, cond, steps, kb)
        errors += [f"{where}: care_path.{step.key}.after_top_of: unknown step '{step.after_top_of}'"
                   for step in cond.care_path if step.after_top_of is not None and step.after_top_of not in steps]
        complications = {comp.key for comp in cond.complications}
        for step in cond.care_path:
            at = f"{where}: care_path.{step.key}"
            for field_name, labs in (("moves", step.moves), ("targets", list(step.targets)),
                                     ("titrate_on", [step.titrate_on] if step.titrate_on else [])):
                for lab_key in labs:
                    if lab_key not in monitored:
                        errors.append(f"{at}.{field_name}: '{lab_key}' is not a monitored lab")
            for lab_key, value in step.targets.items():
                _check_range(at, f"targets.{lab_key}", value, errors)
            if step.adds_to is not None and (step.adds_to not in steps or step.adds_to == step.key):
                errors.append(f"{at}.adds_to: '{step.adds_to}' is not another step of this condition")
            indication = step.indication
            if indication.complication and indication.complication not in complications:
                errors.append(f"{at}.indication.complication: unknown complication '{indication.complication}'")
            if indication.lab and indication.lab not in monitored:
                errors.append(f"{at}.indication.lab: '{indication.lab}' is not a monitored lab")
        if (alarm := cond.weight_alarm) is not None:
            signs = {s.key for s in cond.symptoms if s.red_flag_step is not None}
            if alarm.sign not in signs:
                errors.append(f"{where}: weight_alarm.sign: '{alarm.sign}' is not a symptom with a red_flag_step")
            errors += [f"{where}: weight_alarm.labs: unknown lab '{lab}'" for lab in alarm.labs if lab not in kb.labs]
        for comp in cond.complications:
            at = f"{where}: complications.{comp.key}"
            if comp.lab is not None and comp.lab not in monitored:
                errors.append(f"{at}.lab: '{comp.lab}' is not monitored")
            if comp.progression is not None and comp.lab in kb.labs and kb.labs[comp.lab].grades is None:
                errors.append(f"{at}.progression: lab '{comp.lab}' has no grades in labs.yaml to read a stage on")
            for step_key in [*comp.treatment, *comp.escalation]:
                if step_key not in steps:
                    errors.append(f"{at}: treatment/escalation: unknown care step '{step_key}'")
            _check_refs(at, "forbids", comp.forbids, kb, errors)
            errors += [f"{at}.workup: unknown lab '{lab}'" for lab in comp.workup if lab not in kb.labs]
            if comp.only_if is not None and comp.only_if.lab and comp.only_if.lab not in monitored:
                errors.append(f"{at}.only_if.lab: '{comp.only_if.lab}' is not a monitored lab")
            if not ICD11_CODE.match(comp.icd11):
                errors.append(f"{at}.icd11: '{comp.icd11}' is not ICD-11")
        for mis in cond.misdiagnoses:
            for finding in mis.findings:
                if finding.lab not in kb.labs:
                    errors.append(f"{where}: misdiagnoses.findings: unknown lab '{finding.lab}'")
                elif any(m.lab == finding.lab and m.diagnostic for m in cond.monitored):
                    errors.append(f"{where}: misdiagnoses.findings: '{finding.lab}' is diagnostic of the true "
                                  "condition, so it cannot support the misdiagnosis")
                _check_range(where, f"misdiagnoses.findings.{finding.lab}", finding.range, errors)
            errors += [f"{where}: misdiagnoses.screened_with: '{lab}' is not a monitored lab that emerges"
                       for lab in mis.screened_with if not any(m.lab == lab and m.emerges for m in cond.monitored)]
        for mon in cond.monitored:
            if mon.emerges:
                errors += _emerging_errors(kb, f"{where}: monitored.{mon.lab}", mon)
        for advice in [*cond.lifestyle_advice, *([cond.counselling_advice] if cond.counselling_advice else []),
                       *([cond.diagnosis_advice] if cond.diagnosis_advice else [])]:
            if advice not in kb.advice:
                errors.append(f"{where}: lifestyle_advice: unknown advice '{advice}'")
        errors += [f"{where}: complications.{c.key}.advice: unknown advice '{c.advice}'" for c in cond.complications
                   if c.advice is not None and c.advice not in kb.advice]
        errors += [f"{where}: diagnostic_tests.{t.key}.advice: unknown advice '{t.advice}'"
                   for t in cond.diagnostic_tests if t.advice is not None and t.advice not in kb.advice]
        for comp in cond.complications:
            _check_missed_doses(f"{where}: complications.{comp.key}", comp.missed_doses, kb, errors)
        steps = {step.key for step in cond.care_path}
        for comp in cond.complications:
            after = comp.after_discharge
            if after is None:
                continue
            if comp.setting != "admission":
                errors.append(f"{where}: complications.{comp.key}.after_discharge: only an admission has a discharge")
            errors += [f"{where}: complications.{comp.key}.after_discharge: unknown lab '{lab}'"
                       for lab in after.labs if lab not in kb.labs]
            errors += [f"{where}: complications.{comp.key}.after_discharge: unknown care step '{step}'"
                       for step in after.dose_review if step not in steps]


SPLITTABLE_FORMS = frozenset({"tablet"})
"""Forms a dose may be made of by halving one unit (scored tablets)."""
COUNTED_FORMS = frozenset({"tablet", "capsule"})
"""Forms whose doses must be whole (or, for tablets, half) multiples of a strength that exists."""


def _achievable(dose: float, strengths: list[float], form: str) -> bool:
    multiples = (0.5, 1, 2) if form in SPLITTABLE_FORMS else (1, 2)
    return any(abs(dose - n * strength) < 1e-6 for strength in strengths for n in multiples)


def _check_drug_completeness(kb: KnowledgeBase, errors: list[str]) -> None:
    for drug in kb.drugs.values():
        where = f"drugs/*.yaml: {drug.key}"
        if drug.regimen == "course" and drug.course_days is None:
            errors.append(f"{where}: course_days: required for a course drug")
        if drug.regimen == "chronic" and drug.wanes_days is None:
            errors.append(f"{where}: wanes_days: required for a chronic drug")
        for form, spec in drug.formulations():
            titrated = len(spec.doses()) > 1
            if titrated and spec.titration_days is None:
                errors.append(f"{where}: dose.titration_days: required when the dose is titrated (step > 0)")
            if drug.regimen == "one_off" and titrated:
                errors.append(f"{where}: dose.step: a one-off drug is not titrated")
            if form.form not in COUNTED_FORMS or form.strength is None or spec.unit != drug.dose.unit:
                continue
            strengths = [f.strength for f in drug.forms
                         if f.form == form.form and f.release == form.release and f.strength is not None]
            for dose in spec.doses():
                if not _achievable(dose, strengths, form.form):
                    errors.append(f"{where}: dose: {dose:g} {spec.unit} cannot be made from the {form.release}-release "
                                  f"{form.form} strengths {sorted(set(strengths))}; give a `ladder` of real doses")
                    break


def _restart_problems(where: str, cond: Condition, steps: dict[str, CareStep], kb: KnowledgeBase) -> list[str]:
    """A restart names steps of the condition, and one of them has a long-term candidate to restart with."""
    if cond.restart is None:
        return []
    errors = [f"{where}: restart.steps: '{key}' is not a step of this condition"
              for key in cond.restart.steps if key not in steps]
    long_term = [c for key in cond.restart.steps if key in steps for c in steps[key].candidates
                 if c.drug in kb.drugs and (c.regimen or kb.drugs[c.drug].regimen) == "chronic"]
    if not long_term:
        errors.append(f"{where}: restart.steps: no long-term candidate to restart with (a course is no maintenance)")
    for field, key in (("advice", cond.restart.advice), ("referral", cond.restart.referral)):
        if key is not None and key not in kb.advice:
            errors.append(f"{where}: restart.{field}: '{key}' is not an advice key")
    return errors


def check_completeness(kb: KnowledgeBase) -> list[str]:
    """The clinical rules every record must carry for the simulator to be physiological and safe.

    Returns:
        One message per missing rule, naming file and field.
    """
    errors: list[str] = []
    for lab in kb.labs.values():
        if lab.kinetics is None:
            errors.append(f"labs.yaml: {lab.key}: kinetics: required (response_days, min_interval_days, cv, source)")
    _check_drug_completeness(kb, errors)
    for group in kb.allergy_groups.values():
        if group.reaction_type is None:
            errors.append(f"allergies.yaml: {group.key}: reaction_type: required")
    for index, rule in enumerate(kb.interactions):
        if rule.action is None:
            errors.append(f"interactions.yaml: interactions[{index}]: action: required (avoid or caution)")
    for cond in kb.conditions.values():
        where = f"conditions/{cond.key}.yaml"
        for step in cond.care_path:
            if step.purpose is None:
                errors.append(f"{where}: care_path.{step.key}.purpose: required")
            if not step.moves and not step.targets and step.role in ("first_line", "step_up"):
                errors.append(f"{where}: care_path.{step.key}.moves: a {step.role} step must move a monitored lab")
        if sum(not s.specific for s in cond.symptoms) < 2:
            errors.append(f"{where}: symptoms: needs at least 2 non-specific symptoms for the misdiagnosis phase")
        if all(m.diagnostic for m in cond.monitored):
            errors.append(f"{where}: monitored: needs a lab that is not diagnostic for the misdiagnosis phase")
    if not kb.renal_baseline:
        errors.append("patient_rules.yaml: renal_baseline: at least one age band is required")
    return errors


def codes_in_use(kb: KnowledgeBase) -> list[tuple[str, str, str]]:
    """(system, code, where) of every ICD-11 and LOINC code the knowledge base uses."""
    uses = []
    for cond in kb.conditions.values():
        uses.append(("ICD-11", cond.icd11.code, f"conditions/{cond.key}.yaml: icd11"))
        uses += [("ICD-11", m.icd11, f"conditions/{cond.key}.yaml: misdiagnoses") for m in cond.misdiagnoses]
        uses += [("ICD-11", c.icd11, f"conditions/{cond.key}.yaml: complications.{c.key}") for c in cond.complications]
        uses += [("LOINC", t.loinc, f"conditions/{cond.key}.yaml: diagnostic_tests.{t.key}")
                 for t in cond.diagnostic_tests if t.loinc]
    uses += [("ICD-11", h.icd11, f"history.yaml: {h.key}") for h in kb.history_conditions.values()]
    uses += [("ICD-11", i.icd11, f"intercurrent.yaml: {i.key}") for i in kb.illnesses.values()]
    uses += [("LOINC", lab.loinc, f"labs.yaml: {lab.key}") for lab in kb.labs.values() if lab.loinc]
    return uses


def _check_codes_checked(kb: KnowledgeBase, errors: list[str]) -> None:
    checked = {(c.system, c.code) for c in kb.code_checks if c.status != "corrected"}
    for system, code, where in codes_in_use(kb):
        if (system, code) not in checked:
            errors.append(f"{where}: {system} code '{code}' has no verified or unverified entry in code_checks.yaml")


def _check_history_clashes(kb: KnowledgeBase, errors: list[str]) -> None:
    for hist in kb.history_conditions.values():
        for other in hist.incompatible:
            if other not in kb.conditions and other not in kb.history_conditions:
                errors.append(f"history.yaml: {hist.key}: incompatible: unknown condition or history '{other}'")


def _check_people(kb: KnowledgeBase, errors: list[str]) -> None:
    """Occupations, lifestyles and the trap texts that speak of work fit together: every occupation is either
    working or retired, every text that `requires` traits has an occupation of an age it allows with them all, and
    every occupation and age has a lifestyle for a smoker and one for a non-smoker."""
    people = kb.people
    seen: set[str] = set()
    for occupation in people.occupations:
        where = f"people.yaml: occupations.{occupation.key}"
        _check_range(where, "age", occupation.age, errors)
        if occupation.key in seen:
            errors.append(f"{where}: duplicate key")
        seen.add(occupation.key)
        if ("working" in occupation.traits) == ("retired" in occupation.traits):
            errors.append(f"{where}: traits: exactly one of 'working' and 'retired' is required")
        for smoker in (False, True):
            for age in range(occupation.age[0], occupation.age[1] + 1):
                if not any(set(ls.requires) <= set(occupation.traits) and not set(ls.excludes) & set(occupation.traits)
                           and ls.age[0] <= age <= ls.age[1] and ls.smoker == smoker for ls in people.lifestyles):
                    errors.append(f"{where}: no lifestyle fits it at age {age} (smoker: {smoker})")
                    break
    keys = [ls.key for ls in people.lifestyles]
    errors += [f"people.yaml: lifestyles.{k}: duplicate key" for k in sorted({k for k in keys if keys.count(k) > 1})]
    if sum(ls.smoker for ls in people.lifestyles) != 1:
        errors.append("people.yaml: lifestyles: exactly one lifestyle says the patient smokes (smoker: true)")
    for ls in people.lifestyles:
        where = f"people.yaml: lifestyles.{ls.key}"
        _check_range(where, "age", ls.age, errors)
        if ls.brief_intervention is not None and ls.brief_intervention.advice not in kb.advice:
            errors.append(f"{where}: brief_intervention.advice: unknown advice '{ls.brief_intervention.advice}'")
        if not any(set(ls.requires) <= set(o.traits) and not set(ls.excludes) & set(o.traits)
                   and o.age[0] <= ls.age[1] and ls.age[0] <= o.age[1] for o in people.occupations):
            errors.append(f"{where}: no occupation has the traits it requires at an age it fits")
    texts = [(f"preferences.yaml: medication_preferences.{p.key}", p.requires, p.excludes, p.age)
             for p in kb.preferences.values()]
    texts += [(f"preferences.yaml: economic_profiles.{p.key}", p.requires, [], p.age)
              for p in kb.economic_profiles.values()]
    for where, requires, excludes, age in texts:
        if not any(set(requires) <= set(o.traits) and not set(excludes) & set(o.traits) and o.age[0] <= age[1]
                   and age[0] <= o.age[1] for o in people.occupations):
            errors.append(f"{where}: requires: no occupation (people.yaml) has {sorted(requires)} (and none of "
                          f"{sorted(excludes)}) at ages {list(age)}")
    for sex, (mean, sd) in people.height_cm.items():
        if not (130 <= mean <= 200 and 0 < sd <= 15):
            errors.append(f"people.yaml: height_cm.{sex}: mean {mean} / sd {sd} is not an adult height distribution")
    _check_range("people.yaml", "bmi", people.bmi, errors)
    errors += [f"people.yaml: household.able_excludes: unknown condition '{key}'"
               for key in kb.people.household.able_excludes
               if key not in kb.conditions and key not in kb.history_conditions]
    _check_range("people.yaml", "household.able_age", people.household.able_age, errors)
    if "household_member" in people.adherence.own_aids or "blister_pack" in people.adherence.own_aids:
        errors.append("people.yaml: adherence.own_aids: a household member's help and the pharmacy's blister pack are "
                      "not aids a patient keeps by themselves")


def _check_illnesses(kb: KnowledgeBase, errors: list[str]) -> None:
    flags = {s.drug_red_flag.toxicity: [] for i in kb.illnesses.values() for s in i.symptoms if s.drug_red_flag}
    for illness in kb.illnesses.values():
        for symptom in illness.symptoms:
            if symptom.drug_red_flag is not None and symptom.drug_red_flag not in flags[symptom.drug_red_flag.toxicity]:
                flags[symptom.drug_red_flag.toxicity].append(symptom.drug_red_flag)
    errors += [f"intercurrent.yaml: drug_red_flag: {len(same)} different flags warn of '{toxicity}' (one per harm: its "
               "count is followed the same way whichever symptom tells it)" for toxicity, same in flags.items()
               if len(same) > 1]
    for illness in kb.illnesses.values():
        where = f"intercurrent.yaml: {illness.key}"
        if not ICD11_CODE.match(illness.icd11):
            errors.append(f"{where}: icd11: '{illness.icd11}' is not an ICD-11 code")
        if all(s.at_examination for s in illness.symptoms):
            errors.append(f"{where}: symptoms: at least one must be told at the first visit (not at_examination)")
        if illness.self_care not in kb.advice:
            errors.append(f"{where}: self_care: unknown advice '{illness.self_care}'")
        if illness.self_care_days is not None:
            _check_range(where, "self_care_days", illness.self_care_days, errors)
        if (flag := illness.red_flag) is not None:
            factors = flag.risk_factors
            errors += [f"{where}: red_flag.risk_factors.conditions: unknown condition '{key}'"
                       for key in factors.conditions if key not in kb.conditions and key not in kb.history_conditions]
            errors += [f"{where}: red_flag.risk_factors.habits: unknown habit '{key}'" for key in factors.habits
                       if key not in kb.habits]
            _check_refs(f"{where}: red_flag", "risk_factors.taking", factors.taking, kb, errors)
            if flag.advice not in kb.advice:
                errors.append(f"{where}: red_flag.advice: unknown advice '{flag.advice}'")
        for symptom in illness.symptoms:
            if (sick := symptom.sick_day) is not None:
                at = f"{where}: symptoms.{symptom.key}.sick_day"
                _check_refs(at, "pause", sick.pause, kb, errors)
                _check_refs(at, "watch", sick.watch, kb, errors)
                errors += [f"{at}: {name}: unknown advice '{key}'" for name, key in
                           (("advice", sick.advice), ("watch_advice", sick.watch_advice))
                           if key is not None and key not in kb.advice]
            flag = symptom.drug_red_flag
            if flag is None:
                continue
            at = f"{where}: symptoms.{symptom.key}.drug_red_flag"
            errors += [f"{at}: labs: unknown lab '{lab}'" for lab in flag.labs if lab not in kb.labs]
            errors += [f"{at}: {name}: unknown advice '{key}'" for name, key in
                       (("advice", flag.advice), ("recovering_advice", flag.recovering_advice)) if key not in kb.advice]
            errors += [f"{at}: labs: '{lab}' has no harm_below to call a count low" for lab in flag.labs
                       if lab in kb.labs and kb.labs[lab].harm_below is None]
            errors += [f"{at}: recheck_days: {flag.recheck_days} is sooner than {lab}'s min_interval_days"
                       for lab in flag.labs if lab in kb.labs and (k := kb.labs[lab].kinetics) is not None
                       and flag.recheck_days < k.min_interval_days]
            if not any(flag.warns_of(drug) for drug in kb.drugs.values()):
                errors.append(f"{at}: warns of no drug (toxicity '{flag.toxicity}', effects {flag.effects})")
        _check_range(where, "age", illness.age, errors)
        for name in ("finding", "outcome"):
            errors.extend(check_finding(kb, f"{where}: {name}", getattr(illness, name), illness.drawn,
                                        days_allowed=True))
        _check_drawn(where, illness.drawn, [illness.finding, illness.outcome], kb.labs, errors)
        for candidate in illness.candidates:
            drug = kb.drugs.get(candidate.drug)
            if drug is None:
                errors.append(f"{where}: candidates: unknown drug '{candidate.drug}'")
            elif (candidate.regimen or drug.regimen) != "course" or not (candidate.course_days or drug.course_days):
                errors.append(f"{where}: candidates.{candidate.drug}: an illness is treated with a course "
                              "(regimen course and course_days)")


TAPER_AFTER_DAYS = 21
"""A steroid course longer than this is stepped down, not stopped (BNF: gradual withdrawal after three weeks)."""


def _taper_problems(where: str, candidate, kb: KnowledgeBase) -> list[str]:  # noqa: ANN001
    """A course over three weeks of a glucocorticoid needs a taper; a taper needs a course, a starting dose, and
    steps that a tablet can make and that end above zero."""
    drug = kb.drugs.get(candidate.drug)
    if drug is None:
        return []
    days = candidate.course_days or drug.course_days
    long_steroid = drug.drug_class == "systemic_corticosteroid" and days and days > TAPER_AFTER_DAYS \
        and (candidate.regimen or drug.regimen) == "course" and drug.forms[0].form == "tablet"
    if candidate.taper is None:
        return [f"{where}: a steroid course of {days} days needs a taper"] if long_steroid else []
    if not days or not candidate.dose:
        return [f"{where}: taper: needs a dose and course_days"]
    strengths = {form.strength for form in drug.forms if form.strength}
    doses = [candidate.taper.dose_on(candidate.dose, day) for day in range(days)]
    bad = sorted({d for d in doses if not any(abs(d / s - round(d / s)) < 1e-9 for s in strengths)})
    return [f"{where}: taper: {d:g} {drug.dose.unit} cannot be made from {sorted(strengths)}" for d in bad]


def _check_serious_effects(kb: KnowledgeBase, errors: list[str]) -> None:
    known = {effect.key for drug in kb.drugs.values() for effect in drug.adverse_effects}
    for key in sorted(SERIOUS_EFFECTS - known):
        errors.append(f"knowledge/models.py: SERIOUS_EFFECTS: no drug has an adverse effect '{key}'")


_GIST_SOURCES = {"allergy_groups": "allergies.yaml", "medication_preferences": "preferences.yaml",
                 "habits": "diet.yaml", "economic_profiles": "preferences.yaml",
                 "symptoms": "conditions/ and intercurrent.yaml"}


def _check_gists(kb: KnowledgeBase, errors: list[str]) -> None:
    disclosed = {"allergy_groups": kb.allergy_groups, "medication_preferences": kb.preferences,
                 "habits": kb.habits, "economic_profiles": kb.economic_profiles, "symptoms": kb.symptom_keys()}
    for kind, records in disclosed.items():
        entries = getattr(kb.gists, kind)
        for key in sorted(set(entries) - set(records)):
            errors.append(f"gists.yaml: {kind}.{key}: unknown key; {_GIST_SOURCES[kind]} {kind} has no '{key}'")
        for key in sorted(set(records) - set(entries)):
            errors.append(f"gists.yaml: {kind}.{key}: missing; every key of {_GIST_SOURCES[kind]} {kind} needs a "
                          "gist in en and zh")
        for key, gist in sorted(entries.items()):
            for language in ("en", "zh"):
                where = f"gists.yaml: {kind}.{key}.{language}"
                groups = getattr(gist, language)
                if not groups:
                    errors.append(f"{where}: missing; give at least one concept group of words")
                for number, group in enumerate(groups):
                    if not group:
                        errors.append(f"{where}[{number}]: empty concept group")
                    for word in group:
                        if not word.strip() or word != word.strip():
                            errors.append(f"{where}[{number}]: empty or space-padded word {word!r}")


_BRACKETED = re.compile(r"\s*[(（]([^)）]*)[)）]")


def _normal(name: str) -> str:
    return " ".join(name.split()).casefold()


def _name_forms(name: str) -> set[str]:
    """A record's name as an alias is compared with it: whole, without its bracket, and the bracket's content
    ("paracetamol (acetaminophen)" is also "paracetamol" and "acetaminophen")."""
    forms = {_normal(name), _normal(_BRACKETED.sub("", name)), *(_normal(inner) for inner in _BRACKETED.findall(name))}
    return forms - {""}


def _check_aliases(kb: KnowledgeBase, errors: list[str]) -> None:
    icd11 = {code for system, code, _ in codes_in_use(kb) if system == "ICD-11"}
    sections = {"drugs": ("drug of drugs/*.yaml", kb.drugs), "labs": ("lab of labs.yaml", kb.labs),
                "diagnoses": ("ICD-11 code of the knowledge base", dict.fromkeys(icd11)),
                "history": ("history condition of history.yaml", kb.history_conditions)}
    for section, (what, records) in sections.items():
        entries = getattr(kb.aliases, section).names
        for key in sorted(set(entries) - set(records)):
            errors.append(f"aliases.yaml: {section}.{key}: unknown key; it is no {what}")
        if section != "diagnoses":  # only codes with another name are listed
            for key in sorted(set(records) - set(entries)):
                errors.append(f"aliases.yaml: {section}.{key}: missing; every {what} needs an entry "
                              "({en: [], zh: []} when it has no other name)")
        for key, entry in sorted(entries.items()):
            for language in ("en", "zh"):
                seen: set[str] = set()
                for alias in getattr(entry, language):
                    where = f"aliases.yaml: {section}.{key}.{language}"
                    if not alias.strip() or alias != alias.strip():
                        errors.append(f"{where}: empty or space-padded name {alias!r}")
                    elif _normal(alias) in seen:
                        errors.append(f"{where}: '{alias}' is listed twice")
                    seen.add(_normal(alias))
    # a drug's (or lab's) other name must not be another drug's name or other name: the answer would be ambiguous
    for section, records in (("drugs", kb.drugs), ("labs", kb.labs)):
        entries = getattr(kb.aliases, section).names
        owners: dict[str, set[str]] = {}
        for key, record in records.items():
            names = _name_forms(record.name.en) | _name_forms(record.name.zh)
            if key in entries:
                names |= {_normal(alias) for alias in [*entries[key].en, *entries[key].zh]}
            for name in names:
                owners.setdefault(name, set()).add(key)
        for key, entry in sorted(entries.items()):
            for alias in [*entry.en, *entry.zh]:
                others = sorted(owners.get(_normal(alias), set()) - {key})
                if others:
                    errors.append(f"aliases.yaml: {section}.{key}: '{alias}' also names {', '.join(others)}")


def _emerging_errors(kb: KnowledgeBase, where: str, mon: Monitored) -> list[str]:
    """A score that emerges at the turning point is a diagnostic screen whose onset reads below its threshold whatever
    the measurement's noise, and whose untreated value reads above it."""
    lab = kb.labs.get(mon.lab)
    if lab is None or lab.positive_at is None or lab.kinetics is None or not mon.diagnostic:
        return [f"{where}: emerges: only a diagnostic lab with a positive_at (a screening questionnaire) emerges"]
    spread = lab.kinetics.spread
    errors = []
    if mon.onset[1] * (1 + spread) >= lab.positive_at:
        errors.append(f"{where}: onset {mon.onset[1]:g} can read {mon.onset[1] * (1 + spread):.1f}, at or above the "
                      f"screen's threshold {lab.positive_at:g}")
    if mon.untreated[0] * (1 - spread) < lab.positive_at:
        errors.append(f"{where}: untreated {mon.untreated[0]:g} can read {mon.untreated[0] * (1 - spread):.1f}, "
                      f"below the screen's threshold {lab.positive_at:g}: the turning point could never come")
    return errors


def _check_mood_screen(kb: KnowledgeBase, errors: list[str]) -> None:
    """The mood screen's questionnaire, advice, conditions and symptoms exist, and its review can take a new score."""
    rule = kb.mood_screen
    if rule is None:
        return
    where = "patient_rules.yaml: mood_screen"
    lab = kb.labs.get(rule.lab)
    if lab is None or lab.positive_at is None or lab.kinetics is None:
        errors.append(f"{where}: lab: '{rule.lab}' is not a screening questionnaire with a positive_at")
    elif rule.follow_up_days < lab.kinetics.min_interval_days:
        errors.append(f"{where}: follow_up_days {rule.follow_up_days} is sooner than {rule.lab}'s min_interval_days: "
                      "the review could not take a new score")
    advice = [rule.safety_net_advice, rule.crisis_advice, *(r.advice for r in rule.referrals)]
    errors += [f"{where}: unknown advice '{key}'" for key in advice if key not in kb.advice]
    errors += [f"{where}: unknown condition '{key}'" for key in
               [*rule.review_conditions, *(c for r in rule.referrals for c in r.conditions)]
               if key not in kb.conditions and key not in kb.history_conditions]
    named = {s.key for c in kb.conditions.values() for s in c.symptoms} | \
        {c.key for cond in kb.conditions.values() for c in cond.complications}
    errors += [f"{where}: unknown symptom or complication '{key}'"
               for key in sorted(set(rule.symptoms + rule.risk_complications) - named)]
    if lab is not None and lab.positive_at is not None and min(r.at for r in rule.referrals) > lab.positive_at:
        errors.append(f"{where}: referrals: a positive screen at {lab.positive_at} has no referral")
    _check_range(where, "strain.delta", rule.strain.delta, errors)
    _check_range(where, "strain.lasts_days", rule.strain.lasts_days, errors)


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
    _check_codes_checked(kb, errors)
    _check_illnesses(kb, errors)
    _check_people(kb, errors)
    _check_serious_effects(kb, errors)
    _check_history_clashes(kb, errors)
    _check_scores(kb, errors)
    _check_units(kb, errors)
    _check_gists(kb, errors)
    _check_aliases(kb, errors)
    _check_mood_screen(kb, errors)
    return errors
