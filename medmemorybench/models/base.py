"""The Backbone interface: a language model that takes a batch of chat requests.

Every backend returns one `Completion` per request, in order. A request that fails after retries
comes back with `error` set and empty text: it is recorded as an error, never scored as a wrong answer.
"""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field

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


CANCELLED = "cancelled: the client hung up or its deadline passed"
"""The error of a generation whose client no longer wants it (`Generation.is_cancelled`)."""


def never_cancelled() -> bool:
    return False


@dataclass(eq=False)
class Generation:
    """One request being answered, possibly in slices (`Backbone.generate_slice`): what it has generated so far,
    whether its client still wants it, and its completion once it has one."""

    request: ChatRequest
    """What to generate."""
    is_cancelled: Callable[[], bool] = never_cancelled
    """Whether its client has gone (hung up, or its deadline passed); asked between decoding steps."""
    token_ids: list[int] = field(default_factory=list)
    """Tokens generated so far (set when a slice pauses; backends that cannot pause leave it empty)."""
    state: object | None = None
    """The backbone's own state for continuing a paused generation (a KV cache); dropped once finished."""
    completion: Completion | None = None
    """The answer, once finished (None while queued or paused)."""
    finished: threading.Event = field(default_factory=threading.Event)
    """Set with `completion`."""

    @property
    def remaining_tokens(self) -> int:
        """Tokens it may still generate."""
        return self.request.max_tokens - len(self.token_ids)

    def finish(self, completion: Completion) -> None:
        """Record the answer, release the backbone's state and wake whoever waits for it."""
        self.completion, self.state = completion, None
        self.finished.set()

    def finish_if_cancelled(self) -> bool:
        """Finish with the `CANCELLED` error when its client has gone; whether it did."""
        if self.is_cancelled():
            self.finish(Completion(error=CANCELLED, completion_tokens=len(self.token_ids)))
            return True
        return False


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

    def batch_key(self, request: ChatRequest) -> Hashable:
        """Requests whose keys are equal may start a `generate_slice` together (the default: any)."""
        return None

    def check_request(self, request: ChatRequest) -> None:
        """Raise ValueError saying why this backbone cannot take `request` (a JSON schema it cannot decode under),
        so a server refuses it before it joins a batch; the default takes every request."""
        return None

    def generate_slice(self, generations: Sequence[Generation], should_pause: Callable[[int], bool]) -> None:
        """Advance generations that started together (or continue ones that paused together): each either
        finishes (`Generation.finish`, as soon as it is done, while the others go on) or pauses, keeping its tokens
        and `state` for a later call with the same generations (less those finished since). `should_pause(steps)`
        is asked between decoding steps (`steps`: tokens generated in this call); when it says True, all still
        running pause. A cancelled generation finishes with the `CANCELLED` error within a step.

        Backends that cannot pause (an API, a test double) answer each one whole: this default, which
        cancels only before it starts. docs/design/serve_scheduling.md says why and how `serve` uses it."""
        live = [g for g in generations if not g.finish_if_cancelled()]
        self.generate_each([g.request for g in live], lambda index, completion: live[index].finish(completion))


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

    def check_request(self, request: ChatRequest) -> None:
        self.inner.check_request(request)


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
