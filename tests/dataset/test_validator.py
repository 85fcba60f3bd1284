"""The validator catches each kind of violation it claims to check, naming the question or session."""

from __future__ import annotations

import copy

import pytest

from medmemorybench.dataset import BuildOptions, build_dataset, validate_rows
from medmemorybench.knowledge import default_knowledge
from medmemorybench.render.templates import load_templates


@pytest.fixture(scope="module")
def rows():
    built = build_dataset(default_knowledge(), load_templates("en"),
                          BuildOptions(seed=2, personas=3, health_sessions=10, family_sessions=10))
    return built.rows


def _first(rows, predicate):
    for split_rows in rows["questions"].values():
        for q in split_rows:
            if predicate(q):
                return q
    raise AssertionError("no such question")


def test_clean_rows_pass(rows):
    assert validate_rows(rows) == []


def test_leakage_is_reported(rows):
    bad = copy.deepcopy(rows)
    q = _first(bad, lambda q: q["evidence_session_ids"] and q["checkpoint"] < 100)
    q["evidence_session_ids"] = [q["persona_id"] + "-S100"]
    assert any(f"{q['query_id']}: leakage: evidence {q['persona_id']}-S100" in p for p in validate_rows(bad))


def test_unanswerable_key_fact_is_reported(rows):
    bad = copy.deepcopy(rows)
    q = _first(bad, lambda q: q["key_facts"])
    q["key_facts"] = ["999.9 mg/dL"]
    assert any(f"{q['query_id']}: key fact '999.9 mg/dL' appears in none" in p for p in validate_rows(bad))


def test_duplicate_query_id_is_reported(rows):
    bad = copy.deepcopy(rows)
    split = next(iter(bad["questions"]))
    bad["questions"][split].append(dict(bad["questions"][split][0]))
    assert any("duplicate query_id" in p for p in validate_rows(bad))


def test_abstention_fact_present_in_patient_sessions_is_reported(rows):
    bad = copy.deepcopy(rows)
    q = _first(bad, lambda q: q["abstain"])
    q["absent_fact"] = "doctor"
    assert any(f"{q['query_id']}: abstention fact 'doctor' appears" in p for p in validate_rows(bad))


def test_bad_multiple_choice_is_reported(rows):
    bad = copy.deepcopy(rows)
    q = _first(bad, lambda q: q["query_type"] == "MQ")
    q["correct_options"] = ["A", "B", "C", "D"]
    assert any(f"{q['query_id']}: MQ needs 4 options with 1-3 correct" in p for p in validate_rows(bad))


def test_schema_violation_is_reported(rows):
    bad = copy.deepcopy(rows)
    split = next(iter(bad["efficient"]))
    bad["efficient"][split][0]["checkpoint"] = "ten"
    assert any("efficient/" in p and "schema" in p for p in validate_rows(bad))


def test_missing_trap_category_is_reported(rows):
    bad = copy.deepcopy(rows)
    persona = next(iter(bad["personas"]["patients"]))["persona_id"]
    for split_rows in bad["questions"].values():
        for q in split_rows:
            if q["persona_id"] == persona and q["trap_category"] == "allergy":
                q["trap_category"] = None
    assert any(f"{persona}: trap categories never tested: ['allergy']" in p for p in validate_rows(bad))


def test_an_unknown_fact_kind_is_reported(rows):
    bad = copy.deepcopy(rows)
    q = _first(bad, lambda q: q["facts"])
    q["facts"][0]["kind"] = "colour"
    assert any(f"{q['query_id']}: unknown fact kind(s) ['colour']" in p for p in validate_rows(bad))
