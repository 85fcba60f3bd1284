"""The packaged knowledge base is complete and consistent; broken files are reported by file and field."""

from __future__ import annotations

import re
from collections import Counter

import pytest
import yaml

from medmemorybench.errors import KnowledgeError
from medmemorybench.knowledge import default_knowledge, load_knowledge
from tests.helpers import copy_knowledge, edited_knowledge_problems


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
        assert all(c in kb.drugs for s in cond.care_path for c in s.drug_keys), cond.key
        assert {t for c in cond.complications for t in c.treatment} <= {s.key for s in cond.care_path}, cond.key
        assert cond.name.en and cond.name.zh and cond.lay.en and cond.lay.zh, cond.key
        assert all(s.purpose is not None and s.purpose.en and s.purpose.zh for s in cond.care_path), cond.key


def test_the_packaged_base_carries_every_clinical_rule(kb):
    from medmemorybench.knowledge.validate import check_completeness

    assert check_completeness(kb) == []


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


def test_sulfonamide_antibiotic_allergy_does_not_bar_non_antibiotic_sulfonamides(kb):
    # 2022 drug-allergy practice parameter: cross-reactivity with thiazides and sulfonylureas is not immunological,
    # so an allergy to co-trimoxazole must not make them "forbidden" (a caution is not a bar).
    forbidden = {g.key: kb.expand([*g.classes, *g.drugs]) for g in kb.allergy_groups.values()}
    sulfa = [k for k, drugs in forbidden.items() if "trimethoprim_sulfamethoxazole" in drugs]
    assert sulfa, "no allergy group covers the sulfonamide antibiotic"
    assert all(not {"glimepiride", "hydrochlorothiazide"} & forbidden[k] for k in sulfa)


def test_a_dose_form_preference_bars_a_drug_only_when_every_formulation_breaks_it(kb):
    from medmemorybench.knowledge.models import DOSES_PER_DAY
    from medmemorybench.simulate.safety import Constraint, forbidden_by

    barred = forbidden_by(kb, Constraint("medication_preference", "once_daily_only"))
    assert "metformin" not in barred  # the extended-release tablet is taken once a day
    for key in barred:
        assert all(DOSES_PER_DAY[spec.frequency] > 1 for _, spec in kb.drugs[key].formulations()), key


def test_a_caution_is_never_a_bar(kb):
    from medmemorybench.simulate.safety import Constraint, forbidden_by

    for partner_drug, partners in kb.interaction_partners.items():
        if not kb.drugs[partner_drug].chronic_use:
            continue
        barred = forbidden_by(kb, Constraint("medication_history", partner_drug))
        for other, rule in partners:
            if rule.action == "caution" and not any(r.action == "avoid" for o, r in partners if o == other):
                assert other not in barred or not barred[other].startswith("interaction:"), (partner_drug, other)


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


def _edit_drug(data, key: str, change) -> None:  # noqa: ANN001
    for path in (data / "drugs").glob("*.yaml"):
        doc = yaml.safe_load(path.read_text(encoding="utf-8"))
        for drug in doc["drugs"]:
            if drug["key"] == key:
                change(drug)
                path.write_text(yaml.safe_dump(doc, allow_unicode=True), encoding="utf-8")
                return
    raise AssertionError(key)


def test_a_dose_no_strength_can_make_is_reported(tmp_path):
    data = copy_knowledge(tmp_path)
    _edit_drug(data, "atorvastatin", lambda d: d["dose"].update(ladder=[10, 20, 60, 80]))
    with pytest.raises(KnowledgeError, match=r"atorvastatin: dose: 60 mg cannot be made from"):
        load_knowledge(data)


def test_a_course_without_its_length_and_a_lab_without_kinetics_are_reported_together(tmp_path):
    data = copy_knowledge(tmp_path)
    _edit_drug(data, "amoxicillin", lambda d: d.pop("course_days"))
    path = data / "labs.yaml"
    doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    doc["labs"][0].pop("kinetics")
    path.write_text(yaml.safe_dump(doc, allow_unicode=True), encoding="utf-8")
    with pytest.raises(KnowledgeError) as info:
        load_knowledge(data)
    message = str(info.value)
    assert "amoxicillin: course_days: required for a course drug" in message
    assert f"labs.yaml: {doc['labs'][0]['key']}: kinetics: required" in message


