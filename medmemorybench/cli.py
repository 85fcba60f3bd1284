"""The `medmemorybench` command: thin wrappers over the library, turning its errors into exit code 2."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from medmemorybench import __version__
from medmemorybench.errors import MedMemoryBenchError

app = typer.Typer(
    name="medmemorybench",
    help="MedMemoryBench: agent memory for personalized healthcare.",
    add_completion=False,
    no_args_is_help=True,
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
)
console = Console()
err_console = Console(stderr=True)

KnowledgeOption = Annotated[
    Path | None,
    typer.Option("--knowledge", help="Knowledge-base folder to use instead of the packaged one."),
]


@contextmanager
def _user_errors() -> Iterator[None]:
    """Print a library error as one clear message and exit 2; never a traceback."""
    try:
        yield
    except MedMemoryBenchError as exc:
        err_console.print(f"error: {exc}", markup=False, highlight=False)
        raise typer.Exit(2) from None
    except KeyboardInterrupt:
        err_console.print("interrupted", markup=False)
        raise typer.Exit(130) from None


def _knowledge(path: Path | None):  # noqa: ANN202
    from medmemorybench.knowledge import default_knowledge, load_knowledge

    return load_knowledge(path) if path is not None else default_knowledge()


def _progress() -> Progress:
    return Progress(
        TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
        console=err_console, transient=False,
    )


@app.command("knowledge")
def knowledge_cmd(knowledge: KnowledgeOption = None) -> None:
    """Validate the knowledge base and print what it holds.

    Example: medmemorybench knowledge
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
    out: Annotated[Path, typer.Option("--out", help="Folder to write one JSON file per patient into.")],
    seed: Annotated[int, typer.Option(help="Global seed: the same seed gives byte-identical files.")] = 0,
    personas: Annotated[int, typer.Option(help="Number of patients (the roster cycles through conditions).")] = 20,
    encounters: Annotated[int, typer.Option(help="Regular encounters per patient year (10-365).")] = 100,
    condition: Annotated[
        list[str] | None, typer.Option(help="Only these condition keys (repeatable).")
    ] = None,
    overwrite: Annotated[bool, typer.Option(help="Replace OUT if it exists.")] = False,
    knowledge: KnowledgeOption = None,
) -> None:
    """Simulate patients' care years (the ground truth) and write them as JSON.

    Example: medmemorybench simulate --seed 0 --personas 20 --out out/years
    """
    from medmemorybench.simulate import iter_cohort
    from medmemorybench.simulate.store import write_cohort

    with _user_errors():
        kb = _knowledge(knowledge)
        years = iter_cohort(kb, seed, personas, encounters, condition)
        with _progress() as progress:
            task = progress.add_task("simulating", total=personas)
            paths = write_cohort(
                years, out, overwrite=overwrite,
                on_written=lambda _: progress.advance(task),
                metadata={"seed": seed, "personas": personas, "encounters": encounters,
                          "conditions": condition or "roster", "medmemorybench": __version__},
            )
        console.print(f"wrote {len(paths)} care years to {out}")


@app.command("show")
def show_cmd(
    file: Annotated[Path, typer.Argument(help="A care-year JSON file written by `simulate`.")],
    knowledge: KnowledgeOption = None,
) -> None:
    """Print a readable timeline: persona, traps, family, phases, state changes and causal chains.

    Example: medmemorybench show out/years/P0001.json
    """
    from medmemorybench.simulate.show import render_timeline
    from medmemorybench.simulate.store import read_care_year

    with _user_errors():
        year = read_care_year(file)
        render_timeline(_knowledge(knowledge), year, console)


@app.command("demo")
def demo_cmd(
    out: Annotated[Path, typer.Option("--out", help="Folder for everything the demo writes.")] = Path(
        "demo_output"
    ),
    seed: Annotated[int, typer.Option(help="Global seed.")] = 0,
) -> None:
    """The main job on the embedded defaults: simulate the 20 default patients and summarise each year.

    Example: medmemorybench demo --out demo_output
    """
    from medmemorybench.simulate import iter_cohort
    from medmemorybench.simulate.store import write_cohort
    from medmemorybench.simulate.summary import summarize_year

    with _user_errors():
        kb = _knowledge(None)
        summaries = []
        with _progress() as progress:
            task = progress.add_task("simulating", total=len(kb.roster))
            write_cohort(
                iter_cohort(kb, seed, len(kb.roster)), out / "years", overwrite=True,
                on_written=lambda y: (summaries.append(summarize_year(y)), progress.advance(task)),
                metadata={"seed": seed, "personas": len(kb.roster), "medmemorybench": __version__},
            )
        table = Table("persona", "condition", "events", "regimen changes", "lab values", "longest chain",
                      title=f"care years (seed {seed})")
        for s in summaries:
            table.add_row(s.persona_id, s.condition, str(s.events), str(s.regimen_changes),
                          str(s.lab_measurements), f"{s.longest_chain} events / {s.longest_chain_days} d")
        console.print(table)
        console.print(f"care years written to {out / 'years'}; inspect one with "
                      f"`medmemorybench show {out / 'years' / 'P0001.json'}`")


def main() -> None:
    """Console-script entry point."""
    try:
        app()
    except BrokenPipeError:  # e.g. `medmemorybench show f | head`
        sys.exit(0)


if __name__ == "__main__":
    main()
