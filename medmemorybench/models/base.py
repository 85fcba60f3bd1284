"""The Backbone interface: a language model that takes a batch of chat requests.

Every backend returns one `Completion` per request, in order. A request that fails after retries
comes back with `error` set and empty text: it is recorded as an error, never scored as a wrong answer.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence

from pydantic import BaseModel, ConfigDict, Field, model_validator

from medmemorybench.errors import InputError


class ChatRequest(BaseModel):
    """One chat completion to make."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    messages: list[dict[str, str]]
    """OpenAI-style messages: [{"role": "system" | "user" | "assistant", "content": ...}]."""
    max_tokens: int = Field(default=256, gt=0)
    """Most tokens to generate."""
    temperature: float = Field(default=0.0, ge=0)
    """Sampling temperature (0: greedy)."""
    stop: list[str] = Field(default_factory=list)
    """Stop strings."""
    seed: int | None = 0
    """Sampling seed, where the backend supports one."""
    response_schema: dict | None = None
    """JSON schema the answer must follow (guided decoding where supported)."""
    tools: list[dict] | None = None
    """OpenAI tool specs the model may call (`models/tools.py`: through the schema constraint where the backend
    has no tool-calling template); the calls come back in `Completion.tool_calls`."""
    tool_choice: str | dict = "auto"
    """"auto" (a call or words), "required" (a call), or one named function."""

    @model_validator(mode="after")
    def _tools_valid(self) -> ChatRequest:
        if self.tools is not None:
            from medmemorybench.models.tools import check_tools

            check_tools(self.tools, self.tool_choice)
        return self


class Completion(BaseModel):
    """A model's answer to one request."""

    model_config = ConfigDict(extra="forbid")

    text: str = ""
    """Generated text (empty when `error` is set)."""
    prompt_tokens: int = 0
    """Tokens in the prompt."""
    completion_tokens: int = 0
    """Tokens generated."""
    cached_tokens: int = 0
    """Prompt tokens served from a prefix cache, where the backend reports it."""
    latency_ms: float = 0.0
    """Wall time of the request (or its share of the batch)."""
    truncated_tokens: int = 0
    """Prompt tokens cut to fit the context window (0: none; recorded, never silent)."""
    error: str | None = None
    """Why the request failed, after retries."""
    cache_hit: bool = False
    """Whether the response came from the response cache."""
    tool_calls: list[dict] = Field(default_factory=list)
    """The tools the model called (`{"id", "name", "arguments"}`; a request with `tools` only)."""


class Backbone(ABC):
    """A language model behind `generate`."""

    name: str = "backbone"
    """Registry name."""
    answers: bool = True
    """Whether it answers at all (`none`, retrieval only, does not)."""

    @property
    @abstractmethod
    def model_id(self) -> str:
        """What model answers (path, Hub id or server model name)."""

    @property
    def context_window(self) -> int:
        """Tokens the model reads at most (prompt + completion)."""
        return 8192

    def count_tokens(self, text: str) -> int:
        """Tokens in `text` (backends with a tokenizer override this rough estimate)."""
        return max(1, len(text) // 4)

    def identity(self) -> dict:
        """What to record in results so the run can be rebuilt."""
        return {"backbone": self.name, "model": self.model_id}

    @abstractmethod
    def generate(self, requests: Sequence[ChatRequest]) -> list[Completion]:
        """One completion per request, in order."""

    def generate_each(self, requests: Sequence[ChatRequest],
                      on_done: Callable[[int, Completion], None]) -> list[Completion]:
        """`generate`, calling `on_done(index, completion)` as each completion is ready, so that a caller can keep
        it (in a cache) before the rest arrive. Backends that finish requests one by one or batch by batch
        override this; the default reports them all at the end."""
        out = self.generate(requests)
        for index, completion in enumerate(out):
            on_done(index, completion)
        return out


class WrappingBackbone(Backbone):
    """A backbone that answers through another (`inner`) in some other way: through a cache, in shared batches.
    It is the inner model for everything else, its identity included, so cache keys and run headers do not change."""

    def __init__(self, inner: Backbone) -> None:
        self.inner = inner
        self.name = inner.name

    @property
    def model_id(self) -> str:
        return self.inner.model_id

    @property
    def context_window(self) -> int:
        return self.inner.context_window

    def count_tokens(self, text: str) -> int:
        return self.inner.count_tokens(text)

    def identity(self) -> dict:
        return self.inner.identity()


class RetrievalOnly(Backbone):
    """The `none` backbone: nothing answers; a run records what memories retrieve (Recall@k, MRR) and scores no
    answer. The runner asks `answers` rather than the name."""

    name = "none"
    answers = False

    @property
    def model_id(self) -> str:
        return "none"

    def identity(self) -> dict:
        return {"backbone": "none"}

    def generate(self, requests: Sequence[ChatRequest]) -> list[Completion]:
        raise RuntimeError("the 'none' backbone answers nothing (retrieval only)")


def check_arg(value: object, name: str, kind: type | tuple[type, ...], valid: Callable[[object], bool],
              wanted: str) -> None:
    """Raise an InputError naming the model arg when its value is of the wrong kind or out of range
    (`load_backbone` adds the option, --model_args or --judge_args)."""
    if isinstance(value, bool) or not isinstance(value, kind) or not valid(value):
        raise InputError(f"{name}={value!r} is not valid; expected {wanted}")
