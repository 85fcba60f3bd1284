"""The leaderboard's data: every bundle of a results folder read without trusting it (shape, sizes, hashes, and
re-scored against the release when asked), turned into rows through the report's own tables, beside the paper's
reference rows."""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from medmemorybench.dataset.load import DATASET_DIRNAME, build_metadata, dataset_source, is_build
from medmemorybench.dataset.schema import METADATA_FILE
from medmemorybench.errors import InputError
from medmemorybench.harness.results import RUN_HEADER, SAMPLES, SUMMARY
from medmemorybench.leaderboard.bundle import (
    MANIFEST_FILE,
    SUBMISSIONS_DIR,
    SYSTEM_FILE,
    Manifest,
    SystemDescription,
    is_slug,
    parse_model,
    read_bounded,
    read_json_object,
    sha256,
)
from medmemorybench.leaderboard.rescore import ReleaseFacts, release_facts, verify_run
from medmemorybench.leaderboard.systems import load_systems
from medmemorybench.render.stream import CHECKPOINT_EVERY
from medmemorybench.report import MODES, benchmark_of, is_ceiling, paper_rows, source_of, table_mean
from medmemorybench.report.benchmarks import unscored_entry

QUALITY_METRICS = ("correct", "recall_at_k", "token_f1", "rouge_l", "hallucinated", "trap_safe", "selective")
"""The quality table's columns: each mode's mean over all its questions (`overall`)."""
CURVE_METRICS = ("correct", "recall_at_k")
"""Drawn against the checkpoint (the saturation curve)."""
MAX_BUNDLES = 500
_FINGERPRINT = re.compile(r"^[0-9a-f]{64}$")


@dataclass
class BoardRow:
    """One row of the board: a verified run, or a number the paper reported."""

    id: str
    kind: str
    """"run"; for a reference row, never ranked among the runs: "ceiling" (a run of the `oracle` memory) or
    "paper" (a number the paper reported)."""
    system: str
    memory: str
    paradigm: str
    backbone: str
    main: dict[str, dict[str, float | None]] = field(default_factory=dict)
    """Mode -> question type (and "mean") -> accuracy %."""
    mean: float | None = None
    quality: dict[str, dict[str, float | None]] = field(default_factory=dict)
    """Mode -> `QUALITY_METRICS` -> mean (0-1; selective -1..1)."""
    cost: dict[str, float | None] = field(default_factory=dict)
    curves: dict[str, dict[str, list[list[float | None]]]] = field(default_factory=dict)
    """Mode -> metric -> [checkpoint, mean, ci_low, ci_high] points."""
    complete: bool = True
    coverage: str = ""
    verification: str = ""
    """A run's: "hidden gold" (scored by the board against a hidden-gold release's sealed gold: verified) or "public
    gold" (answers and retrieved ids self-reported, re-scored and consistency-checked; `rescore.VERIFICATIONS`)."""
    provenance: dict[str, Any] = field(default_factory=dict)
    benchmark: str = "MedMemoryBench"
    """The benchmark the run is on: MedMemoryBench, or an import's source ("LoCoMo", "LongMemEval s"), whose rows
    sit in `Board.other_rows`, never ranked with ours."""
    tasks: str = ""
    """The run's tasks, comma-separated (`locomo`)."""
    unscored: bool = False
    """Its accuracy has no value by design (a LongMemEval task run without a judge): shown as such, never 0."""


@dataclass
class OtherBuild:
    """Runs on one MedMemoryBench build other than the board's release (a private build, another seed, a slice of
    another build): a table of their own, headed with that build's fingerprint and size, never ranked with the
    release's rows nor with another build's."""

    release: ReleaseFacts
    rows: list[BoardRow]
    rescored: bool
    """Re-scored against that build (`--other_release`); False on a board that re-scores nothing (`--no-verify`),
    whose heading then knows only the fingerprint the runs recorded."""


