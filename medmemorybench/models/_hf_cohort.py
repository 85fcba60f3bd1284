"""Generations of the hf backbone that pause and resume (`HFBackbone.generate_slice`, for `serve`'s FairBatcher).

A cohort is the requests that started together: one left-padded batch whose KV cache is kept while it is paused.
Resuming feeds transformers the sequences so far with that cache, so the next step computes exactly what it would
have computed had the cohort never paused: greedy output is token for token the same (tested on SmolLM2).
A member that finishes is answered at once and its row dropped at the next resume; one whose client has gone
stops within a step. docs/design/serve_scheduling.md has the why.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import torch
from transformers import LogitsProcessorList, StoppingCriteria, StoppingCriteriaList

from medmemorybench.models.base import Generation
from medmemorybench.models.tools import as_constrained, read_tool_reply

if TYPE_CHECKING:
    from medmemorybench.models.hf import HFBackbone


class Cohort:
    """The rows of one batch that generate together, with their KV cache between calls."""

    def __init__(self, backbone: HFBackbone, generations: list[Generation]) -> None:
        self.backbone, self.generations = backbone, list(generations)
        self.requests = [as_constrained(g.request) for g in generations]  # (tools are decoded under their schema)
        self.encoded = [backbone._encode(r) for r in self.requests]
        self.width = max(len(ids) for ids, _ in self.encoded)
        pad = backbone.tokenizer.pad_token_id
        self.sequences = torch.tensor([[pad] * (self.width - len(ids)) + ids for ids, _ in self.encoded])
        self.attention = torch.tensor([[0] * (self.width - len(ids)) + [1] * len(ids) for ids, _ in self.encoded])
        self.cache: Any = None
        schemas = [r.response_schema for r in self.requests]
        self.grammars = backbone.constraint().row_processor(schemas) if any(s is not None for s in schemas) else None
        self.started = time.perf_counter()
        first = self.requests[0]
        self.sampling: dict[str, Any] = {"do_sample": first.temperature > 0}
        if first.temperature > 0:  # (`batch_key` keeps one temperature and seed per cohort)
            self.sampling["temperature"] = first.temperature
            torch.manual_seed(first.seed or 0)

    def keep(self, generations: list[Generation]) -> None:
        """Drop the rows of members that are not among `generations` (finished, cancelled)."""
        wanted = {id(g) for g in generations}
        rows = [row for row, g in enumerate(self.generations) if id(g) in wanted]
        if len(rows) == len(self.generations):
            return
        index = torch.tensor(rows)
        self.generations = [self.generations[r] for r in rows]
        self.requests = [self.requests[r] for r in rows]
        self.encoded = [self.encoded[r] for r in rows]
        self.sequences, self.attention = self.sequences[index], self.attention[index]
        if self.cache is not None:
            self.cache.batch_select_indices(index)
        if self.grammars is not None:
            self.grammars.select(rows)

    def run(self, should_pause: Callable[[int], bool]) -> None:
        """Generate until every member has finished or `should_pause` says so; paused members keep their tokens."""
        done = len(self.sequences[0]) - self.width
        stop = _RowStop(self, should_pause, len(self.sequences[0]))
        with torch.no_grad():
            out = self.backbone.model.generate(
                input_ids=self.sequences, attention_mask=self.attention, cache=self.cache,
                max_new_tokens=max(r.max_tokens for r in self.requests) - done,
                pad_token_id=self.backbone.tokenizer.pad_token_id, stopping_criteria=StoppingCriteriaList([stop]),
                logits_processor=LogitsProcessorList([self.grammars]) if self.grammars else None,
                return_dict_in_generate=True, **self.sampling)
        grown = out.sequences.shape[1] - self.sequences.shape[1]
        self.sequences, self.cache = out.sequences, out.cache
        self.attention = torch.cat([self.attention, self.attention.new_ones(len(self.attention), grown)], dim=1)
        for row, generation in enumerate(self.generations):
            if not generation.finished.is_set():  # paused: what it has, and how to go on
                generation.token_ids = self.sequences[row, self.width :].tolist()
                generation.state = self

    def finish(self, row: int, tokens: torch.Tensor) -> None:
        """Answer one member with its `tokens`."""
        request, asked = self.requests[row], self.generations[row].request
        ids, cut = self.encoded[row]
        latency_ms = 1000 * (time.perf_counter() - self.started)
        completion = self.backbone.completion(request, tokens, len(ids), cut, latency_ms)
        self.generations[row].finish(read_tool_reply(asked, completion))


class _RowStop(StoppingCriteria):
    """Asked by transformers after every step: ends a row at its end-of-sequence token, at its own `max_tokens`
    or when its client has gone (answering it at once), and ends all rows when the scheduler asks for a pause."""

    def __init__(self, cohort: Cohort, should_pause: Callable[[int], bool], start: int) -> None:
        self.cohort, self.should_pause, self.start = cohort, should_pause, start
        self.done = [g.finished.is_set() for g in cohort.generations]
        eos = cohort.backbone.model.generation_config.eos_token_id
        self.eos = {cohort.backbone.tokenizer.eos_token_id, *(eos if isinstance(eos, list) else [eos])} - {None}

    def __call__(self, input_ids: torch.Tensor, scores: torch.Tensor, **kwargs: Any) -> torch.Tensor:
        cohort, steps = self.cohort, input_ids.shape[1] - self.cohort.width
        newest = input_ids[:, -1].tolist()
        for row, generation in enumerate(cohort.generations):
            if self.done[row]:
                continue
            if newest[row] in self.eos or steps >= cohort.requests[row].max_tokens:
                ended = steps - 1 if newest[row] in self.eos else steps  # (the end token is not counted)
                cohort.finish(row, input_ids[row, cohort.width : cohort.width + ended])
            elif not generation.finish_if_cancelled():
                continue
            self.done[row] = True
            if cohort.grammars is not None:
                cohort.grammars.stop_row(row)
        pause = not all(self.done) and self.should_pause(input_ids.shape[1] - self.start)
        return torch.tensor([pause or done for done in self.done], dtype=torch.bool, device=input_ids.device)
