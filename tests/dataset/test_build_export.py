"""The exported Hugging Face folder: loads offline by config and split, round-trips, validates, is reproducible."""

from __future__ import annotations

import json
import shutil

import pytest
from datasets import load_dataset

from medmemorybench.dataset import BuildOptions, build_dataset, export_dataset, load, read_rows, validate_rows
from medmemorybench.dataset.schema import FEATURES
from medmemorybench.errors import InputError
from medmemorybench.knowledge import default_knowledge
from medmemorybench.render.templates import load_templates

OPTIONS = BuildOptions(seed=0, personas=4, health_sessions=20, family_sessions=20)


@pytest.fixture(scope="module")
def built():
    return build_dataset(default_knowledge(), load_templates("en"), OPTIONS)


@pytest.fixture(scope="module")
def folder(built, tmp_path_factory):
    return export_dataset(built, tmp_path_factory.mktemp("out"))


def test_built_rows_are_valid(built):
    assert validate_rows(built.rows) == []


def test_load_dataset_by_config_and_split_offline(folder):
    mixed = load_dataset(str(folder), "mixed", split="checkpoint_30")
    assert mixed.features == FEATURES["mixed"]
    assert len(mixed) == OPTIONS.personas
    kinds = {s["kind"] for row in mixed for s in row["sessions"]}
    assert kinds == {"regular", "health_noise", "family_noise"}
    efficient = load_dataset(str(folder), split="checkpoint_10")  # default config
    assert {s["kind"] for row in efficient for s in row["sessions"]} == {"regular"}
    assert all(len([s for s in row["sessions"]]) == 10 for row in efficient)


def test_questions_and_personas_configs(folder):
    questions = load_dataset(str(folder), "questions", split="checkpoint_20")
    assert set(questions["checkpoint"]) == {20}
    personas = load_dataset(str(folder), "personas", split="patients")
    assert len(personas) == OPTIONS.personas and len(personas[0]["events"]) == 100


def test_package_load_finds_the_local_build(folder):
    ds = load("questions", "checkpoint_10", path=folder.parent)
    assert len(ds) > 0


def test_unknown_config_or_split_is_a_clear_error(folder):
    with pytest.raises(InputError, match="unknown config 'mixd'; valid configs: efficient, mixed"):
        load("mixd", path=folder)
    with pytest.raises(InputError, match="unknown split 'checkpoint_15'.*checkpoint_10"):
        load("mixed", "checkpoint_15", path=folder)


def test_rows_round_trip_through_parquet(built, folder):
    assert read_rows(folder) == built.rows


def test_card_has_configs_and_fingerprint(built, folder):
    card = (folder / "README.md").read_text()
    assert "config_name: mixed" in card and "path: mixed/checkpoint_30.parquet" in card
    assert built.fingerprint in card
    metadata = json.loads((folder / "medmemorybench.json").read_text())
    assert metadata["fingerprint"] == built.fingerprint


def test_same_seed_same_content_other_seed_other_content(built):
    again = build_dataset(default_knowledge(), load_templates("en"), OPTIONS)
    assert again.fingerprint == built.fingerprint
    other = build_dataset(default_knowledge(), load_templates("en"),  # (small: any other seed differs)
                          BuildOptions(seed=1, personas=1, encounters=20, health_sessions=2, family_sessions=2))
    assert other.fingerprint != built.fingerprint


def test_corrupted_parquet_is_named(folder, tmp_path):
    copy = tmp_path / "copy"
    shutil.copytree(folder, copy)
    (copy / "mixed" / "checkpoint_20.parquet").write_bytes(b"not parquet at all")
    with pytest.raises(InputError, match=r"mixed/checkpoint_20.parquet: corrupted or not a parquet file"):
        read_rows(copy)


def test_existing_output_is_refused(built, folder):
    with pytest.raises(InputError, match="already exists"):
        export_dataset(built, folder.parent)


def test_both_languages_hold_the_same_questions_and_sessions():
    # one truth, two renderings: same query ids, evidence, right letters and session ids; golds in each language
    # (60 encounters: below 50 a year keeps only its story's spine, and a trap may go untested, which the
    # validator rightly refuses)
    options = BuildOptions(seed=4, personas=1, encounters=60, health_sessions=3, family_sessions=3, language="both")
    built = build_dataset(default_knowledge(), None, options)
    assert validate_rows(built.rows) == []  # (the validator compares the renderings too)
    english = {q["query_id"]: q for rows in built.rows["questions"].values() for q in rows}
    chinese = {q["query_id"]: q for rows in built.rows["questions_zh"].values() for q in rows}
    assert english.keys() == chinese.keys() and english
    assert all(q["evidence_session_ids"] == english[i]["evidence_session_ids"] for i, q in chinese.items())
    assert any("\u4e00" <= ch <= "\u9fff" for q in chinese.values() for ch in q["question"])
    assert set(built.stats["variety"]) == {"efficient", "mixed", "efficient_zh", "mixed_zh"}
