"""The leaderboard's calls to the Hub: repo ids, links to files, a refusal as one error line, and downloading the
bundles of a results repo."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from medmemorybench.dataset.publish import REPO_ID, check_repo_id
from medmemorybench.errors import InputError
from medmemorybench.leaderboard.bundle import SUBMISSIONS_DIR

__all__ = ["REPO_ID", "check_repo_id", "dataset_file_url", "fetch_results", "hub_call"]


def dataset_file_url(repo_id: str, path: str, revision: str = "main", view: str = "blob") -> str:
    """The Hub page of a file (`view` "blob") or folder ("tree") of a dataset repo, on the endpoint in use
    (`HF_ENDPOINT`, by default huggingface.co)."""
    from huggingface_hub import constants

    return f"{constants.ENDPOINT}/datasets/{repo_id}/{view}/{revision}/{path}"


@contextmanager
def hub_call(what: str) -> Iterator[None]:
    """Turn the Hub's refusal (401, 404, ...) or an unreachable Hub into one InputError naming `what`."""
    from huggingface_hub.utils import httpx

    try:
        yield
    except httpx.HTTPError as exc:  # (huggingface_hub's HfHubHTTPError is one too)
        detail = str(exc).strip().splitlines()[0][:200] if str(exc).strip() else exc.__class__.__name__
        raise InputError(f"{what}: the Hub refused or could not be reached ({detail}); check HF_TOKEN (or `hf auth "
                         "login`) and the repo id") from None


def fetch_results(repo_id: str, folder: Path, revision: str = "main") -> Path:
    """Download the bundles of a results dataset repo (its `submissions/`, at `revision`: merged pull requests
    only) into `folder`; returns it, a results folder for `load_board`.

    Raises:
        InputError: naming the repo when the Hub refuses it or cannot be reached.
    """
    from huggingface_hub import snapshot_download
    from huggingface_hub.errors import OfflineModeIsEnabled

    check_repo_id(repo_id)
    with hub_call(f"--repo_id {repo_id}"):
        try:
            snapshot_download(repo_id, repo_type="dataset", revision=revision, local_dir=folder,
                              allow_patterns=[f"{SUBMISSIONS_DIR}/**"])
        except OfflineModeIsEnabled:
            raise InputError(f"--repo_id {repo_id}: HF_HUB_OFFLINE is set; unset it to read the results repo, or "
                             "give a local --results folder") from None
    (Path(folder) / SUBMISSIONS_DIR).mkdir(parents=True, exist_ok=True)  # (a repo without submissions yet)
    return Path(folder)
