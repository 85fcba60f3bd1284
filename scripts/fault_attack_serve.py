"""Issue 28's attacks on `medmemorybench serve` for `scripts/bench_faults.py --only attacks` (the rest are in
`fault_attacks.py`), each against `serve --model hf --model_args threads=1` (the embedded SmolLM2 on loopback,
started with the helpers of `scripts/bench_serve_fairness.py`) over raw sockets and HTTP:

- head-of-line: a `max_tokens=600` request, after 3 s a 3-token one; then the long request's client hangs up and the
  server's CPU is read from /proc until idle;
- hostile clients: 50 connections sending one header byte a second (never a whole request), a 3-token request
  while they hang on, then a `/v1/embeddings` flood of 100,000 inputs and client mistakes (an empty stop string, a
  seed of 1e30 or -1, `max_tokens` past the cap, a JSON schema that is no schema): every slow connection closed at
  the request deadline (`serve.REQUEST_DEADLINE_S`), its thread gone, each flood and mistake a 4xx with a reason.
"""

from __future__ import annotations

import http.client
import json
import select
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from fault_attacks import ROOT, Row

from medmemorybench.serve import REQUEST_DEADLINE_S


def _fairness():  # noqa: ANN202 - the bench module, imported from scripts/ as bench_faults imports this one
    sys.path.insert(0, str(ROOT / "scripts"))
    import bench_serve_fairness

    return bench_serve_fairness


def serve_head_of_line(lead_s: float = 3.0) -> Row:
    fairness = _fairness()
    process, port = fairness.start_server(ROOT)
    try:
        fairness.ask(port, fairness.SHORT, 3)  # (warm: the model loaded, the first pass made)
        connection = socket.create_connection(("127.0.0.1", port))
        data = fairness.body(fairness.LONG, 600)
        connection.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                           + f"Content-Length: {len(data)}\r\n\r\n".encode() + data)
        cpu, at = fairness.cpu_s(process.pid), time.monotonic()
        time.sleep(lead_s)
        busy = (fairness.cpu_s(process.pid) - cpu) / (time.monotonic() - at)  # (the long one is generating)
        short_s, tokens, _ = fairness.ask(port, fairness.SHORT, 3)
        connection.close()
        stopped_s = stopped_after(fairness, process, cap_s=30)
    finally:
        process.terminate()
        process.wait(30)
    passed = busy > 0.1 and short_s < 10 and stopped_s <= 1.0  # (under 0.1 core: too loaded a machine to tell)
    return Row("serve head-of-line", "3-token reply within 10 s behind a 600-token one; generation stops within "
               "1 s of the hang-up",
               f"long request busy {busy:.2f} core; 3-token reply ({tokens} tokens) in {short_s:.2f} s; after the "
               f"hang-up its last CPU tick at {stopped_s:.2f} s (none in the 1 s after)", passed, 0)


def stopped_after(fairness, process: subprocess.Popen, cap_s: float, quiet_s: float = 1.0) -> float:  # noqa: ANN001
    """Seconds from the hang-up to the server's last CPU tick (10 ms of /proc's CPU time) before `quiet_s` with at
    most one more, read every 50 ms: when its generation stopped. (Not 0.5 s windows under a share of a core, as
    bench_serve_fairness reads it: on a loaded machine the server gets a fraction of a core, and the window's
    edge decided the figure.)"""
    hung_up = time.monotonic()
    last_tick_at, last_cpu = hung_up, fairness.cpu_s(process.pid)
    while time.monotonic() - hung_up < cap_s:
        time.sleep(0.05)
        cpu, now = fairness.cpu_s(process.pid), time.monotonic()
        if cpu - last_cpu > 0.015:  # (more than one tick since the last: still working)
            last_tick_at, last_cpu = now, cpu
        elif now - last_tick_at >= quiet_s:
            return last_tick_at - hung_up
    return float("inf")


def proc_status(pid: int, field: str) -> int:
    """A number of /proc/PID/status (`Threads`, `VmRSS` in kB)."""
    line = next(line for line in Path(f"/proc/{pid}/status").read_text().splitlines() if line.startswith(field + ":"))
    return int(line.split()[1])


