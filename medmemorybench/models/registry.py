"""Backbones by name, imported lazily so that importing the package never imports torch or vLLM."""

from __future__ import annotations

import difflib
import importlib

from medmemorybench.errors import InputError
from medmemorybench.models.base import Backbone

BACKBONES: dict[str, str] = {
    "hf": "medmemorybench.models.hf:HFBackbone",
    "openai": "medmemorybench.models.openai_compatible:OpenAIBackbone",
    "vllm": "medmemorybench.models.vllm_backend:VLLMBackbone",
}
"""Registry name -> "module:Class". `none` (retrieval only) is handled by the runner."""

INSTALL_HINTS = {
    "torch": "pip install torch==2.13.0 && pip install -e '.[cpu-llm]'",
    "transformers": "pip install -e '.[cpu-llm]'",
    "vllm": "pip install -e '.[vllm]' (on a GPU machine)",
    "openai": "pip install openai",
}


def parse_model_args(text: str | None, flag: str = "--model_args") -> dict[str, object]:
    """lm-eval style `key=value,key2=value2` into a dict (ints, floats and booleans converted).

    Raises:
        InputError: for an item without '=', naming `flag`.
    """
    args: dict[str, object] = {}
    for item in filter(None, (part.strip() for part in (text or "").split(","))):
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise InputError(f"{flag}: '{item}' is not key=value")
        args[key.strip()] = _convert(value.strip())
    return args


def _convert(value: str) -> object:
    if value.lower() in ("true", "false"):
        return value.lower() == "true"
    for kind in (int, float):
        try:
            return kind(value)
        except ValueError:
            pass
    return value


def unknown_name(kind: str, name: str, known: list[str], flag: str) -> InputError:
    """An error for an unknown registry name: near matches and the full list."""
    near = difflib.get_close_matches(name, known, n=2)
    hint = f" Did you mean {' or '.join(repr(n) for n in near)}?" if near else ""
    return InputError(f"{flag}: unknown {kind} '{name}'.{hint} Available: {', '.join(sorted(known))}")


def load_backbone(name: str, model_args: dict[str, object] | None = None, flag: str = "--model") -> Backbone:
    """Instantiate the backbone `name` with `model_args`; `flag` is the option that named it (`--judge` ...).

    Raises:
        InputError: for an unknown name, bad arguments, or a missing optional dependency (with the
            install command), naming `flag` or its `_args` option.
    """
    if name not in BACKBONES:
        raise unknown_name("model", name, [*BACKBONES, "none"], flag)
    module_name, _, class_name = BACKBONES[name].partition(":")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        missing = (exc.name or "").split(".")[0]
        hint = INSTALL_HINTS.get(missing, f"pip install {missing}")
        raise InputError(f"{flag} {name}: needs the package '{missing}'; install it with: {hint}") from None
    cls = getattr(module, class_name)
    try:
        return cls(**(model_args or {}))
    except TypeError as exc:
        raise InputError(f"{flag}_args for '{name}': {exc}") from None
    except InputError as exc:
        raise InputError(f"{flag}_args: {exc}") from None