@dataclass
class Board:
    """What the page shows."""

    types: list[str]
    rows: list[BoardRow]
    paradigms: dict[str, str]
    """Paradigm key -> label."""
    left_out: list[str]
    """Bundles refused, each with its reason."""
    paper: dict[str, str]
    checkpoint_every: int = CHECKPOINT_EVERY
    """Sessions between two checkpoints: the plot joins only neighbouring checkpoints."""
    rescored: bool = False
    """Whether every run shown was re-scored against the release (`--verify`), not only hash-checked."""
    other_rows: list[BoardRow] = field(default_factory=list)
    """Runs on imports of other benchmarks (LoCoMo, LongMemEval), labelled with their source, in a table of their
    own: never mixed into the MedMemoryBench ranking. Empty on a published Space (`published=True`)."""
    release: ReleaseFacts | None = None
    """The data the ranked rows ran on (None: a `--no-verify` board given no release, which cannot tell builds
    apart; the page says so)."""
    other_builds: list[OtherBuild] = field(default_factory=list)
    """Runs on other MedMemoryBench builds, one table per build. Empty on a published Space."""

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return asdict(self)


def bundle_dirs(results: Path) -> tuple[list[Path], list[str]]:
    """The bundle folders under `results/submissions/`, three levels of slug-named real folders (no link, no
    dot-folder, nothing resolving outside `results`), and what was skipped."""
    root = Path(results) / SUBMISSIONS_DIR
    if not root.is_dir():
        raise InputError(f"{results}: not a results folder (no {SUBMISSIONS_DIR}/); `medmemorybench submit RUN "
                         f"--results {results}` makes one")
    top = root.resolve()
    skipped: list[str] = []
    level = [root]
    for _depth in range(3):
        children = []
        for folder in level:
            for child in sorted(folder.iterdir()):
                if child.is_file() and not child.is_symlink():
                    continue  # (a README beside the bundles)
                if child.is_symlink() or not child.is_dir() or not is_slug(child.name) or \
                        not child.resolve().is_relative_to(top):
                    skipped.append(f"{child}: not a bundle folder (a link, or a name submit never makes)")
                    continue
                children.append(child)
        level = children
    found = level[:MAX_BUNDLES]
    skipped += [f"{folder}: beyond the {MAX_BUNDLES} bundles read" for folder in level[MAX_BUNDLES:]]
    return found, skipped


def read_bundle(folder: Path, verify_with: Path | None = None,
                sealed: dict[str, Any] | None = None) -> tuple[dict, SystemDescription, Manifest]:
    """A bundle's summary, self-description and manifest, after checking each file against the manifest's hash
    (and re-scoring it against the release `verify_with`, when given). A run on a hidden-gold release is shown only
    scored against its sealed gold (`sealed`, with `verify_with` its public folder).

    Raises:
        InputError: naming the file at fault.
    """
    manifest = parse_model(Manifest, read_json_object(folder / MANIFEST_FILE), str(folder / MANIFEST_FILE))
    for name in (RUN_HEADER, SAMPLES, SUMMARY, SYSTEM_FILE):
        if manifest.files.get(name) != sha256(read_bounded(folder / name)):
            raise InputError(f"{folder / name}: does not match its hash in {MANIFEST_FILE}")
    system = parse_model(SystemDescription, read_json_object(folder / SYSTEM_FILE), str(folder / SYSTEM_FILE))
    summary = read_json_object(folder / SUMMARY)
    if manifest.verification == "unscored" and (sealed is None or verify_with is None):
        raise InputError(f"{folder}: a run on a hidden-gold release: it is shown only once scored against the "
                         "sealed gold (`leaderboard --gold FILE --dataset_path RELEASE`)")
    if verify_with is not None:
        verified = verify_run(folder, verify_with, sealed)
        if verified.verification == "unscored":  # (a hidden-release run whose manifest claims public gold)
            raise InputError(f"{folder}: ran on a hidden-gold release, which only `--gold` scores")
        summary = verified.summary
        # (coverage counted, not as submitted; the verification as found, not as the manifest says)
        manifest = manifest.model_copy(update={"coverage": verified.coverage, "verification": "unscored"
                                               if verified.verification == "hidden gold" else "public gold"})
    elif not isinstance(summary.get("tasks"), dict) or not isinstance(summary.get("header"), dict):
        raise InputError(f"{folder / SUMMARY}: not a run summary")
    return summary, system, manifest


