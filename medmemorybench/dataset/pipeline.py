"""Build, validate, audit-gate and export in one call: what `medmemorybench build` and the demo run."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from medmemorybench.dataset.build import BuildOptions, BuiltDataset, build_dataset, languages_of, no_step
from medmemorybench.dataset.export import DATASET_DIRNAME, export_dataset
from medmemorybench.dataset.validate import validate_rows
from medmemorybench.errors import InputError
from medmemorybench.models.base import Backbone


def build_and_export(out: Path, options: BuildOptions, *, overwrite: bool = False, backbone: Backbone | None = None,
                     allow_audit_failures: bool = False, on_step: Callable[[str, int, int], None] = no_step,
                     sealed_gold: Path | None = None) -> tuple[Path, BuiltDataset]:
    """Build the dataset and write it to `<out>/medmemorybench/`; returns (folder, built).

    With `sealed_gold`, a hidden-gold release (`dataset.hidden`): the folder is the public half, the gold goes to
    `sealed_gold` (written first: a failure after it loses no gold), and `built` the public rows.

    Nothing is written for a dataset the validator rejects, or one that fails a memory-less probe unless
    `allow_audit_failures` (its failures are then in `built.stats["audit_failures"]` and the card).

    Raises:
        InputError: `--output_path` exists (without `overwrite`) or cannot be written, or the dataset is refused.
    """
    from medmemorybench.knowledge import default_knowledge
    from medmemorybench.render.templates import load_templates

    target = out / DATASET_DIRNAME
    if target.exists() and not overwrite:
        raise InputError(f"--output_path: {target} already exists; choose another folder or pass --overwrite")
    try:  # before the build, not after minutes of it
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(f"--output_path: cannot write {out} ({exc.strerror or exc})") from None
    for language in languages_of(options.language):  # (a broken phrasing file stops here, before the build)
        load_templates(language)
    built = build_dataset(default_knowledge(), None, options, on_step=on_step, backbone=backbone)
    on_step("validating the rows", 0, 1)
    problems = validate_rows(built.rows)
    if problems:
        shown = "\n  ".join(problems[:20])
        raise InputError(f"the built dataset is invalid ({len(problems)} problems); nothing was written:\n  {shown}")
    failures = built.stats["audit_failures"]
    if failures and not allow_audit_failures:
        raise InputError("the built dataset fails the memory-less audit (pass --allow_audit_failures to export it "
                         "anyway); nothing was written: " + "; ".join(failures))
    on_step("writing the dataset", 0, 1)
    if sealed_gold is not None:
        return _export_hidden(built, out, sealed_gold, overwrite, on_step)
    folder = export_dataset(built, out, overwrite=overwrite)
    on_step("writing the dataset", 1, 1)
    return folder, built


def _export_hidden(built: BuiltDataset, out: Path, sealed_gold: Path, overwrite: bool,
                   on_step: Callable[[str, int, int], None]) -> tuple[Path, BuiltDataset]:
    """The public half of a hidden-gold release into `<out>/medmemorybench/`, its gold into `sealed_gold`."""
    from dataclasses import replace

    from medmemorybench.dataset.hidden import hide_rows, public_stats, write_sealed

    public, sealed = hide_rows(built.rows, built.options.seed)
    problems = validate_rows(public, hidden=True)
    if problems:
        raise InputError(f"the public half still holds gold ({len(problems)} problems); nothing was written: "
                         + "; ".join(problems[:5]))
    write_sealed({**sealed, "seed": built.options.seed, "options": vars(built.options), "stats": built.stats},
                 sealed_gold)
    released = replace(built, rows=public, fingerprint=sealed["public_fingerprint"],
                       stats=public_stats(built.stats, public))
    folder = export_dataset(released, out, overwrite=overwrite, hidden=True)
    on_step("writing the dataset", 1, 1)
    return folder, released
