"""The `medmemorybench` command: thin wrappers over the library, turning its errors into exit code 2.

One option style everywhere: lm-eval's underscore spelling (`--model_args`, `--output_path`), every multi-word
option also accepted with dashes (`--model-args`); `--output_path` names what a command writes (a folder, or the
review sheet), `--out` kept as its old spelling. `_option` declares both spellings once.
"""

from __future__ import annotations

import functools
import json
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

if not sys.stderr.isatty():  # a log gets our dated lines, not progress bars redrawn as lines (tqdm reads its
    os.environ.setdefault("TQDM_DISABLE", "1")  # TQDM_ defaults when imported: set before any library loads it)
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")

import typer  # noqa: E402
from rich.table import Table  # noqa: E402

from medmemorybench import __version__  # noqa: E402
from medmemorybench.console import (  # noqa: E402
    StageProgress,
    build_with_progress,
    console,
    err_console,
    print_plan,
    print_report,
    register_with_message,
    run_with_progress,
    say,
    sweep_with_progress,
)
from medmemorybench.errors import MedMemoryBenchError, RunFailedError  # noqa: E402

app = typer.Typer(
    name="medmemorybench",
    help="MedMemoryBench: agent memory for personalized healthcare.\n\nEvery multi-word option takes `_` or `-` "
         "(--model_args or --model-args); --output_path (or --out) is what a command writes.",
    add_completion=False,
    no_args_is_help=True,
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
)


def _option(*names: str, **kwargs: Any) -> Any:
    """`typer.Option` under every name with `_` and with `-` between its words (`--model_args`, `--model-args`)."""
    spellings: list[str] = []
    for name in names:
        for spelling in ("--" + name[2:].replace("-", "_"), "--" + name[2:].replace("_", "-")):
            if spelling not in spellings:
                spellings.append(spelling)
    return typer.Option(*spellings, **kwargs)


def _switch(name: str, **kwargs: Any) -> Any:
    """A boolean `typer.Option` with its off spelling both ways: `--register/--no-register` and `--no_register`."""
    return typer.Option(f"--{name}/--no-{name}", f" /--no_{name}", **kwargs)


def _show_version(value: bool) -> None:
    if value:
        say(f"medmemorybench {__version__}")
        raise typer.Exit()


@app.callback()
def main_options(
    version: Annotated[bool, typer.Option("--version", callback=_show_version, is_eager=True,
                                          help="Print the version and exit.")] = False,
) -> None:
    """MedMemoryBench: agent memory for personalized healthcare."""


KnowledgeOption = Annotated[
    Path | None,
    typer.Option("--knowledge", help="Knowledge-base folder to use instead of the packaged one."),
]

@contextmanager
def _user_errors() -> Iterator[None]:
    """Print a library error as one clear message and exit 2; never a traceback."""
    try:
        yield
    except RunFailedError as exc:
        err_console.print(f"run failed: {exc}", markup=False, highlight=False, soft_wrap=True)
        raise typer.Exit(1) from None
    except MedMemoryBenchError as exc:
        err_console.print(f"error: {exc}", markup=False, highlight=False, soft_wrap=True)
        raise typer.Exit(2) from None
    except KeyboardInterrupt:
        err_console.print("interrupted", markup=False)
        raise typer.Exit(130) from None
    except RecursionError:  # (a file read where no caller names it: still one line, never a traceback)
        err_console.print("error: an input file is nested too deeply to read (a hostile or broken file)", markup=False)
        raise typer.Exit(2) from None
    except MemoryError:
        err_console.print("error: out of memory (an input too large for this machine)", markup=False)
        raise typer.Exit(2) from None
    except BrokenPipeError:
        raise
    except OSError as exc:  # the machine's doing (a read-only folder, a full disk, a port in use), not a bug
        where = f"{exc.filename}: " if exc.filename else ""
        err_console.print(f"error: {where}{exc.strerror or exc}", markup=False, highlight=False, soft_wrap=True)
        raise typer.Exit(2) from None


def _knowledge(path: Path | None):  # noqa: ANN202
    from medmemorybench.knowledge import default_knowledge, load_knowledge

    return load_knowledge(path) if path is not None else default_knowledge()


@app.command("knowledge")
def knowledge_cmd(knowledge: KnowledgeOption = None) -> None:
    """Validate the knowledge base and print what it holds.

    \b
    Example:
      medmemorybench knowledge
    """
    with _user_errors():
        kb = _knowledge(knowledge)
        subtopics = sum(len(t.subtopics) for t in kb.topics.values())
        rows = [
            ("conditions", len(kb.conditions)), ("labs and vitals", len(kb.labs)),
            ("drug classes", len(kb.classes)), ("drugs", len(kb.drugs)),
            ("allergy groups", len(kb.allergy_groups)), ("history conditions", len(kb.history_conditions)),
            ("contraindications", len(kb.contraindications)), ("interactions", len(kb.interactions)),
            ("diet habits", len(kb.habits)), ("medication preferences", len(kb.preferences)),
            ("economic profiles", len(kb.economic_profiles)), ("noise topics", len(kb.topics)),
            ("noise sub-topics", subtopics), ("relative templates", len(kb.relatives)),
        ]
        table = Table("record", "count", title="knowledge base: valid")
        for name, count in rows:
            table.add_row(name, str(count))
        console.print(table)


@app.command("simulate")
def simulate_cmd(
    out: Annotated[Path, _option("--output_path", "--out", help="Folder to write one JSON file per patient into.")],
    seed: Annotated[int, typer.Option(help="Global seed: the same seed gives byte-identical files.")] = 0,
    personas: Annotated[int, typer.Option(help="Number of patients (the roster cycles through conditions).")] = 20,
    encounters: Annotated[int, typer.Option(help="Regular encounters per patient year (10-365).")] = 100,
    condition: Annotated[
        list[str] | None, typer.Option(help="Only these condition keys (repeatable).")
    ] = None,
    overwrite: Annotated[bool, _switch("overwrite", help="Replace the output folder if it exists.")] = False,
    knowledge: KnowledgeOption = None,
) -> None:
    """Simulate patients' care years (the ground truth) and write them as JSON.

    \b
    Example:
      medmemorybench simulate --seed 0 --personas 20 --output_path out/years
    """
    from medmemorybench.simulate import iter_cohort
    from medmemorybench.simulate.store import write_cohort

    with _user_errors():
        kb = _knowledge(knowledge)
        years = iter_cohort(kb, seed, personas, encounters, condition)
        written = 0

        def on_written(_path: Path) -> None:
            nonlocal written
            written += 1
            progress.step("writing care year", written, personas)

        with StageProgress("simulate") as progress:
            paths = write_cohort(
                years, out, overwrite=overwrite, on_written=on_written,
                metadata={"seed": seed, "personas": personas, "encounters": encounters,
                          "conditions": condition or "roster", "medmemorybench": __version__},
            )
        say(f"wrote {len(paths)} care years to {out}")


