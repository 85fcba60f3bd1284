"""JSON-schema constrained decoding for the transformers backbone, with xgrammar (the engine vLLM uses).

A schema is compiled once per tokenizer and reused; each `generate()` call needs a fresh logits processor
(xgrammar's matchers keep per-call state). The grammar fixes the syntax only: a model that loops inside a
string or a list still runs to `max_tokens`, so callers should bound lists and strings (`maxItems`,
`maxLength`) in the schemas they send.
"""

from __future__ import annotations

import json
import threading
from typing import Any

from medmemorybench.errors import InputError

INSTALL = "pip install --no-deps xgrammar==0.2.9 apache-tvm-ffi==0.1.15.post2  (triton is needed on GPU only)"


class JsonConstraint:
    """Compiled JSON-schema grammars for one tokenizer."""

    def __init__(self, tokenizer: Any, vocab_size: int) -> None:
        try:
            import xgrammar
        except ImportError:
            raise InputError(f"JSON-schema answers on the hf backbone need xgrammar: {INSTALL}") from None
        self._xgr = xgrammar
        info = xgrammar.TokenizerInfo.from_huggingface(tokenizer, vocab_size=vocab_size)
        self._compiler = xgrammar.GrammarCompiler(info)
        self._compiled: dict[str, Any] = {}
        self._lock = threading.Lock()

    def _grammar(self, schema: dict) -> Any:
        key = json.dumps(schema, sort_keys=True)
        with self._lock:
            if key not in self._compiled:
                self._compiled[key] = self._compiler.compile_json_schema(key, any_whitespace=False)
            return self._compiled[key]

    def logits_processor(self, schemas: list[dict]) -> Any:
        """A processor for one `generate()` call over a batch, a schema per row."""
        from xgrammar.contrib.hf import LogitsProcessor

        return LogitsProcessor([self._grammar(schema) for schema in schemas])
