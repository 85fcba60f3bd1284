"""Submitting a run: verify and re-score it (`rescore.verify_run`), bundle it with the system's self-description,
and send the bundle as a pull request to a results dataset repo on the Hub, or write it into a local results
folder. A Hub model that answered also gets `.eval_results` entries, for its repo's owner to propose."""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

import yaml

from medmemorybench import __version__
from medmemorybench.dataset.load import HUB_ID
from medmemorybench.errors import InputError
from medmemorybench.files import load_yaml, write_atomic
from medmemorybench.harness.results import RUN_HEADER, SAMPLES, SUMMARY
from medmemorybench.leaderboard.bundle import (
    MANIFEST_FILE,
    SYSTEM_FILE,
    Manifest,
    SystemClaim,
    SystemDescription,
    bundle_path,
    parse_model,
    read_bounded,
    sha256,
)
from medmemorybench.leaderboard.eval_results import eval_result_entries
from medmemorybench.leaderboard.hub import REPO_ID, check_repo_id, dataset_file_url, hub_call
from medmemorybench.leaderboard.rescore import VerifiedRun, verify_run
from medmemorybench.leaderboard.systems import known_system
from medmemorybench.report import backbone_label, cost_per_session, paper_rows


@dataclass
class Submission:
    """A verified run as the files a results repo receives."""

    path: PurePosixPath
    """The bundle's folder, relative to the results root."""
    files: dict[str, bytes]
    """File name -> content (`bundle.BUNDLE_FILES`)."""
    system: SystemDescription
    manifest: Manifest
    eval_results: str | None
    """`.eval_results/medmemorybench.yaml` for the answering model's repo (None: not a Hub model, a slice, or no
    accuracy)."""
    title: str
    """The pull request's title."""
    description: str

    def file_paths(self) -> dict[str, bytes]:
        """Path in the results repo -> content."""
        return {str(self.path / name): data for name, data in self.files.items()}


def load_claim(path: Path | None) -> SystemClaim:
    """The self-description file (`--system`, YAML or JSON), or an empty claim.

    Raises:
        InputError: naming the file and key that is invalid.
    """
    if path is None:
        return SystemClaim()
    try:
        value = load_yaml(read_bounded(path, 64 << 10).decode("utf-8"))
    except (UnicodeDecodeError, yaml.YAMLError) as exc:
        raise InputError(f"{path}: not YAML or JSON ({' '.join(str(exc).split())[:160]})") from None
    return parse_model(SystemClaim, value if value is not None else {}, str(path))


def describe_system(verified: VerifiedRun, claim: SystemClaim) -> SystemDescription:
    """The self-description: what the run header says (memory, models), what this package knows of a built-in
    system (name, paradigm, version), and the claim over both; the cost per session comes from the samples.

    Raises:
        InputError: when a system that is not built in has no version or paradigm in the claim.
    """
    header = verified.header
    memory_spec = dict(header.get("memory") or {})
    memory = str(memory_spec.pop("memory", ""))
    known = known_system(memory)
    if known is None and (claim.version is None or claim.paradigm is None):
        raise InputError(f"--system: memory '{memory}' is not built in; describe it in a YAML file with at least "
                         "version and paradigm (and name, link): docs/leaderboard.md")
    model = backbone_label(header)
    hub_id = claim.answering_model_hub_id
    raw_model = str((header.get("model") or {}).get("model") or "")
    if hub_id is None and REPO_ID.match(raw_model) and not Path(raw_model).exists():
        hub_id = raw_model
    memory_model = header.get("memory_model")
    values = {
        "name": known.name if known else memory, "version": f"medmemorybench {__version__}",
        "paradigm": known.paradigm if known else None, "memory": memory, "memory_args": memory_spec,
        "memory_model": backbone_label({"model": memory_model}) if isinstance(memory_model, dict) else None,
        "answering_model": model, "answering_model_hub_id": hub_id,
        "cost_per_session": cost_per_session(verified.summary),
        **claim.model_dump(exclude_none=True, exclude={"answering_model_hub_id"}),
    }
    return parse_model(SystemDescription, values, "--system")


