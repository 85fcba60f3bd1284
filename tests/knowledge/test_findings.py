"""Findings are templates over a visit's values: the validator rejects a placeholder naming nothing (with file and
field), a range stated as a result and languages that fill different values; a filled value reads exactly as the
sessions write that lab in each language."""

from __future__ import annotations

import pytest
import yaml

from medmemorybench.errors import KnowledgeError
from medmemorybench.knowledge import default_knowledge, load_knowledge
from medmemorybench.knowledge.findings import MissingValue, fill, labs_named, placeholders_of
from medmemorybench.knowledge.models import Text
from medmemorybench.render.fields import lab_with_unit
from medmemorybench.render.templates import load_templates
from tests.helpers import copy_knowledge


@pytest.fixture(scope="module")
def kb():
    return default_knowledge()


def _edit_test(data, condition: str, test: str, change) -> None:  # noqa: ANN001
    path = data / "conditions" / f"{condition}.yaml"
    doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    change(next(t for t in doc["diagnostic_tests"] if t["key"] == test))
    path.write_text(yaml.safe_dump(doc, allow_unicode=True), encoding="utf-8")


def test_a_finding_naming_an_unknown_lab_is_reported_with_file_and_field(tmp_path):
    data = copy_knowledge(tmp_path)

    def typo(test: dict) -> None:
        test["finding"] = {"en": "AHI {lab:ahi_typo}, mostly obstructive", "zh": "AHI {lab:ahi_typo}，以阻塞性事件为主"}

    _edit_test(data, "obstructive_sleep_apnea", "polysomnography", typo)
    with pytest.raises(KnowledgeError) as info:
        load_knowledge(data)
    message = str(info.value)
    assert ("obstructive_sleep_apnea.yaml: diagnostic_tests.polysomnography.finding.en: {lab:ahi_typo}: "
            "unknown lab 'ahi_typo'") in message
    assert "diagnostic_tests.polysomnography.finding.zh: {lab:ahi_typo}: unknown lab 'ahi_typo'" in message


def test_a_finding_that_states_a_range_as_the_patients_result_is_reported(tmp_path):
    # the physician's review: "AHI 30-55 events/h ... oxygen nadir 72-82%" beside a visit that measured AHI 30.6
    data = copy_knowledge(tmp_path)

    def textbook(test: dict) -> None:
        test["finding"] = {"en": "AHI 30-55 events/h, with oxygen nadir 72-82%",
                           "zh": "AHI 30-55次/小时，最低血氧72%-82%"}

    _edit_test(data, "obstructive_sleep_apnea", "polysomnography", textbook)
    with pytest.raises(KnowledgeError) as info:
        load_knowledge(data)
    message = str(info.value)
    assert "polysomnography.finding.en: '30-55 events/h' states a range as the patient's result" in message
    assert "polysomnography.finding.en: '72-82 %' states a range" in message
    assert "polysomnography.finding.zh: '30-55 次/小时' states a range" in message


def test_a_finding_with_an_ungraded_lab_an_undeclared_draw_or_languages_that_differ_reports_all(tmp_path):
    data = copy_knowledge(tmp_path)

    def broken(test: dict) -> None:
        test["finding"] = {"en": "AHI {lab:ahi} ({grade:nadir_spo2}), right ventricle {drawn:rv_size}",
                           "zh": "AHI {lab:ahi}，{score:no_such_score}"}

    _edit_test(data, "obstructive_sleep_apnea", "polysomnography", broken)
    with pytest.raises(KnowledgeError) as info:
        load_knowledge(data)
    message = str(info.value)
    assert "{grade:nadir_spo2}: lab 'nadir_spo2' has no grades in labs.yaml" in message
    assert "{drawn:rv_size}: no drawn value 'rv_size' is declared" in message
    assert "{score:no_such_score}: unknown score 'no_such_score' (scores.yaml)" in message
    assert "polysomnography.finding: the languages fill different values" in message


def test_a_unit_word_for_a_unit_the_knowledge_base_does_not_have_is_reported(tmp_path):
    data = copy_knowledge(tmp_path)
    path = data / "units.yaml"
    doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    doc["units"]["breaths per min"] = {"zh": "次/分"}
    path.write_text(yaml.safe_dump(doc, allow_unicode=True), encoding="utf-8")
    with pytest.raises(KnowledgeError, match=r"units.yaml: units.breaths per min: not a unit of the knowledge base"):
        load_knowledge(data)


def test_a_filled_lab_reads_exactly_as_the_sessions_write_it_in_each_language(kb):
    for language in ("en", "zh"):
        templates = load_templates(language)
        for key, lab in kb.labs.items():
            value = round(sum(lab.reference) / 2, lab.decimals)
            filled = fill(kb, Text(en=f"{{lab:{key}}}", zh=f"{{lab:{key}}}"), {key: value})
            assert getattr(filled, language) == lab_with_unit(kb, key, value, templates.unit(lab.unit)), (key, language)


def test_a_finding_is_filled_with_the_values_of_its_visit_in_both_languages(kb):
    text = Text(en="AHI {lab:ahi} ({grade:ahi}), nadir {value:nadir_spo2}%, PASP {drawn:pasp} mmHg",
                zh="AHI {lab:ahi}（{grade:ahi}），最低血氧{value:nadir_spo2}%，肺动脉收缩压{drawn:pasp} mmHg")
    assert labs_named(kb, text) == ["ahi", "nadir_spo2"]
    filled = fill(kb, text, {"ahi": 30.6, "nadir_spo2": 79.0}, drawn={"pasp": 44.0})
    assert filled.en == "AHI 30.6 events/h (severe), nadir 79%, PASP 44 mmHg"
    assert filled.zh == "AHI 30.6 次/小时（重度），最低血氧79%，肺动脉收缩压44 mmHg"
    assert not placeholders_of(filled)
    with pytest.raises(MissingValue, match=r"\{lab:ahi\}: no value at this visit"):
        fill(kb, text, {"nadir_spo2": 79.0}, drawn={"pasp": 44.0})


def test_a_grade_is_the_band_the_shown_value_falls_in(kb):
    grades = kb.labs["ahi"].grades
    assert grades is not None
    assert [grades.text_of(v).en for v in (4.9, 5.0, 14.9, 15.0, 29.9, 30.0)] == \
        ["normal", "mild", "mild", "moderate", "moderate", "severe"]
    uacr = kb.labs["uacr"].grades
    assert uacr is not None and "(A2)" in uacr.text_of(300).en and "(A3)" in uacr.text_of(301).en
