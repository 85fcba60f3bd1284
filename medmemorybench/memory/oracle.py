"""OracleMemory: the benchmark's ceiling (LongMemEval's oracle setting), a reference and not a memory system.

It is the one memory handed each question's gold evidence (`reads_gold_evidence`): it shows the reader exactly the
evidence sessions plus a few other sessions of the patient, so what a reader scores with it is the most any memory
can give that reader (docs/memory_systems.md).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import TYPE_CHECKING

from medmemorybench.memory.base import EvidenceQuestion, MemoryItem, MemorySystem, Retrieval
from medmemorybench.render.models import ObservedSession, session_text

if TYPE_CHECKING:
    from medmemorybench.memory.context import MemoryContext


class OracleMemory(MemorySystem):
    """Each question's evidence sessions plus `distractors` other sessions it has read, whole and in date order.

    The distractors are drawn from the sessions ingested so far (never a later one), seeded by the patient, the
    query id and the option, so the same dataset gives the same retrieval whatever order questions come in. An
    abstention question (no evidence) gets the distractors alone. `k` and the token budget are ignored: the
    ceiling reads every evidence session whole.

    Args:
        distractors: sessions shown beside the evidence (fewer when the patient has fewer other sessions).
    """

    name = "oracle"
    reads_gold_evidence = True

    def __init__(self, distractors: int = 4) -> None:
        if isinstance(distractors, bool) or not isinstance(distractors, int) or distractors < 0:
            raise ValueError(f"distractors must be a whole number of sessions >= 0, not {distractors!r}")
        super().__init__(distractors=distractors)
        self.distractors = distractors
        self._items: dict[str, MemoryItem] = {}
        """Opaque session id -> the session as one item, in stream order (which is date order)."""
        self._dates: dict[str, str] = {}
        self._seed = 0

    def bind(self, context: MemoryContext) -> None:
        super().bind(context)
        # One draw of the patient's seeded RNG; each question's draw is then its own generator (below), so the
        # retrieval does not depend on the order questions are asked in.
        self._seed = context.rng.getrandbits(64)

    def reset(self) -> None:
        """Forget every session."""
        self._items.clear()
        self._dates.clear()

    def ingest(self, sessions: Sequence[ObservedSession]) -> None:
        """Keep each session whole."""
        for session in sessions:
            self._items[session.session_id] = MemoryItem(text=session_text(session), session_ids=(session.session_id,))
            self._dates[session.session_id] = session.date

    def retrieve(self, questions: Sequence[str], k: int, token_budget: int | None = None) -> list[Retrieval]:
        """Refused: the oracle needs each question's evidence (the runner calls `retrieve_with_evidence`)."""
        raise NotImplementedError("oracle retrieves from each question's gold evidence: retrieve_with_evidence")

    def retrieve_with_evidence(self, questions: Sequence[EvidenceQuestion], k: int,
                               token_budget: int | None = None) -> list[Retrieval]:
        """The evidence and the seeded distractors of each question, in date order (ties in stream order).

        Raises:
            ValueError: an evidence session it never ingested (the oracle shows only what it has read).
        """
        order = {sid: index for index, sid in enumerate(self._items)}
        out = []
        for question in questions:
            missing = [sid for sid in question.evidence_session_ids if sid not in self._items]
            if missing:
                raise ValueError(f"{question.query_id}: evidence {', '.join(missing)} was never ingested")
            evidence = set(question.evidence_session_ids)
            pool = [sid for sid in self._items if sid not in evidence]  # (stream order: the draw is reproducible)
            rng = random.Random(f"{self._seed}/{question.query_id}/distractors={self.distractors}")
            chosen = evidence | set(rng.sample(pool, min(self.distractors, len(pool))))
            shown = sorted(chosen, key=lambda sid: (self._dates[sid], order[sid]))
            out.append(Retrieval(items=[self._items[sid] for sid in shown]))
        return out

    def size(self) -> int:
        return len(self._items)

    def session_ids(self) -> set[str]:
        """Every session ingested."""
        return set(self._items)
