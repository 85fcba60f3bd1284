"""Uploading a built dataset folder to the Hugging Face Hub as one commit (optionally a pull request)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from medmemorybench.errors import InputError

REQUIRED_FILES = ("README.md", "medmemorybench.json")


def plan_operations(folder: Path) -> list[Any]:
    """The commit operations a publish sends: one add per file of the folder, paths relative to it.

    Raises:
        InputError: if the folder is not a complete build.
    """
    from huggingface_hub import CommitOperationAdd

    folder = Path(folder)
    missing = [name for name in REQUIRED_FILES if not (folder / name).is_file()]
    if missing:
        raise InputError(f"{folder}: not a complete build (missing {', '.join(missing)}); run `medmemorybench build`")
    files = sorted(p for p in folder.rglob("*") if p.is_file())
    return [CommitOperationAdd(path_in_repo=p.relative_to(folder).as_posix(), path_or_fileobj=str(p)) for p in files]


def publish(folder: Path, repo_id: str, *, create_pr: bool = False, private: bool = False,
            api: Any = None, message: str = "Upload MedMemoryBench build") -> Any:
    """Create the dataset repo if needed and upload every file in one commit.

    Args:
        api: an `huggingface_hub.HfApi` (built from the environment's token when None).

    Returns:
        The Hub's commit info.
    """
    if "/" not in repo_id:
        raise InputError(f"--repo-id: '{repo_id}' must look like ORG/NAME")
    operations = plan_operations(folder)
    if api is None:
        from huggingface_hub import HfApi

        api = HfApi()
    api.create_repo(repo_id, repo_type="dataset", private=private, exist_ok=True)
    return api.create_commit(repo_id=repo_id, repo_type="dataset", operations=operations,
                             commit_message=message, create_pr=create_pr)
