"""One registry type for everything named on the command line (memory systems, backbones; scorers share its
near-match errors and entry points, `scoring.base.get_scorer`): built-in
"module:Class" targets plus a package entry-point group, imported only when used (so importing the package never
imports torch), unknown names answered with near matches and the full list, a missing optional dependency with
its install command, and options checked against the class's signature.

A third-party package adds its own in its pyproject.toml, e.g.

    [project.entry-points."medmemorybench.memory_systems"]
    my_memory = "my_package.memory:MyMemory"
"""

from __future__ import annotations

import difflib
import importlib
import inspect
import logging
from collections.abc import Iterable
from importlib.metadata import EntryPoint, entry_points
from typing import Any, Generic, TypeVar

from medmemorybench.errors import InputError

logger = logging.getLogger(__name__)

T = TypeVar("T")


def unknown_name(kind: str, where: str, name: str, known: Iterable[str]) -> InputError:
    """The error for a name nothing is registered under: near matches, then everything that is."""
    known = sorted(known)
    near = difflib.get_close_matches(name, known, n=2)
    hint = f" Did you mean {' or '.join(repr(n) for n in near)}?" if near else ""
    return InputError(f"{where}: unknown {kind} '{name}'.{hint} Available: {', '.join(known)}")


def load_entry_point(group: str, name: str) -> bool:
    """Import the entry point `name` of `group` (for registries whose entries register themselves on import, as
    scorers do); False when there is none."""
    for entry in entry_points(group=group):
        if entry.name == name:
            entry.load()
            return True
    return False


class Registry(Generic[T]):
    """Classes of one kind by name.

    Args:
        kind: what is named ("memory system", "model"), for messages.
        flag: the option that names it (`--memory`); its options come with `<flag>_args`.
        group: the entry-point group third-party packages register in.
        builtins: name -> "module:Class"; a third-party entry point cannot take a built-in's name.
        base: the class every registered one must subclass.
        install_hints: missing module -> the command that installs it.
    """

    def __init__(self, kind: str, flag: str, group: str, builtins: dict[str, str], base: type,
                 install_hints: dict[str, str]) -> None:
        self.kind, self.flag, self.group, self.builtins = kind, flag, group, builtins
        self.base, self.install_hints = base, install_hints

    def registered(self) -> dict[str, str | EntryPoint]:
        """Built-ins, then third-party entry points."""
        found: dict[str, str | EntryPoint] = dict(self.builtins)
        for entry in entry_points(group=self.group):
            if entry.name not in self.builtins:
                found[entry.name] = entry
            elif entry.value != self.builtins[entry.name]:
                logger.warning("ignoring entry point %s = %s: '%s' is built in", entry.name, entry.value, entry.name)
        return found

    def names(self) -> list[str]:
        return sorted(self.registered())

    @staticmethod
    def key(name: str) -> str:
        return name.strip().replace("-", "_")

    def unknown(self, name: str, known: Iterable[str], flag: str | None = None) -> InputError:
        return unknown_name(self.kind, flag or self.flag, name, known)

    def cls(self, name: str, flag: str | None = None) -> type[T]:
        """The class registered as `name` (dashes accepted for underscores), imported now.

        Raises:
            InputError: unknown name, missing dependency (with the install command), or a target that is not a
                subclass of the registry's base.
        """
        flag = flag or self.flag
        registry = self.registered()
        key = self.key(name)
        if key not in registry:
            raise self.unknown(name, registry, flag)
        target = registry[key]
        try:
            if isinstance(target, EntryPoint):
                found = target.load()
            else:
                module_name, _, class_name = target.partition(":")
                found = getattr(importlib.import_module(module_name), class_name)
        except ModuleNotFoundError as exc:
            raise self.missing(key, exc, flag) from None
        if not (isinstance(found, type) and issubclass(found, self.base)):
            where = target.value if isinstance(target, EntryPoint) else target
            raise InputError(f"{flag} {key}: {where} is not a {self.base.__name__} subclass")
        return found

    def missing(self, key: str, exc: ModuleNotFoundError, flag: str | None = None) -> InputError:
        package = (exc.name or "").split(".")[0]
        hint = self.install_hints.get(package, f"pip install {package}")
        return InputError(f"{flag or self.flag} {key}: needs the package '{package}'; install it with: {hint}")

    def create(self, name: str, options: dict[str, Any] | None = None, flag: str | None = None) -> T:
        """A new instance of `name` built with `options` (the parsed `<flag>_args`).

        Raises:
            InputError: as `cls`, or options the class does not accept or rejects (naming `<flag>_args`, with the
                accepted options).
        """
        flag = flag or self.flag
        cls = self.cls(name, flag)
        key, options = self.key(name), dict(options or {})
        parameters = inspect.signature(cls).parameters.values()
        accepted = ", ".join(p.name for p in parameters if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY))
        where = f"{flag}_args for '{key}'"
        try:
            inspect.signature(cls).bind(**options)
        except TypeError as exc:
            raise InputError(f"{where}: {exc}; accepted options: {accepted or 'none'}") from None
        try:
            return cls(**options)
        except (TypeError, ValueError, InputError) as exc:
            raise InputError(f"{where}: {exc}; accepted options: {accepted or 'none'}") from None
        except ModuleNotFoundError as exc:
            raise self.missing(key, exc, flag) from None
