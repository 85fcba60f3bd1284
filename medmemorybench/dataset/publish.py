"""Uploading a built dataset folder to the Hugging Face Hub as one commit (optionally a pull request), with the
benchmark's `eval.yaml` at the repo root.

The card goes up with its usage line rewritten to load the repo id (`card.card_for_repo`): on the Hub the
card shows `load_dataset("ORG/NAME", "mixed")`, not the local build's bare name.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from medmemorybench.dataset.eval_yaml import EVAL_YAML, eval_yaml
from medmemorybench.dataset.schema import STREAM_CONFIGS
from medmemorybench.errors import InputError

REQUIRED_FILES = ("README.md", "medmemorybench.json")
REPO_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,95}/[A-Za-z0-9][A-Za-z0-9._-]{0,95}$")
"""ORG/NAME, as the Hub names repos (a model id of this shape that is no local folder is taken for a Hub model)."""


def check_repo_id(repo_id: str, flag: str = "--repo_id") -> str:
    """`repo_id` when it looks like ORG/NAME.

    Raises:
        InputError: naming `flag` otherwise.
    """
    if not REPO_ID.match(repo_id):
        raise InputError(f"{flag}: '{repo_id}' must look like ORG/NAME")
    return repo_id


def plan_operations(folder: Path, repo_id: str) -> list[Any]:
    """The commit operations a publish sends: one add per file of the folder, paths relative to it, the card
    (README.md) with its usage line loading `repo_id`, and the benchmark declaration `eval.yaml` (made from the
    build's splits and checked) unless the folder has its own.

    Raises:
        InputError: if the folder is not a complete build or `repo_id` is not ORG/NAME.
    """
    from huggingface_hub import CommitOperationAdd

    from medmemorybench.dataset.card import card_for_repo

    check_repo_id(repo_id)
    folder = Path(folder)
    missing = [name for name in REQUIRED_FILES if not (folder / name).is_file()]
    if missing:
        raise InputError(f"{folder}: not a complete build (missing {', '.join(missing)}); run `medmemorybench build`")
    files = sorted(p for p in folder.rglob("*") if p.is_file())
    card = card_for_repo(folder, repo_id).encode("utf-8")
    operations = [CommitOperationAdd(path_in_repo=p.relative_to(folder).as_posix(),
                                     path_or_fileobj=card if p.name == "README.md" and p.parent == folder else str(p))
                  for p in files]
    if not (folder / EVAL_YAML).exists():
        splits = {config: sorted(p.stem for p in (folder / config).glob("*.parquet")) for config in STREAM_CONFIGS
                  if (folder / config).is_dir()}
        operations.append(CommitOperationAdd(path_in_repo=EVAL_YAML, path_or_fileobj=eval_yaml(splits).encode()))
    return operations


def publish(folder: Path, repo_id: str, *, create_pr: bool = False, private: bool = False,
            api: Any = None, message: str = "Upload MedMemoryBench build") -> Any:
    """Create the dataset repo if needed and upload every file in one commit.

    Args:
        api: an `huggingface_hub.HfApi` (built from the environment's token when None).

    Returns:
        The Hub's commit info.
    """
    operations = plan_operations(folder, repo_id)
    if api is None:
        from huggingface_hub import HfApi

        api = HfApi()
    api.create_repo(repo_id, repo_type="dataset", private=private, exist_ok=True)
    return api.create_commit(repo_id=repo_id, repo_type="dataset", operations=operations,
                             commit_message=message, create_pr=create_pr)
