"""`vllm`: offline batched generation with vLLM's `LLM.chat` on a GPU machine.

Model args: pretrained (required), tensor_parallel_size, max_model_len, gpu_memory_utilization, dtype,
on_overflow ("error" or "truncate"). Prefix caching is on, and requests are passed in the order the
runner gives them (one patient's shared history first), so repeats of a prefix hit the cache. A prompt
too long for the context window is an error, or with on_overflow=truncate an explicit, recorded cut of
its oldest tokens — never silent.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from vllm import LLM, SamplingParams

from medmemorybench.errors import InputError
from medmemorybench.models.base import Backbone, ChatRequest, Completion
from medmemorybench.models.tools import as_constrained, read_tool_reply


class VLLMBackbone(Backbone):
    """Thin wrapper over `vllm.LLM`."""

    name = "vllm"

    def __init__(self, pretrained: str, tensor_parallel_size: int = 1, max_model_len: int | None = None,
                 gpu_memory_utilization: float = 0.9, dtype: str = "auto", on_overflow: str = "error",
                 seed: int = 0) -> None:
        if on_overflow not in ("error", "truncate"):
            raise InputError(f"on_overflow={on_overflow!r} is not valid; expected 'error' or 'truncate'")
        self._model = pretrained
        self.on_overflow = on_overflow
        kwargs = {"model": pretrained, "tensor_parallel_size": int(tensor_parallel_size),
                  "gpu_memory_utilization": float(gpu_memory_utilization), "dtype": dtype,
                  "enable_prefix_caching": True, "seed": int(seed)}
        if max_model_len:
            kwargs["max_model_len"] = int(max_model_len)
        self.llm = LLM(**kwargs)
        self.tokenizer = self.llm.get_tokenizer()
        self._max_len = int(max_model_len or self.llm.llm_engine.model_config.max_model_len)

    @property
    def model_id(self) -> str:
        return self._model

    @property
    def context_window(self) -> int:
        return self._max_len

    def count_tokens(self, text: str) -> int:
        return len(self.tokenizer.encode(text, add_special_tokens=False))

    def generate(self, requests: Sequence[ChatRequest]) -> list[Completion]:
        results: list[Completion | None] = [None] * len(requests)
        batch, params, indices, cuts = [], [], [], []
        asked = list(requests)
        requests = [as_constrained(r) for r in asked]  # (tools are decoded under their call schema)
        for index, request in enumerate(requests):
            prompt_len = len(self.tokenizer.apply_chat_template(request.messages, add_generation_prompt=True,
                                                                tokenize=True))
            budget = self._max_len - request.max_tokens
            cut = max(0, prompt_len - budget)
            if cut and self.on_overflow == "error":
                results[index] = Completion(error=f"prompt of {prompt_len} tokens exceeds the {budget}-token "
                                                  f"budget of {self._model} (max_model_len {self._max_len})",
                                            prompt_tokens=prompt_len)
                continue
            sampling = {"max_tokens": request.max_tokens, "temperature": request.temperature,
                        "stop": request.stop or None, "seed": request.seed}
            if cut:
                sampling["truncate_prompt_tokens"] = budget  # keeps the last `budget` tokens
            if request.response_schema is not None:
                sampling.update(_structured(request.response_schema))
            batch.append(request.messages)
            params.append(SamplingParams(**sampling))
            indices.append(index)
            cuts.append(cut)
        if batch:
            started = time.perf_counter()
            outputs = self.llm.chat(messages=batch, sampling_params=params, use_tqdm=False)
            share_ms = 1000 * (time.perf_counter() - started) / len(batch)
            for index, cut, output in zip(indices, cuts, outputs, strict=True):
                generated = output.outputs[0]
                results[index] = Completion(
                    text=generated.text.strip(), prompt_tokens=len(output.prompt_token_ids or []),
                    completion_tokens=len(generated.token_ids), latency_ms=share_ms, truncated_tokens=cut,
                    cached_tokens=getattr(output, "num_cached_tokens", 0) or 0)
                results[index] = read_tool_reply(asked[index], results[index])
        return [r for r in results if r is not None]


def _structured(schema: dict) -> dict:
    """SamplingParams arguments decoding under a JSON schema: `structured_outputs` (vLLM >= 0.10.2), else the
    older `guided_decoding`."""
    try:
        from vllm.sampling_params import StructuredOutputsParams
    except ImportError:
        from vllm.sampling_params import GuidedDecodingParams

        return {"guided_decoding": GuidedDecodingParams(json=schema)}
    return {"structured_outputs": StructuredOutputsParams(json=schema)}
