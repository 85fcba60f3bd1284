"""Uploading a built dataset folder to the Hugging Face Hub as one commit (optionally a pull request), with the
benchmark's `eval.yaml` at the repo root."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from medmemorybench.dataset.eval_yaml import EVAL_YAML, eval_yaml
from medmemorybench.dataset.schema import STREAM_CONFIGS
from medmemorybench.errors import InputError

REQUIRED_FILES = ("README.md", "medmemorybench.json")


def plan_operations(folder: Path) -> list[Any]:
    """The commit operations a publish sends: one add per file of the folder, paths relative to it, and the
    benchmark declaration `eval.yaml` (made from the build's splits and checked) unless the folder has its own.

    Raises:
        InputError: if the folder is not a complete build.
    """
    from huggingface_hub import CommitOperationAdd

    folder = Path(folder)
    missing = [name for name in REQUIRED_FILES if not (folder / name).is_file()]
    if missing:
        raise InputError(f"{folder}: not a complete build (missing {', '.join(missing)}); run `medmemorybench build`")
    files = sorted(p for p in folder.rglob("*") if p.is_file())
    operations = [CommitOperationAdd(path_in_repo=p.relative_to(folder).as_posix(), path_or_fileobj=str(p))
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
    if "/" not in repo_id:
        raise InputError(f"--repo-id: '{repo_id}' must look like ORG/NAME")
    operations = plan_operations(folder)
    if api is None:
        from huggingface_hub import HfApi

        api = HfApi()
    api.create_repo(repo_id, repo_type="dataset", private=private, exist_ok=True)
    return api.create_commit(repo_id=repo_id, repo_type="dataset", operations=operations,
                             commit_message=message, create_pr=create_pr)
