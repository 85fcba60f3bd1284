"""Cutting sessions into the units a retriever indexes, and keeping them with their provenance.

MiniLM reads at most 256 word pieces, so a whole consultation embedded at once keeps only its opening;
short turn windows, mapped back to their session, retrieve far better (DESIGN.md, measured facts).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from medmemorybench.render.models import ObservedSession, session_labels, session_text, turn_line

CHUNKINGS = ("session", "turns")


@dataclass
class Chunk:
    """One indexed unit: the text and every session that contains it verbatim."""

    text: str
    session_ids: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class ChunkingOptions:
    """How sessions are cut: whole sessions, or windows of `window` turns every `stride` turns."""

    chunking: str = "turns"
    window: int = 4
    stride: int = 2

    def __post_init__(self) -> None:
        if self.chunking not in CHUNKINGS:
            raise ValueError(f"chunking must be one of {', '.join(CHUNKINGS)}, not {self.chunking!r}")
        for key in ("window", "stride"):
            value = getattr(self, key)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{key} must be a positive integer, not {value!r}")
        if self.stride > self.window:
            raise ValueError(f"stride ({self.stride}) larger than window ({self.window}) would skip turns")


def window_starts(n_turns: int, window: int, stride: int) -> list[int]:
    """Start turns of the windows: every `stride` turns, plus one more so the last turns are covered."""
    starts = list(range(0, max(n_turns - window, 0) + 1, stride))
    if starts[-1] + window < n_turns:
        starts.append(n_turns - window)
    return starts


def chunk_session(session: ObservedSession, options: ChunkingOptions) -> list[str]:
    """The texts of one session's chunks; each turn window repeats the date header (dates answer questions)."""
    labels = session_labels(session)
    header = f"{labels['date']}{session.date}\n" if session.date else ""
    lines = [turn_line(t, labels) for t in session.turns]
    if options.chunking == "session":
        return [session_text(session)]
    return [header + "\n".join(lines[start:start + options.window])
            for start in window_starts(len(lines), options.window, options.stride)]


class ChunkStore:
    """The chunks of one memory in ingestion order; identical texts are stored once with all their sessions."""

    def __init__(self, options: ChunkingOptions) -> None:
        self.options = options
        self.chunks: list[Chunk] = []
        self._by_text: dict[str, int] = {}
        self.session_ids: set[str] = set()

    def add(self, sessions: Sequence[ObservedSession]) -> list[Chunk]:
        """Cut and store `sessions`; returns the chunks that are new (texts never seen before)."""
        new: list[Chunk] = []
        for session in sessions:
            self.session_ids.add(session.session_id)
            for text in chunk_session(session, self.options):
                index = self._by_text.get(text)
                if index is None:
                    self._by_text[text] = len(self.chunks)
                    chunk = Chunk(text, [session.session_id])
                    self.chunks.append(chunk)
                    new.append(chunk)
                elif session.session_id not in self.chunks[index].session_ids:
                    self.chunks[index].session_ids.append(session.session_id)
        return new

    def clear(self) -> None:
        """Forget every chunk."""
        self.chunks.clear()
        self._by_text.clear()
        self.session_ids.clear()

    def __len__(self) -> int:
        return len(self.chunks)
