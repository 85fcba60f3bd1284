"""`hf`: transformers on CPU (or GPU); by default the embedded SmolLM2-135M-Instruct.

Model args: pretrained (a local folder; default the embedded model), batch_size, threads, max_length.
A request with a `response_schema` is decoded under that JSON schema (xgrammar), so even a 135M model
answers with JSON that parses and fits it.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Hashable, Sequence

import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

from medmemorybench.errors import InputError
from medmemorybench.models._json_constraint import JsonConstraint
from medmemorybench.models.base import Backbone, ChatRequest, Completion, Generation, check_arg
from medmemorybench.models.embedded import embedded_model_path
from medmemorybench.models.tools import as_constrained, read_tool_reply


class HFBackbone(Backbone):
    """Batched greedy or sampled generation with left padding."""

    name = "hf"

    def __init__(self, pretrained: str | None = None, batch_size: int = 8, threads: int | None = None,
                 max_length: int | None = None) -> None:
        # (checked before the model loads, which takes a while)
        check_arg(batch_size, "batch_size", int, lambda v: v >= 1, "an integer >= 1")
        if threads is not None:
            check_arg(threads, "threads", int, lambda v: v >= 1, "an integer >= 1")
        if max_length is not None:
            check_arg(max_length, "max_length", int, lambda v: v >= 256, "an integer >= 256")
        if pretrained is not None:
            check_arg(pretrained, "pretrained", str, lambda v: bool(v.strip()), "a model folder")
        torch.set_flush_denormal(True)  # denormals make CPU generation ~14x slower
        if threads:
            torch.set_num_threads(threads)
        self._path = str(pretrained or embedded_model_path())
        try:
            self.tokenizer = AutoTokenizer.from_pretrained(self._path)
            self.model = AutoModelForCausalLM.from_pretrained(self._path)
        except (OSError, ValueError) as exc:  # no such folder, not a model, offline without it cached
            raise InputError(f"pretrained={self._path!r}: cannot load a model from it "
                             f"({str(exc).splitlines()[0][:160]})") from None
        self.tokenizer.padding_side = "left"
        if self.tokenizer.pad_token is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token
        self.model.eval()
        self.batch_size = int(batch_size)
        self._max_length = int(max_length or getattr(self.model.config, "max_position_embeddings", 2048))
        self._constraint: JsonConstraint | None = None  # made on the first request with a schema

    @property
    def model_id(self) -> str:
        return self._path

    @property
    def context_window(self) -> int:
        return self._max_length

    def count_tokens(self, text: str) -> int:
        return len(self.tokenizer(text, add_special_tokens=False)["input_ids"])

    def identity(self) -> dict:
        return {"backbone": self.name, "model": self.model_id, "batch_size": self.batch_size}

    def _encode(self, request: ChatRequest) -> tuple[list[int], int]:
        ids = self.tokenizer.apply_chat_template(request.messages, add_generation_prompt=True, tokenize=True)
        if isinstance(ids, dict) or hasattr(ids, "keys"):
            ids = ids["input_ids"]
        budget = self._max_length - request.max_tokens
        cut = max(0, len(ids) - budget)
        return ids[cut:], cut  # keep the end: the question comes last in every prompt

    def generate(self, requests: Sequence[ChatRequest]) -> list[Completion]:
        return self.generate_each(requests, lambda _index, _completion: None)

    def generate_each(self, requests: Sequence[ChatRequest],
                      on_done: Callable[[int, Completion], None]) -> list[Completion]:
        asked = list(requests)
        requests = [as_constrained(r) for r in asked]  # (tools are decoded under their call schema)
        out: list[Completion | None] = [None] * len(requests)
        # a batch shares its sampling and whether it is constrained (schemas may differ row by row)
        def batch_key(i: int) -> tuple:
            return (requests[i].response_schema is not None, requests[i].max_tokens, requests[i].temperature)

        order = sorted(range(len(requests)), key=batch_key)
        groups = [[i for i in order if batch_key(i) == key] for key in dict.fromkeys(map(batch_key, order))]
        for group in groups:
            for start in range(0, len(group), self.batch_size):
                chunk = group[start : start + self.batch_size]
                for index, completion in zip(chunk, self._generate_batch([requests[i] for i in chunk]), strict=True):
                    completion = read_tool_reply(asked[index], completion)
                    out[index] = completion
                    on_done(index, completion)
        return [c for c in out if c is not None]

    def _generate_batch(self, batch: list[ChatRequest]) -> list[Completion]:
        encoded = [self._encode(r) for r in batch]
        width = max(len(ids) for ids, _ in encoded)
        pad = self.tokenizer.pad_token_id
        input_ids = torch.tensor([[pad] * (width - len(ids)) + ids for ids, _ in encoded])
        attention = torch.tensor([[0] * (width - len(ids)) + [1] * len(ids) for ids, _ in encoded])
        first = batch[0]
        sampling = {"do_sample": first.temperature > 0}
        if first.temperature > 0:
            sampling["temperature"] = first.temperature
            torch.manual_seed(first.seed or 0)
        if first.response_schema is not None:
            sampling["logits_processor"] = [self.constraint().logits_processor([r.response_schema for r in batch])]
        started = time.perf_counter()
        with torch.no_grad():
            generated = self.model.generate(input_ids=input_ids, attention_mask=attention,
                                            max_new_tokens=max(r.max_tokens for r in batch),
                                            pad_token_id=pad, **sampling)
        latency_ms = 1000 * (time.perf_counter() - started) / len(batch)
        return [self.completion(request, row[width:][: request.max_tokens], len(ids), cut, latency_ms)
                for row, request, (ids, cut) in zip(generated, batch, encoded, strict=True)]

    def completion(self, request: ChatRequest, new_tokens: torch.Tensor, prompt_tokens: int, cut: int,
                   latency_ms: float) -> Completion:
        """The completion of `new_tokens` (padding after the end not counted), cut at the first stop string."""
        text = self.tokenizer.decode(new_tokens, skip_special_tokens=True)
        for stop in request.stop:
            text = text.split(stop)[0]
        return Completion(text=text.strip(), prompt_tokens=prompt_tokens,
                          completion_tokens=int((new_tokens != self.tokenizer.pad_token_id).sum()),
                          latency_ms=latency_ms, truncated_tokens=cut)

    def constraint(self) -> JsonConstraint:
        """The JSON-schema grammars (made on the first request with a schema)."""
        if self._constraint is None:
            self._constraint = JsonConstraint(self.tokenizer, self.model.config.vocab_size)
        return self._constraint

    def batch_key(self, request: ChatRequest) -> Hashable:
        return (request.temperature, request.seed if request.temperature > 0 else None)  # (one sampler per batch)

    def check_request(self, request: ChatRequest) -> None:
        """ValueError when the request's schema (its own, or its tools' call schema) cannot be decoded under."""
        schema = as_constrained(request).response_schema
        if schema is None:
            return
        try:
            constraint = self.constraint()
        except InputError:  # (xgrammar is not installed: the server's own lack, reported when it generates)
            return
        constraint.check(schema)

    def generate_slice(self, generations: Sequence[Generation], should_pause: Callable[[int], bool]) -> None:
        """Pausable generation (`_hf_cohort.py`): a paused cohort keeps its KV cache, so greedy output is the same
        token for token as one uninterrupted `generate`."""
        from medmemorybench.models._hf_cohort import Cohort

        live = [g for g in generations if not g.finish_if_cancelled()]
        if not live:
            return
        cohort = live[0].state
        if not isinstance(cohort, Cohort) or any(g.state is not cohort for g in live):
            if any(g.state is not None for g in live):
                raise ValueError("generate_slice: generations that paused apart cannot go on together")
            cohort = Cohort(self, live)
        cohort.keep(live)
        cohort.run(should_pause)
