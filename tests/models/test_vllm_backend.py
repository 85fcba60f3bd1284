"""Our vLLM code path against vLLM's documented API surface (`LLM(...)`, `LLM.chat(messages=[...],
sampling_params=[...])`, `SamplingParams(..., truncate_prompt_tokens=...)`, `RequestOutput`), with a
fake `vllm` module: a unit-test double, since vLLM itself needs a GPU machine and is never installed in CI."""

from __future__ import annotations

import importlib
import sys
import types
from dataclasses import dataclass, field

import pytest

from medmemorybench.models.base import ChatRequest


@dataclass
class FakeOutput:
    text: str
    token_ids: list = field(default_factory=lambda: [1, 2])


@dataclass
class FakeRequestOutput:
    prompt_token_ids: list
    outputs: list
    num_cached_tokens: int = 3


class FakeTokenizer:
    def apply_chat_template(self, messages, add_generation_prompt=True, tokenize=True):  # noqa: ANN001, ANN201
        return list(range(len(messages[-1]["content"].split())))

    def encode(self, text, add_special_tokens=False):  # noqa: ANN001, ANN201
        return text.split()


class FakeLLM:
    instances: list = []

    def __init__(self, **kwargs):  # noqa: ANN003
        self.kwargs, self.calls = kwargs, []
        FakeLLM.instances.append(self)
        self.llm_engine = types.SimpleNamespace(model_config=types.SimpleNamespace(max_model_len=32))

    def get_tokenizer(self):  # noqa: ANN201
        return FakeTokenizer()

    def chat(self, messages, sampling_params, use_tqdm=True):  # noqa: ANN001, ANN201
        self.calls.append((messages, sampling_params, use_tqdm))
        return [FakeRequestOutput(list(range(5)), [FakeOutput(f"a{i}")]) for i in range(len(messages))]


class FakeSamplingParams:
    def __init__(self, **kwargs):  # noqa: ANN003
        self.kwargs = kwargs


@pytest.fixture
def vllm_backend(monkeypatch):
    fake = types.ModuleType("vllm")
    fake.LLM, fake.SamplingParams = FakeLLM, FakeSamplingParams
    monkeypatch.setitem(sys.modules, "vllm", fake)
    monkeypatch.delitem(sys.modules, "medmemorybench.models.vllm_backend", raising=False)
    module = importlib.import_module("medmemorybench.models.vllm_backend")
    FakeLLM.instances = []
    return module.VLLMBackbone


def _request(words: int, max_tokens: int = 8) -> ChatRequest:
    return ChatRequest(messages=[{"role": "user", "content": "w " * words}], max_tokens=max_tokens)


def test_engine_is_built_with_prefix_caching_and_one_batched_chat_call(vllm_backend):
    backbone = vllm_backend(pretrained="/models/qwen", tensor_parallel_size=2)
    (llm,) = FakeLLM.instances
    assert llm.kwargs["enable_prefix_caching"] is True and llm.kwargs["tensor_parallel_size"] == 2
    out = backbone.generate([_request(3), _request(4)])
    assert len(llm.calls) == 1
    messages, params, use_tqdm = llm.calls[0]
    assert len(messages) == 2 and len(params) == 2 and use_tqdm is False
    assert params[0].kwargs["temperature"] == 0.0 and params[0].kwargs["max_tokens"] == 8
    assert [c.text for c in out] == ["a0", "a1"] and out[0].cached_tokens == 3


def test_over_long_prompt_is_an_error_by_default(vllm_backend):
    backbone = vllm_backend(pretrained="/m")
    ok, too_long = backbone.generate([_request(3), _request(40)])
    assert ok.error is None and too_long.error and "exceeds" in too_long.error
    assert len(FakeLLM.instances[0].calls[0][0]) == 1  # the bad one was never sent


def test_truncation_is_explicit_and_recorded(vllm_backend):
    backbone = vllm_backend(pretrained="/m", on_overflow="truncate")
    (out,) = backbone.generate([_request(40)])
    params = FakeLLM.instances[0].calls[0][1][0]
    assert params.kwargs["truncate_prompt_tokens"] == 32 - 8
    assert out.truncated_tokens == 40 - (32 - 8) and out.error is None


def test_a_schema_or_tools_request_is_decoded_under_structured_outputs_and_calls_are_read(vllm_backend, monkeypatch):
    from medmemorybench.models.tools import tool_schema
    from tests.models.test_tools import SEARCH

    class FakeStructured:
        def __init__(self, json):  # noqa: A002, ANN001
            self.json = json

    sampling = types.ModuleType("vllm.sampling_params")
    sampling.StructuredOutputsParams = FakeStructured
    monkeypatch.setitem(sys.modules, "vllm.sampling_params", sampling)
    backbone = vllm_backend(pretrained="/models/qwen", max_model_len=4096)
    (llm,) = FakeLLM.instances
    sent = []
    llm.chat = lambda messages, sampling_params, use_tqdm: sent.extend(sampling_params) or [  # noqa: ARG005
        FakeRequestOutput([1], [FakeOutput('{"tool": "search_archive", "arguments": {"query": "a1c"}}')])
        for _ in messages]
    plain, tooled = backbone.generate([
        ChatRequest(messages=[{"role": "user", "content": "x"}], response_schema={"type": "object"}),
        ChatRequest(messages=[{"role": "user", "content": "x"}], tools=[SEARCH], tool_choice="required")])
    assert [p.kwargs["structured_outputs"].json for p in sent] == [{"type": "object"},
                                                                   tool_schema([SEARCH], "required")]
    assert plain.tool_calls == [] and tooled.tool_calls[0]["arguments"] == {"query": "a1c"}
