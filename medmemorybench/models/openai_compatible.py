"""`openai`: any OpenAI-compatible chat server (OpenAI, vLLM serve, llama.cpp server, ...).

Model args: model (required), base_url, api_key_env (default OPENAI_API_KEY), concurrency, max_retries,
timeout_s, backoff_s, context_window (each checked: a bad value is an InputError naming it). Requests run
with bounded concurrency; 429, 5xx, timeouts, connection errors and a 200 whose body is not a usable chat
completion (not JSON, cut off, an HTML page, an error object, no choices, `content: null`) are retried with
exponential backoff; a final failure and any other 4xx are returned as errors with their reason (never as
answers, never as a crash), except a refused key (401/403), which ends the run with one line (exit 2).
Completions are reported as each finishes (`generate_each`).
"""

from __future__ import annotations

import json
import os
import random
import time
from collections.abc import Callable, Sequence

import openai

from medmemorybench.errors import InputError
from medmemorybench.models._daemon_pool import map_each
from medmemorybench.models.base import Backbone, ChatRequest, Completion, check_arg
from medmemorybench.redact import scrub_text

RETRYABLE = (openai.RateLimitError, openai.APITimeoutError, openai.APIConnectionError, openai.InternalServerError)


class OpenAIBackbone(Backbone):
    """Chat completions over HTTP."""

    name = "openai"

    def __init__(self, model: str, base_url: str | None = None, api_key_env: str = "OPENAI_API_KEY",
                 concurrency: int = 8, max_retries: int = 4, timeout_s: float = 60.0, backoff_s: float = 1.0,
                 context_window: int = 8192) -> None:
        check_arg(model, "model", str, lambda v: bool(v.strip()), "a non-empty model name")
        if base_url is not None:
            check_arg(base_url, "base_url", str, lambda v: v.startswith(("http://", "https://")), "an http(s) URL")
        check_arg(concurrency, "concurrency", int, lambda v: v >= 1, "an integer >= 1")
        check_arg(max_retries, "max_retries", int, lambda v: v >= 0, "an integer >= 0")
        check_arg(timeout_s, "timeout_s", (int, float), lambda v: v > 0, "a number > 0")
        check_arg(backoff_s, "backoff_s", (int, float), lambda v: v >= 0, "a number >= 0")
        check_arg(context_window, "context_window", int, lambda v: v >= 256, "an integer >= 256")
        self._model = model
        self.base_url = base_url
        self._api_key_env = api_key_env
        self._api_key = os.environ.get(api_key_env) or "EMPTY"  # (kept to scrub from a server's echoed errors)
        self.client = openai.OpenAI(base_url=base_url, api_key=self._api_key,
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
        return self.generate_each(requests, lambda _index, _completion: None)

    def generate_each(self, requests: Sequence[ChatRequest],
                      on_done: Callable[[int, Completion], None]) -> list[Completion]:
        return map_each(self._one, requests, self.concurrency, on_done)  # (Ctrl-C does not wait for requests)

    def _one(self, request: ChatRequest) -> Completion:
        started = time.perf_counter()
        last_error = ""
        for attempt in range(self.max_retries + 1):
            try:
                response = self.client.chat.completions.create(
                    model=self._model, messages=request.messages, max_tokens=request.max_tokens,  # type: ignore[arg-type]
                    temperature=request.temperature, stop=request.stop or None, seed=request.seed,
                    **_response_format(request), **_tools(request))
            except RETRYABLE as exc:
                last_error = f"{exc.__class__.__name__}: {str(exc)[:200]}"
                self._wait(attempt)
                continue
            except (openai.AuthenticationError, openai.PermissionDeniedError) as exc:
                # every later request would be refused the same way: one clear line (exit 2), not an error per
                # sample; what was answered before stays on disk for --resume
                raise InputError(self._scrubbed(
                    f"{self.base_url or 'the OpenAI API'} refused the API key (HTTP {exc.status_code}: "
                    f"{exc.message}); set the key in ${self._api_key_env} or name another variable with "
                    "--model_args api_key_env=NAME")) from None
            except openai.APIStatusError as exc:  # 4xx other than 429: retrying will not help
                return Completion(error=self._scrubbed(f"HTTP {exc.status_code}: {exc.message}"),
                                  latency_ms=1000 * (time.perf_counter() - started))
            except (ValueError, openai.APIResponseValidationError) as exc:  # a 200 whose body is not JSON
                last_error = f"malformed response: {exc.__class__.__name__}: {str(exc)[:200]}"
                self._wait(attempt)
                continue
            problem = _unusable(response)
            if problem:  # (a server mid-restart answers 200 with an error page or an empty body: worth a retry)
                last_error = f"malformed response: {problem}"
                self._wait(attempt)
                continue
            usage = getattr(response, "usage", None)
            details = getattr(usage, "prompt_tokens_details", None) if usage else None
            message = response.choices[0].message
            return Completion(
                text=(message.content or "").strip(), tool_calls=_tool_calls(message),
                prompt_tokens=usage.prompt_tokens if usage else 0,
                completion_tokens=usage.completion_tokens if usage else 0,
                cached_tokens=(getattr(details, "cached_tokens", 0) or 0) if details else 0,
                latency_ms=1000 * (time.perf_counter() - started),
            )
        return Completion(error=self._scrubbed(f"failed after {self.max_retries + 1} attempts: {last_error}"),
                          latency_ms=1000 * (time.perf_counter() - started))

    def _scrubbed(self, error: str) -> str:
        """A server's error without the key it may echo (a 401 page quoting the Authorization header)."""
        return scrub_text(error, (self._api_key,))

    def _wait(self, attempt: int) -> None:
        if attempt < self.max_retries:
            time.sleep(self.backoff_s * 2**attempt * (1 + random.random() / 4))  # noqa: S311 - jitter


def _response_format(request: ChatRequest) -> dict:
    """`response_format` for a request with a JSON schema (vLLM and `medmemorybench serve` decode under it)."""
    if request.response_schema is None:
        return {}
    return {"response_format": {"type": "json_schema",
                                "json_schema": {"name": "answer", "schema": request.response_schema}}}


def _tools(request: ChatRequest) -> dict:
    """`tools` and `tool_choice` as OpenAI takes them (servers decode the calls their own way)."""
    if not request.tools:
        return {}
    return {"tools": request.tools, "tool_choice": request.tool_choice}


def _tool_calls(message: object) -> list[dict]:
    """The calls in a reply, their arguments parsed (arguments that are not a JSON object become `{}`, kept with
    the raw text under `"_raw"` so nothing the model wrote is lost)."""
    out = []
    for call in getattr(message, "tool_calls", None) or []:
        raw = call.function.arguments or "{}"
        try:
            arguments = json.loads(raw)
        except json.JSONDecodeError:
            arguments = None
        if not isinstance(arguments, dict):
            arguments = {"_raw": raw}
        out.append({"id": call.id, "name": call.function.name, "arguments": arguments})
    return out


def _unusable(response: object) -> str | None:
    """Why a parsed 200 reply is not a chat completion with text (None when it is one)."""
    choices = getattr(response, "choices", None)
    if not isinstance(choices, list) or not choices:
        error = getattr(response, "error", None) or (getattr(response, "model_extra", None) or {}).get("error")
        return f"error object {str(error)[:200]!r}" if error else f"no choices in {str(response)[:200]!r}"
    message = getattr(choices[0], "message", None)
    if message is None or not (isinstance(getattr(message, "content", None), str)
                               or getattr(message, "tool_calls", None)):
        return "no message content (content: null) and no tool call"
    return None
