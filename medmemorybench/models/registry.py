"""Backbones by name, imported lazily so that importing the package never imports torch or vLLM."""

from __future__ import annotations

from medmemorybench.errors import InputError
from medmemorybench.models.base import Backbone
from medmemorybench.registry import Registry

ENTRY_POINT_GROUP = "medmemorybench.backbones"

BACKBONES: dict[str, str] = {
    "hf": "medmemorybench.models.hf:HFBackbone",
    "openai": "medmemorybench.models.openai_compatible:OpenAIBackbone",
    "vllm": "medmemorybench.models.vllm_backend:VLLMBackbone",
    "none": "medmemorybench.models.base:RetrievalOnly",
}
"""Built-in registry name -> "module:Class"; third-party backbones register in `ENTRY_POINT_GROUP`."""

INSTALL_HINTS = {
    "torch": "pip install torch==2.13.0 && pip install -e '.[cpu-llm]'",
    "transformers": "pip install -e '.[cpu-llm]'",
    "vllm": "install vLLM in a GPU environment of its own, never in this CPU one (docs/running.md, 'vllm')",
    "openai": "pip install openai",
}

MODELS: Registry[Backbone] = Registry("model", "--model", ENTRY_POINT_GROUP, BACKBONES, Backbone, INSTALL_HINTS)


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


def load_backbone(name: str, model_args: dict[str, object] | None = None, flag: str = "--model") -> Backbone:
    """Instantiate the backbone `name` with `model_args`; `flag` is the option that named it (`--judge` ...).

    Raises:
        InputError: for an unknown name, bad arguments, or a missing optional dependency (with the
            install command), naming `flag` or its `_args` option.
    """
    return MODELS.create(name, model_args, flag)