def _curves(summary: dict) -> dict[str, dict[str, list[list[float | None]]]]:
    out: dict[str, dict[str, list[list[float | None]]]] = {}
    for task in summary["tasks"].values():
        for metric in CURVE_METRICS:
            points = [[p["checkpoint"], p["mean"], p.get("ci_low"), p.get("ci_high")]
                      for p in task["metrics"].get(metric, {}).get("by_checkpoint", []) if p.get("mean") is not None]
            if points:
                out.setdefault(task["mode"], {})[metric] = points
    return out


def _provenance(summary: dict, system: SystemDescription, manifest: Manifest, samples_url: str) -> dict[str, Any]:
    header = summary["header"]
    return {
        "medmemorybench": header.get("medmemorybench"), "git_revision": header.get("git_revision"),
        "packages": header.get("packages"), "dataset_fingerprint": manifest.dataset_fingerprint,
        "dataset_revision": manifest.dataset_revision, "verified_by": manifest.verified_by,
        "submitted_at": manifest.submitted_at, "judge": manifest.judge or "rule rubric",
        "tasks": [f"{t['task']} {t['version']}" for t in manifest.tasks],
        "prompts": {name: digest[:12] for task in header.get("tasks", []) if isinstance(task, dict)
                    for name, digest in (task.get("prompts") or {}).items()},
        "memory_args": system.memory_args, "memory_model": system.memory_model, "version": system.version,
        "link": system.link, "description": system.description, "samples": samples_url,
    }


def run_rows(bundles: list[tuple[str, dict, SystemDescription, Manifest, str]]) -> tuple[list[str], list[BoardRow]]:
    """Board rows of verified bundles (id, summary, system, manifest, samples link), through `report.paper_rows`; a
    run of the oracle memory is the "ceiling" row."""
    types, numbers = paper_rows([summary for _, summary, _, _, _ in bundles])
    rows = []
    for (bundle_id, summary, system, manifest, samples_url), paper in zip(bundles, numbers, strict=True):
        quality = {task["mode"]: {m: table_mean(task["metrics"].get(m, {}), "overall") for m in QUALITY_METRICS}
                   for task in summary["tasks"].values()}
        costs = [task["memory_cost"] for task in summary["tasks"].values() if task.get("memory_cost")]
        items = [c["items_per_patient"] for c in costs if c.get("items_per_patient") is not None]
        coverage = manifest.coverage
        rows.append(BoardRow(
            id=bundle_id, kind="ceiling" if is_ceiling(summary) else "run", system=system.name, memory=system.memory,
            paradigm=system.paradigm, backbone=system.answering_model, main=paper.by_mode, mean=paper.mean,
            quality=quality,
            cost={**paper.cost, "items_per_patient": sum(items) / len(items) if items else None},
            curves=_curves(summary), complete=coverage.is_complete,
            verification="hidden gold" if manifest.verification == "unscored" else "public gold",
            coverage=(f"{coverage.questions} of {coverage.of_questions} questions" if coverage.is_complete else
                      f"slice: {coverage.questions} of {coverage.of_questions} questions, {coverage.patients} of "
                      f"{coverage.of_patients} patients, checkpoints {', '.join(map(str, coverage.checkpoints))}"),
            provenance=_provenance(summary, system, manifest, samples_url)))
    return types, rows


