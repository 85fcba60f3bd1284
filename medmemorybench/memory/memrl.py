"""MemRL, natively: an experience store whose items carry a utility value (Q). Per session the memory LLM distils a
short "script" of what to remember (MemRL's proceduralization: script plus the raw trajectory); retrieval takes
the candidates most similar to the question above a threshold, ranks them by similarity and Q together, and
makes a seeded epsilon-greedy choice; `update_values` moves the Q of used items towards a reward.

In this benchmark there is no reward: a reward taken from the judge's verdict would hand the memory the gold
answers. So, as in the paper's runs (whose adapter never called `update_values`), every Q stays at its initial
value and the ranking is similarity plus seeded exploration. `update_values` is implemented and tested for
users who bring a reward of their own.

Native: MemRL is not on PyPI and needs a vendored MemOS (`../shared/research/memory-systems.md` §10). What
differs from the paper's adapter: a session is one experience (the adapter cut 6,000-token chunks, which our
sessions never reach), the date is in the item, the distilled script is shown to the answering model with the
start of the session (the adapter showed only the first ~1,200 characters of the raw chunk), and the
exploration is seeded (the adapter's was not).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from medmemorybench.memory.base import MemoryItem, Retrieval
from medmemorybench.memory.context import LLMBuiltMemory, best_first, fitted_session
from medmemorybench.models.base import ChatRequest, check_arg
from medmemorybench.render.models import ObservedSession

DISTIL_PROMPT = (
    "You keep a patient's medical assistant's experience. Read one consultation and write a short script of what "
    "the assistant must remember from it to help this patient later: the facts stated (medicines and doses, "
    "results with values, allergies, diagnoses, decisions) and what changed."
)
SCRIPT_CHARS, TRAJECTORY_SHOWN = 400, 1200
SCHEMA = {"type": "object", "additionalProperties": False, "required": ["script"],
          "properties": {"script": {"type": "string", "maxLength": SCRIPT_CHARS}}}


@dataclass
class Experience:
    script: str
    trajectory: str
    session_id: str
    date: str
    q_value: float
    visits: int = 0

    def card(self) -> str:
        return f"[{self.date}] {self.script}\n{self.trajectory[:TRAJECTORY_SHOWN]}".strip()


class MemRLMemory(LLMBuiltMemory):
    """MemRL: distilled experiences with utilities; similarity + Q ranking with seeded epsilon-greedy choice.

    Args:
        candidates: most similar experiences considered per question (the adapter: 20).
        threshold: least cosine similarity of a candidate (MemRL: 0.2).
        weight_sim, weight_q: weights of the z-normalized similarity and of Q in the ranking.
        epsilon: chance that one chosen item is swapped for a random other candidate (MemRL: 0.1).
        q_init: initial utility (MemRL: 0.5); alpha, gamma: the update's step and discount.
    """

    name = "memrl"

    def __init__(self, candidates: int = 20, threshold: float = 0.2, weight_sim: float = 0.9, weight_q: float = 0.1,
                 epsilon: float = 0.1, q_init: float = 0.5, alpha: float = 0.3, gamma: float = 0.0,
                 max_tokens: int = 160) -> None:
        check_arg(candidates, "candidates", int, lambda v: v >= 1, "an integer >= 1")
        check_arg(threshold, "threshold", (int, float), lambda v: -1 <= v <= 1, "a cosine from -1 to 1")
        for name, value in (("epsilon", epsilon), ("alpha", alpha), ("gamma", gamma), ("weight_sim", weight_sim),
                            ("weight_q", weight_q), ("q_init", q_init)):
            check_arg(value, name, (int, float), lambda v: 0 <= v <= 1, "a number from 0 to 1")
        check_arg(max_tokens, "max_tokens", int, lambda v: v >= 32, "an integer >= 32")
        super().__init__(candidates=candidates, threshold=threshold, weight_sim=weight_sim, weight_q=weight_q,
                         epsilon=epsilon, q_init=q_init, alpha=alpha, gamma=gamma, max_tokens=max_tokens)
        self.candidates, self.threshold, self.epsilon = candidates, threshold, epsilon
        self.weight_sim, self.weight_q, self.q_init = weight_sim, weight_q, q_init
        self.alpha, self.gamma, self.max_tokens = alpha, gamma, max_tokens
        self.items: list[Experience] = []
        self._keys = np.zeros((0, 0), dtype=np.float32)


    def reset(self) -> None:
        self.items.clear()
        self._keys = np.zeros((0, 0), dtype=np.float32)

    def ingest(self, sessions: Sequence[ObservedSession]) -> None:
        """One distillation call per session (a batch per checkpoint); the session text is the experience's key."""
        if not sessions:
            return
        texts = [fitted_session(s, self.llm, self.max_tokens + 200) for s in sessions]
        requests = [ChatRequest(messages=[{"role": "system", "content": DISTIL_PROMPT}, {"role": "user", "content": t}],
                                max_tokens=self.max_tokens, response_schema=SCHEMA) for t in texts]
        replies = self.llm.generate_json(requests, fits=lambda r: isinstance(r, dict) and isinstance(r.get("script"),
                                                                                                      str))
        new = [Experience(script=(reply or {}).get("script", "").strip(), trajectory=text, session_id=s.session_id,
                          date=s.date, q_value=self.q_init) for s, text, reply in zip(sessions, texts, replies,
                                                                                     strict=True)]
        keys = self.embedder.encode([e.trajectory for e in new])
        self._keys = keys if self._keys.size == 0 else np.vstack([self._keys, keys])
        self.items.extend(new)

    def retrieve(self, questions: Sequence[str], k: int, token_budget: int | None = None) -> list[Retrieval]:
        """Per question: candidates above the threshold, ranked by weight_sim * z(sim) + weight_q * Q, the top k,
        with probability epsilon one of them swapped for a random other candidate (seeded)."""
        if not questions:
            return []
        if not self.items or k < 1:
            return [Retrieval() for _ in questions]
        out = []
        for row in self.embedder.encode(list(questions)) @ self._keys.T:
            pool = [i for i in best_first(row, self.candidates) if row[i] >= self.threshold]
            if not pool:
                out.append(Retrieval())
                continue
            sims = row[pool]
            z = (sims - sims.mean()) / (sims.std() or 1.0)
            scores = self.weight_sim * z + self.weight_q * np.array([self.items[i].q_value for i in pool])
            chosen = [pool[j] for j in best_first(scores, k)]
            others = [i for i in pool if i not in chosen]
            if others and self.rng.random() < self.epsilon:
                chosen[self.rng.randrange(len(chosen))] = self.rng.choice(others)
            for i in chosen:
                self.items[i].visits += 1
            out.append(Retrieval(items=[MemoryItem(self.items[i].card(), (self.items[i].session_id,), float(row[i]))
                                        for i in chosen]))
        return out

    def update_values(self, session_ids: Sequence[str], reward: float) -> None:
        """Move the Q of the experiences of these sessions towards `reward` (+ gamma times the best Q):
        Q <- (1 - alpha) Q + alpha (r + gamma max Q). Not called by the runner (see the module's docstring)."""
        best = max((e.q_value for e in self.items), default=0.0)
        for experience in self.items:
            if experience.session_id in session_ids:
                experience.q_value = (1 - self.alpha) * experience.q_value + self.alpha * (reward + self.gamma * best)

    def size(self) -> int:
        return len(self.items)

    def session_ids(self) -> set[str]:
        return {e.session_id for e in self.items}
