"""The token budget of a reply under a bounded JSON schema, so that a call's `max_tokens` never cuts a reply the
schema allows (a cut reply does not parse, and the memory stores nothing from it)."""

from __future__ import annotations

import json
from typing import Any


def reply_token_bound(schema: dict[str, Any]) -> int:
    """Tokens of the longest reply `schema` allows, at three characters a token (JSON punctuation and short words
    tokenize densely; `memos.reply_token_bound` uses the same ratio)."""
    return _chars(schema) // 3 + 16


def _chars(schema: dict[str, Any]) -> int:
    kind = schema.get("type")
    if kind == "string":
        return schema["maxLength"] + 2
    if kind == "array":  # (a comma and a space between items)
        return 2 + schema["maxItems"] * (_chars(schema["items"]) + 2)
    if kind == "object":  # (quotes, colon, comma and a space around each key)
        return 2 + sum(len(key) + 6 + _chars(value) for key, value in schema["properties"].items())
    if "enum" in schema:
        return max(len(json.dumps(value)) for value in schema["enum"])
    return 24  # a number or a boolean
