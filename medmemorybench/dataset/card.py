"""The dataset card: README.md with the `configs:` and `dataset_info:` header, rendered from a template."""

from __future__ import annotations

from pathlib import Path

import yaml
from datasets import DatasetInfo
from jinja2 import StrictUndefined
from jinja2.sandbox import SandboxedEnvironment

from medmemorybench import __version__
from medmemorybench.dataset.schema import ALL_CONFIGS, FEATURES, LANGUAGES, language_of
from medmemorybench.questions.spec import question_types

CARD_TEMPLATE = Path(__file__).parent / "cards" / "README.md.jinja"
LICENSE = "cc-by-4.0"


def card_header(splits: dict[str, list[str]], num_examples: dict[str, dict[str, int]],
                num_bytes: dict[str, dict[str, int]] | None = None) -> str:
    """The YAML front matter: license, configs with their data files, and dataset_info from the schema."""
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
    languages = sorted({language_of(c) for c in splits if c != "personas"}, key=LANGUAGES.index)
    header = {"license": LICENSE, "language": languages, "pretty_name": "MedMemoryBench",
              "task_categories": ["question-answering"], "tags": ["medical", "memory", "long-context", "synthetic"],
              "configs": configs, "dataset_info": infos}
    return yaml.safe_dump(header, sort_keys=False, allow_unicode=True).rstrip()


def render_card(*, splits: dict[str, list[str]], num_examples: dict[str, dict[str, int]], stats: dict,
                seed: int, fingerprint: str, repo_or_path: str = "medmemorybench",
                num_bytes: dict[str, dict[str, int]] | None = None) -> str:
    """The card's full text."""
    env = SandboxedEnvironment(undefined=StrictUndefined, keep_trailing_newline=True)
    template = env.from_string(CARD_TEMPLATE.read_text(encoding="utf-8"))
    first = next(c for c in ("efficient", "efficient_zh") if c in splits)
    checkpoint_splits = ", ".join(f"`{s}`" for s in splits[first])
    return template.render(header=card_header(splits, num_examples, num_bytes), version=__version__, seed=seed,
                           fingerprint=fingerprint, stats=stats, type_names={t.code: t.name for t in question_types()},
                           checkpoint_splits=checkpoint_splits, repo_or_path=repo_or_path, license=LICENSE,
                           languages=sorted({language_of(c) for c in splits if c != "personas"}, key=LANGUAGES.index))
