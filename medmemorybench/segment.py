"""Chinese text into words or characters, shared by BM25, the answer scorers, the audit and the variety report.

Chinese has no spaces, so a word tokenizer that splits on them sees a whole sentence as one word. `jieba` segments
it (its dictionary ships in the wheel: nothing is downloaded); runs of Latin letters and digits stay whole
("7.2", "mg", "hba1c"), punctuation and spaces are dropped.
"""

from __future__ import annotations

import logging
import re
from functools import lru_cache

_CJK = re.compile(r"[\u3400-\u9fff]")
_KEEP = re.compile(r"[\u3400-\u9fff]|[a-z0-9]")
_CHARS = re.compile(r"[\u3400-\u9fff]|[a-z0-9]+(?:\.[0-9]+)?")


def has_cjk(text: str) -> bool:
    """Whether the text holds Chinese characters."""
    return _CJK.search(text) is not None


@lru_cache(maxsize=1)
def _jieba():  # noqa: ANN202
    import jieba

    jieba.setLogLevel(logging.WARNING)
    jieba.initialize()
    return jieba


def words(text: str) -> list[str]:
    """jieba's words of a (lower-cased) text, without punctuation or spaces."""
    return [w for w in _jieba().lcut(text.lower()) if _KEEP.search(w)]


def characters(text: str) -> list[str]:
    """Each Chinese character of a (lower-cased) text, and each run of letters or digits, as one token."""
    return _CHARS.findall(text.lower())
