"""The MemorySystem interface: what the protocol runner streams sessions into and retrieves from.

A memory is created fresh per patient, receives that patient's sessions in stream order (one
`ingest` call per checkpoint with the sessions new since the last one), and answers `retrieve` with
items that carry the session ids they came from (provenance for Recall@k).

Sessions arrive as a deployed assistant would see them (`ObservedSession`: an opaque id, a date, the
turns), never with the dataset's labels: which sessions are noise is for the memory to work out.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from medmemorybench.render.models import ObservedSession

if TYPE_CHECKING:
    from medmemorybench.memory.context import MemoryContext
    from medmemorybench.models.base import ChatRequest, Completion

ANSWER_MODES = ("shared", "native")
"""`shared`: the runner's prompt over what `retrieve` returns, answered by the backbone; `native`: the memory
answers itself (`answer`), as agents like Letta and MIRIX do, and says which items it used."""


@dataclass(frozen=True)
class MemoryItem:
    """One retrieved piece of memory."""

    text: str
    """What the backbone will read."""
    session_ids: tuple[str, ...]
    """Sessions it came from."""
    score: float = 0.0
    """Retrieval score (higher is better; systems differ in scale)."""


@dataclass
class Retrieval:
    """What `retrieve` returns for one question."""

    items: list[MemoryItem] = field(default_factory=list)
    truncated_sessions: int = 0
    """Sessions left out to fit a context budget (long-context memories), recorded per question."""


@dataclass(frozen=True)
class EvidenceQuestion:
    """A question with its gold evidence, handed only to a memory that declares `reads_gold_evidence` (the
    `oracle` reference: the benchmark's ceiling, never a memory system under test)."""

    query_id: str
    query: str
    """What the patient asked, as `retrieve` gets it."""
    evidence_session_ids: tuple[str, ...]
    """The question's evidence sessions under the ids this memory was given (none for an abstention question)."""


@dataclass(frozen=True)
class NativeQuestion:
    """A question a memory answers itself."""

    query: str
    """What the patient asked (the question, then for MQ its options one per line), as `retrieve` gets it."""
    request: ChatRequest
    """The runner's prompt for it with no memory shown: the task's instructions and answer format, the question
    last. A native memory adds what it remembers (and may call tools) before the answering LLM reads it."""

    @property
    def instructions(self) -> str:
        """The task's system message(s), for a memory that puts its own memory above them."""
        return "\n".join(m["content"] for m in self.request.messages if m["role"] == "system")

    @property
    def turns(self) -> list[dict[str, str]]:
        """The prompt's messages after the system message (the question last)."""
        return [dict(m) for m in self.request.messages if m["role"] != "system"]


@dataclass
class NativeAnswer:
    """A memory's own answer to one question."""

    completion: Completion
    """The final answer (tokens summed over every step it took)."""
    items: list[MemoryItem] = field(default_factory=list)
    """What it used to answer (provenance for Recall@k)."""
    steps: int = 1
    """Answering LLM calls it made (an agent's tool loop takes several)."""


class MemorySystem(ABC):
    """A memory of one patient's consultations."""

    name: str = "memory"
    """Registry name."""
    needs_llm: bool = False
    """Whether the memory builds itself with an LLM (the runner refuses to start one without it)."""
    answer_modes: tuple[str, ...] = ("shared",)
    """The modes (`ANSWER_MODES`) it can answer in, its default first."""
    reads_gold_evidence: bool = False
    """Whether the runner hands it each question's gold evidence (`retrieve_with_evidence` instead of `retrieve`).
    Only the `oracle` reference declares it, to measure the ceiling; a memory under test must never."""

    def __init__(self, **options: object) -> None:
        self.options = options

    @abstractmethod
    def reset(self) -> None:
        """Forget everything (a new patient)."""

    @abstractmethod
    def ingest(self, sessions: Sequence[ObservedSession]) -> None:
        """Add sessions, in date order; called once per checkpoint with the new sessions."""

    @abstractmethod
    def retrieve(self, questions: Sequence[str], k: int, token_budget: int | None = None) -> list[Retrieval]:
        """The memory relevant to each question: what the patient asked (the question, then for MQ its
        options one per line), never the instruction prompt.

        Args:
            k: items per question (systems that return everything ignore it).
            token_budget: most tokens of memory text the backbone can take (used by long-context
                systems; None means unlimited).
        """

    def retrieve_with_evidence(self, questions: Sequence[EvidenceQuestion], k: int,
                               token_budget: int | None = None) -> list[Retrieval]:
        """`retrieve` given each question's gold evidence; called instead of it when `reads_gold_evidence`."""
        raise NotImplementedError(f"{self.name} does not read gold evidence")

    def answer(self, questions: Sequence[NativeQuestion]) -> list[NativeAnswer]:
        """Answer each question itself (`native` mode), with `self.context.answerer`, the answering LLM."""
        raise NotImplementedError(f"{self.name} answers only through the shared prompt")

    def bind(self, context: MemoryContext) -> None:
        """Receive the run's context (memory LLM, embedder, working folder, RNG, cost meter) before the first
        `ingest`; a memory that builds itself keeps it and counts through it."""
        self.context = context

    def size(self) -> int | None:
        """Items stored (chunks, facts, notes), reported as a cost; None when the memory does not say."""
        return None

    def session_ids(self) -> set[str]:
        """Every session id the memory holds (the runner's leakage guard checks it)."""
        return set()

    def spec(self) -> dict:
        """Name and options, recorded in results so the run can be rebuilt."""
        return {"memory": self.name, **{k: v for k, v in self.options.items()}}