def reference_rows() -> list[BoardRow]:
    """The paper's reported accuracy per system, per type and mode, labelled as such."""
    systems = load_systems()
    rows = []
    for system in systems.systems:
        if system.reported is None:
            continue
        means = [system.reported[mode]["mean"] for mode in MODES if mode in system.reported]
        rows.append(BoardRow(
            id=f"paper/{system.memory}", kind="paper", system=system.name, memory=system.memory,
            paradigm=system.paradigm, backbone=systems.paper.backbone,
            main={mode: dict(system.reported.get(mode, {})) for mode in MODES}, mean=sum(means) / len(means),
            coverage=systems.paper.note,
            provenance={"source": systems.paper.title, "link": systems.paper.url, "note": systems.paper.note}))
    return rows


def load_board(results: Path, *, samples_link: Callable[[str], str] | None = None,
               verify_with: Path | None = None, on_left_out: Callable[[str], None] | None = None,
               sealed: dict[str, Any] | None = None, published: bool = False, other_releases: Sequence[Path] = (),
               pinned: str | None = None) -> Board:
    """Every bundle of a results folder (refused ones listed in `left_out`), then the paper's reference rows. Runs on
    imports of other benchmarks go apart, in `other_rows` (each re-scored against its own import), and runs on other
    MedMemoryBench builds than the release, in `other_builds` (each re-scored against its own build): neither is
    ever ranked with the release's rows.

    Args:
        samples_link: bundle path (relative to `results`) -> the link the page gives to its samples.jsonl.
        verify_with: a release folder to re-score every bundle against; its fingerprint, re-computed from its rows,
            decides which runs are ranked.
        sealed: that release's sealed gold, when it is a hidden-gold release (`dataset.hidden`).
        published: the board of the published Space: runs on imports and on other builds are left out with a line.
        other_releases: build folders runs on other builds are re-scored against, matched by fingerprint; a run on a
            build not among them is left out (a verified board shows nothing it could not re-score).
        pinned: without `verify_with`, the release's fingerprint as its folder records it (`--no-verify
            --dataset_path`): runs on other builds still go to their own tables. With neither, builds are not told
            apart (the page says so).

    Raises:
        InputError: the release or a folder of `other_releases` is not a build as built, or `other_releases` is
            given to a board that re-scores nothing.
    """
    if other_releases and verify_with is None:
        raise InputError("--other_release: re-scores runs on other builds, which --no-verify would not do")
    folders, left_out = bundle_dirs(results)
    release = release_facts(verify_with) if verify_with is not None else ReleaseFacts(pinned) if pinned else None
    builds = _other_builds(other_releases, release)
    placed = []
    for folder in folders:
        try:
            placed.append((folder, _place(folder, folder.relative_to(results).as_posix(), release, verify_with,
                                          builds, published)))
        except InputError as exc:
            left_out.append(str(exc))
    bundles, build_of, facts = [], {}, {}
    for folder, place in sorted(placed, key=lambda item: item[1].order):  # (one release read at a time)
        bundle_id = folder.relative_to(results).as_posix()
        try:
            if place.build is not None and place.against is not None and place.build not in facts:
                facts[place.build] = _other_build_facts(folder, place.against)
            summary, system, manifest = read_bundle(folder, place.against, sealed if place.on_release else None)
        except InputError as exc:
            left_out.append(str(exc))
            continue
        link = samples_link(f"{bundle_id}/{SAMPLES}") if samples_link else f"{bundle_id}/{SAMPLES}"
        bundles.append((bundle_id, summary, system, manifest, link))
        if place.build is not None:
            build_of[bundle_id] = place.build
    bundles, copies = _without_copies(bundles)
    left_out += copies
    for reason in left_out:
        if on_left_out:
            on_left_out(reason)
    ours = [b for b in bundles if b[0] not in build_of and source_of(b[1]) is None]
    others = [b for b in bundles if b[0] not in build_of and source_of(b[1]) is not None]
    types, rows = run_rows(ours) if ours else ([], [])
    other_rows = run_rows(others)[1] if others else []
    for row, (_id, summary, *_rest) in zip(other_rows, others, strict=True):
        row.benchmark = benchmark_of(summary)
        row.tasks = ", ".join(summary["tasks"])
        row.unscored = any(unscored_entry(task) for task in summary["tasks"].values() if isinstance(task, dict))
    other_builds = [OtherBuild(facts.get(fingerprint, ReleaseFacts(fingerprint)),
                               _best_first(run_rows([b for b in bundles if build_of.get(b[0]) == fingerprint])[1]),
                               rescored=verify_with is not None)
                    for fingerprint in sorted(set(build_of.values()))]
    systems = load_systems()
    return Board(types=types, rows=rows + reference_rows(), paradigms=dict(systems.paradigms), left_out=left_out,
                 paper=systems.paper.model_dump(), rescored=verify_with is not None, other_rows=other_rows,
                 release=release, other_builds=[build for build in other_builds if build.rows])


