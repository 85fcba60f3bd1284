"""aliases.yaml: every drug, lab and history condition has an entry; bad entries are reported by file and key."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from medmemorybench.knowledge import default_knowledge
from tests.helpers import knowledge_problems


@pytest.fixture(scope="module")
def kb():
    return default_knowledge()


def _problems_after(tmp_path: Path, change: Callable[[dict], None]) -> str:
    """The problems reported for a copy of the base whose aliases.yaml `change` edited, joined."""
    return knowledge_problems(tmp_path, "aliases.yaml", change)


def test_every_drug_lab_and_history_condition_has_an_entry(kb):
    # an empty list is allowed, but written out: a drug added without an entry fails `medmemorybench knowledge`
    assert set(kb.aliases.drugs.names) == set(kb.drugs)
    assert set(kb.aliases.labs.names) == set(kb.labs)
    assert set(kb.aliases.history.names) == set(kb.history_conditions)


def test_lookups_give_the_names_of_that_thing_in_that_language(kb):
    assert "Lipitor" in kb.aliases.drug("atorvastatin", "en")
    assert "立普妥" in kb.aliases.drug("atorvastatin", "zh")
    assert "acetaminophen" in kb.aliases.drug("paracetamol", "en")
    assert "A1c" in kb.aliases.lab("hba1c", "en") and "糖化" in kb.aliases.lab("hba1c", "zh")
    copd = next(c for c in kb.roster if c.key == "copd_chronic_bronchitis").icd11.code
    assert "COPD" in kb.aliases.diagnosis(copd, "en") and "慢阻肺" in kb.aliases.diagnosis(copd, "zh")
    assert "BPH" in kb.aliases.history_condition("benign_prostatic_hyperplasia", "en")


def test_a_key_without_names_gives_none_and_an_unknown_language_is_refused(kb):
    assert kb.aliases.diagnosis("ZZ99", "en") == []
    assert kb.aliases.drug("no_such_drug", "en") == []
    assert kb.aliases.history_condition("bilateral_renal_artery_stenosis", "zh") == []  # written out empty
    with pytest.raises(KeyError, match="unknown language 'fr'"):
        kb.aliases.drug("atorvastatin", "fr")  # type: ignore[arg-type]


def test_the_lookup_is_a_copy(kb):
    kb.aliases.drug("atorvastatin", "en").append("rosuvastatin")
    assert "rosuvastatin" not in kb.aliases.drug("atorvastatin", "en")


def test_keys_that_name_nothing_are_reported_together(tmp_path):
    def change(doc: dict) -> None:
        doc["drugs"]["names"]["atorvastatine"] = {"en": ["Lipitor 2"], "zh": []}
        doc["labs"]["names"]["hba1c_typo"] = {"en": [], "zh": []}
        doc["diagnoses"]["names"]["ZZ99"] = {"en": ["nothing"], "zh": []}
        doc["history"]["names"]["no_such_history"] = {"en": [], "zh": []}

    message = _problems_after(tmp_path, change)
    assert "aliases.yaml: drugs.atorvastatine: unknown key; it is no drug of drugs/*.yaml" in message
    assert "aliases.yaml: labs.hba1c_typo: unknown key" in message
    assert "aliases.yaml: diagnoses.ZZ99: unknown key; it is no ICD-11 code of the knowledge base" in message
    assert "aliases.yaml: history.no_such_history: unknown key" in message


def test_a_drug_without_an_entry_is_reported(tmp_path):
    message = _problems_after(tmp_path, lambda doc: doc["drugs"]["names"].pop("atorvastatin"))
    assert "aliases.yaml: drugs.atorvastatin: missing; every drug of drugs/*.yaml needs an entry" in message


def test_an_empty_list_must_be_written_out(tmp_path):
    message = _problems_after(tmp_path, lambda doc: doc["drugs"]["names"]["nadolol"].pop("zh"))
    assert "aliases.yaml: drugs.names.nadolol.zh: Field required" in message


def test_an_empty_or_repeated_name_is_reported(tmp_path):
    def change(doc: dict) -> None:
        doc["drugs"]["names"]["atorvastatin"]["en"] = ["Lipitor", "lipitor", " "]
        doc["labs"]["names"]["hba1c"]["zh"] = ["糖化", ""]

    message = _problems_after(tmp_path, change)
    # names are compared without case: "lipitor" repeats "Lipitor"
    assert "aliases.yaml: drugs.atorvastatin.en: 'lipitor' is listed twice" in message
    assert "aliases.yaml: drugs.atorvastatin.en: empty or space-padded name ' '" in message
    assert "aliases.yaml: labs.hba1c.zh: empty or space-padded name ''" in message


def test_a_name_of_another_drug_is_reported(tmp_path):
    def change(doc: dict) -> None:
        names = doc["drugs"]["names"]
        names["rosuvastatin"]["en"].append("LIPITOR")  # another drug's brand
        names["simvastatin"]["en"].append("pravastatin")  # another drug's generic name
        names["amoxicillin"]["en"].append("acetaminophen")  # the bracketed part of "paracetamol (acetaminophen)"

    message = _problems_after(tmp_path, change)
    assert "aliases.yaml: drugs.rosuvastatin: 'LIPITOR' also names atorvastatin" in message
    assert "aliases.yaml: drugs.atorvastatin: 'Lipitor' also names rosuvastatin" in message
    assert "aliases.yaml: drugs.simvastatin: 'pravastatin' also names pravastatin" in message
    assert "aliases.yaml: drugs.amoxicillin: 'acetaminophen' also names paracetamol" in message


def test_a_name_of_another_lab_is_reported(tmp_path):
    message = _problems_after(tmp_path, lambda doc: doc["labs"]["names"]["egfr"]["en"].append("creatinine"))
    assert "aliases.yaml: labs.egfr: 'creatinine' also names creatinine" in message
