"""One option style across commands: `_` and `-` spellings of every multi-word option, one word for what a command
writes, `--version`, and `--help` examples one per line."""

from __future__ import annotations

import inspect

import pytest
import typer
from typer.testing import CliRunner

from medmemorybench import __version__
from medmemorybench.cli import app

COMMANDS = typer.main.get_command(app).commands
WRITERS = ("simulate", "build", "demo", "run", "review")
"""Commands that write a folder (or, for review, the sheet)."""


def options(command) -> list:  # noqa: ANN001 - click's (typer may ship its own copy of click)
    return [p for p in command.params if p.param_type_name == "option"]


def test_the_options_are_seen():
    # (the spelling tests must not pass by seeing no option at all)
    assert sum(len(options(command)) for command in COMMANDS.values()) >= 40


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_multiword_option_takes_both_spellings(name):
    for option in options(COMMANDS[name]):
        for spellings in (option.opts, option.secondary_opts):  # (--no-register is a spelling too)
            check_both(name, spellings)


def check_both(name: str, spellings: list[str]) -> None:
    for spelling in spellings:
        words = spelling[2:]
        if "_" in words or "-" in words:
            assert {"--" + words.replace("-", "_"), "--" + words.replace("_", "-")} <= set(spellings), \
                f"{name} {spelling}: {spellings}"


@pytest.mark.parametrize("name", WRITERS)
def test_what_a_command_writes_is_output_path_everywhere(name):
    spellings = {s for option in options(COMMANDS[name]) for s in option.opts}
    assert {"--output_path", "--output-path", "--out"} <= spellings  # (--out: the old spelling, still accepted)


def test_version():
    result = CliRunner().invoke(app, ["--version"])
    assert result.exit_code == 0 and result.output.strip() == f"medmemorybench {__version__}"


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_help_examples_are_one_per_line(name):
    doc = inspect.getdoc(COMMANDS[name].callback) or ""
    examples = [line.strip() for line in doc.splitlines() if line.strip().startswith("medmemorybench ")]
    assert examples, f"{name}: --help has no example"
    shown = CliRunner().invoke(app, [name, "--help"], terminal_width=80).output
    lines = {line.strip() for line in shown.splitlines()}
    for example in examples:
        assert example in lines, f"{name}: example not on a line of its own: {example}"
