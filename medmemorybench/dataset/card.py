"""The dataset card: README.md with the Hub metadata header (`configs:` and `dataset_info:` generated from the schema,
size, task categories, language, license, the paper's arXiv tag), rendered from `dataset_cards/README.md.jinja`."""

from __future__ import annotations

import json
import re
from pathlib import Path

import yaml
from datasets import DatasetInfo
from jinja2 import StrictUndefined

from medmemorybench import __version__
from medmemorybench.dataset.schema import ALL_CONFIGS, FEATURES, LANGUAGES, METADATA_FILE, language_of
from medmemorybench.errors import InputError
from medmemorybench.questions.spec import question_types
from medmemorybench.resources import dataset_cards_dir
from medmemorybench.templating import BoundedSandbox

CARD_TEMPLATE = "README.md.jinja"
LICENSE = "cc-by-4.0"
ARXIV_ID = "2605.11814"
"""The paper (the Hub links a dataset to its paper page through an `arxiv:` tag)."""
TASK_CATEGORIES = ["question-answering", "multiple-choice"]
TASK_IDS = ["closed-domain-qa", "multiple-choice-qa"]
"""Answers come from the patient's own records (closed domain); MQ questions are multiple choice."""
LOCAL_NAME = "medmemorybench"
"""What the card's usage line loads before a publish: the bare name a build registers (`register.py`)."""
SIZE_BOUNDS = ((10**3, "n<1K"), (10**4, "1K<n<10K"), (10**5, "10K<n<100K"), (10**6, "100K<n<1M"),
               (10**7, "1M<n<10M"), (10**8, "10M<n<100M"), (10**9, "100M<n<1B"))
"""The Hub's `size_categories` buckets, by upper bound."""
_FRONT_MATTER = re.compile(r"\A---\n(.*?)\n---\n", re.DOTALL)


def size_category(n: int) -> str:
    """The Hub's size bucket of a dataset with `n` examples (here: questions)."""
    return next((name for bound, name in SIZE_BOUNDS if n < bound), "n>1B")


def languages_in(configs: object) -> list[str]:
    """The languages of a build's configs (`efficient`, `efficient_zh`, ...), English first."""
    return sorted({language_of(c) for c in configs if c != "personas"}, key=LANGUAGES.index)


def card_header(splits: dict[str, list[str]], num_examples: dict[str, dict[str, int]],
                num_bytes: dict[str, dict[str, int]] | None = None) -> str:
    """The YAML front matter: Hub metadata, configs with their data files, and dataset_info from the schema."""
    configs, infos = [], []
    default = next(c for c in ("efficient", "efficient_zh") if c in splits)
    for config in (c for c in ALL_CONFIGS if c in splits):
        entry = {"config_name": config, "data_files": [
            {"split": split, "path": f"{config}/{split}.parquet"} for split in splits[config]]}
        if config == default:
            entry["default"] = True
        configs.append(entry)
        features = DatasetInfo(features=FEATURES[config])._to_yaml_dict()["features"]
        infos.append({"config_name": config, "features": features,
                      "splits": [{"name": s, "num_bytes": (num_bytes or {}).get(config, {}).get(s, 0),
                                  "num_examples": num_examples[config][s]} for s in splits[config]]})
    questions = sum(n for config in splits if config.startswith("questions") for n in num_examples[config].values())
    header = {"license": LICENSE, "language": languages_in(splits), "pretty_name": "MedMemoryBench",
              "size_categories": [size_category(questions)], "task_categories": TASK_CATEGORIES,
              "task_ids": TASK_IDS, "annotations_creators": ["machine-generated"],
              "language_creators": ["machine-generated"],
              "multilinguality": ["multilingual" if len(languages_in(splits)) > 1 else "monolingual"],
              "source_datasets": ["original"],
              "tags": ["medical", "memory", "long-context", "synthetic", "agent-memory", f"arxiv:{ARXIV_ID}"],
              "configs": configs, "dataset_info": infos}
    return yaml.safe_dump(header, sort_keys=False, allow_unicode=True).rstrip()


def render_card(*, header: str, stats: dict, seed: int | str, fingerprint: str, checkpoint_splits: list[str],
                languages: list[str], repo_or_path: str = LOCAL_NAME, hidden: bool = False) -> str:
    """The card's full text; `repo_or_path` is what its usage line loads (the bare name, or a Hub repo id)."""
    env = BoundedSandbox(undefined=StrictUndefined, keep_trailing_newline=True)
    template = env.from_string((dataset_cards_dir() / CARD_TEMPLATE).read_text(encoding="utf-8"))
    return template.render(header=header, version=__version__, seed=seed, fingerprint=fingerprint, stats=stats,
                           type_names={t.code: t.name for t in question_types()},
                           checkpoint_splits=", ".join(f"`{s}`" for s in checkpoint_splits),
                           repo_or_path=repo_or_path, is_local=repo_or_path == LOCAL_NAME, license=LICENSE,
                           arxiv_id=ARXIV_ID, languages=languages, hidden=hidden)


def card_for_repo(folder: Path, repo_id: str) -> str:
    """A build's card as published to `repo_id`: the same header, its usage line loading `repo_id`.

    Raises:
        InputError: naming the file when the card or the metadata is missing or not what a build writes.
    """
    card_path, meta_path = Path(folder) / "README.md", Path(folder) / METADATA_FILE
    try:
        text, meta = card_path.read_text(encoding="utf-8"), json.loads(meta_path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise InputError(f"{folder}: cannot read its card and metadata ({exc.__class__.__name__})") from None
    match = _FRONT_MATTER.match(text)
    if match is None:
        raise InputError(f"{card_path}: no YAML header between '---' lines")
    header = match.group(1)
    configs = {c["config_name"]: c for c in yaml.safe_load(header).get("configs", [])}
    first = next((c for c in ("efficient", "efficient_zh") if c in configs), None)
    if first is None:
        raise InputError(f"{card_path}: configs: no 'efficient' or 'efficient_zh' config")
    splits = [f["split"] for f in configs[first]["data_files"]]
    hidden = meta.get("hidden") is True
    return render_card(header=header, stats=meta["stats"], seed="sealed" if hidden else meta["seed"],
                       fingerprint=meta["fingerprint"], checkpoint_splits=splits, repo_or_path=repo_id,
                       languages=languages_in(configs), hidden=hidden)
