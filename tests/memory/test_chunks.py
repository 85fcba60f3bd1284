"""Turn windows: every turn covered, the date repeated in each window, identical texts stored once."""

from __future__ import annotations

import pytest

from medmemorybench.memory._chunks import ChunkingOptions, ChunkStore, chunk_session, window_starts
from tests.memory.conftest import make_session


def test_windows_cover_every_turn_including_an_odd_tail():
    # 9 turns, window 4, stride 2: starts 0, 2, 4 reach turn 7; a fifth window must take turn 8
    assert window_starts(9, 4, 2) == [0, 2, 4, 5]
    assert window_starts(8, 4, 2) == [0, 2, 4]
    assert window_starts(3, 4, 2) == [0]


def test_each_window_repeats_the_date_header():
    session = make_session("P1-S001", "one", "two", "three", "four", "five", "six", date="2024-02-03")
    chunks = chunk_session(session, ChunkingOptions("turns", 4, 2))
    assert len(chunks) == 2
    assert all(chunk.startswith("Date: 2024-02-03\n") for chunk in chunks)
    assert chunks[1].endswith("Doctor: six")


def test_session_chunking_is_the_whole_session():
    session = make_session("P1-S001", "one", "two", date=None)
    assert chunk_session(session, ChunkingOptions("session")) == ["Patient: one\nDoctor: two"]


def test_identical_chunks_are_stored_once_with_both_sessions():
    store = ChunkStore(ChunkingOptions("session"))
    first = store.add([make_session("P1-H001", "hello", "hi", date=None)])
    second = store.add([make_session("P1-H002", "hello", "hi", date=None)])
    assert len(first) == 1 and second == []
    assert store.chunks[0].session_ids == ["P1-H001", "P1-H002"]


@pytest.mark.parametrize("options", [{"chunking": "paragraph"}, {"window": 0}, {"window": 2, "stride": 3},
                                     {"window": "4"}])
def test_bad_chunking_options_are_rejected(options):
    with pytest.raises(ValueError):
        ChunkingOptions(**options)