def test_a_care_step_moving_an_unmonitored_lab_is_reported(tmp_path):
    data = copy_knowledge(tmp_path)
    path = data / "conditions" / "pcos.yaml"
    doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    doc["care_path"][0]["moves"] = ["hba1c_typo"]
    path.write_text(yaml.safe_dump(doc, allow_unicode=True), encoding="utf-8")
    with pytest.raises(KnowledgeError, match=r"pcos.yaml: care_path\.\w+\.moves: 'hba1c_typo' is not a monitored lab"):
        load_knowledge(data)


def test_a_code_nobody_checked_is_reported(tmp_path):
    # every ICD-11 and LOINC code must have been checked against a list (code_checks.yaml), verified or not
    data = copy_knowledge(tmp_path)
    path = data / "conditions" / "pcos.yaml"
    doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    doc["misdiagnoses"][0]["icd11"] = "ZZ99"
    path.write_text(yaml.safe_dump(doc, allow_unicode=True), encoding="utf-8")
    with pytest.raises(KnowledgeError, match=r"conditions/pcos.yaml: misdiagnoses: ICD-11 code 'ZZ99' has no verified"):
        load_knowledge(data)


def test_every_corrected_code_is_replaced_where_it_was_wrong(kb):
    from medmemorybench.knowledge.validate import codes_in_use

    used = {(system, code) for system, code, _ in codes_in_use(kb)}
    for check in kb.code_checks:
        if check.status == "corrected":
            assert (check.system, check.correct) in used, check.code


def test_an_interaction_is_told_by_the_partner_at_hand(kb):
    from medmemorybench.simulate.safety import rule_text

    # one rule covers theophylline with allopurinol and with non-selective beta-blockers: a patient on propranolol
    # hears about bronchospasm, not about what allopurinol does
    with_propranolol = rule_text(kb, "interaction:theophylline+propranolol")
    with_allopurinol = rule_text(kb, "interaction:propranolol+theophylline"), rule_text(
        kb, "interaction:theophylline+allopurinol")
    assert "bronchospasm" in with_propranolol.en and "allopurinol" not in with_propranolol.en
    assert "别嘌醇" not in with_propranolol.zh
    assert with_allopurinol[0] == with_propranolol
    assert "allopurinol" in with_allopurinol[1].en and "bronchospasm" not in with_allopurinol[1].en
    # a partner the rule does not single out keeps its general effect
    general = next(r for r in kb.interactions if "ondansetron" in r.b and "tramadol" in r.b)
    assert rule_text(kb, "interaction:sertraline+tramadol") == general.effect
    assert rule_text(kb, "interaction:sertraline+sumatriptan") != general.effect


def test_a_partner_effect_for_a_drug_on_neither_side_is_reported(tmp_path):
    data = copy_knowledge(tmp_path)
    path = data / "interactions.yaml"
    doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    index = next(i for i, r in enumerate(doc["interactions"]) if r.get("by_partner"))
    doc["interactions"][index]["by_partner"][0]["partners"] = ["metformin"]
    path.write_text(yaml.safe_dump(doc, allow_unicode=True), encoding="utf-8")
    with pytest.raises(KnowledgeError, match=rf"interactions.yaml: interactions\[{index}\].by_partner\[0\]: partners: "
                                             "names a drug that is on neither side"):
        load_knowledge(data)


def _edit_yaml(data, name: str, change) -> None:  # noqa: ANN001
    path = data / name
    doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    change(doc)
    path.write_text(yaml.safe_dump(doc, allow_unicode=True), encoding="utf-8")