@app.command("show")
def show_cmd(
    file: Annotated[Path, typer.Argument(help="A care-year JSON file written by `simulate`.")],
    knowledge: KnowledgeOption = None,
) -> None:
    """Print a readable timeline: persona, traps, family, phases, state changes and causal chains.

    \b
    Example:
      medmemorybench show out/years/P0001.json
    """
    from medmemorybench.simulate.show import render_timeline
    from medmemorybench.simulate.store import read_care_year

    with _user_errors():
        year = read_care_year(file)
        render_timeline(_knowledge(knowledge), year, console)


LLM_RENDER_CACHE = "llm-render-cache.sqlite"
"""Beside the build (`--output_path`): the LLM renderer's completions, kept across a killed and restarted build."""


@app.command("build")
def build_cmd(
    out: Annotated[Path, _option("--output_path", "--out",
                                 help="Folder to write `medmemorybench/` (the HF dataset) into.")],
    seed: Annotated[int | None, typer.Option(
        help="Global seed: the same seed gives identical content (default 0; with --hidden, a secret one).")] = None,
    personas: Annotated[int, typer.Option(help="Number of patients.")] = 20,
    health_sessions: Annotated[int, _option("--health_sessions", help="Health noise sessions per patient.")] = 100,
    family_sessions: Annotated[int, _option("--family_sessions", help="Family noise sessions per patient.")] = 100,
    overwrite: Annotated[bool, typer.Option("--overwrite", help="Replace an existing build.")] = False,
    encounters: Annotated[int, typer.Option(help="Regular sessions per patient (10-365).")] = 100,
    renderer: Annotated[str, typer.Option(help="Who writes the regular sessions: template or llm.")] = "template",
    model: Annotated[str, _option("--model", help="The LLM of --renderer llm: hf, openai, vllm; none (the "
                                                  "default) for templates.")] = "none",
    model_args: Annotated[str, _option("--model_args", help="Backbone options, key=value,key=value.")] = "",
    allow_audit_failures: Annotated[bool, _option(
        "--allow_audit_failures", help="Export even if a memory-less probe fails (the card shows which).")] = False,
    register: Annotated[bool, _switch(
        "register", help="Register the build so load_dataset('medmemorybench', ...) loads it offline from any "
                         "folder (docs/dataset.md).")] = True,
    language: Annotated[str, _option(
        "--language", help="en, zh or both: the renderings (both: English configs and their _zh twins).")] = "both",
    hidden: Annotated[bool, typer.Option(
        "--hidden", help="A hidden-gold release: the folder holds no gold, the gold goes to --sealed_gold, the seed "
                         "is secret (docs/leaderboard.md).")] = False,
    sealed_gold: Annotated[Path | None, _option(
        "--sealed_gold", help="With --hidden: where the sealed gold goes (default OUTPUT_PATH/sealed-gold.json.gz, "
                              "beside the public folder, never inside it). Keep it private.")] = None,
) -> None:
    """Build the benchmark: simulate, render, add noise, ask questions, validate, audit, export as a HF dataset,
    and register it under the bare name `medmemorybench` for `load_dataset`.

    \b
    Examples:
      medmemorybench build --seed 0 --output_path out
      medmemorybench build --seed 0 --language en --output_path out-en
      medmemorybench build --hidden --output_path season1
      medmemorybench build --personas 1 --encounters 10 --renderer llm --model hf --output_path out-llm
      medmemorybench build --renderer llm --model openai \\
        --model_args model=qwen,base_url=http://localhost:8000/v1 --output_path out-api
    """
    from medmemorybench.dataset import BuildOptions
    from medmemorybench.errors import InputError

    with _user_errors():
        for name, value in (("--personas", personas), ("--health_sessions", health_sessions + 1),
                            ("--family_sessions", family_sessions + 1)):
            if value < 1:
                raise InputError(f"{name}: must be {'at least 1' if name == '--personas' else 'zero or more'}")
        if renderer not in ("template", "llm"):
            raise InputError(f"--renderer: '{renderer}' is not one of: template, llm")
        if renderer == "llm" and model == "none":
            raise InputError("--renderer llm: needs an LLM; add --model hf (the embedded SmolLM2), openai or vllm")
        if renderer == "template" and model != "none":
            raise InputError(f"--model {model}: the template renderer uses no LLM; add --renderer llm to have "
                             f"{model} write the sessions")
        backbone = None
        spec = "template"
        if renderer == "llm":
            from medmemorybench.harness.cache import CachingBackbone, ResponseCache
            from medmemorybench.models import load_backbone, parse_model_args

            backbone = load_backbone(model, parse_model_args(model_args))
            spec = f"llm:{model}:{backbone.model_id}"
            # every completion is kept as it arrives: a killed build, run again, goes on where it stopped
            backbone = CachingBackbone(backbone, ResponseCache(out / LLM_RENDER_CACHE))
        from medmemorybench.dataset.build import languages_of

        languages_of(language)  # (an unknown language is refused before anything is built)
        sealed = _sealed_gold_path(out, hidden, sealed_gold, overwrite)
        if hidden and seed is not None:
            say(f"build: --hidden with --seed {seed}: anyone who knows or guesses that seed can rebuild the gold; "
                "leave --seed out for a secret one", err_console)
        elif hidden:
            import secrets

            seed = secrets.randbelow(1 << 62)  # (kept only in the sealed gold)
        options = BuildOptions(seed=seed or 0, personas=personas, encounters=encounters,
                               health_sessions=health_sessions, family_sessions=family_sessions, renderer=spec,
                               language=language)
        build_with_progress(out, options, overwrite, backbone, allow_audit_failures, register=register,
                            sealed_gold=sealed)


def _sealed_gold_path(out: Path, hidden: bool, sealed_gold: Path | None, overwrite: bool) -> Path | None:
    """Where `build --hidden` writes its sealed gold: never inside the public folder, never over a file unless
    `--overwrite`."""
    from medmemorybench.dataset.export import DATASET_DIRNAME
    from medmemorybench.errors import InputError

    if not hidden:
        if sealed_gold is not None:
            raise InputError("--sealed_gold: only with --hidden (a public build keeps its gold in the folder)")
        return None
    path = sealed_gold if sealed_gold is not None else out / "sealed-gold.json.gz"
    if path.resolve().is_relative_to((out / DATASET_DIRNAME).resolve()):
        raise InputError(f"--sealed_gold: {path} is inside the public folder {out / DATASET_DIRNAME}; the gold "
                         "must go elsewhere")
    if path.exists() and not overwrite:
        raise InputError(f"--sealed_gold: {path} already exists; choose another file or pass --overwrite")
    if path.is_dir():
        raise InputError(f"--sealed_gold: {path} is a folder; name a file")
    return path


IMPORT_SOURCES = ("locomo", "longmemeval")


