"""The embedding cache: shared by instances and threads, keyed by model and text, foreign rows ignored."""

from __future__ import annotations

import sqlite3
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from medmemorybench.memory._embedding_cache import EmbeddingCache, default_cache_dir, embedding_key


def test_key_depends_on_model_and_text():
    assert embedding_key("m", "text") == embedding_key("m", "text")
    assert embedding_key("m", "text") != embedding_key("other", "text")
    # the separator keeps ("ab", "c") and ("a", "bc") apart
    assert embedding_key("ab", "c") != embedding_key("a", "bc")


def test_default_folder_follows_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("MEDMEMORYBENCH_CACHE", str(tmp_path))
    assert default_cache_dir() == tmp_path / "embeddings"


def test_vectors_written_by_one_cache_are_read_by_another(tmp_path):
    vector = np.arange(4, dtype=np.float32)
    EmbeddingCache(tmp_path).put_many([("k", vector)])
    found = EmbeddingCache(tmp_path).get_many(["k", "missing"])
    assert list(found) == ["k"] and np.array_equal(found["k"], vector)


def test_concurrent_writers_lose_nothing(tmp_path):
    cache = EmbeddingCache(tmp_path)
    keys = [f"k{i}" for i in range(400)]

    def write(offset: int) -> None:  # overlapping key ranges, written at the same time
        EmbeddingCache(tmp_path).put_many((k, np.full(8, i, dtype=np.float32))
                                          for i, k in enumerate(keys) if (i + offset) % 3)

    with ThreadPoolExecutor(max_workers=6) as pool:
        list(pool.map(write, range(6)))
    found = cache.get_many(keys)
    assert len(found) == 400
    assert all(found[k][0] == i for i, k in enumerate(keys))


def test_a_row_of_the_wrong_size_is_treated_as_missing(tmp_path):
    cache = EmbeddingCache(tmp_path)
    db = sqlite3.connect(cache.path)
    with db:
        db.execute("INSERT INTO embedding VALUES ('bad', 384, ?)", (b"\0" * 12,))
    db.close()
    assert cache.get_many(["bad"]) == {}