def test_an_allergy_caution_on_a_drug_the_group_bars_is_reported(tmp_path):
    # a drug is either barred by the allergy or given with its warning, never both
    data = copy_knowledge(tmp_path)
    group = "ace_inhibitor_reaction"
    _edit_yaml(data, "allergies.yaml", lambda doc: next(g for g in doc["allergy_groups"] if g["key"] == group)[
        "caution"].update(drugs=["arb", "ace_inhibitor"]))
    with pytest.raises(KnowledgeError, match=rf"allergies.yaml: {group}: caution.drugs: .*'lisinopril'.* are barred"):
        load_knowledge(data)


def test_a_habit_stop_with_unknown_advice_and_no_risk_is_reported(tmp_path):
    data = copy_knowledge(tmp_path)
    habit = "potassium_salt_substitute"
    _edit_yaml(data, "diet.yaml", lambda doc: next(h for h in doc["habits"] if h["key"] == habit).update(
        stop={"advice": "stop_lo_salt", "source": "test"}))
    with pytest.raises(KnowledgeError) as info:
        load_knowledge(data)
    message = str(info.value)
    assert f"diet.yaml: habits.{habit}: stop.advice: unknown advice 'stop_lo_salt'" in message
    assert f"diet.yaml: habits.{habit}: stop: names no risk" in message


def test_a_brief_intervention_with_unknown_advice_is_reported(tmp_path):
    # both places a brief intervention is declared: a drinking habit and the smoking lifestyle
    data = copy_knowledge(tmp_path)
    _edit_yaml(data, "diet.yaml", lambda doc: next(h for h in doc["habits"] if h["key"] == "nightly_alcohol")[
        "brief_intervention"].update(advice="cut_down"))
    _edit_yaml(data, "people.yaml", lambda doc: next(ls for ls in doc["lifestyles"] if ls["key"] == "current_smoker")[
        "brief_intervention"].update(advice="quit_now"))
    with pytest.raises(KnowledgeError) as info:
        load_knowledge(data)
    message = str(info.value)
    assert "diet.yaml: habits.nightly_alcohol: brief_intervention.advice: unknown advice 'cut_down'" in message
    assert "people.yaml: lifestyles.current_smoker: brief_intervention.advice: unknown advice 'quit_now'" in message


def test_an_advice_instead_with_unknown_advice_and_condition_is_reported(tmp_path):
    data = copy_knowledge(tmp_path)
    _edit_yaml(data, "diet.yaml", lambda doc: next(a for a in doc["advice"] if a["key"] == "alcohol_limit")[
        "instead"].update(advice="no_alcohol", conditions=["cirrhosis_of_the_liver"]))
    with pytest.raises(KnowledgeError) as info:
        load_knowledge(data)
    message = str(info.value)
    assert "diet.yaml: advice.alcohol_limit.instead: advice: unknown advice 'no_alcohol'" in message
    assert "diet.yaml: advice.alcohol_limit.instead: conditions: unknown condition 'cirrhosis_of_the_liver'" in message


def test_a_drug_red_flag_with_unknown_lab_and_advice_is_reported(tmp_path):
    # (an intercurrent.yaml anchor is written out in full by the dump, so the strep throat's flag is its own copy)
    data = copy_knowledge(tmp_path)
    _edit_yaml(data, "intercurrent.yaml", lambda doc: next(i for i in doc["illnesses"] if i["key"] == "strep_throat")[
        "symptoms"][0]["drug_red_flag"].update(labs=["anc"], advice="count_today"))
    with pytest.raises(KnowledgeError) as info:
        load_knowledge(data)
    message = str(info.value)
    where = "intercurrent.yaml: strep_throat: symptoms.sore_throat_fever.drug_red_flag"
    assert f"{where}: labs: unknown lab 'anc'" in message
    assert f"{where}: advice: unknown advice 'count_today'" in message


