"""`openai`: any OpenAI-compatible chat server (OpenAI, vLLM serve, llama.cpp server, ...).

Model args: model (required), base_url, api_key_env (default OPENAI_API_KEY), concurrency, max_retries,
timeout_s, backoff_s, context_window. Requests run with bounded concurrency; 429, 5xx, timeouts and
connection errors are retried with exponential backoff; a final failure, and a 200 whose body is not a chat
completion, are returned as errors (never as answers, never as a crash).
"""

from __future__ import annotations

import os
import random
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

import openai

from medmemorybench.models.base import Backbone, ChatRequest, Completion

RETRYABLE = (openai.RateLimitError, openai.APITimeoutError, openai.APIConnectionError, openai.InternalServerError)


class OpenAIBackbone(Backbone):
    """Chat completions over HTTP."""

    name = "openai"

    def __init__(self, model: str, base_url: str | None = None, api_key_env: str = "OPENAI_API_KEY",
                 concurrency: int = 8, max_retries: int = 4, timeout_s: float = 60.0, backoff_s: float = 1.0,
                 context_window: int = 8192) -> None:
        self._model = model
        self.base_url = base_url
        self.client = openai.OpenAI(base_url=base_url, api_key=os.environ.get(api_key_env) or "EMPTY",
                                    max_retries=0, timeout=timeout_s)
        self.concurrency = max(1, int(concurrency))
        self.max_retries = int(max_retries)
        self.backoff_s = float(backoff_s)
        self._context_window = int(context_window)

    @property
    def model_id(self) -> str:
        return self._model

    @property
    def context_window(self) -> int:
        return self._context_window

    def identity(self) -> dict:
        return {"backbone": self.name, "model": self._model, "base_url": self.base_url}

    def generate(self, requests: Sequence[ChatRequest]) -> list[Completion]:
        if self.concurrency == 1 or len(requests) == 1:
            return [self._one(r) for r in requests]
        with ThreadPoolExecutor(self.concurrency) as pool:
            return list(pool.map(self._one, requests))

    def _one(self, request: ChatRequest) -> Completion:
        started = time.perf_counter()
        last_error = ""
        for attempt in range(self.max_retries + 1):
            try:
                response = self.client.chat.completions.create(
                    model=self._model, messages=request.messages, max_tokens=request.max_tokens,  # type: ignore[arg-type]
                    temperature=request.temperature, stop=request.stop or None, seed=request.seed)
            except RETRYABLE as exc:
                last_error = f"{exc.__class__.__name__}: {exc}"
                if attempt < self.max_retries:
                    time.sleep(self.backoff_s * 2**attempt * (1 + random.random() / 4))  # noqa: S311 - jitter
                continue
            except openai.APIStatusError as exc:  # 4xx other than 429: retrying will not help
                return Completion(error=f"HTTP {exc.status_code}: {exc.message}",
                                  latency_ms=1000 * (time.perf_counter() - started))
            except (ValueError, openai.APIResponseValidationError) as exc:  # a 200 whose body is not JSON
                return Completion(error=f"malformed response: {exc.__class__.__name__}: {exc}",
                                  latency_ms=1000 * (time.perf_counter() - started))
            choices = getattr(response, "choices", None)
            if not isinstance(choices, list) or not choices or getattr(choices[0], "message", None) is None:
                return Completion(error=f"malformed response: no choices in {str(response)[:200]!r}",
                                  latency_ms=1000 * (time.perf_counter() - started))
            usage = response.usage
            details = getattr(usage, "prompt_tokens_details", None) if usage else None
            return Completion(
                text=(choices[0].message.content or "").strip(),
                prompt_tokens=usage.prompt_tokens if usage else 0,
                completion_tokens=usage.completion_tokens if usage else 0,
                cached_tokens=(getattr(details, "cached_tokens", 0) or 0) if details else 0,
                latency_ms=1000 * (time.perf_counter() - started),
            )
        return Completion(error=f"failed after {self.max_retries + 1} attempts: {last_error}",
                          latency_ms=1000 * (time.perf_counter() - started))
