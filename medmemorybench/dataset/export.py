"""Writing a built dataset as a Hugging Face dataset folder, atomically.

Everything goes to `<out>/medmemorybench.partial/` first; only a validated, complete folder is moved
to `<out>/medmemorybench/`, so an interrupted build never leaves a folder that looks complete.
"""

from __future__ import annotations

import json
from pathlib import Path

from datasets import Dataset
from datasets.utils.logging import disable_progress_bar

from medmemorybench import __version__
from medmemorybench.dataset.build import BuiltDataset
from medmemorybench.dataset.card import card_header, languages_in, render_card
from medmemorybench.dataset.schema import ALL_CONFIGS, FEATURES, METADATA_FILE, STREAM_CONFIGS
from medmemorybench.files import atomic_folder

DATASET_DIRNAME = "medmemorybench"


def _split_key(split: str) -> tuple[int, str]:
    number = split.rpartition("_")[2]
    return (int(number), split) if number.isdigit() else (0, split)


class _SplitTable(Dataset):
    """A `Dataset` that is only written to parquet: its fingerprint is given, not computed. `datasets` otherwise
    hashes every row with dill to name a cache it never writes here (2.5 s of a 2-patient build's 4 s export). The
    parquet bytes do not depend on it."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        kwargs.setdefault("fingerprint", "medmemorybench-export")
        super().__init__(*args, **kwargs)


def export_dataset(built: BuiltDataset, out: Path, *, overwrite: bool = False, hidden: bool = False) -> Path:
    """Write parquet files, the card and a metadata file under `<out>/medmemorybench/` (`hidden`: the public half of a
    hidden-gold release, `dataset.hidden`: its card and metadata hold no seed).

    Raises:
        InputError: if the target exists and `overwrite` is false.
        OutputError: naming the target when it cannot be written (read-only place, full disk).
    """
    disable_progress_bar()  # one bar per parquet file would drown the build's own progress bar
    target = Path(out) / DATASET_DIRNAME
    with atomic_folder(target, overwrite) as partial:
        _write_configs(built, partial, hidden)
    return target


def _write_configs(built: BuiltDataset, partial: Path, hidden: bool = False) -> None:
    """The parquet files, the card and the metadata, into `partial` (renamed onto the target when complete)."""
    splits: dict[str, list[str]] = {}
    num_examples: dict[str, dict[str, int]] = {}
    num_bytes: dict[str, dict[str, int]] = {}
    for config in (c for c in ALL_CONFIGS if c in built.rows):
        (partial / config).mkdir(parents=True)
        splits[config] = sorted(built.rows[config], key=_split_key)
        num_examples[config] = {}
        num_bytes[config] = {}
        for split in splits[config]:
            rows = built.rows[config][split]
            dataset = _SplitTable.from_list(rows, features=FEATURES[config])
            dataset.to_parquet(str(partial / config / f"{split}.parquet"))
            num_examples[config][split] = len(rows)
            num_bytes[config][split] = dataset.data.nbytes
    stats = {**built.stats, "tokens": _approx_tokens(built)}
    (partial / "README.md").write_text(
        render_card(header=card_header(splits, num_examples, num_bytes), stats=stats,
                    seed="sealed" if hidden else built.options.seed, fingerprint=built.fingerprint, hidden=hidden,
                    checkpoint_splits=splits[next(c for c in ("efficient", "efficient_zh") if c in splits)],
                    languages=languages_in(splits)),
        encoding="utf-8")
    options = {k: v for k, v in vars(built.options).items() if not (hidden and k == "seed")}
    metadata = {"medmemorybench": __version__, "fingerprint": built.fingerprint,
                "seed": None if hidden else built.options.seed, "options": options, "stats": stats,
                **({"hidden": True} if hidden else {})}
    (partial / METADATA_FILE).write_text(json.dumps(metadata, indent=1, sort_keys=True) + "\n", encoding="utf-8")


def _approx_tokens(built: BuiltDataset) -> dict[str, int]:
    """Whitespace words x 1.3, a tokenizer-free estimate (reported as approximate)."""
    out = {}
    for config in (c for c in STREAM_CONFIGS if c in built.rows):
        texts = [turn["text"] for rows in built.rows[config].values() for row in rows for session in row["sessions"]
                 for turn in session["turns"]]
        # (Chinese has no spaces: a character counts as a word)
        words = sum(len(t.split()) + sum(1 for ch in t if "\u3400" <= ch <= "\u9fff") for t in texts)
        out[config] = round(words * 1.3)
    return out
