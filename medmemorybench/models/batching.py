"""Micro-batching: requests that arrive from many threads at about the same time go to the backbone as one
batch. The runner's memory LLM uses `MicroBatcher` when patients are ingested concurrently
(`--memory_concurrency`), so their construction calls share batches; `serve` answers its HTTP clients through
`FairBatcher`, which also pauses a long generation for a shorter one and drops the requests of clients that have
gone (docs/design/serve_scheduling.md).
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable, Sequence

from medmemorybench.models.base import Backbone, ChatRequest, Completion, Generation, WrappingBackbone, never_cancelled

logger = logging.getLogger(__name__)


class MicroBatcher:
    """Groups concurrent requests into batches for one backbone; each batch is generated whole."""

    def __init__(self, backbone: Backbone, max_batch: int = 16, batch_window_ms: float = 20.0) -> None:
        self.backbone, self.max_batch, self.window_s = backbone, max_batch, batch_window_ms / 1000
        self.jobs: queue.Queue[Generation] = queue.Queue()
        self.batches = 0
        threading.Thread(target=self._loop, daemon=True, name=type(self).__name__).start()

    def enqueue(self, request: ChatRequest, is_cancelled: Callable[[], bool] = never_cancelled) -> Generation:
        """Queue one request and return at once; wait on its `finished` event. `is_cancelled` says when its client
        has gone: it is then dropped before it is generated (and, in a `FairBatcher`, stopped while generating)."""
        generation = Generation(request, is_cancelled)
        self.jobs.put(generation)
        return generation

    def submit(self, request: ChatRequest) -> Completion:
        """Block until the request's batch is answered."""
        return self.submit_many([request])[0]

    def submit_many(self, requests: Sequence[ChatRequest]) -> list[Completion]:
        """Queue every request at once (they may share batches with other threads'), then wait for all."""
        generations = [self.enqueue(request) for request in requests]
        for generation in generations:
            generation.finished.wait()
        return [generation.completion for generation in generations]  # type: ignore[misc]

    def _gather(self, into: list[Generation], limit: int) -> None:
        """Add to `into` what arrives within the batch window after its first job (waited for when `into` is empty),
        up to `limit`."""
        if not into:
            into.append(self.jobs.get())
        deadline = time.monotonic() + self.window_s
        while len(into) < limit:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                break
            try:
                into.append(self.jobs.get(timeout=remaining))
            except queue.Empty:
                break

    def _loop(self) -> None:
        while True:
            batch: list[Generation] = []
            self._gather(batch, self.max_batch)
            batch = [job for job in batch if not job.finish_if_cancelled()]  # (its client went while it queued)
            if not batch:
                continue
            results = self._generate([job.request for job in batch])
            if len(batch) > 1 and any(r.error for r in results):  # one bad request must not fail the others
                results = [self._generate([job.request])[0] for job in batch]
            self.batches += 1
            for job, result in zip(batch, results, strict=True):
                job.finish(result)

    def _generate(self, requests: list[ChatRequest]) -> list[Completion]:
        try:
            return self.backbone.generate(requests)
        except Exception as exc:  # noqa: BLE001 - a crash becomes an error reply, the server lives on
            return [Completion(error=f"{exc.__class__.__name__}: {exc}") for _ in requests]


SLICE_TOKENS = 8
"""Fewest tokens a cohort generates before it may pause for a shorter newcomer (fewer pauses, less overhead)."""
MAX_PAUSED = 2
"""Most started cohorts held paused at once: each holds its KV cache, so past this a newcomer waits instead."""