@app.command("import")
def import_cmd(
    source: Annotated[str, typer.Argument(help="Which benchmark the file is: locomo or longmemeval.")],
    path: Annotated[Path, typer.Argument(help="The public file, downloaded by you (docs/other_benchmarks.md).")],
    out: Annotated[Path, _option("--output_path", "--out", help="Folder to write `medmemorybench/` into.")],
    variant: Annotated[str | None, _option(
        "--variant", help="longmemeval (required): s, m or oracle, which of its files this is.")] = None,
    placement: Annotated[str | None, _option(
        "--placement", help="locomo: ask a question at the checkpoint after its last evidence session (evidence, the "
                            "default) or after the whole conversation (end: as the official evaluation).")] = None,
    overwrite: Annotated[bool, typer.Option("--overwrite", help="Replace an existing import.")] = False,
) -> None:
    """Turn a public memory benchmark's file into a dataset folder the harness runs like a build: one conversation
    (LoCoMo) or one question's haystack (LongMemEval) per stream, every quirk of the source counted.

    \b
    Examples:
      medmemorybench import locomo data/locomo10.json --output_path imports/locomo --placement end
      medmemorybench import longmemeval longmemeval_oracle.json --variant oracle --output_path imports/lme-oracle
    """
    from medmemorybench.errors import InputError

    with _user_errors():
        if source not in IMPORT_SOURCES:
            raise InputError(f"SOURCE: '{source}' is not one of {', '.join(IMPORT_SOURCES)}")
        if source == "locomo":
            from medmemorybench.importers import import_locomo

            if variant is not None:
                raise InputError("--variant: for longmemeval only (LoCoMo has one file)")
            report = import_locomo(path, out, placement=placement or "evidence", overwrite=overwrite)
        else:
            from medmemorybench.importers import import_longmemeval

            if placement is not None:
                raise InputError("--placement: for locomo only (a LongMemEval question comes after its haystack)")
            if variant is None:
                raise InputError("--variant: which LongMemEval file this is: s, m or oracle")
            report = import_longmemeval(path, out, variant, overwrite=overwrite)
        say(report.summary())
        say(f"written: {out / 'medmemorybench'} (run it with --dataset_path {out / 'medmemorybench'})")


@app.command("register")
def register_cmd(
    folder: Annotated[Path, typer.Argument(help="A built dataset folder (OUT/medmemorybench).")],
) -> None:
    """Register a build so that load_dataset('medmemorybench', CONFIG) loads it offline from any folder (build does
    this itself; use it to point the name at another build). Other copies of that name are removed from the cache.

    \b
    Example:
      medmemorybench register out/medmemorybench
    """
    from medmemorybench.dataset import read_rows, validate_rows
    from medmemorybench.dataset.hidden import is_hidden
    from medmemorybench.errors import InputError

    with _user_errors():
        problems = validate_rows(read_rows(folder), hidden=is_hidden(folder))
        if problems:
            raise InputError(f"{folder}: refusing to register an invalid dataset ({len(problems)} problems); "
                             f"run `medmemorybench validate {folder}`")
        register_with_message(folder)


@app.command("validate")
def validate_cmd(
    folder: Annotated[Path, typer.Argument(help="A built dataset folder (OUT/medmemorybench).")],
) -> None:
    """Check a built dataset: schema, unique ids, leakage, answerability, abstention, MQ shape, trap coverage.

    \b
    Example:
      medmemorybench validate out/medmemorybench
    """
    from medmemorybench.dataset import read_rows, validate_rows
    from medmemorybench.dataset.hidden import is_hidden
    from medmemorybench.dataset.load import read_build_metadata

    with _user_errors():
        read_build_metadata(folder)  # (a damaged one, which `run` refuses, is not "valid")
        problems = validate_rows(read_rows(folder), hidden=is_hidden(folder))
        if problems:
            for line in problems:
                err_console.print(line, markup=False, highlight=False)
            err_console.print(f"{len(problems)} problem(s) in {folder}", markup=False)
            raise typer.Exit(1)
        console.print(f"{folder}: valid" + (" (a hidden-gold release: no gold in it)" if is_hidden(folder) else ""))


@app.command("audit")
def audit_cmd(
    folder: Annotated[Path, typer.Argument(help="A built dataset folder (OUT/medmemorybench).")],
    retrieval: Annotated[bool, _switch("retrieval",
                                       help="Also run BM25 in both modes (noise must lower Recall@5).")] = True,
) -> None:
    """Try to win the benchmark without memory: question-only solvers, constant answers, ABS wording, dates in
    questions, evidence age, duplicates. Prints the table; exit code 1 when a probe fails.

    \b
    Example:
      medmemorybench audit out/medmemorybench
    """
    from medmemorybench.dataset import read_rows
    from medmemorybench.dataset.audit import age_distribution, audit_folder, format_table, six_type_count
    from medmemorybench.dataset.schema import LANGUAGES, config_name

    with _user_errors():
        rows = read_rows(folder)
        languages = [lang for lang in LANGUAGES if config_name("questions", lang) in rows]
        if not languages:
            from medmemorybench.errors import InputError

            raise InputError(f"{folder}: no questions config (is this a MedMemoryBench build?)")
        failed = []
        for language in languages:
            questions = [q for split in rows[config_name("questions", language)].values() for q in split]
            with StageProgress("audit") as progress:  # (the probes, and BM25 over both modes, take minutes)
                progress.step(f"probing the questions in '{language}'", 0, 1)
                results = audit_folder(questions, folder, retrieval, language)
            console.print(f"questions in '{language}':", highlight=False)
            console.print(format_table(results), markup=False, highlight=False)
            console.print(f"questions {len(questions)} (six paper types {six_type_count(questions)}); evidence age "
                          f"(sessions back, answerable): {age_distribution(questions)}", highlight=False)
            failed += [r for r in results if r.blocks]
        if failed:
            err_console.print(f"{len(failed)} probe(s) failed: " + ", ".join(f"{r.probe} ({r.scope})" for r in failed),
                              markup=False)
            raise typer.Exit(1)


BoardVerify = Annotated[bool, _switch(
    "verify", help="Re-score every bundle against the release (--dataset_path) before showing it (the default); "
                   "--no-verify checks only the files' hashes, and the page says so.")]
BoardRelease = Annotated[str | None, _option(
    "--dataset_path", help="The release the board's rows are re-scored against and ranked on (default: a local "
                           "build); with --no-verify, its recorded fingerprint still keeps runs on other builds "
                           "out of the ranking.")]
BoardGold = Annotated[Path | None, _option(
    "--gold", help="The sealed gold of a hidden-gold release (`build --hidden`), whose public folder is "
                   "--dataset_path: its runs are scored against it.")]
"""The options of `leaderboard` and `publish --space`, which show the same board."""


