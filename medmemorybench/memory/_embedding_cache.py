"""An on-disk cache of text embeddings keyed by content hash, shared by processes and runs.

One SQLite table (key -> float32 bytes): writes are transactions, so a crash never leaves a torn
vector, and concurrent writers serialize on SQLite's lock (two processes that embed the same text
both insert the same vector; the second insert is ignored).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import sqlite3
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

import numpy as np

CACHE_ENV = "MEDMEMORYBENCH_CACHE"
_BATCH = 500  # keys per SELECT, well under SQLite's host-parameter limit
_TIMEOUT_S = 60.0


def default_cache_dir() -> Path:
    """$MEDMEMORYBENCH_CACHE/embeddings, else ~/.cache/medmemorybench/embeddings."""
    return Path(os.environ.get(CACHE_ENV) or Path.home() / ".cache" / "medmemorybench") / "embeddings"


def embedding_key(model_id: str, text: str) -> str:
    """sha256 of the model identity and the text."""
    return hashlib.sha256(f"{model_id}\0{text}".encode()).hexdigest()


class EmbeddingCache:
    """Embeddings stored in `<folder>/embeddings.sqlite3`."""

    def __init__(self, folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self.path = folder / "embeddings.sqlite3"
        db = self._connect()
        try:
            # WAL: readers never wait for a writer; some network file systems refuse it, the default journal works
            with contextlib.suppress(sqlite3.OperationalError):
                db.execute("PRAGMA journal_mode=WAL")
            with db:
                db.execute("CREATE TABLE IF NOT EXISTS embedding (key TEXT PRIMARY KEY, dim INTEGER, vector BLOB)")
        finally:
            db.close()

    def _connect(self) -> sqlite3.Connection:
        return sqlite3.connect(self.path, timeout=_TIMEOUT_S)

    def get_many(self, keys: Sequence[str]) -> dict[str, np.ndarray]:
        """The cached vectors among `keys` (missing keys are absent from the result)."""
        found: dict[str, np.ndarray] = {}
        db = self._connect()
        try:
            for start in range(0, len(keys), _BATCH):
                batch = list(keys[start:start + _BATCH])
                marks = ",".join("?" * len(batch))
                rows = db.execute(f"SELECT key, dim, vector FROM embedding WHERE key IN ({marks})", batch)
                for key, dim, blob in rows:
                    vector = np.frombuffer(blob, dtype=np.float32)
                    if vector.shape == (dim,):  # anything else is not ours: recompute it
                        found[key] = vector
        finally:
            db.close()
        return found

    def put_many(self, entries: Iterable[tuple[str, np.ndarray]]) -> None:
        """Store vectors (one transaction; keys already present are kept)."""
        rows = [(key, int(v.shape[0]), np.ascontiguousarray(v, dtype=np.float32).tobytes()) for key, v in entries]
        if not rows:
            return
        db = self._connect()
        try:
            with db:
                db.executemany("INSERT OR IGNORE INTO embedding (key, dim, vector) VALUES (?, ?, ?)", rows)
        finally:
            db.close()

    def vectors(self, model_id: str, texts: Sequence[str], encode: Callable[[list[str]], np.ndarray]) -> np.ndarray:
        """One vector per text: the cached ones read back, the rest encoded in one `encode` call and stored."""
        keys = [embedding_key(model_id, text) for text in texts]
        found = self.get_many(keys)
        missing = [(key, text) for key, text in zip(keys, texts, strict=True) if key not in found]
        if missing:
            fresh = dict(zip((key for key, _ in missing), encode([text for _, text in missing]), strict=True))
            self.put_many(fresh.items())
            found.update(fresh)
        return np.stack([found[key] for key in keys])
