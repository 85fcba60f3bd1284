"""Where a sweep's shards run: a local process pool (the default), or a Ray cluster (`--executor ray`).

Both hand back `concurrent.futures.Future`s (Ray's `ObjectRef.future()`), so the driver has one loop for either.
Ray is imported only here, when asked for: the local pool needs none of it.
"""

from __future__ import annotations

import contextlib
import json
import logging
import multiprocessing
import os
import signal
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from medmemorybench.errors import InputError
from medmemorybench.files import write_atomic
from medmemorybench.sweep.shards import ShardResult, ShardTask, run_shard

EXECUTORS = ("local", "ray")
SHARD_RETRIES = 3
"""Times a shard runs again after its worker died, on either executor (a shard is rerun from its start; the cache
makes the answers it had already got free)."""


@dataclass(frozen=True)
class Resources:
    """What one shard asks of the machine it runs on."""

    cpus: float = 1.0
    gpus: float = 0.0


RAY_PROCESSES = ".ray_processes.json"
"""In a sweep's folder while its driver holds a local Ray cluster: that cluster's processes. A driver killed outright
(SIGKILL, out of memory) cannot stop them, and Ray's dashboard and runtime-env agents outlive it (seen here: about
225 MiB, still running 45 s after the kill, gone minutes later); a resume in the folder ends any still running."""