@app.command("publish")
def publish_cmd(
    folder: Annotated[Path | None, typer.Argument(help="A built dataset folder (OUT/medmemorybench).")] = None,
    repo_id: Annotated[str | None, _option("--repo_id", help="Hub dataset repo, ORG/NAME.")] = None,
    pr: Annotated[bool, typer.Option("--pr", help="Open a pull request instead of committing to main.")] = False,
    private: Annotated[bool, typer.Option("--private", help="Create the repo as private.")] = False,
    space: Annotated[str | None, _option(
        "--space", help="Also (or only) upload the leaderboard as a static Hub Space, ORG/NAME.")] = None,
    results: Annotated[Path | None, _option(
        "--results", help="With --space: the results folder the board is built from.")] = None,
    results_repo: Annotated[str | None, _option(
        "--results_repo", help="With --space: the results dataset repo (ORG/NAME) the board links samples to "
                               "(and is read from, without --results).")] = None,
    dry_run: Annotated[bool, _option("--dry_run", help="List what would be uploaded; send nothing.")] = False,
    verify: BoardVerify = True,
    dataset_path: BoardRelease = None,
    gold: BoardGold = None,
) -> None:
    """Upload a validated build to the Hugging Face Hub (token from HF_TOKEN or `hf auth login`), with its eval.yaml
    (the benchmark's headline tasks) and its card's usage line loading ORG/NAME; with --space, the leaderboard page
    built from a results folder.

    \b
    Examples:
      medmemorybench publish out/medmemorybench --repo_id my-org/MedMemoryBench --dry_run
      medmemorybench publish out/medmemorybench --repo_id my-org/MedMemoryBench --pr
      medmemorybench publish --space my-org/medmemorybench-leaderboard --results_repo my-org/medmemorybench-results
    """
    from medmemorybench.errors import InputError

    with _user_errors():
        if folder is None and space is None:
            raise InputError("publish: give a dataset FOLDER with --repo_id, or --space with --results")
        if space is None and (results is not None or results_repo is not None):
            raise InputError("--results and --results_repo go with --space: the Space shows that board")
        if space is not None and results is None and results_repo is None:
            raise InputError("--space: give --results DIR or --results_repo ORG/NAME, the board the Space shows")
        if folder is not None:
            _publish_dataset(folder, repo_id, pr, private, dry_run)
        if space is not None:
            _publish_space(space, results, results_repo, dry_run, *board_release(verify, dataset_path, gold))


def _publish_dataset(folder: Path, repo_id: str | None, pr: bool, private: bool, dry_run: bool) -> None:
    from medmemorybench.dataset import read_rows, validate_rows
    from medmemorybench.dataset.hidden import is_hidden
    from medmemorybench.dataset.publish import check_repo_id, plan_operations, publish
    from medmemorybench.errors import InputError

    if repo_id is None:
        raise InputError("--repo_id: required to publish a dataset folder (ORG/NAME)")
    check_repo_id(repo_id)
    source = _imported_from(folder)
    if source:
        raise InputError(f"{folder}: an import of {source} (`medmemorybench import`): its data is the source's, under "
                         "the source's licence; this command publishes MedMemoryBench builds only")
    problems = validate_rows(read_rows(folder), hidden=is_hidden(folder))
    if problems:
        raise InputError(f"{folder}: refusing to publish an invalid dataset ({len(problems)} problems); "
                         f"run `medmemorybench validate {folder}`")
    if dry_run:
        for op in plan_operations(folder, repo_id):
            say(f"add {op.path_in_repo}")
        say(f"the card's usage line: load_dataset(\"{repo_id}\", \"mixed\", split=\"checkpoint_30\")")
        return
    info = publish(folder, repo_id, create_pr=pr, private=private)
    say(f"published: {getattr(info, 'pr_url', None) or getattr(info, 'commit_url', info)}")


def _imported_from(folder: Path) -> str | None:
    """The public benchmark a dataset folder was imported from (its metadata's `stats.source`), or None."""
    from medmemorybench.dataset.load import dataset_source

    source = dataset_source(folder)
    return str(source.get("title") or source.get("name")) if source else None


def board_release(verify: bool, dataset_path: str | None,
                  gold: Path | None) -> tuple[Path | None, dict | None, str | None]:
    """The release a board re-scores its bundles against (None with --no-verify), its sealed gold (with --gold), and
    with --no-verify the fingerprint `--dataset_path` records (runs on other builds kept out of the ranking), for
    `leaderboard` and `publish --space`."""
    from medmemorybench.dataset.hidden import is_hidden, read_sealed
    from medmemorybench.dataset.load import find_local
    from medmemorybench.errors import InputError
    from medmemorybench.leaderboard.board import recorded_build

    if not verify:
        if gold is not None:
            raise InputError("--gold: scores runs against the sealed gold, which --no-verify would not do")
        return None, None, None if dataset_path is None else recorded_build(dataset_path, "--dataset_path")[1]
    if gold is not None and dataset_path is None:
        raise InputError("--gold: give --dataset_path, the hidden-gold release's public folder")
    sealed = read_sealed(gold) if gold is not None else None
    release = find_local(dataset_path)
    if release is None:
        raise InputError(f"--dataset_path: no MedMemoryBench build at {dataset_path or './out'} to re-score the rows "
                         "against; give the release, or --no-verify to show rows checked only against their hashes")
    if gold is not None and not is_hidden(release):
        raise InputError(f"--gold: {release} is not a hidden-gold release (its gold is public)")
    return release, sealed, None


def _publish_space(space: str, results: Path | None, results_repo: str | None, dry_run: bool,
                   release: Path | None = None, sealed: dict | None = None, pinned: str | None = None) -> None:
    """The board of a results folder, or of a results repo (downloaded), as a static Space."""
    import tempfile

    from medmemorybench.leaderboard import load_board, publish_space
    from medmemorybench.leaderboard.hub import check_repo_id, dataset_file_url, fetch_results
    from medmemorybench.leaderboard.site import space_files

    check_repo_id(space, "--space")
    if results_repo is not None:
        check_repo_id(results_repo, "--results_repo")

    def samples_link(path: str) -> str:  # (without the repo, the Space has nothing to link the samples to)
        return dataset_file_url(results_repo, path) if results_repo else ""

    with tempfile.TemporaryDirectory(prefix="medmemorybench-results-") as download:
        if results is None and results_repo is not None:
            results = fetch_results(results_repo, Path(download))
        # (an import's rows hold the source's data; a run on another build compares with nothing on the Space)
        board = load_board(results, samples_link=samples_link, on_left_out=_left_out, verify_with=release,
                           sealed=sealed, published=True, pinned=pinned)
    source = results_repo or str(results)
    if dry_run:
        for name, data in space_files(board, source).items():
            say(f"space {space}: add {name} ({len(data):,} bytes)")
        return
    info = publish_space(board, source, space)
    say(f"leaderboard Space: {getattr(info, 'commit_url', info)}")


def _left_out(reason: str) -> None:
    err_console.print(f"left out: {reason}", markup=False, highlight=False, soft_wrap=True)


