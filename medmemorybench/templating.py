"""The Jinja environment for every template a user can edit or supply (task prompts, judge prompts, LLM-renderer
prompts, sheets and pages): sandboxed, strict about undefined names, and with `*` and `**` bounded, so a template
such as `{{ 'a' * 3000000000 }}` or `{{ 10 ** 1000000 }}` is a clear error at once instead of a `MemoryError` or a
long computation. Other ways to make a huge string (`center`, `format`, `%` with a width, a loop) are not bounded
here; where a prompt is rendered (`harness/prompting.py`) a `MemoryError` is still one error naming the template."""

from __future__ import annotations

import operator
from typing import Any

from jinja2 import StrictUndefined
from jinja2.exceptions import SecurityError
from jinja2.sandbox import SandboxedEnvironment

MAX_PRODUCT_ITEMS = 1_000_000
"""Longest string or list `*` may make in a template (a prompt is a few thousand characters)."""
MAX_POWER_BITS = 4_096
"""Largest number `**` may make in a template, in bits."""


class BoundedSandbox(SandboxedEnvironment):
    """A `SandboxedEnvironment` whose `*` and `**` refuse results past `MAX_PRODUCT_ITEMS` / `MAX_POWER_BITS`
    (`SecurityError`, a `TemplateError` that callers already report naming the template)."""

    intercepted_binops = frozenset({"*", "**"})

    def __init__(self, **options: Any) -> None:
        options.setdefault("undefined", StrictUndefined)
        super().__init__(**options)

    def call_binop(self, context: Any, op: str, left: Any, right: Any) -> Any:
        if op == "*":
            for sequence, times in ((left, right), (right, left)):
                if isinstance(sequence, str | list | tuple) and isinstance(times, int) \
                        and len(sequence) * times > MAX_PRODUCT_ITEMS:
                    raise SecurityError(f"a template made a sequence of {len(sequence) * times:,} items with '*' "
                                        f"(at most {MAX_PRODUCT_ITEMS:,})")
            return operator.mul(left, right)
        if op == "**":
            if isinstance(left, int) and isinstance(right, int) and right > 0 \
                    and abs(left) > 1 and right * max(abs(left).bit_length(), 1) > MAX_POWER_BITS:
                raise SecurityError(f"a template raised a number to a power of over {MAX_POWER_BITS:,} bits")
            return operator.pow(left, right)
        return super().call_binop(context, op, left, right)
