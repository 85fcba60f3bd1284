"""Text normalization shared by the validator (answerability) and the scorers.

Keeps '+', '-', '/', '%' and decimal points: "HbA1c 7.2 %" and "K+ 5.1" must survive (the original
harness erased them).
"""

from __future__ import annotations

import re
import unicodedata

_SPACE = re.compile(r"\s+")
_SPACE_BEFORE_PERCENT = re.compile(r"(\d)\s+%")


def normalize_text(text: str) -> str:
    """NFKC, lower case, one space between words, no space between a number and '%'."""
    text = unicodedata.normalize("NFKC", text).lower()
    text = _SPACE.sub(" ", text).strip()
    return _SPACE_BEFORE_PERCENT.sub(r"\1%", text)


def contains(haystack: str, needle: str) -> bool:
    """Whether `needle` occurs in `haystack` after normalizing both."""
    return normalize_text(needle) in normalize_text(haystack)