def test_a_prodrug_binds_by_its_moiety_and_must_carry_its_harms(kb, tmp_path):
    # every rule on mesalamine (the kidney bar, CKD 4, the nephrotoxic interaction) names sulfasalazine, which releases
    # it; a prodrug without its moiety's toxicity or checks, or releasing an unknown drug, is reported
    assert kb.expand(["mesalamine"]) == {"mesalamine", "sulfasalazine"}
    data = copy_knowledge(tmp_path)

    def strip(doc):  # noqa: ANN001, ANN202
        drug = next(d for d in doc["drugs"] if d["key"] == "sulfasalazine")
        drug["toxicities"] = ["myelotoxic", "hepatotoxic"]
        drug["monitoring"] = [m for m in drug["monitoring"] if m["lab"] != "egfr"]
    _edit_yaml(data, "drugs/immunology.yaml", strip)
    _edit_yaml(data, "drugs/immunology.yaml", lambda doc: next(d for d in doc["drugs"] if d["key"] == "mesalamine")
               .update(releases=["balsalazide"]))
    with pytest.raises(KnowledgeError) as info:
        load_knowledge(data)
    reported = [line for line in str(info.value).splitlines() if "releases" in line or "moiety" in line]
    assert sorted(line.partition(": ")[2] for line in reported) == [
        "mesalamine: releases: 'balsalazide' is not another drug",
        "sulfasalazine: monitoring: lacks ['egfr'], which its moiety mesalamine needs",
        "sulfasalazine: toxicities: lacks ['nephrotoxic'], which its moiety mesalamine carries"], reported


def test_the_seed_53_rules_refuse_what_would_break_them(tmp_path):
    # (a depression screen that could read 10 before the turning point, the mood review sooner than the PHQ-9's
    # recall, a risk factor naming no habit, two flags for one harm: each reported, all together)
    message = edited_knowledge_problems(tmp_path, {
        "conditions/major_depressive_disorder.yaml": lambda doc: next(
            m for m in doc["monitored"] if m["lab"] == "phq9").update(onset=[8, 12]),
        "patient_rules.yaml": lambda doc: (doc["mood_screen"][0].update(follow_up_days=7), next(
            r for r in doc["rules"] if r["key"] == "bupropion_seizure_risk_factors")["when"]["risk_factors"].update(
            habits=["nightly_whisky"])),
        # (a copy: the YAML anchor makes both symptoms' flags one object)
        "intercurrent.yaml": lambda doc: doc["illnesses"][1]["symptoms"][0].update(
            drug_red_flag={**doc["illnesses"][1]["symptoms"][0]["drug_red_flag"], "recheck_days": 14}),
    })
    assert "monitored.phq9: onset 12 can read 15.6, at or above the screen's threshold 10" in message
    assert "mood_screen: follow_up_days 7 is sooner than phq9's min_interval_days" in message
    assert "bupropion_seizure_risk_factors: when.risk_factors.habits: unknown habit 'nightly_whisky'" in message
    assert "2 different flags warn of 'myelotoxic'" in message


def test_a_complication_with_neither_treatment_nor_advice_and_an_unknown_decline_advice_are_reported(tmp_path):
    # suicidal thoughts are treated by their advice (the crisis team, a safety plan), no drug (the seed-61 read); one
    # with neither would be left alone, and a score's decline must name advice that exists
    data = copy_knowledge(tmp_path)
    path = data / "conditions" / "major_depressive_disorder.yaml"
    doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    suicidal = next(c for c in doc["complications"] if c["key"] == "suicidal_ideation")
    assert "treatment" not in suicidal
    suicidal.pop("advice")
    path.write_text(yaml.safe_dump(doc, allow_unicode=True), encoding="utf-8")
    with pytest.raises(KnowledgeError, match=r"needs the advice that is its care"):
        load_knowledge(data)
    data = copy_knowledge(tmp_path / "decline")
    path = data / "labs.yaml"
    doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    next(lab for lab in doc["labs"] if lab["key"] == "moca")["decline"]["advice"] = "memory_typo"
    path.write_text(yaml.safe_dump(doc, allow_unicode=True), encoding="utf-8")
    with pytest.raises(KnowledgeError, match=r"labs.yaml: moca: decline.advice: unknown advice 'memory_typo'"):
        load_knowledge(data)