def process_started(pid: int) -> str | None:
    """The start time of a process (Linux `/proc`), which tells it from a later process given the same id."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[19]
    except (OSError, IndexError):
        return None


def descendants(root: int) -> list[int]:
    """Every process below `root` (Linux `/proc`; none elsewhere)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            parent = int((entry / "stat").read_text().rpartition(")")[2].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(parent, []).append(int(entry.name))
    out, todo = [], [root]
    while todo:
        for child in children.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


def end_left_behind(folder: Path) -> int:
    """End the processes of a local Ray cluster whose driver was killed in `folder`'s last sweep (those still
    running under the same start time); returns how many."""
    path = folder / RAY_PROCESSES
    try:
        recorded = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return 0
    ended = 0
    for pid, started in recorded if isinstance(recorded, list) else []:
        if isinstance(pid, int) and started is not None and process_started(pid) == started:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
                ended += 1
    path.unlink(missing_ok=True)
    return ended


class Executor(Protocol):
    name: str
    slots: int
    """Shards that can run at once (for the plan's wall-time estimate and the progress line)."""

    def submit(self, task: ShardTask) -> Future[ShardResult]: ...

    def record_processes(self, folder: Path) -> None:
        """Write down the processes a killed driver would leave behind (`RAY_PROCESSES`), if any."""
        ...

    def died(self, exc: BaseException) -> bool:
        """Whether a shard's exception is its worker dying (retried) rather than the shard failing."""
        ...

    def close(self, cancel: bool = False) -> None: ...


class LocalExecutor:
    """A process pool on this machine; `workers` processes, each running one shard at a time."""

    name = "local"

    def __init__(self, workers: int, resources: Resources) -> None:
        if resources.gpus:
            raise InputError("--gpus_per_task: the local executor does not place GPUs; use --executor ray, or run "
                             "one worker (--workers 1) and let the model take the GPU")
        self.slots = workers
        self._pool = self._new_pool()

    def _new_pool(self) -> ProcessPoolExecutor:
        # spawn: a forked copy of a driver that holds threads (progress, torch) can deadlock
        return ProcessPoolExecutor(max_workers=self.slots, mp_context=multiprocessing.get_context("spawn"))

    def submit(self, task: ShardTask) -> Future[ShardResult]:
        try:
            return self._pool.submit(run_shard, task)
        except BrokenProcessPool:  # a worker died since: the pool is gone, a new one takes the shard
            self._pool = self._new_pool()
            return self._pool.submit(run_shard, task)

    def record_processes(self, folder: Path) -> None:
        pass  # (a pool's workers end when their driver's pipe closes)

    def died(self, exc: BaseException) -> bool:
        return isinstance(exc, BrokenProcessPool)

    def close(self, cancel: bool = False) -> None:
        if cancel:  # (Ctrl-C: shards running are stopped, not waited for)
            for process in list(getattr(self._pool, "_processes", {}).values()):
                process.terminate()
        self._pool.shutdown(wait=not cancel, cancel_futures=cancel)


class RayExecutor:
    """Shards as Ray tasks: each asks for `resources` (a GPU for an in-process vLLM backbone), and Ray runs it again
    when its worker dies (`SHARD_RETRIES`). `address`: `local` starts a cluster on this machine (stopped at the end);
    `auto` or `HOST:PORT` attaches to a running one (`ray start --head`), which is left running."""

    name = "ray"

    def __init__(self, address: str, workers: int | None, resources: Resources) -> None:
        os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")  # (no hourly report to usage-stats.ray.io)
        try:
            import ray
        except ModuleNotFoundError:
            raise InputError("--executor ray: Ray is not installed; pip install -e '.[ray]'") from None
        options = {"include_dashboard": False, "logging_level": logging.ERROR, "log_to_driver": False}
        self._address, self._record = address, None
        self._owned = not ray.is_initialized()  # (a caller's own connection, e.g. a notebook's, is used and kept)
        if address != "local" and workers:
            raise InputError("--workers: an attached Ray cluster has the workers its nodes were started with")
        try:
            if self._owned and address == "local":
                ray.init(address="local", num_cpus=workers or os.cpu_count() or 1, num_gpus=0 if not resources.gpus
                         else None, **options)
            elif self._owned:
                ray.init(address=address, **options)
        except ConnectionError as exc:
            raise InputError(f"--ray_address {address}: no Ray cluster there ({str(exc).splitlines()[0]}); start "
                             "one with `ray start --head`, or use --ray_address local") from None
        self._ray = ray  # (before anything below may need `close`)
        available = ray.cluster_resources()
        for kind, asked in (("CPU", resources.cpus), ("GPU", resources.gpus)):
            if asked > available.get(kind, 0):  # (an infeasible task would wait forever, silently)
                self.close()
                raise InputError(f"each shard asks for {asked:g} {kind} but the Ray cluster has "
                                 f"{available.get(kind, 0):g}; lower --{kind.lower()}s_per_task or add nodes")
        self.slots = max(1, int(available.get("CPU", 1) // resources.cpus))
        if resources.gpus:
            self.slots = min(self.slots, max(1, int(available.get("GPU", 0) // resources.gpus)))
        self._remote = ray.remote(max_retries=SHARD_RETRIES)(run_shard).options(num_cpus=resources.cpus,
                                                                              num_gpus=resources.gpus)

    def submit(self, task: ShardTask) -> Future[ShardResult]:
        return self._remote.remote(task).future()

    def record_processes(self, folder: Path) -> None:
        if not self._owned or self._address != "local":
            return
        self._record = folder / RAY_PROCESSES
        processes = [[pid, process_started(pid)] for pid in descendants(os.getpid())]
        write_atomic(self._record, json.dumps(processes) + "\n")

    def died(self, exc: BaseException) -> bool:
        return False  # (Ray has run it again SHARD_RETRIES times already: what reaches the driver is final)

    def close(self, cancel: bool = False) -> None:
        if self._owned:
            self._ray.shutdown()  # (from an attached cluster, this only disconnects the driver)
        if self._record is not None:
            self._record.unlink(missing_ok=True)


def make_executor(name: str, workers: int | None, resources: Resources, ray_address: str) -> LocalExecutor | \
        RayExecutor:
    """The executor `--executor` names, started."""
    if name not in EXECUTORS:
        raise InputError(f"--executor: '{name}' is not one of {', '.join(EXECUTORS)}")
    slots = local_slots(workers, resources)
    if name == "local":
        return LocalExecutor(slots, resources)
    return RayExecutor(ray_address, workers, resources)


def local_slots(workers: int | None, resources: Resources) -> int:
    """Shards at once on this machine: `--workers`, else its CPUs over each shard's (both checked)."""
    if workers is not None and (isinstance(workers, bool) or workers < 1):
        raise InputError(f"--workers: {workers} is not a number of processes (at least 1)")
    if resources.cpus <= 0 or resources.gpus < 0:
        raise InputError("--cpus_per_task must be above 0 and --gpus_per_task at least 0")
    return workers or max(1, int((os.cpu_count() or 1) // resources.cpus))