@app.command("submit")
def submit_cmd(
    run_dir: Annotated[Path, typer.Argument(help="A finished run folder (run.json, samples.jsonl, summary.json).")],
    repo_id: Annotated[str | None, _option(
        "--repo_id", help="The results dataset repo to open a pull request on, ORG/NAME.")] = None,
    results: Annotated[Path | None, _option(
        "--results", help="Write the bundle into this local results folder instead.")] = None,
    dataset_path: Annotated[str | None, _option(
        "--dataset_path",
        help="The release the run used (default: the run's dataset folder, else a local build).")] = None,
    system: Annotated[Path | None, _option(
        "--system", help="YAML self-description: name, version, paradigm, link, description, "
                         "answering_model_hub_id.")] = None,
    allow_partial: Annotated[bool, _option(
        "--allow_partial", help="Accept a run of some patients or checkpoints (shown as a slice).")] = False,
    dataset_repo: Annotated[str, _option(
        "--dataset_repo", help="The benchmark's dataset repo, for .eval_results entries.")] = "",
    dataset_revision: Annotated[str | None, _option(
        "--dataset_revision", help="Its commit on the Hub, for .eval_results entries.")] = None,
    dry_run: Annotated[bool, _option("--dry_run", help="Verify and print what would be sent; send nothing.")] = (
        False),
) -> None:
    """Verify a run (the release it used, its tasks and prompts, one sample per question), re-score every sample from
    its answer and the gold, and send it with its re-computed summary and the system's self-description as a pull
    request to a results repo, or into a local results folder.

    \b
    Examples:
      medmemorybench submit runs/bm25 --repo_id my-org/medmemorybench-results --dry_run
      medmemorybench submit runs/mine --system mine.yaml --repo_id my-org/medmemorybench-results
      medmemorybench submit runs/bm25 --results results      # a local results folder (then `leaderboard`)
    """
    from medmemorybench.dataset.load import HUB_ID
    from medmemorybench.errors import InputError
    from medmemorybench.leaderboard import load_claim, prepare_submission, send_to_hub, write_to_folder
    from medmemorybench.leaderboard.hub import check_repo_id
    from medmemorybench.leaderboard.submit import write_eval_results

    with _user_errors():
        if (repo_id is None) == (results is None) and not dry_run:
            raise InputError("submit: give --repo_id ORG/NAME (a pull request) or --results DIR (a local folder)")
        if repo_id is not None:
            check_repo_id(repo_id)
        if dataset_repo:
            check_repo_id(dataset_repo, "--dataset_repo")
        submission = prepare_submission(run_dir, dataset_path=dataset_path, claim=load_claim(system),
                                        allow_partial=allow_partial, dataset_repo_id=dataset_repo or HUB_ID,
                                        dataset_revision=dataset_revision, results_repo_id=repo_id)
        where = f"pull request on {repo_id}" if repo_id else f"folder {results}" if results else "(no target)"
        say(f"verified: {submission.description}")
        if dry_run:
            say(f"would send to {where}: {submission.title}")
            for path, data in submission.file_paths().items():
                say(f"  add {path} ({len(data):,} bytes)")
            if submission.eval_results:
                say("would write .eval_results/medmemorybench.yaml for the answering model's repo "
                    f"{submission.system.answering_model_hub_id}:\n{submission.eval_results}")
            return
        if repo_id is not None:
            info = send_to_hub(submission, repo_id)
            say(f"pull request: {getattr(info, 'pr_url', None) or info}")
        else:
            say(f"bundle: {write_to_folder(submission, results)}")
        entries = write_eval_results(submission, run_dir)
        if entries is not None:
            say(f"eval results for {submission.system.answering_model_hub_id}: {entries} (propose it to that "
                f"model repo: hf upload {submission.system.answering_model_hub_id} {entries} "
                ".eval_results/medmemorybench.yaml --create-pr)")


@app.command("leaderboard")
def leaderboard_cmd(
    html: Annotated[Path, _option("--html", help="Folder to write the page (index.html) into.")],
    results: Annotated[Path | None, _option(
        "--results", help="A results folder (`submit --results` writes one).")] = None,
    repo_id: Annotated[str | None, _option(
        "--repo_id", help="Or a results dataset repo on the Hub, ORG/NAME (its merged submissions).")] = None,
    verify: BoardVerify = True,
    dataset_path: BoardRelease = None,
    gold: BoardGold = None,
    other_release: Annotated[list[Path] | None, _option(
        "--other_release", help="A MedMemoryBench build other than the release (another seed, a private build; "
                                "repeatable): runs on it are re-scored against it and shown in a table of their "
                                "own, never ranked; without it they are left out.")] = None,
) -> None:
    """Write the leaderboard as one self-contained page: the paper's table, quality, cost, the saturation curves,
    filters, sorting and each row's provenance, beside the paper's reference rows.

    \b
    Examples:
      medmemorybench leaderboard --results results --html board --dataset_path out   # then open board/index.html
      medmemorybench leaderboard --repo_id my-org/medmemorybench-results --html board --dataset_path out
      medmemorybench leaderboard --results results --html board --gold season1/sealed-gold.json.gz \
        --dataset_path season1/medmemorybench
      medmemorybench leaderboard --results results --html board --dataset_path out --other_release private/out
    """
    import tempfile

    from medmemorybench.errors import InputError
    from medmemorybench.leaderboard import load_board, relative_link, write_site
    from medmemorybench.leaderboard.hub import dataset_file_url, fetch_results

    with _user_errors():
        if (results is None) == (repo_id is None):
            raise InputError("leaderboard: give --results DIR or --repo_id ORG/NAME")
        release, sealed, pinned = board_release(verify, dataset_path, gold)
        with tempfile.TemporaryDirectory(prefix="medmemorybench-results-") as download:
            if repo_id is not None:
                results = fetch_results(repo_id, Path(download))
                links = functools.partial(dataset_file_url, repo_id)
            else:
                links = relative_link(results, html)
            board = load_board(results, samples_link=links, verify_with=release, on_left_out=_left_out,
                               sealed=sealed, other_releases=other_release or (), pinned=pinned)
            page = write_site(board, html, repo_id or str(results))
        runs = sum(1 for row in board.rows if row.kind == "run")
        others = f", {len(board.other_rows)} runs on other benchmarks" if board.other_rows else ""
        builds = sum(len(build.rows) for build in board.other_builds)
        others += f", {builds} runs on other builds (not ranked)" if builds else ""
        say(f"leaderboard: {runs} runs and {len(board.rows) - runs} paper reference rows{others}; open "
            f"{page.resolve()}")


@app.command("demo")
def demo_cmd(
    out: Annotated[Path, _option("--output_path", "--out", help="Folder for everything the demo writes.")] = Path(
        "demo_output"
    ),
    seed: Annotated[int, typer.Option(help="Global seed.")] = 0,
    qa_patients: Annotated[int, _option("--qa_patients", help="Patients in the SmolLM2 QA slice.")] = 1,
) -> None:
    """The main job on the embedded defaults, offline: build the dataset, evaluate bm25 and dense retrieval
    (the same chunking) on both modes and all checkpoints, answer a small slice with SmolLM2 on CPU, report, and
    submit the runs to a local results folder for the leaderboard page. Prints its plan first, progress as it goes
    (lines with an ETA when the output is a log), and a summary of where everything is.

    \b
    Examples:
      medmemorybench demo --output_path demo_output
      medmemorybench demo > demo.log 2>&1
    """
    from medmemorybench.demo import DemoContext, run_demo
    from medmemorybench.errors import InputError

    with _user_errors():
        if qa_patients < 1:
            raise InputError(f"--qa_patients: {qa_patients} must be at least 1")
        run_demo(DemoContext(output_path=out, seed=seed, qa_patients=qa_patients))


