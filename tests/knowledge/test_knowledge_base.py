"""The packaged knowledge base is complete and consistent; broken files are reported by file and field."""

from __future__ import annotations

import re
from collections import Counter

import pytest
import yaml

from medmemorybench.errors import KnowledgeError
from medmemorybench.knowledge import default_knowledge, load_knowledge
from tests.helpers import copy_knowledge


@pytest.fixture(scope="module")
def kb():
    return default_knowledge()


def test_roster_is_twenty_conditions_in_ten_groups_of_two(kb):
    assert [c.roster for c in kb.roster] == list(range(1, 21))
    assert sorted(Counter(c.group.key for c in kb.roster).values()) == [2] * 10


def test_catalogue_sizes_meet_the_spec(kb):
    assert len(kb.drugs) >= 120
    assert len(kb.topics) >= 38
    assert sum(len(t.subtopics) for t in kb.topics.values()) >= 98
    assert len(kb.relatives) >= 4


def test_every_condition_has_a_full_care_path(kb):
    for cond in kb.roster:
        roles = [s.role for s in cond.care_path]
        assert roles.count("first_line") == 1, cond.key
        assert "step_up" in roles, cond.key
        assert len({m.lab for m in cond.monitored}) >= 4, cond.key
        assert all(c in kb.drugs for s in cond.care_path for c in s.candidates), cond.key
        assert {c.treatment for c in cond.complications} <= {s.key for s in cond.care_path}, cond.key
        assert cond.name.en and cond.name.zh and cond.lay.en and cond.lay.zh, cond.key


def test_codes_are_well_formed(kb):
    for cond in kb.roster:
        assert re.fullmatch(r"[0-9A-Z]{4}(\.[0-9A-Z]{1,2})?", cond.icd11.code), cond.key
    for drug in kb.drugs.values():
        assert drug.atc is None or re.fullmatch(r"[A-Z]\d\d[A-Z]{2}\d\d", drug.atc), drug.key
    for lab in kb.labs.values():
        assert lab.loinc is None or re.fullmatch(r"\d{1,7}-\d", lab.loinc), lab.key
        assert lab.reference[0] <= lab.reference[1]
        assert lab.plausible[0] <= lab.reference[0] and lab.reference[1] <= lab.plausible[1], lab.key


def test_doses_are_ordered_and_titratable(kb):
    for drug in kb.drugs.values():
        assert 0 < drug.dose.start <= drug.dose.max, drug.key


def test_sulfonamide_allergy_cross_reacts_with_sulfonylureas_and_thiazides(kb):
    forbidden = {g.key: kb.expand([*g.classes, *g.drugs]) for g in kb.allergy_groups.values()}
    sulfa = [k for k, drugs in forbidden.items() if "trimethoprim_sulfamethoxazole" in drugs]
    assert sulfa, "no allergy group covers the sulfonamide antibiotic"
    assert any({"glimepiride", "hydrochlorothiazide"} <= forbidden[k] for k in sulfa)


def test_penicillin_allergy_cross_reacts_with_cephalosporins(kb):
    groups = [kb.expand([*g.classes, *g.drugs]) for g in kb.allergy_groups.values()]
    assert any({"amoxicillin", "cefalexin"} <= drugs for drugs in groups)


def test_broken_yaml_names_the_file(tmp_path):
    data = copy_knowledge(tmp_path)
    (data / "labs.yaml").write_text("labs: [unclosed\n", encoding="utf-8")
    with pytest.raises(KnowledgeError) as info:
        load_knowledge(data)
    assert "labs.yaml" in str(info.value) and "not valid YAML" in str(info.value)


def test_unknown_drug_class_names_file_drug_and_field(tmp_path):
    data = copy_knowledge(tmp_path)
    path = next((data / "drugs").glob("*.yaml"))
    doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    key = doc["drugs"][0]["key"]
    doc["drugs"][0]["drug_class"] = "no_such_class"
    path.write_text(yaml.safe_dump(doc, allow_unicode=True), encoding="utf-8")
    with pytest.raises(KnowledgeError) as info:
        load_knowledge(data)
    message = str(info.value)
    assert f"{key}: drug_class: unknown class 'no_such_class'" in message


def test_condition_with_unknown_lab_and_typo_key_reports_both(tmp_path):
    # Errors are collected, not just the first: a user fixes the file once.
    data = copy_knowledge(tmp_path)
    path = data / "conditions" / "essential_hypertension_grade2.yaml"
    doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    doc["monitored"][0]["lab"] = "systolic_pressure_typo"
    path.write_text(yaml.safe_dump(doc, allow_unicode=True), encoding="utf-8")
    other = data / "conditions" / "pcos.yaml"
    doc2 = yaml.safe_load(other.read_text(encoding="utf-8"))
    doc2["symtoms"] = doc2.pop("symptoms")
    other.write_text(yaml.safe_dump(doc2, allow_unicode=True), encoding="utf-8")
    with pytest.raises(KnowledgeError) as info:
        load_knowledge(data)
    message = str(info.value)
    assert "pcos.yaml: symtoms: Extra inputs are not permitted" in message
    assert "pcos.yaml: symptoms: Field required" in message
    assert len(info.value.problems) >= 2


def test_condition_key_must_match_file_name(tmp_path):
    data = copy_knowledge(tmp_path)
    source = data / "conditions" / "pcos.yaml"
    source.rename(data / "conditions" / "pcos_renamed.yaml")
    with pytest.raises(KnowledgeError, match=r"pcos_renamed.yaml: key: 'pcos' must equal the file name"):
        load_knowledge(data)


def test_missing_file_is_reported(tmp_path):
    data = copy_knowledge(tmp_path)
    (data / "interactions.yaml").unlink()
    with pytest.raises(KnowledgeError, match=r"interactions.yaml: file is missing"):
        load_knowledge(data)


def test_reversed_range_is_reported(tmp_path):
    data = copy_knowledge(tmp_path)
    path = data / "labs.yaml"
    doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    doc["labs"][0]["reference"] = [10, 1]
    path.write_text(yaml.safe_dump(doc, allow_unicode=True), encoding="utf-8")
    with pytest.raises(KnowledgeError, match=r"labs.yaml: .*reference: range \[10.*, 1.*\] is not ordered"):
        load_knowledge(data)