def post(port: int, path: str, body: bytes) -> tuple[int, str]:
    """Status and error message (or the first 60 characters of the body) of one POST."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    connection.request("POST", path, body, {"Content-Type": "application/json"})
    reply = connection.getresponse()
    data = reply.read()
    connection.close()
    try:
        message = json.loads(data).get("error", {}).get("message", "")
    except (json.JSONDecodeError, AttributeError):
        message = data[:60].decode(errors="replace")
    return reply.status, message


def trickle(sockets: list[socket.socket], byte_every_s: float, cap_s: float, meanwhile: Callable[[], None],
            meanwhile_at_s: float) -> dict[int, float]:
    """Send each connection one header byte every `byte_every_s` until the server closes it (EOF or reset); returns
    each one's seconds from its first bytes to its close. `meanwhile()` is called once, `meanwhile_at_s` in."""
    opened, closed, sent_at, called = time.monotonic(), {}, 0.0, False
    for connection in sockets:
        connection.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n")
        connection.setblocking(False)
    while len(closed) < len(sockets) and time.monotonic() - opened < cap_s:
        now = time.monotonic() - opened
        if not called and now >= meanwhile_at_s:
            meanwhile()
            called = True
        live = {i: c for i, c in enumerate(sockets) if i not in closed}
        readable, _, _ = select.select(list(live.values()), [], [], 0.1)
        for i, connection in live.items():
            try:
                if connection in readable and connection.recv(4096) == b"":
                    closed[i] = time.monotonic() - opened
                elif now - sent_at >= byte_every_s:
                    connection.send(b"X")
            except (BlockingIOError, InterruptedError):
                continue
            except OSError:  # (reset, or a broken pipe: closed)
                closed[i] = time.monotonic() - opened
        if now - sent_at >= byte_every_s:
            sent_at = now
    for connection in sockets:
        connection.close()
    return closed


MISTAKES = {
    "stop [\"\"]": {"stop": [""]},
    "seed 1e30": {"seed": 1e30},
    "seed -1": {"seed": -1},
    "max_tokens 2000": {"max_tokens": 2000},
    "a schema that is no schema": {"response_format": {"type": "json_schema", "json_schema": {
        "name": "x", "schema": {"type": "nonsense", "properties": 5}}}},
}


def hostile_clients(connections: int = 50, byte_every_s: float = 1.0) -> Row:
    fairness = _fairness()
    process, port = fairness.start_server(ROOT)
    try:
        fairness.ask(port, fairness.SHORT, 3)  # (warm)
        threads_before, rss_before = proc_status(process.pid, "Threads"), proc_status(process.pid, "VmRSS")
        sockets = [socket.create_connection(("127.0.0.1", port)) for _ in range(connections)]
        seen: dict = {}

        def meanwhile() -> None:  # (the server while the slow connections hang on)
            seen.update(short=fairness.ask(port, fairness.SHORT, 3)[0], threads=proc_status(process.pid, "Threads"))

        closed = trickle(sockets, byte_every_s, REQUEST_DEADLINE_S + 30, meanwhile, meanwhile_at_s=5.0)
        time.sleep(1.0)  # (the handlers' threads end)
        threads_after = proc_status(process.pid, "Threads")
        flood = post(port, "/v1/embeddings", json.dumps({"input": ["a"] * 100_000}).encode())
        rss_after = proc_status(process.pid, "VmRSS")
        mistakes = {name: post(port, "/v1/chat/completions", json.dumps(
            {"messages": [{"role": "user", "content": "hi"}], **extra}).encode()) for name, extra in MISTAKES.items()}
        alive = fairness.ask(port, fairness.SHORT, 3)[1] > 0
    finally:
        process.terminate()
        process.wait(30)
    times = sorted(closed.values())
    first_s, last_s = (times[0], times[-1]) if times else (0.0, 0.0)
    at_deadline = len(times) == connections and REQUEST_DEADLINE_S - 1 <= first_s <= last_s <= REQUEST_DEADLINE_S + 5
    passed = (at_deadline and seen.get("short", 99) < 10 and threads_after <= threads_before + 2
              and flood[0] in (400, 413) and all(status == 400 for status, _ in mistakes.values()) and alive)
    wrong = [f"{name}: {status} {message[:60]}" for name, (status, message) in mistakes.items() if status != 400]
    return Row("serve hostile clients", f"{connections} slow-header connections closed at the {REQUEST_DEADLINE_S} s "
               "deadline, their threads gone, a 3-token request answered meanwhile; 100,000 embedding inputs "
               "413/400; client mistakes 400 with a reason; the server still answers",
               f"{len(times)} of {connections} closed, {first_s:.1f}-{last_s:.1f} s "
               f"after their first bytes; threads {threads_before} before, {seen.get('threads', '-')} during, "
               f"{threads_after} after; 3-token reply during it in {seen.get('short', float('nan')):.2f} s; "
               f"embeddings flood: {flood[0]} ({flood[1][:60]}), RSS {rss_before / 1024:.0f} -> "
               f"{rss_after / 1024:.0f} MB; mistakes: {', '.join(str(s) for s, _ in mistakes.values())}"
               + (f" ({'; '.join(wrong)})" if wrong else "") + f"; answers after: {alive}", passed, 0)
