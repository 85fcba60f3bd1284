"""`visit_digest`: a third-party MedMemoryBench memory, as a package of its own.

Per consultation, one call to the memory LLM writes a short digest and the medicines named, under a bounded JSON
schema; each digest is stored with its date and session, embedded with the shared embedder, and retrieved by
cosine similarity. Everything it uses comes from the context the runner binds: the memory LLM (cached and
counted), the embedder (counted), the cost meter.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from medmemorybench.memory.base import MemoryItem, Retrieval
from medmemorybench.memory.context import LLMBuiltMemory, best_first, fitted_session
from medmemorybench.models.base import ChatRequest
from medmemorybench.render.models import ObservedSession

PROMPT = ("Summarize this consultation for the patient's medical record in one or two sentences, and list the "
          "medicines it names with their doses.")
SCHEMA = {"type": "object", "additionalProperties": False, "required": ["digest", "medicines"],
          "properties": {"digest": {"type": "string", "maxLength": 200},
                         "medicines": {"type": "array", "maxItems": 5, "items": {"type": "string", "maxLength": 40}}}}
MAX_TOKENS = 160  # (a reply at the schema's bounds: about 420 characters)


class VisitDigestMemory(LLMBuiltMemory):
    """One digest per visit, searched by cosine similarity."""

    name = "visit_digest"

    def __init__(self) -> None:
        super().__init__()
        self.reset()

    def reset(self) -> None:
        self.items: list[MemoryItem] = []
        self.rows = np.zeros((0, 0), dtype=np.float32)

    def ingest(self, sessions: Sequence[ObservedSession]) -> None:
        requests = [ChatRequest(messages=[{"role": "system", "content": PROMPT},
                                          {"role": "user", "content": fitted_session(s, self.llm, MAX_TOKENS + 100)}],
                                max_tokens=MAX_TOKENS, response_schema=SCHEMA) for s in sessions]
        fits = lambda r: isinstance(r, dict) and isinstance(r.get("digest"), str)  # noqa: E731
        new = [MemoryItem(f"[{s.date}] {r['digest']} Medicines: {', '.join(r['medicines']) or 'none'}.",
                          (s.session_id,))
               for s, r in zip(sessions, self.llm.generate_json(requests, fits=fits), strict=True) if r is not None]
        if new:
            vectors = self.embedder.encode([item.text for item in new])
            self.rows = np.vstack([self.rows, vectors]) if self.items else vectors
            self.items.extend(new)

    def retrieve(self, questions: Sequence[str], k: int, token_budget: int | None = None) -> list[Retrieval]:
        if not self.items:
            return [Retrieval() for _ in questions]
        similarities = self.embedder.encode(list(questions)) @ self.rows.T
        return [Retrieval(items=[MemoryItem(self.items[i].text, self.items[i].session_ids, float(row[i]))
                                 for i in best_first(row, k)]) for row in similarities]

    def size(self) -> int:
        return len(self.items)

    def session_ids(self) -> set[str]:
        return {sid for item in self.items for sid in item.session_ids}
