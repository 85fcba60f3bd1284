"""The memory registry: built-ins by name, third-party entry points, clear errors for names and options."""

from __future__ import annotations

import subprocess
import sys
from importlib.metadata import EntryPoint
from pathlib import Path

import pytest

import medmemorybench.registry as shared_registry
from medmemorybench.errors import InputError
from medmemorybench.memory import MemorySystem, Retrieval, available_memories, load_memory, registry
from medmemorybench.memory.bm25 import BM25Memory
from medmemorybench.memory.long_context import LongContext


class EchoMemory(MemorySystem):
    """A third-party memory (registered through a fake entry point below)."""

    def __init__(self, loud: bool = False) -> None:
        super().__init__(loud=loud)

    def reset(self) -> None:
        pass

    def ingest(self, sessions) -> None:
        pass

    def retrieve(self, questions, k, token_budget=None):
        return [Retrieval() for _ in questions]


class NotAMemory:
    pass


def _entry_points(*pairs: tuple[str, str]):
    def fake(group: str):
        assert group == "medmemorybench.memory_systems"
        return [EntryPoint(name=name, value=value, group=group) for name, value in pairs]
    return fake


def test_builtins_are_available():
    assert {"none", "long_context", "bm25", "dense"} <= set(available_memories())


def test_load_by_name_with_options():
    memory = load_memory("bm25", {"chunking": "session", "k1": 1.2})
    assert isinstance(memory, BM25Memory)
    assert memory.spec()["chunking"] == "session" and memory.spec()["k1"] == 1.2
    assert isinstance(load_memory("long-context", {}), LongContext)  # the dashed spelling works too


def test_unknown_name_suggests_near_matches_and_lists_all():
    with pytest.raises(InputError) as error:
        load_memory("bm52", {})
    message = str(error.value)
    assert "--memory" in message and "'bm52'" in message
    assert "Did you mean 'bm25'?" in message
    assert f"Available: {', '.join(available_memories())}" in message and "bm25, dense" in message


def test_unknown_option_names_memory_args_and_lists_accepted_options():
    with pytest.raises(InputError) as error:
        load_memory("bm25", {"windw": 3})
    message = str(error.value)
    assert "--memory_args for 'bm25'" in message and "windw" in message
    assert "accepted options: chunking, window, stride, k1, b, stopwords, stem" in message


def test_bad_option_value_is_an_input_error():
    with pytest.raises(InputError, match=r"--memory_args for 'bm25': chunking must be one of session, turns"):
        load_memory("bm25", {"chunking": "paragraph"})
    with pytest.raises(InputError, match="--memory_args for 'none'"):
        load_memory("none", {"k": 3})


def test_third_party_entry_point_is_discovered(monkeypatch):
    monkeypatch.setattr(shared_registry, "entry_points", _entry_points(("echo", f"{__name__}:EchoMemory")))
    assert "echo" in available_memories()
    memory = load_memory("echo", {"loud": True})
    assert isinstance(memory, EchoMemory)
    assert memory.spec() == {"memory": "echo", "loud": True}  # the registry name is recorded


def test_entry_point_cannot_take_over_a_builtin(monkeypatch):
    monkeypatch.setattr(shared_registry, "entry_points", _entry_points(("bm25", f"{__name__}:EchoMemory")))
    assert isinstance(load_memory("bm25", {}), BM25Memory)


def test_entry_point_that_is_not_a_memory_system_is_rejected(monkeypatch):
    monkeypatch.setattr(shared_registry, "entry_points", _entry_points(("odd", f"{__name__}:NotAMemory")))
    with pytest.raises(InputError, match="not a MemorySystem subclass"):
        load_memory("odd", {})


def test_missing_dependency_names_the_install_command(monkeypatch):
    monkeypatch.setattr(shared_registry, "entry_points",
                        _entry_points(("ghost", "medmemorybench_no_such_package.memory:Ghost")))
    with pytest.raises(InputError, match="needs the package 'medmemorybench_no_such_package'; install it with"):
        load_memory("ghost", {})


def test_importing_the_package_imports_no_heavy_dependency():
    code = ("import sys, medmemorybench.memory as m; m.available_memories(); "
            "print(sorted(n for n in ('torch', 'sentence_transformers', 'bm25s') if n in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_pyproject_entry_points_list_the_builtins():
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    pyproject = tomllib.loads((Path(__file__).parents[2] / "pyproject.toml").read_text())
    assert pyproject["project"]["entry-points"][registry.ENTRY_POINT_GROUP] == registry.MEMORY_SYSTEMS
