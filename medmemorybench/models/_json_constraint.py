"""JSON-schema constrained decoding for the transformers backbone, with xgrammar (the engine vLLM uses).

A schema is compiled once per tokenizer and reused (the `MAX_GRAMMARS` most recently used are kept); each
`generate()` call needs a fresh logits processor (xgrammar's matchers keep per-call state). The grammar fixes the
syntax only: a model that loops inside a string or a list still runs to `max_tokens`, so callers should bound lists
and strings (`maxItems`, `maxLength`) in the schemas they send. A schema xgrammar cannot compile is a ValueError
with its reason (`serve` answers it with a 400 before the request joins a batch).
"""

from __future__ import annotations

import json
import re
import threading
from collections import OrderedDict
from typing import Any

from medmemorybench.errors import InputError

MAX_GRAMMARS = 256
"""Compiled grammars kept (about 0.3 MB each for SmolLM2's vocabulary, measured): a client sending a new schema with
every request to `serve` would otherwise grow the server without bound."""
_XGRAMMAR_PREFIX = re.compile(r"^\[[^\]]*\] \S+:\d+: ")
INSTALL = "pip install --no-deps xgrammar==0.2.9 apache-tvm-ffi==0.1.15.post2  (triton is needed on GPU only)"


class JsonConstraint:
    """Compiled JSON-schema grammars for one tokenizer."""

    def __init__(self, tokenizer: Any, vocab_size: int) -> None:
        try:
            import xgrammar
        except ImportError:
            raise InputError(f"JSON-schema answers on the hf backbone need xgrammar: {INSTALL}") from None
        self._xgr, self._vocab_size = xgrammar, vocab_size
        info = xgrammar.TokenizerInfo.from_huggingface(tokenizer, vocab_size=vocab_size)
        self._compiler = xgrammar.GrammarCompiler(info)
        self._compiled: OrderedDict[str, Any] = OrderedDict()
        self._lock = threading.Lock()

    def _grammar(self, schema: dict) -> Any:
        key = json.dumps(schema, sort_keys=True)
        with self._lock:
            if key not in self._compiled:
                try:
                    self._compiled[key] = self._compiler.compile_json_schema(key, any_whitespace=False)
                except RuntimeError as exc:  # (xgrammar: "[time] file.cc:line: what is wrong")
                    reason = _XGRAMMAR_PREFIX.sub("", str(exc).strip()) or "refused by xgrammar"
                    raise ValueError(f"the JSON schema cannot be decoded under: {reason}") from None
                while len(self._compiled) > MAX_GRAMMARS:  # (the least recently used goes; a running row keeps its)
                    self._compiled.popitem(last=False)
            self._compiled.move_to_end(key)
            return self._compiled[key]

    def check(self, schema: dict) -> None:
        """Raise ValueError saying why `schema` cannot be decoded under (compiled here, and kept for the request)."""
        self._grammar(schema)

    def logits_processor(self, schemas: list[dict]) -> Any:
        """A processor for one `generate()` call over a batch, a schema per row."""
        from xgrammar.contrib.hf import LogitsProcessor

        return LogitsProcessor([self._grammar(schema) for schema in schemas])

    def row_processor(self, schemas: list[dict | None]) -> RowGrammars:
        """A processor for a cohort that may pause and resume (`HFBackbone.generate_slice`): a schema per row,
        None for a free row."""
        return RowGrammars(self._xgr, [None if s is None else self._grammar(s) for s in schemas], self._vocab_size)


class RowGrammars:
    """Per-row grammar masks that outlive one `generate()` call: the matchers keep their place across a pause,
    rows can be dropped (`select`), free rows are left alone, and a row stopped early (its own `max_tokens`, a
    cancelled client) is not fed the padding that follows (xgrammar's own processor asserts on it)."""

    def __init__(self, xgr: Any, grammars: list[Any], vocab_size: int) -> None:
        self._xgr, self._vocab_size = xgr, vocab_size
        self.matchers = [None if g is None else xgr.GrammarMatcher(g) for g in grammars]
        self._taken = False  # whether the last column of input_ids is a sampled token not yet accepted

    def select(self, rows: list[int]) -> None:
        """Keep only these rows, in this order."""
        self.matchers = [self.matchers[i] for i in rows]

    def stop_row(self, row: int) -> None:
        """A row that finished: its grammar takes no more tokens."""
        self.matchers[row] = None

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        if self._taken:
            for row, matcher in enumerate(self.matchers):
                if matcher is not None and not matcher.is_terminated():
                    matcher.accept_token(int(input_ids[row, -1]))
        self._taken = True
        rows = [row for row, m in enumerate(self.matchers) if m is not None and not m.is_terminated()]
        if rows:
            bitmask = self._xgr.allocate_token_bitmask(len(self.matchers), self._vocab_size)
            for row in rows:
                self.matchers[row].fill_next_token_bitmask(bitmask, row)
            self._xgr.apply_token_bitmask_inplace(scores, bitmask, indices=rows)
        return scores
