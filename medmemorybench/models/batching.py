"""Micro-batching: requests that arrive from many threads at about the same time go to the backbone as one
batch. `serve` answers its HTTP clients through it; the runner's memory LLM does when patients are ingested
concurrently (`--memory_concurrency`), so their construction calls share batches.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from medmemorybench.models.base import Backbone, ChatRequest, Completion, WrappingBackbone


@dataclass
class _Job:
    request: ChatRequest
    done: threading.Event = field(default_factory=threading.Event)
    result: Completion | None = None


class MicroBatcher:
    """Groups concurrent requests into batches for one backbone."""

    def __init__(self, backbone: Backbone, max_batch: int = 16, batch_window_ms: float = 20.0) -> None:
        self.backbone, self.max_batch, self.window_s = backbone, max_batch, batch_window_ms / 1000
        self.jobs: queue.Queue[_Job] = queue.Queue()
        self.batches = 0
        threading.Thread(target=self._loop, daemon=True).start()

    def submit(self, request: ChatRequest) -> Completion:
        """Block until the request's batch is answered."""
        return self.submit_many([request])[0]

    def submit_many(self, requests: Sequence[ChatRequest]) -> list[Completion]:
        """Queue every request at once (they may share batches with other threads'), then wait for all."""
        jobs = [_Job(request) for request in requests]
        for job in jobs:
            self.jobs.put(job)
        for job in jobs:
            job.done.wait()
        return [job.result for job in jobs]  # type: ignore[misc]

    def _loop(self) -> None:
        while True:
            batch = [self.jobs.get()]
            deadline = time.monotonic() + self.window_s
            while len(batch) < self.max_batch:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    break
                try:
                    batch.append(self.jobs.get(timeout=remaining))
                except queue.Empty:
                    break
            results = self._generate([job.request for job in batch])
            if len(batch) > 1 and any(r.error for r in results):  # one bad request must not fail the others
                results = [self._generate([job.request])[0] for job in batch]
            self.batches += 1
            for job, result in zip(batch, results, strict=True):
                job.result = result
                job.done.set()


    def _generate(self, requests: list[ChatRequest]) -> list[Completion]:
        try:
            return self.backbone.generate(requests)
        except Exception as exc:  # noqa: BLE001 - a crash becomes an error reply, the server lives on
            return [Completion(error=f"{exc.__class__.__name__}: {exc}") for _ in requests]


class BatchingBackbone(WrappingBackbone):
    """A backbone whose `generate` goes through a shared `MicroBatcher`: called from many threads, the requests
    are answered in shared batches. Its identity is the wrapped backbone's, so cache keys do not change."""

    def __init__(self, backbone: Backbone, max_batch: int = 16, batch_window_ms: float = 20.0) -> None:
        super().__init__(backbone)
        self.batcher = MicroBatcher(backbone, max_batch, batch_window_ms)

    def generate(self, requests: Sequence[ChatRequest]) -> list[Completion]:
        return self.batcher.submit_many(requests)