def _other_build_facts(folder: Path, build: Path) -> ReleaseFacts:
    """The facts of the other build a bundle at `folder` ran on, read from its rows.

    Raises:
        InputError: naming the bundle (which is left out) when the build's rows are not the build as built.
    """
    try:
        return release_facts(build)
    except InputError as exc:
        raise InputError(f"{folder}: not shown: the build it ran on (--other_release) is refused: {exc}") from None


def _best_first(rows: list[BoardRow]) -> list[BoardRow]:
    """A build's own table in its order: the ceiling on top, then the highest mean (a run without one last)."""
    return sorted(rows, key=lambda row: (row.kind != "ceiling", row.mean is None, -(row.mean or 0.0)))


@dataclass(frozen=True)
class _Place:
    """Where a bundle goes on the board and what it is re-scored against."""

    against: Path | None
    """The build folder it is re-scored against (None: not re-scored)."""
    build: str | None = None
    """The fingerprint of the other MedMemoryBench build it ran on; None for the release (or an import)."""
    imported: bool = False

    @property
    def on_release(self) -> bool:
        """Whether it ran on the board's release (so the release's sealed gold scores it)."""
        return self.build is None and not self.imported

    @property
    def order(self) -> tuple[int, str]:
        """The release's bundles first, then imports, then each other build's together."""
        return (0 if self.on_release else 1 if self.imported else 2, self.build or "")


def _place(folder: Path, bundle_id: str, release: ReleaseFacts | None, verify_with: Path | None,
           builds: dict[str, Path], published: bool) -> _Place:
    """Where a bundle goes, from the build its run recorded (its `run.json`, hash-checked when it is read).

    Raises:
        InputError: it is not shown: a run on an import or another build on the published board, or one on a build
            the board cannot re-score it against.
    """
    header = read_json_object(folder / RUN_HEADER)
    imported = _import_release(folder, header, verify_with)
    if imported is not None:
        if published:
            raise InputError(f"{bundle_id}: a run on an import of {imported[0]}: not published with the board (the "
                             "source's data, under the source's licence)")
        return _Place(imported[1], imported=True)
    recorded = header.get("dataset_fingerprint")
    if release is None or recorded == release.fingerprint:
        return _Place(verify_with)
    if not isinstance(recorded, str) or not _FINGERPRINT.match(recorded):
        raise InputError(f"{folder / RUN_HEADER}: dataset_fingerprint: not the SHA-256 of a build")
    other = (f"{folder}: ran on another MedMemoryBench build (fingerprint {recorded[:12]}, not the release's "
             f"{release.fingerprint[:12]})")
    if published:
        raise InputError(f"{other}: not published with the board, which shows runs on the release only")
    if verify_with is None:
        return _Place(None, recorded)
    if recorded not in builds:
        raise InputError(f"{other}: shown, in a table of its own, only re-scored against that build: give its "
                         "folder with --other_release FOLDER")
    return _Place(builds[recorded], recorded)