def prepare_submission(run_dir: Path, *, dataset_path: str | Path | None = None, claim: SystemClaim | None = None,
                       allow_partial: bool = False, dataset_repo_id: str = HUB_ID,
                       dataset_revision: str | None = None, results_repo_id: str | None = None,
                       now: dt.datetime | None = None) -> Submission:
    """Verify a run and make its bundle.

    Args:
        allow_partial: accept a run of some patients or checkpoints (`--limit`, `--checkpoints`); the board labels
            it a slice. Without it only a run of every question of its tasks is accepted.
        dataset_repo_id: the benchmark's dataset repo, named by `.eval_results` entries.
        results_repo_id: where the bundle will go, for the entries' source link.

    Raises:
        InputError: the first problem found, naming the file and field.
    """
    run_dir = Path(run_dir)
    verified = verify_run(run_dir, dataset_path)
    imported = verified.header.get("dataset_source")
    if isinstance(imported, dict) and results_repo_id is not None:  # (its samples hold the source's data)
        raise InputError(f"{run_dir / RUN_HEADER}: a run on an import of {imported.get('title')} (licence "
                         f"{imported.get('license')}): its samples hold the source's data, which the results repo "
                         "does not publish; submit it to a local results folder (--results DIR) for a local board")
    coverage = verified.coverage
    if not coverage.is_complete and not allow_partial:
        raise InputError(f"{run_dir / RUN_HEADER}: config: the run answered {coverage.questions} of its tasks' "
                         f"{coverage.of_questions} questions ({coverage.patients} of {coverage.of_patients} patients, "
                         f"checkpoints {coverage.checkpoints}); a board row needs them all (--allow_partial "
                         "submits it labelled as a slice)")
    system = describe_system(verified, claim or SystemClaim())
    samples = read_bounded(run_dir / SAMPLES)
    files = {RUN_HEADER: read_bounded(run_dir / RUN_HEADER), SAMPLES: samples,
             SUMMARY: _json_bytes(verified.summary), SYSTEM_FILE: _json_bytes(system.model_dump())}
    path = bundle_path(system.name, system.answering_model, sha256(samples))
    when = (now or dt.datetime.now(dt.timezone.utc)).replace(microsecond=0)
    judge = verified.header.get("judge")
    manifest = Manifest(
        verified_by=__version__, submitted_at=when.isoformat(), dataset_fingerprint=verified.fingerprint,
        dataset_revision=dataset_revision,
        tasks=[{"task": t["task"], "version": str(t["version"]), "mode": t["mode"]} for t in verified.header["tasks"]],
        coverage=coverage, judge=backbone_label({"model": judge}) if isinstance(judge, dict) else None,
        verification="unscored" if verified.verification == "unscored" else "public gold",
        files={name: sha256(data) for name, data in files.items()})
    files[MANIFEST_FILE] = _json_bytes(manifest.model_dump())
    eval_results = None
    if system.answering_model_hub_id and coverage.is_complete and verified.verification != "unscored" \
            and not imported:  # (an entry claims MedMemoryBench scores: never a LoCoMo or LongMemEval run's)
        (_types, (row,)) = paper_rows([verified.summary])
        source = dataset_file_url(results_repo_id, str(path), view="tree") if results_repo_id else None
        eval_results = eval_result_entries(
            row, dataset_id=dataset_repo_id, dataset_revision=dataset_revision, date=when.isoformat(),
            source_url=source, notes=f"memory: {system.name} ({system.memory}); {system.paradigm}")
    title = f"Add {system.name} / {system.answering_model} ({path.name})"
    kind = f"A run on an import of {imported.get('title')}" if isinstance(imported, dict) else \
        "MedMemoryBench submission"
    description = (f"{kind}, verified by medmemorybench {__version__}: the samples re-score to "
                   f"the summary, {coverage.questions} of {coverage.of_questions} questions, dataset "
                   f"{verified.fingerprint[:12]}." if verified.verification != "unscored" else
                   f"MedMemoryBench submission on a hidden-gold release ({verified.fingerprint[:12]}): "
                   f"{coverage.questions} of {coverage.of_questions} questions answered, checked for consistency by "
                   f"medmemorybench {__version__}; the maintainers score it against the sealed gold.")
    return Submission(path, files, system, manifest, eval_results, title, description)


def _json_bytes(value: Any) -> bytes:
    return (json.dumps(value, indent=1, sort_keys=True, ensure_ascii=False) + "\n").encode("utf-8")


def send_to_hub(submission: Submission, repo_id: str, api: Any = None) -> Any:
    """Open a pull request on the results dataset repo with the bundle (one commit); returns the commit info,
    whose `pr_url` is the pull request.

    Raises:
        InputError: naming the repo when the Hub refuses it or cannot be reached.
    """
    from huggingface_hub import CommitOperationAdd, HfApi

    check_repo_id(repo_id)
    api = api or HfApi()
    operations = [CommitOperationAdd(path_in_repo=path, path_or_fileobj=data)
                  for path, data in submission.file_paths().items()]
    with hub_call(f"--repo_id {repo_id}"):
        return api.create_commit(repo_id=repo_id, repo_type="dataset", operations=operations,
                                 commit_message=submission.title, commit_description=submission.description,
                                 create_pr=True)


def write_to_folder(submission: Submission, results: Path) -> Path:
    """Write the bundle into a local results folder (a replaced bundle of the same samples is rewritten whole);
    returns its folder.

    Raises:
        OutputError: naming the file that could not be written.
    """
    target = Path(results).joinpath(*submission.path.parts)
    for name, data in submission.files.items():
        write_atomic(target / name, data.decode("utf-8"))
    return target


def write_eval_results(submission: Submission, run_dir: Path) -> Path | None:
    """Write the `.eval_results` entries beside the run (`RUN_DIR/.eval_results/medmemorybench.yaml`), for the
    model repo's owner to propose; None when there are none."""
    if submission.eval_results is None:
        return None
    from medmemorybench.leaderboard.eval_results import EVAL_RESULTS_FILE

    path = Path(run_dir) / EVAL_RESULTS_FILE
    write_atomic(path, submission.eval_results)
    return path
