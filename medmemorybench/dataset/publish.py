"""Uploading a built dataset folder to the Hugging Face Hub as one commit (optionally a pull request).

The card goes up with its usage line rewritten to load the repo id (`card.card_for_repo`): on the Hub the
card shows `load_dataset("ORG/NAME", "mixed")`, not the local build's bare name.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from medmemorybench.errors import InputError

REQUIRED_FILES = ("README.md", "medmemorybench.json")


def check_repo_id(repo_id: str) -> None:
    """Raise InputError unless `repo_id` looks like ORG/NAME."""
    org, _, name = repo_id.partition("/")
    if not org or not name or "/" in name:
        raise InputError(f"--repo_id: '{repo_id}' must look like ORG/NAME")


def plan_operations(folder: Path, repo_id: str) -> list[Any]:
    """The commit operations a publish sends: one add per file of the folder, paths relative to it, the card
    (README.md) with its usage line loading `repo_id`.

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
    return [CommitOperationAdd(path_in_repo=p.relative_to(folder).as_posix(),
                               path_or_fileobj=card if p.name == "README.md" and p.parent == folder else str(p))
            for p in files]


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
