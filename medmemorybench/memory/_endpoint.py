"""A loopback OpenAI-compatible endpoint over a memory's LLM and embedder, for the memory packages that only talk
HTTP (`mem0`, `hipporag`): `medmemorybench serve`'s server on a free port of 127.0.0.1, so every call the package
makes goes through the run's response cache and is counted, and `/v1/embeddings` is the shared, counted embedder.

A package asks in its own way (JSON-in-text, `json_object`); a subclass of `PackageEndpoint` tells its calls apart
by their prompts, can supply the JSON schema of each (a small model then writes JSON that parses), and says which
replies the package cannot use, which are counted as parse failures (the packages only log them).
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Sequence
from typing import Any

from medmemorybench.memory.context import Embedder, MemoryCost, MemoryLLM
from medmemorybench.models.base import Backbone, ChatRequest, Completion

MODEL_NAME = "memory-llm"
"""The model name the endpoint serves (packages send it back; the server answers whatever name they send)."""


class PackageEndpoint(Backbone):
    """The memory LLM as a loopback endpoint serves it to one package (subclasses recognize that package's calls)."""

    name = "memory-endpoint"

    def __init__(self, llm: MemoryLLM, cost: MemoryCost) -> None:
        self.llm, self.cost = llm, cost
        self._lock = threading.Lock()

    @property
    def model_id(self) -> str:
        return MODEL_NAME

    @property
    def context_window(self) -> int:
        return self.llm.context_window

    def count_tokens(self, text: str) -> int:
        return self.llm.count_tokens(text)

    def kind(self, request: ChatRequest) -> str | None:
        """Which of the package's calls `request` is (None: one the endpoint passes on as it is)."""
        return None

    def shape(self, request: ChatRequest, kind: str | None) -> ChatRequest:
        """The request to send the memory LLM (a subclass adds the call's schema)."""
        return request

    def fits(self, kind: str | None, completion: Completion) -> bool:
        """Whether the package can use the reply (False: counted as a parse failure)."""
        return True

    def finish(self, kind: str | None, completion: Completion) -> Completion:
        """The reply as the package receives it."""
        return completion

    def generate(self, requests: Sequence[ChatRequest]) -> list[Completion]:
        kinds = [self.kind(r) for r in requests]
        completions = self.llm.generate([self.shape(r, k) for r, k in zip(requests, kinds, strict=True)])
        out = []
        for completion, kind in zip(completions, kinds, strict=True):
            if completion.error is None and not self.fits(kind, completion):
                with self._lock:
                    self.cost.parse_failures += 1
            out.append(self.finish(kind, completion) if completion.error is None else completion)
        return out


def start_endpoint(owner: object, backbone: Backbone, embedder: Embedder) -> str:
    """Serve `backbone` (and `embedder` on /v1/embeddings) on a free loopback port until `owner` is garbage
    collected; returns the base URL (`http://127.0.0.1:<port>/v1`)."""
    from medmemorybench.serve import make_server

    server = make_server(backbone, port=0, embedder=embedder, model_name=MODEL_NAME)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    weakref.finalize(owner, _close, server)
    return f"http://127.0.0.1:{server.server_address[1]}/v1"


def _close(server: Any) -> None:
    server.shutdown()
    server.server_close()