class FairBatcher(MicroBatcher):
    """Batches that do not hold each other up: requests arriving together start as one cohort (up to `max_batch`,
    of one `Backbone.batch_key`); the cohort with the fewest tokens left runs, and pauses between decoding steps
    (keeping its KV cache) when a request arrives that needs fewer tokens than it has left, so a 3-token request
    is not held behind a 600-token one. A running cohort takes no newcomers; requests waiting for one start together
    (cohorts not yet started are formed again with each arrival). A cohort member that finishes is answered at once;
    one whose client has gone is dropped before it starts or stopped within a step. On a backbone that cannot pause
    (the default `Backbone.generate_slice`) each cohort is generated whole, as in `MicroBatcher`."""

    def __init__(self, backbone: Backbone, max_batch: int = 16, batch_window_ms: float = 20.0,
                 slice_tokens: int = SLICE_TOKENS) -> None:
        self.slice_tokens = slice_tokens
        self.pauses = 0
        self._waiting: list[Generation] = []  # taken off the queue, not yet in a cohort
        super().__init__(backbone, max_batch, batch_window_ms)

    def _loop(self) -> None:
        cohorts: list[list[Generation]] = []  # not finished: paused, or not yet started
        while True:
            if cohorts:  # (something to do now: take what has arrived, without waiting)
                self._drain()
            else:
                self._gather(self._waiting, self.max_batch)
            cohorts = [live for live in ([g for g in c if not g.finish_if_cancelled()] for c in cohorts) if live]
            # (cohorts not yet started are grouped again with the newcomers: requests that waited apart start
            # together; a started cohort holds its KV cache and cannot take new rows)
            started = [c for c in cohorts if _is_started(c)]
            queued = [g for c in cohorts if not _is_started(c) for g in c]
            cohorts = started + self._cohorts(queued + [g for g in self._waiting if not g.finish_if_cancelled()])
            self._waiting = []
            if not cohorts:
                continue
            current = min(cohorts, key=_tokens_left)
            cohorts.remove(current)
            paused = sum(1 for c in cohorts if _is_started(c))
            self._run(current, self._pause_rule(current, paused))
            self.batches += 1
            rest = [g for g in current if not g.finished.is_set()]
            if rest:
                cohorts.append(rest)

    def _drain(self) -> None:
        while True:
            try:
                self._waiting.append(self.jobs.get_nowait())
            except queue.Empty:
                return

    def _cohorts(self, arrived: list[Generation]) -> list[list[Generation]]:
        """New cohorts: the arrivals by batch key, shortest first, `max_batch` at most each."""
        by_key: dict[object, list[Generation]] = {}
        for generation in sorted(arrived, key=lambda g: g.request.max_tokens):
            by_key.setdefault(self.backbone.batch_key(generation.request), []).append(generation)
        return [group[i : i + self.max_batch] for group in by_key.values()
                for i in range(0, len(group), self.max_batch)]

    def _pause_rule(self, cohort: list[Generation], paused: int) -> Callable[[int], bool]:
        """`should_pause` for one run of `cohort`: after `slice_tokens` steps, pause when a newcomer needs fewer
        tokens than the cohort has left (never when `MAX_PAUSED` cohorts are paused already)."""
        left = _tokens_left(cohort)

        def should_pause(steps: int) -> bool:
            if steps < self.slice_tokens or paused >= MAX_PAUSED:
                return False
            self._drain()  # (this thread runs the loop too: no lock needed)
            shortest = min((g.request.max_tokens for g in self._waiting if not g.is_cancelled()), default=None)
            if shortest is None or shortest >= left - steps:
                return False
            self.pauses += 1
            return True

        return should_pause

    def _run(self, cohort: list[Generation], should_pause: Callable[[int], bool]) -> None:
        try:
            self.backbone.generate_slice(cohort, should_pause)
        except Exception as exc:  # noqa: BLE001 - a crash becomes an error reply, the server lives on
            unstarted = [g for g in cohort if not g.finished.is_set() and g.state is None and not g.token_ids]
            if len(cohort) > 1 and len(unstarted) == len(cohort):  # one bad request must not fail the others
                for generation in cohort:
                    self._run([generation], should_pause)
                return
            logger.warning("generation failed for %d requests: %r", len(cohort), exc)
            for generation in cohort:
                if not generation.finished.is_set():
                    generation.finish(Completion(error=f"{exc.__class__.__name__}: {exc}"))


def _tokens_left(cohort: list[Generation]) -> int:
    return max(g.remaining_tokens for g in cohort)


def _is_started(cohort: list[Generation]) -> bool:
    """Whether the cohort has generated (it is paused, holding the backbone's state)."""
    return any(g.state is not None or g.token_ids for g in cohort)


class BatchingBackbone(WrappingBackbone):
    """A backbone whose `generate` goes through a shared `MicroBatcher`: called from many threads, the requests
    are answered in shared batches. Its identity is the wrapped backbone's, so cache keys do not change."""

    def __init__(self, backbone: Backbone, max_batch: int = 16, batch_window_ms: float = 20.0) -> None:
        super().__init__(backbone)
        self.batcher = MicroBatcher(backbone, max_batch, batch_window_ms)

    def generate(self, requests: Sequence[ChatRequest]) -> list[Completion]:
        return self.batcher.submit_many(requests)