def _int_list(text: str | None, flag: str) -> list[int] | None:
    from medmemorybench.errors import InputError

    if not text:
        return None
    try:
        return [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise InputError(f"{flag}: '{text}' is not a comma-separated list of numbers") from None


@app.command("run")
def run_cmd(
    tasks: Annotated[str, _option("--tasks", help="Tasks, groups or tags, comma-separated.")] = "medmemorybench",
    model: Annotated[str, _option("--model", help="Backbone: hf, openai, vllm, or none (retrieval only).")] = "none",
    model_args: Annotated[str, _option("--model_args", help="Backbone key=value,...")] = "",
    memory: Annotated[str, _option("--memory", help="Memory: none, long_context, bm25, dense, ...")] = "bm25",
    memory_args: Annotated[str, _option("--memory_args", help="Memory key=value,...")] = "",
    memory_model: Annotated[str | None, _option(
        "--memory_model",
        help="Backbone a memory builds itself with: hf, openai, vllm (default: the answering --model).")] = None,
    memory_model_args: Annotated[str, _option("--memory_model_args", help="Memory backbone key=value,...")] = "",
    embedder: Annotated[str, _option(
        "--embedder",
        help="Sentence embedder for memories: all-minilm-l6-v2 (packaged) or a local folder.")] = "all-minilm-l6-v2",
    memory_concurrency: Annotated[int, _option(
        "--memory_concurrency",
        help="Patients ingested at once; their memory LLM calls share batches (results do not change).")] = 1,
    answer_mode: Annotated[str | None, _option(
        "--answer_mode",
        help="shared (the harness's prompt over retrieved items) or native (the memory answers itself, e.g. "
             "letta); default: the memory's own.")] = None,
    output_path: Annotated[Path, _option("--output_path", "--out", help="Run folder.")] = Path("runs/run"),
    dataset_path: Annotated[str | None, _option(
        "--dataset_path", help="Built dataset folder (default: ./medmemorybench, ./out/medmemorybench, or the "
                               "registered build).")] = None,
    limit: Annotated[int | None, typer.Option(help="Evaluate only the first N patients.")] = None,
    checkpoints: Annotated[str | None, typer.Option(help="Ask only at these checkpoints, e.g. 10,50,100.")] = None,
    judge: Annotated[str | None, typer.Option(help="Backbone for the LLM judge (default: rule rubric).")] = None,
    judge_args: Annotated[str, _option("--judge_args", help="Judge key=value,...")] = "",
    resume: Annotated[bool, typer.Option("--resume", help="Continue a killed run in --output_path.")] = False,
    no_cache: Annotated[bool, _option("--no_cache", help="Bypass the response cache.")] = False,
    cache_path: Annotated[Path | None, _option(
        "--cache_path", help="The response cache file (default: ./.medmemorybench/responses.sqlite, or "
                             "$MEDMEMORYBENCH_CACHE/responses.sqlite when that is set).")] = None,
    max_error_rate: Annotated[float, _option(
        "--max_error_rate",
        help="Exit 1 when more than this share of answers failed (default 0: any); all is kept.")] = 0.0,
    plan: Annotated[bool, typer.Option("--plan", help="Print what the run would ingest, answer and cost; run "
                                                      "nothing.")] = False,
) -> None:
    """Evaluate a memory system (and backbone) on the benchmark, streaming sessions checkpoint by checkpoint.

    \b
    Examples:
      medmemorybench run --tasks medmemorybench --memory bm25 --model none --output_path runs/bm25
      medmemorybench run --tasks medmemorybench_mixed_eem --memory dense --model hf --limit 2 --output_path runs/smol
      medmemorybench run --memory long_context --model openai \\
        --model_args model=Qwen2.5-7B-Instruct,base_url=http://localhost:8000/v1 --output_path runs/qwen
      medmemorybench run ... --resume        # after a crash or Ctrl-C
      medmemorybench run ... --plan          # sessions, questions, LLM calls, tokens and time; nothing runs
    """
    from medmemorybench.harness.config import RunConfig
    from medmemorybench.models import parse_model_args

    with _user_errors():
        config = RunConfig(
            tasks=[t.strip() for t in tasks.split(",") if t.strip()], output_path=output_path, model=model,
            model_args=parse_model_args(model_args), memory=memory,
            memory_args=parse_model_args(memory_args, "--memory_args"),
            dataset_path=dataset_path, limit=limit, checkpoints=_int_list(checkpoints, "--checkpoints"),
            judge=judge, judge_args=parse_model_args(judge_args, "--judge_args"), resume=resume, use_cache=not no_cache,
            cache_path=cache_path, max_error_rate=max_error_rate, memory_model=memory_model,
            memory_model_args=parse_model_args(memory_model_args, "--memory_model_args"), embedder=embedder,
            memory_concurrency=memory_concurrency, answer_mode=answer_mode,
        )
        if plan:
            from medmemorybench.sweep.grid import task_cells
            from medmemorybench.sweep.plan import plan_cells

            print_plan(plan_cells(task_cells(config)), 1, "one-process run")
            return
        summary = run_with_progress(config, "run")
        print_report([output_path])
        say(f"results: {output_path / 'samples.jsonl'}; summary: {summary}")
        if json.loads(summary.read_text(encoding="utf-8"))["header"].get("dataset_hidden"):
            say("a hidden-gold release: the answers and retrieved sessions are recorded, nothing is scored; "
                f"`medmemorybench submit {output_path}` sends them to be scored against the sealed gold")


@app.command("sweep")
def sweep_cmd(
    grid: Annotated[Path | None, _option("--grid", help="YAML grid: memories, models, tasks (each with its args) and "
                                                       "shared run options; instead of the three flags.")] = None,
    memories: Annotated[str | None, _option("--memories", help="Memories, comma-separated (default bm25).")] = None,
    models: Annotated[str | None, _option("--models", help="Answering backbones, comma-separated (default none).")
                      ] = None,
    tasks: Annotated[str | None, _option("--tasks", help="Tasks, groups or tags (default medmemorybench).")] = None,
    model_args: Annotated[str, _option("--model_args", help="key=value,... for every model of --models.")] = "",
    memory_model: Annotated[str | None, _option("--memory_model", help="Backbone memories build with.")] = None,
    memory_model_args: Annotated[str, _option("--memory_model_args", help="Memory backbone key=value,...")] = "",
    dataset_path: Annotated[str | None, _option("--dataset_path", help="Built dataset folder.")] = None,
    limit: Annotated[int | None, typer.Option(help="Evaluate only the first N patients of each cell.")] = None,
    checkpoints: Annotated[str | None, typer.Option(help="Ask only at these checkpoints, e.g. 10,50,100.")] = None,
    judge: Annotated[str | None, typer.Option(help="Backbone for the LLM judge (default: rule rubric).")] = None,
    judge_args: Annotated[str, _option("--judge_args", help="Judge key=value,...")] = "",
    embedder: Annotated[str, _option("--embedder", help="Sentence embedder for memories.")] = "all-minilm-l6-v2",
    memory_concurrency: Annotated[int, _option("--memory_concurrency", help="Patients ingested at once per shard.")
                                  ] = 1,
    no_cache: Annotated[bool, _option("--no_cache", help="Bypass the response cache.")] = False,
    cache_path: Annotated[Path | None, _option("--cache_path", help="The response cache file.")] = None,
    max_error_rate: Annotated[float, _option("--max_error_rate", help="Per cell, as in run.")] = 0.0,
    output_path: Annotated[Path, _option("--output_path", "--out", help="Sweep folder: a run folder per cell.")
                           ] = Path("runs/sweep"),
    executor: Annotated[str, typer.Option(help="local (a process pool) or ray.")] = "local",
    ray_address: Annotated[str, _option(
        "--ray_address", help="local (start a cluster here), auto or HOST:PORT (attach to `ray start`).")] = "local",
    workers: Annotated[int | None, typer.Option(
        help="Shards at once: local processes, or the CPUs of a local Ray cluster (default: the CPUs).")] = None,
    cpus_per_task: Annotated[float, _option("--cpus_per_task", help="CPUs each shard takes (its torch threads).")
                             ] = 1.0,
    gpus_per_task: Annotated[float, _option(
        "--gpus_per_task", help="GPUs each shard takes on Ray (1 for an in-process vllm backbone).")] = 0.0,
    shard_size: Annotated[int | None, _option("--shard_size", help="Patients per shard (default: two shards per "
                                                                   "worker per cell).")] = None,
    resume: Annotated[bool, typer.Option("--resume", help="Continue a killed sweep in --output_path.")] = False,
    plan: Annotated[bool, typer.Option("--plan", help="Print what each cell would ingest, answer and cost; run "
                                                      "nothing.")] = False,
) -> None:
    """Run a grid of memories × models × tasks, each cell an ordinary run folder (report, submit and run --resume
    read it), split into (cell, patient shard) tasks on a local process pool or a Ray cluster. Only this process
    writes the cells' files; a killed sweep continues with --resume; a dead worker's shard runs again.

    \b
    Examples:
      medmemorybench sweep --memories bm25,dense,long_context --tasks medmemorybench_efficient,medmemorybench_mixed \\
        --output_path runs/grid
      medmemorybench sweep --grid grid.yaml --executor ray --ray_address auto --output_path runs/grid
      medmemorybench sweep --grid grid.yaml --plan
      medmemorybench sweep ... --resume      # after a crash or Ctrl-C
    """
    from medmemorybench.errors import InputError
    from medmemorybench.harness.config import RunConfig
    from medmemorybench.models import parse_model_args
    from medmemorybench.sweep.driver import SweepOptions
    from medmemorybench.sweep.executors import Resources
    from medmemorybench.sweep.grid import apply_run_options, make_cells, read_grid

    with _user_errors():
        base = RunConfig(tasks=[], output_path=output_path, model_args=parse_model_args(model_args),
                         dataset_path=dataset_path, limit=limit, checkpoints=_int_list(checkpoints, "--checkpoints"),
                         use_cache=not no_cache, max_error_rate=max_error_rate, memory_model=memory_model,
                         memory_model_args=parse_model_args(memory_model_args, "--memory_model_args"), judge=judge,
                         judge_args=parse_model_args(judge_args, "--judge_args"), embedder=embedder,
                         memory_concurrency=memory_concurrency, cache_path=cache_path)
        def names(text: str | None, default: str) -> list[str]:
            return [part.strip() for part in (text or default).split(",") if part.strip()]

        if grid is not None:
            if memories or models or tasks:
                raise InputError("--grid names the memories, models and tasks; leave out --memories, --models and "
                                 "--tasks")
            spec = read_grid(grid)
            base = apply_run_options(base, spec, f"--grid: {grid}")
            cells = make_cells(spec["memories"], spec["models"], spec["tasks"], base, output_path)
        else:
            cells = make_cells(names(memories, "bm25"), names(models, "none"), names(tasks, "medmemorybench"), base,
                               output_path)
        options = SweepOptions(output_path=output_path, executor=executor, workers=workers,
                               resources=Resources(cpus_per_task, gpus_per_task), ray_address=ray_address,
                               shard_size=shard_size, resume=resume)
        if plan:
            from medmemorybench.sweep.executors import local_slots
            from medmemorybench.sweep.plan import plan_cells

            print_plan(plan_cells(cells), local_slots(workers, options.resources), executor)
            return
        finished = sweep_with_progress(cells, options)
        print_report(finished)
        say(f"cells: {len(finished)} in {output_path} (each a run folder: report, submit and run --resume read it)")


@app.command("report")
def report_cmd(
    runs: Annotated[list[Path], typer.Argument(help="Run folders (each with summary.json), or a sweep's folder "
                                                    "(its finished cells).")],
    plot: Annotated[Path | None, typer.Option(help="Where to write the saturation plot PNG.")] = None,
) -> None:
    """Print runs side by side and write the saturation plot: accuracy (or Recall@k for retrieval-only runs) and
    the efficient-mixed gap per type and checkpoint, with 95 % intervals.

    \b
    Examples:
      medmemorybench report runs/bm25 runs/dense --plot runs/saturation.png
      medmemorybench report runs/smollm2_bm25
      medmemorybench report runs/grid          # a sweep: every finished cell
    """
    from medmemorybench.sweep.driver import expand_sweeps

    with _user_errors():
        runs = expand_sweeps(runs)
        written = print_report(runs, plot or runs[0] / "saturation.png")
        say(f"saturation plot: {written}")


def _print_scores(scores) -> None:  # noqa: ANN001
    def pct(value: float | None) -> str:
        return "n/a" if value is None else f"{100 * value:.1f}"

    for sheet in scores.sheets:
        table = Table("category", "items", "reviewed", "correct", "incorrect", "unsure", "error %",
                      title=f"review: {sheet.path}")
        table.columns[0].no_wrap = True
        for r in sheet.error_rates:
            table.add_row(r.category, str(r.n_items), str(r.n_reviewed), str(r.correct), str(r.incorrect),
                          str(r.unsure), pct(r.error_rate))
        console.print(table)
    if scores.agreement is not None:
        table = Table("category", "both reviewed", "agree", "agreement %", "Cohen's kappa",
                      title=f"agreement: {scores.sheets[0].path} vs {scores.sheets[1].path}")
        table.columns[0].no_wrap = True
        for r in scores.agreement:
            table.add_row(r.category, str(r.n_both), str(r.n_agree), pct(r.percent_agreement),
                          "n/a" if r.kappa is None else f"{r.kappa:.3f}")
        console.print(table)


@app.command("review")
def review_cmd(
    paths: Annotated[list[Path] | None, typer.Argument(
        help="A built dataset folder (OUT/medmemorybench); with --score, one or two filled sheets (CSV).",
        metavar="DATASET | FILE [FILE2]", show_default=False)] = None,
    sample: Annotated[int | None, typer.Option(help="Items to sample: events and questions, every kind "
                                                    "and type covered when N allows.")] = None,
    seed: Annotated[int, typer.Option(help="Sampling seed: the same dataset, N and seed give identical files.")] = 0,
    out: Annotated[Path | None, _option("--output_path", "--out",
                                        help="The sheet to write, FILE.csv (FILE.md beside it).")] = None,
    overwrite: Annotated[bool, _switch("overwrite", help="Replace an existing sheet.")] = False,
    score: Annotated[bool, typer.Option("--score", help="Score filled sheets instead of writing one.")] = False,
    json_out: Annotated[Path | None, typer.Option("--json", help="With --score: also write the scores as JSON.")] = (
        None
    ),
) -> None:
    """Physician review: write a seeded, stratified review sheet of a dataset, or score filled sheets
    (error rate per category; with two reviewers' sheets, percent agreement and Cohen's kappa).

    \b
    Examples:
      medmemorybench review out/medmemorybench --sample 60 --seed 0 --output_path review/review.csv
      medmemorybench review --score review/reviewer_a.csv
      medmemorybench review --score review/reviewer_a.csv review/reviewer_b.csv --json review/scores.json
    """
    from medmemorybench.errors import InputError
    from medmemorybench.review import score_sheets, write_review_sheet, write_scores_json

    with _user_errors():
        paths = paths or []
        if score:
            for flag, value in (("--sample", sample), ("--output_path", out), ("--overwrite", overwrite or None)):
                if value is not None:
                    raise InputError(f"{flag}: applies only when writing a sheet, not with --score")
            scores = score_sheets(paths)
            _print_scores(scores)
            if json_out is not None:
                console.print(f"scores: {write_scores_json(scores, json_out)}", highlight=False)
            return
        if json_out is not None:
            raise InputError("--json: applies only with --score")
        if len(paths) != 1:
            raise InputError(f"review: give one DATASET folder (got {len(paths)}); to score sheets add --score")
        for flag, value in (("--sample", sample), ("--output_path", out)):
            if value is None:
                raise InputError(f"{flag}: required when writing a sheet, e.g. --sample 60 --output_path review.csv")
        sheet = write_review_sheet(paths[0], out, sample=sample, seed=seed, overwrite=overwrite)
        kinds = {t: len({i.category for i in sheet.items if i.item_type == t}) for t in ("event", "question")}
        console.print(f"{len(sheet.items)} items ({kinds['event']} event kinds, {kinds['question']} question "
                      f"types) from {sum(sheet.pool.values())}; sheet: {sheet.csv_path}; "
                      f"reading copy: {sheet.markdown_path}", highlight=False)


LISTS = ("tasks", "memories", "models", "scorers", "registration")
"""What `ls` lists."""


@app.command("ls")
def ls_cmd(
    what: Annotated[str | None, typer.Argument(help=f"{', '.join(LISTS)}; none: every list")] = None,
) -> None:
    """List what can be named on the command line, and the build registered under the bare name.

    \b
    Example:
      medmemorybench ls tasks
      medmemorybench ls
    """
    if what is None:
        for name in LISTS:
            console.print(f"{name}:", highlight=False, style="bold")
            ls_cmd(name)
        return
    from medmemorybench.errors import InputError

    with _user_errors():
        if what == "registration":
            _print_registration()
        elif what == "tasks":
            from medmemorybench.harness.tasks import GroupConfig, load_registry

            for name, config in load_registry().items():
                kind = "group" if isinstance(config, GroupConfig) else config.dataset_name
                console.print(f"{name}  ({kind})", highlight=False)
        elif what == "memories":
            from medmemorybench.memory import available_memories
            from medmemorybench.memory.oracle import OracleMemory

            for name in available_memories():
                note = "  (reference: the ceiling; reads the gold evidence)" if name == OracleMemory.name else ""
                console.print(f"{name}{note}", highlight=False)
        elif what == "models":
            from medmemorybench.models.registry import MODELS

            console.print("\n".join(MODELS.names()))
        elif what == "scorers":
            from medmemorybench.scoring import SCORERS

            for name, info in sorted(SCORERS.items()):
                console.print(f"{name}: {info.description}", highlight=False)
        else:
            raise InputError(f"ls: unknown list '{what}'; choose {', '.join(LISTS)} (or none: all of them)")


def _print_registration() -> None:
    from medmemorybench.dataset.register import FOLDER_STATES, folder_state, registered

    registration = registered()
    if registration is None:
        say("no build is registered under 'medmemorybench' (`medmemorybench register FOLDER` registers one)")
        return
    state = folder_state(registration)
    now = "" if state == "here" else f" (that folder {FOLDER_STATES[state]})"
    say(f"load_dataset('medmemorybench', ...) gives build {registration.fingerprint[:12]} from "
        f"{registration.folder}{now}; prepared in {registration.cache}")
    if registration.previous:
        say(f"it replaced build {registration.previous['fingerprint'][:12]} from {registration.previous['folder']}; "
            f"`medmemorybench register {registration.previous['folder']}` points the name back")


@app.command("serve")
def serve_cmd(
    model: Annotated[str, _option("--model", help="Backbone to serve: hf (default: embedded SmolLM2).")] = "hf",
    model_args: Annotated[str, _option("--model_args", help="Backbone key=value,...")] = "",
    host: Annotated[str, typer.Option(help="Address to listen on (loopback by default).")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port.")] = 8000,
    max_batch: Annotated[int, _option("--max_batch", help="Most requests answered together.")] = 16,
    api_key: Annotated[str | None, _option(
        "--api_key", envvar="MEDMEMORYBENCH_SERVE_KEY",
        help="Require `Authorization: Bearer KEY` on every request (or set MEDMEMORYBENCH_SERVE_KEY, which keeps "
             "the key out of the shell's history).")] = None,
) -> None:
    """Serve a backbone as an OpenAI-compatible chat API (POST /v1/chat/completions), micro-batched.

    \b
    Examples:
      medmemorybench serve --model hf --port 8000
      medmemorybench run --model openai --model_args model=smollm2,base_url=http://127.0.0.1:8000/v1
    """
    from medmemorybench.errors import InputError
    from medmemorybench.models import load_backbone, parse_model_args
    from medmemorybench.serve import is_loopback, make_server

    with _user_errors():
        if api_key is not None and not api_key.strip():
            raise InputError("--api_key: empty")
        if not 0 <= port <= 65535:  # (checked before the model loads, which takes a while)
            raise InputError(f"--port: {port} is not a TCP port (0-65535; 0 picks a free one)")
        if max_batch < 1:
            raise InputError(f"--max_batch: {max_batch} must be at least 1")
        backbone = load_backbone(model, parse_model_args(model_args))
        if not backbone.answers:
            raise InputError(f"--model: '{model}' has nothing to serve; choose a backbone such as hf")
        server = make_server(backbone, host, port, max_batch, api_key=api_key)
        if not is_loopback(host):
            say(f"serve: listening on {host}, reachable from other machines, over plain HTTP"
                + ("" if api_key else ", with no --api_key: anyone who can reach it can use it"), err_console)
        console.print(f"serving {backbone.model_id} at http://{host}:{server.server_address[1]}/v1"
                      + (" (API key required)" if api_key else ""), highlight=False)
        try:
            server.serve_forever()
        finally:
            server.server_close()


def main() -> None:
    """Console-script entry point."""
    try:
        app()
    except BrokenPipeError:  # e.g. `medmemorybench show f | head`
        sys.exit(0)


if __name__ == "__main__":
    main()
