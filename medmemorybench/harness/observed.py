"""The observed view: what a deployed assistant's memory sees of a patient's stream, and what it is asked.

The dataset keeps its labels for analysis: each session's kind, family member, events and renderer,
ids that name the kind (`-S017` regular, `-H003` and `-F012` noise), and undated noise. Handed to a
memory, any of these would let it drop the noise without remembering anything. The runner therefore
gives memories `ObservedSession`s (an opaque id in stream order, a date for every session, the turns)
and maps the ids they cite back to the real ones before the leakage guard, the prompt and scoring.
"""

from __future__ import annotations

import datetime as dt
import hashlib
from collections import Counter
from collections.abc import Sequence
from dataclasses import replace
from itertools import pairwise

from medmemorybench.errors import InputError, MedMemoryBenchError
from medmemorybench.memory.base import Retrieval
from medmemorybench.render.models import ObservedSession, Session


class LeakageError(MedMemoryBenchError):
    """A memory holds a session from after the checkpoint being asked, or names one it was never given."""


def retrieval_query(question: dict) -> str:
    """What the patient asked: the question, then its options one per line (MQ; other types have none).

    Without its options "Which of these am I taking?" shares no word with the consultation that answers it.
    """
    return "\n".join([question["question"], *(question.get("options") or [])])


def _draw(persona_id: str, session_id: str, days: Sequence[dt.date]) -> dt.date:
    """One of `days`, fixed by (persona, session) through SHA-256: the same dataset gives the same dates."""
    digest = hashlib.sha256(f"observed-date/{persona_id}/{session_id}".encode()).digest()
    return days[int.from_bytes(digest[:8], "big") % len(days)]


def _days_between(start: dt.date, end: dt.date) -> list[dt.date]:
    """The days strictly between two dates."""
    return [start + dt.timedelta(days=n) for n in range(1, (end - start).days)]


class ObservedStream:
    """One patient's stream as its memory sees it, checkpoint by checkpoint; keeps opaque id <-> real id.

    A session the dataset dates keeps its date (every regular visit). An undated one (noise) gets a day
    with no dated session, drawn between the visits it sits between in the stream; when those are on
    consecutive days (about a quarter of the gaps) or their days already hold more noise than others,
    between the nearest pair of visits that leaves a less-used day free, always within its own
    checkpoint so it is still ingested there (noise before the patient's first visit goes after it).
    Each checkpoint's sessions are then given in date order (ties in stream order) and numbered on:
    `P0001-X0001`, `P0001-X0002`, ...
    """

    def __init__(self, persona_id: str) -> None:
        self.persona_id = persona_id
        self.dates: dict[str, str] = {}
        """Real session id -> the date its memory saw."""
        self._real: dict[str, str] = {}
        self._opaque: dict[str, str] = {}
        self._last: dt.date | None = None

    @property
    def latest(self) -> str:
        """The date of the latest session given so far ('' before the first): the memory's "now"."""
        return self._last.isoformat() if self._last else ""

    def observe(self, sessions: Sequence[Session]) -> list[ObservedSession]:
        """The next checkpoint's sessions (in stream order) as the memory sees them."""
        dates = self._dates(sessions)
        observed = []
        for index in sorted(range(len(sessions)), key=lambda i: (dates[i], i)):
            real, date = sessions[index].session_id, dates[index].isoformat()
            opaque = f"{self.persona_id}-X{len(self._real) + 1:04d}"
            self._real[opaque] = real
            self._opaque[real] = opaque
            self.dates[real] = date
            observed.append(ObservedSession(session_id=opaque, date=date, turns=sessions[index].turns))
        if dates:
            self._last = max([*dates, self._last] if self._last else dates)
        return observed

    def real_id(self, session_id: str) -> str:
        """The dataset id of a session the memory names.

        Raises:
            LeakageError: the memory was never given that id (a guessed id would score as evidence).
        """
        try:
            return self._real[session_id]
        except KeyError:
            raise LeakageError(f"memory of {self.persona_id} names {session_id}, a session it was never given") \
                from None

    def opaque_ids(self, session_ids: Sequence[str]) -> tuple[str, ...]:
        """The ids the memory was given for these dataset sessions: only the `oracle` reference's gold evidence is
        ever mapped this way (`MemorySystem.reads_gold_evidence`).

        Raises:
            InputError: a session not given to the memory yet (evidence after its question's checkpoint).
        """
        missing = [sid for sid in session_ids if sid not in self._opaque]
        if missing:
            raise InputError(f"{', '.join(missing)}: not in {self.persona_id}'s stream up to this checkpoint")
        return tuple(self._opaque[sid] for sid in session_ids)

    def to_real(self, retrieval: Retrieval) -> Retrieval:
        """`retrieval` with every item's session ids mapped back to the dataset's."""
        items = [replace(item, session_ids=tuple(self.real_id(sid) for sid in item.session_ids))
                 for item in retrieval.items]
        return replace(retrieval, items=items)

    def _dates(self, sessions: Sequence[Session]) -> list[dt.date]:
        given = [dt.date.fromisoformat(s.date) if s.date else None for s in sessions]
        # Gap i lies between anchors i and i+1; the previous checkpoint's last date bounds the first.
        anchors = sorted({d for d in given if d is not None} | ({self._last} if self._last else set()))
        gaps = [_days_between(a, b) for a, b in pairwise(anchors)]
        used: Counter[dt.date] = Counter()  # noise of this checkpoint already on each free day
        out: list[dt.date] = []
        latest = self._last
        for session, date in zip(sessions, given, strict=True):
            if date is not None:
                latest = date if latest is None else max(latest, date)
                out.append(date)
                continue
            if not any(gaps):
                raise InputError(f"{session.session_id}: every day of its checkpoint has a visit, no day left to "
                                 "date this noise session on")
            # The least-used free days, nearest the gap after the latest visit before it: noise is spread
            # over as many days as the checkpoint leaves free (a day shared by sessions can only be noise's).
            level = min(used[d] for days in gaps for d in days)
            home = anchors.index(latest) if latest else 0
            least = {i: [d for d in days if used[d] == level] for i, days in enumerate(gaps)}
            nearest = min((i for i, days in least.items() if days), key=lambda i: (abs(i - home), i))
            day = _draw(self.persona_id, session.session_id, least[nearest])
            used[day] += 1
            out.append(day)
        return out
