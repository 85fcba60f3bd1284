"""Relatives: their own conditions, drugs, allergies and labs, chosen to resemble the patient's.

They are the confusers of family noise, so their drugs share the patient's drug classes and their
labs share the patient's lab names, with other values.
"""

from __future__ import annotations

import random

from medmemorybench.knowledge.base import KnowledgeBase
from medmemorybench.knowledge.models import Condition, Text
from medmemorybench.simulate.models import AllergyFact, LabFact, Relative, RelativeDrug

SPOUSES = ("wife", "husband")
"""Relation keys of which a patient has at most one."""


def _relative_drug(kb: KnowledgeBase, drug_key: str, rng: random.Random) -> RelativeDrug:
    dose = kb.drugs[drug_key].dose
    steps = int((dose.max - dose.start) / dose.step) if dose.step else 0
    value = round(dose.start + dose.step * rng.randint(0, min(steps, 3)), 3)
    return RelativeDrug(drug=drug_key, dose=value, unit=dose.unit, frequency=dose.frequency)


def _relative_lab(kb: KnowledgeBase, lab_key: str, own: Condition | None, rng: random.Random) -> LabFact:
    lab = kb.labs[lab_key]
    ranges = [m.untreated for m in own.monitored if m.lab == lab_key] if own else []
    low, high = ranges[0] if ranges else lab.reference
    value = rng.uniform(low, high)
    value = round(value, lab.decimals) if lab.decimals else float(round(value))
    return LabFact(lab=lab_key, value=value, unit=lab.unit)


def make_family(
    kb: KnowledgeBase,
    condition: Condition,
    patient_sex: str,
    patient_age: int,
    patient_drugs: list[str],
    rng: random.Random,
) -> list[Relative]:
    """Two to four relatives whose facts overlap the patient's drug classes and lab names."""
    templates = sorted(kb.relatives.values(), key=lambda t: t.relation)
    rng.shuffle(templates)
    target = rng.randint(2, 4)
    chosen = []
    for template in templates:
        is_spouse = template.relation in SPOUSES
        if is_spouse and (template.sex == patient_sex or any(t.relation in SPOUSES for t in chosen)):
            continue
        if patient_age + template.age_offset[0] < 1:
            continue
        chosen.append(template)
        if len(chosen) == target:
            break
    given = kb.people.given_names
    patient_classes = sorted({kb.drugs[d].drug_class for d in patient_drugs})
    relatives = []
    for template in chosen:
        conditions = [
            key for key in template.typical_conditions
            if key not in kb.conditions or kb.conditions[key].sex in ("any", template.sex)
        ] or list(template.typical_conditions)
        own_key = rng.choice(conditions)
        own = kb.conditions.get(own_key)
        drug_keys: list[str] = []
        for cls in rng.sample(patient_classes, k=min(2, len(patient_classes))):
            drug_keys.append(rng.choice(kb.drugs_by_class[cls]))
        if own is not None and own.care_path[0].candidates[0] not in drug_keys:
            drug_keys.append(own.care_path[0].candidates[0])
        lab_keys = rng.sample([m.lab for m in condition.monitored], k=min(3, len(condition.monitored)))
        allergies = []
        if rng.random() < 0.6:
            group = kb.allergy_groups[rng.choice(sorted(kb.allergy_groups))]
            allergies.append(
                AllergyFact(group=group.key, agent=rng.choice(group.agents), reaction=rng.choice(group.reactions))
            )
        age_low, age_high = template.age_offset
        relatives.append(
            Relative(
                relation=template.relation,
                name=Text(en=rng.choice(given[template.sex].en), zh=rng.choice(given[template.sex].zh)),
                sex=template.sex,
                age=max(1, patient_age + rng.randint(age_low, age_high)),
                conditions=[own_key],
                drugs=[_relative_drug(kb, key, rng) for key in drug_keys],
                allergies=allergies,
                labs=[_relative_lab(kb, key, own, rng) for key in lab_keys],
            )
        )
    return relatives
