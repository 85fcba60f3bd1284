"""The drugs the knowledge base knows, each by all its names in both languages: what an answer can tell as given."""

from __future__ import annotations

from functools import lru_cache


@lru_cache(maxsize=1)
def drug_names() -> tuple[tuple[str, ...], ...]:
    """Each drug's names (its English and Chinese name first, then its other names), read once from the knowledge
    base (about a second)."""
    from medmemorybench.knowledge.loader import default_knowledge

    kb = default_knowledge()
    return tuple(tuple(dict.fromkeys((drug.name.en, drug.name.zh, *kb.aliases.drug(key, "en"),
                                      *kb.aliases.drug(key, "zh"))))
                 for key, drug in kb.drugs.items())
