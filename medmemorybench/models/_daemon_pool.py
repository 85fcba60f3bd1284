"""Blocking calls (HTTP requests) on daemon threads, so that Ctrl-C ends a run within a moment.

`ThreadPoolExecutor` joins its workers when the interpreter exits, so an interrupted run would wait for
every request in flight to finish or time out (a minute each, times the retries); the process exits
without waiting for daemon threads.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Sequence
from typing import TypeVar

Item = TypeVar("Item")
Result = TypeVar("Result")


def map_each(call: Callable[[Item], Result], items: Sequence[Item], workers: int,
             on_done: Callable[[int, Result], None]) -> list[Result]:
    """`call` on every item on up to `workers` daemon threads; `on_done(index, result)` runs in the calling
    thread as each result arrives. Results come back in the items' order. An exception in a call, or an
    interrupt while waiting, is raised at once; the calls still running are abandoned, none is started after."""
    todo: queue.SimpleQueue = queue.SimpleQueue()
    for pair in enumerate(items):
        todo.put(pair)
    done: queue.SimpleQueue = queue.SimpleQueue()
    stop = threading.Event()

    def work() -> None:
        while not stop.is_set():
            try:
                index, item = todo.get_nowait()
            except queue.Empty:
                return
            try:
                done.put((index, call(item), None))
            except BaseException as exc:  # noqa: BLE001 - handed to the calling thread, raised there
                done.put((index, None, exc))
                return

    for number in range(min(workers, len(items))):
        threading.Thread(target=work, name=f"request-{number}", daemon=True).start()
    out: list[Result | None] = [None] * len(items)
    try:
        for _ in items:
            index, result, error = done.get()  # (a signal interrupts this wait)
            if error is not None:
                raise error
            out[index] = result
            on_done(index, result)
    finally:
        stop.set()
    return out  # type: ignore[return-value]
