"""Seeded randomness: every random choice comes from a generator derived from (seed, persona, purpose)."""

from __future__ import annotations

import random


def rng_for(seed: int, persona_id: str, purpose: str) -> random.Random:
    """A generator private to one purpose of one persona under one global seed.

    String seeds are hashed with SHA-512 by `random.Random`, so the stream does not depend on
    PYTHONHASHSEED, the platform or the order in which other generators are used.
    """
    return random.Random(f"{seed}/{persona_id}/{purpose}")
