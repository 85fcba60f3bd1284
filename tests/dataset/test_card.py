"""The dataset card carries the Hub's metadata, read back offline by huggingface_hub's own card classes."""

from __future__ import annotations

import pytest
from huggingface_hub import DatasetCard, DatasetCardData

from medmemorybench.dataset import BuildOptions, build_dataset, export_dataset
from medmemorybench.dataset.card import ARXIV_ID, size_category
from medmemorybench.knowledge import default_knowledge
from medmemorybench.render.templates import load_templates
from medmemorybench.resources import dataset_cards_dir


@pytest.fixture(scope="module")
def card_text(tmp_path_factory):
    built = build_dataset(default_knowledge(), load_templates("en"),
                          BuildOptions(seed=1, personas=2, health_sessions=5, family_sessions=5))
    folder = export_dataset(built, tmp_path_factory.mktemp("card"))
    return (folder / "README.md").read_text(encoding="utf-8"), built


def test_card_header_parses_with_the_hub_card_classes(card_text):
    text, built = card_text
    card = DatasetCard(text)
    data = card.data
    assert isinstance(data, DatasetCardData)
    assert data.license == "cc-by-4.0" and data.language == ["en"] and data.pretty_name == "MedMemoryBench"
    assert data.size_categories == [size_category(built.stats["questions"])]
    assert data.task_categories == ["question-answering", "multiple-choice"]
    assert data.task_ids == ["closed-domain-qa", "multiple-choice-qa"]
    assert f"arxiv:{ARXIV_ID}" in data.tags  # the Hub links the paper page from this tag
    configs = {c["config_name"]: c for c in data.configs}
    assert set(configs) == {"efficient", "mixed", "questions", "personas"} and configs["efficient"]["default"]
    # a round trip through the card data class keeps every field the Hub reads
    again = DatasetCardData(**data.to_dict())
    assert again.to_dict() == data.to_dict()


def test_card_body_has_citation_paper_link_and_local_usage(card_text):
    text, built = card_text
    assert "@inproceedings{medmemorybench2026" in text and f"eprint    = {{{ARXIV_ID}}}" in text
    assert f"https://arxiv.org/abs/{ARXIV_ID}" in text
    assert 'load_dataset("medmemorybench", "mixed", split="checkpoint_30")' in text
    assert built.fingerprint[:40] in text  # the revision the build is registered under


@pytest.mark.parametrize(("n", "bucket"), [(0, "n<1K"), (999, "n<1K"), (1_000, "1K<n<10K"), (1_699, "1K<n<10K"),
                                          (10_000, "10K<n<100K"), (2_000_000, "1M<n<10M")])
def test_size_category_buckets(n, bucket):
    assert size_category(n) == bucket


def test_card_template_is_a_top_level_resource():
    assert dataset_cards_dir().name == "dataset_cards" and (dataset_cards_dir() / "README.md.jinja").is_file()