def _other_builds(folders: Sequence[Path], release: ReleaseFacts | None) -> dict[str, Path]:
    """The build folders given for runs on other builds, by the fingerprint each records (checked against its rows
    when a run is re-scored against it).

    Raises:
        InputError: naming `--other_release` when a folder is no MedMemoryBench build, an import, or the release.
    """
    found: dict[str, Path] = {}
    for given in folders:
        folder, fingerprint = recorded_build(given, "--other_release")
        if dataset_source(folder) is not None:
            raise InputError(f"--other_release: {folder} is an import of another benchmark (a run on an import is "
                             "re-scored against the import its run names)")
        if release is not None and fingerprint == release.fingerprint:
            raise InputError(f"--other_release: {folder} is the release itself (--dataset_path)")
        found.setdefault(fingerprint, folder)
    return found


def recorded_build(given: str | Path, option: str) -> tuple[Path, str]:
    """The build at `given` (or in its `medmemorybench/` folder; nowhere else) and the fingerprint it records, unread:
    its rows are checked against it when a run is re-scored against it.

    Raises:
        InputError: naming `option` when there is no build there or it records no fingerprint.
    """
    folder = next((f for f in (Path(given), Path(given) / DATASET_DIRNAME) if is_build(f)), None)
    if folder is None:
        raise InputError(f"{option}: no MedMemoryBench build at {given}")
    fingerprint = build_metadata(folder).get("fingerprint")
    if not isinstance(fingerprint, str):
        raise InputError(f"{option}: {folder / METADATA_FILE}: records no fingerprint")
    return folder, fingerprint


def _import_release(folder: Path, header: dict[str, Any], verify_with: Path | None) -> tuple[str, Path | None] | None:
    """For a bundle of a run on an import (its run header `header`): (its source's title, the import to re-score it
    against: the folder its header names, when the board re-scores and that folder is an import of the same source);
    None for a run on MedMemoryBench. (An import is never the board's release: each is re-scored against its own.)

    Raises:
        InputError: when the board re-scores and the run's import is not here to re-score it against.
    """
    source = header.get("dataset_source")
    if not isinstance(source, dict):
        return None
    title = str(source.get("title") or source.get("name"))
    if verify_with is None:
        return title, None
    dataset = Path(str(header.get("dataset") or ""))
    found = dataset_source(dataset) if dataset.is_dir() else None
    if not found or found.get("name") != source.get("name"):
        raise InputError(f"{folder}: a run on an import of {title}, re-scored against that import: {dataset} is not "
                         "here (import the same file there, or show it unverified with --no-verify)")
    return title, dataset


def _without_copies(bundles: list[tuple[str, dict, SystemDescription, Manifest, str]],
                    ) -> tuple[list[tuple[str, dict, SystemDescription, Manifest, str]], list[str]]:
    """The bundles less copies of another's samples (the same SHA-256 under another name or paradigm): the first
    submitted stays, each copy is refused with a line naming it."""
    first: dict[str, tuple[str, dict, SystemDescription, Manifest, str]] = {}
    for bundle in sorted(bundles, key=lambda b: (b[3].submitted_at, b[0])):
        first.setdefault(bundle[3].files.get(SAMPLES, ""), bundle)
    kept = [b for b in bundles if first[b[3].files.get(SAMPLES, "")] is b]
    copies = [f"{b[0]}: refused: its samples are a copy of {first[b[3].files.get(SAMPLES, '')][0]}'s (the same "
              "SHA-256), submitted earlier" for b in bundles if first[b[3].files.get(SAMPLES, "")] is not b]
    return kept, copies


def relative_link(results: Path, html_dir: Path) -> Callable[[str], str]:
    """Links from a page in `html_dir` to files of a local results folder."""
    def link(path: str) -> str:
        return Path(os.path.relpath(Path(results).resolve() / path, Path(html_dir).resolve())).as_posix()
    return link
