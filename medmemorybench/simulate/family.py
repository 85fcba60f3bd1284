"""Relatives: real people with their own conditions, their own drugs and labs, who resemble the patient.

They are the confusers of family noise. Each relative is an adult of an age their relation allows, with
a condition they can have at that age and sex; they take that condition's standard drugs at real doses
(checked against the rules that bind them: a Beers-listed drug is not given to an elderly father) and
have results typical of it under treatment. Resemblance comes from real overlap: conditions whose drugs
share a class with the patient's, or whose labs share a name, are preferred, never by copying the
patient's own drugs onto someone else.
"""

from __future__ import annotations

import random

from medmemorybench.knowledge.base import KnowledgeBase
from medmemorybench.knowledge.models import Condition, LabRange, Text
from medmemorybench.simulate.models import AllergyFact, LabFact, Relative, RelativeDrug
from medmemorybench.simulate.safety import Patient, verdict

SPOUSES = ("wife", "husband")
"""Relation keys of which a patient has at most one."""
ADULT_AGE = 18
"""Relatives are adults: consultations for children (their dosing, their diseases) are out of scope."""
OVERLAP_WEIGHT = 3.0
"""How much more likely a condition that shares drug classes or lab names with the patient is chosen."""
ALLERGY_PROBABILITY = 0.5


def is_eligible(kb: KnowledgeBase, key: str, sex: str, age: int) -> bool:
    """Whether someone of this sex and age can have the condition or history condition `key`."""
    if key in kb.conditions:
        cond = kb.conditions[key]
        low, high = cond.eligible_age or cond.age
        return cond.sex in ("any", sex) and low <= age <= high
    hist = kb.history_conditions[key]
    return hist.sex in ("any", sex) and hist.age[0] <= age <= hist.age[1]


def standard_drugs(kb: KnowledgeBase, key: str, sex: str, age: int) -> list[str]:
    """The drugs someone with this condition usually takes: the first allowed drug of its first-line step
    (a condition) or of its treatments (a history condition)."""
    person = Patient(age, sex, key, egfr=None)  # a history condition binds its contraindications like a condition
    if key in kb.conditions:
        steps = [s for s in kb.conditions[key].care_path if s.role == "first_line"]
        pools = [s.drug_keys for s in steps]
    else:
        pools = [kb.history_conditions[key].treatments]
    chosen = []
    for pool in pools:
        drug = next((d for d in pool if verdict(kb, d, person).is_allowed), None)
        if drug is not None:
            chosen.append(drug)
    return chosen


def typical_labs(kb: KnowledgeBase, key: str) -> list[LabRange]:
    """Results typical of the condition under treatment."""
    if key in kb.conditions:
        return [LabRange(lab=m.lab, range=m.treated) for m in kb.conditions[key].monitored]
    return list(kb.history_conditions[key].labs)


def _overlap(kb: KnowledgeBase, key: str, sex: str, age: int, classes: set[str], labs: set[str]) -> bool:
    drugs = standard_drugs(kb, key, sex, age)
    shares_class = bool({kb.drugs[d].drug_class for d in drugs} & classes)
    return shares_class or bool({r.lab for r in typical_labs(kb, key)} & labs)


def _dose(kb: KnowledgeBase, drug_key: str, rng: random.Random) -> tuple[float, str, str]:
    _, spec = kb.drugs[drug_key].formulations()[0]
    return rng.choice(spec.doses()[:3]), spec.unit, spec.frequency


def _value(kb: KnowledgeBase, lab_range: LabRange, rng: random.Random) -> LabFact:
    lab = kb.labs[lab_range.lab]
    value = rng.uniform(*lab_range.range)
    rounded = round(value, lab.decimals) if lab.decimals else float(round(value))
    return LabFact(lab=lab.key, value=rounded, unit=lab.unit)


def make_family(
    kb: KnowledgeBase,
    condition: Condition,
    patient_sex: str,
    patient_age: int,
    patient_drugs: list[str],
    rng: random.Random,
    patient_name: Text | None = None,
    lives_alone: bool = False,
) -> list[Relative]:
    """Two to four adult relatives whose own conditions overlap the patient's drug classes or lab names.

    Args:
        patient_name: the patient's full name: no relative shares their given name, nor another relative's.
        lives_alone: the patient says they live on their own: no spouse.
    """
    templates = sorted(kb.relatives.values(), key=lambda t: t.relation)
    rng.shuffle(templates)
    target = rng.randint(2, 4)
    classes = {kb.drugs[d].drug_class for d in patient_drugs}
    patient_labs = {m.lab for m in condition.monitored}
    given = kb.people.given_names
    relatives: list[Relative] = []
    # given names already in the family (the patient's own: "Hannah Kim" and the surname-first "金海燕")
    taken_en = {patient_name.en.split(" ", 1)[0]} if patient_name is not None else set()
    taken_zh = {patient_name.zh[1:]} if patient_name is not None else set()
    for template in templates:
        if len(relatives) == target:
            break
        is_spouse = template.relation in SPOUSES
        if is_spouse and (lives_alone or template.sex == patient_sex or any(r.relation in SPOUSES for r in relatives)):
            continue
        low = max(ADULT_AGE, patient_age + template.age_offset[0])
        high = min(100, patient_age + template.age_offset[1])
        if low > high:
            continue
        age = rng.randint(low, high)
        options = sorted(k for k in template.typical_conditions if k != condition.key and
                         is_eligible(kb, k, template.sex, age) and standard_drugs(kb, k, template.sex, age))
        if not options:
            continue
        weights = [OVERLAP_WEIGHT if _overlap(kb, k, template.sex, age, classes, patient_labs) else 1.0
                   for k in options]
        own = rng.choices(options, weights)[0]
        drugs = []
        for drug in standard_drugs(kb, own, template.sex, age):
            dose, unit, frequency = _dose(kb, drug, rng)
            drugs.append(RelativeDrug(drug=drug, dose=dose, unit=unit, frequency=frequency, indication=own))
        lab_pool = typical_labs(kb, own)
        lab_pool.sort(key=lambda r: r.lab not in patient_labs)
        labs = [_value(kb, r, rng) for r in lab_pool[:3]]
        allergies = []
        if rng.random() < ALLERGY_PROBABILITY:
            taken = {d.drug for d in drugs}
            groups = [g for g in sorted(kb.allergy_groups) if not taken & kb.expand(
                [*kb.allergy_groups[g].classes, *kb.allergy_groups[g].drugs])]
            group = kb.allergy_groups[rng.choice(groups)]
            allergies.append(AllergyFact(group=group.key, agent=rng.choice(group.agents).plain(),
                                         reaction=rng.choice(group.reactions).plain()))
        relatives.append(Relative(
            relation=template.relation,
            name=Text(en=rng.choice([n for n in given[template.sex].en if n not in taken_en]),
                      zh=rng.choice([n for n in given[template.sex].zh if n not in taken_zh])),
            sex=template.sex, age=age, conditions=[own], drugs=drugs, allergies=allergies, labs=labs,
        ))
        taken_en.add(relatives[-1].name.en)
        taken_zh.add(relatives[-1].name.zh)
    return relatives
