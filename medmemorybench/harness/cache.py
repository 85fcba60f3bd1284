"""A SQLite response cache keyed by (backbone identity, messages, generation parameters).

Reruns and rescoring read answers from here instead of calling the model again. Only successful
completions are stored: an error is retried on the next run, never replayed. The cache belongs to the folder a
run is started from (`default_cache_path`), so a run in one project never answers from another's cache without
being told to; every run reports how many answers came from it.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
from collections.abc import Callable, Sequence
from pathlib import Path

from medmemorybench.errors import InputError, OutputError
from medmemorybench.models.base import Backbone, ChatRequest, Completion, WrappingBackbone
from medmemorybench.models.embedded import CACHE_ENV

PROJECT_CACHE = Path(".medmemorybench") / "responses.sqlite"
"""The default response cache, under the folder a run is started from."""


def default_cache_path() -> Path:
    """`$MEDMEMORYBENCH_CACHE/responses.sqlite` when that variable is set (a cache shared on purpose), else
    `./.medmemorybench/responses.sqlite` in the current folder (the project's own)."""
    shared = os.environ.get(CACHE_ENV)
    return Path(shared) / PROJECT_CACHE.name if shared else Path.cwd() / PROJECT_CACHE


def cache_key(identity: dict, request: ChatRequest) -> str:
    """Stable key of a request to a given backbone."""
    payload = json.dumps({"backbone": identity, "request": request.model_dump()}, sort_keys=True)
    return hashlib.sha256(payload.encode()).hexdigest()


class ResponseCache:
    """Completions stored by key in one SQLite file (safe to share between runs)."""

    def __init__(self, path: Path) -> None:
        """Open (or create) the cache file.

        Raises:
            InputError: naming the path when it cannot be made or is not a cache (a file where the folder should
                be, a read-only place, a damaged database), with the ways out.
        """
        self.path = path
        self._lock = threading.Lock()
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(str(path), check_same_thread=False, timeout=30)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY, completion TEXT NOT NULL)")
            self._db.commit()
        except (OSError, sqlite3.Error) as exc:
            reason = getattr(exc, "strerror", None) or exc
            raise InputError(f"{path}: the response cache cannot be used ({reason}); pass --no_cache, or "
                             f"--cache_path a writable file") from None

    def get_many(self, keys: Sequence[str]) -> dict[str, Completion]:
        """Cached completions of the keys that have one."""
        found: dict[str, Completion] = {}
        with self._lock:
            for start in range(0, len(keys), 500):
                chunk = list(keys[start : start + 500])
                marks = ",".join("?" * len(chunk))
                for key, text in self._db.execute(f"SELECT key, completion FROM responses WHERE key IN ({marks})",
                                                  chunk):
                    found[key] = Completion.model_validate_json(text)
        return found

    def put(self, key: str, completion: Completion) -> None:
        """Store one completion if it succeeded (committed at once: a kill loses nothing already answered)."""
        self.put_many({key: completion})

    def put_many(self, items: dict[str, Completion]) -> None:
        """Store successful completions."""
        rows = [(k, c.model_dump_json()) for k, c in items.items() if c.error is None]
        with self._lock:
            try:
                self._db.executemany("INSERT OR REPLACE INTO responses VALUES (?, ?)", rows)
                self._db.commit()
            except sqlite3.Error as exc:  # a full disk; the samples file has every answer so far
                raise OutputError(f"{self.path}: could not store an answer in the response cache ({exc}); the "
                                  "samples written are kept: free space, then rerun with --resume") from None

    def close(self) -> None:
        """Close the database."""
        self._db.close()


def generate_cached(
    backbone: Backbone, requests: Sequence[ChatRequest], cache: ResponseCache | None,
    on_answered: Callable[[int], None] | None = None,
) -> list[Completion]:
    """`backbone.generate` for the requests the cache does not hold; cached ones are marked `cache_hit`.
    `on_answered(n)`: n more answers are back (the cached ones at once, the others as they arrive)."""
    counted = on_answered or (lambda _n: None)
    if cache is None:
        return backbone.generate_each(requests, lambda _index, _completion: counted(1))
    identity = backbone.identity()
    keys = [cache_key(identity, r) for r in requests]
    cached = cache.get_many(keys)
    missing = [i for i, k in enumerate(keys) if k not in cached]
    if len(missing) < len(requests):
        counted(len(requests) - len(missing))

    def keep(index: int, completion: Completion) -> None:  # each answer is stored as it arrives, not per batch
        cache.put(keys[missing[index]], completion)
        counted(1)

    fresh = backbone.generate_each([requests[i] for i in missing], keep) if missing else []
    out: list[Completion] = []
    fresh_by_index = dict(zip(missing, fresh, strict=True))
    for i, key in enumerate(keys):
        if key in cached:
            out.append(cached[key].model_copy(update={"cache_hit": True}))
        else:
            out.append(fresh_by_index[i])
    return out


class CachingBackbone(WrappingBackbone):
    """A backbone whose completions go through a `ResponseCache`: each is stored as it arrives, so a killed job
    that asks the same requests again (an LLM-rendered build, rerun with the same options) is answered from the
    cache up to where it stopped and only the rest is generated."""

    def __init__(self, inner: Backbone, cache: ResponseCache) -> None:
        super().__init__(inner)
        self.cache = cache

    def generate(self, requests: Sequence[ChatRequest]) -> list[Completion]:
        return generate_cached(self.inner, requests, self.cache)
