"""Head-of-line blocking and cancellation in `medmemorybench serve`, before and after the FairBatcher, measured in one
run on the embedded SmolLM2 (the `hf` backbone on CPU, one torch thread).

For each code version (`--before_rev`'s tree, exported with `git archive`, and this working tree) it starts `serve` on
loopback and measures: (1) a `max_tokens=600` request, then after `--lead_s` a 3-token request: the short one's
latency and the long one's; (2) a `max_tokens=600` request whose client hangs up after `--lead_s`: how long the server
process goes on using CPU after the hang-up (generation running), read from /proc.

Run: .venv/bin/python scripts/bench_serve_fairness.py [--before_rev HEAD~3] [--lead_s 3]
Prints the table of docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LONG = "Write the numbers from 1 to 1000, separated by commas."  # (SmolLM2 writes all 600 tokens)
SHORT = "Say yes."
TICK = os.sysconf("SC_CLK_TCK")


def start_server(tree: Path) -> tuple[subprocess.Popen, int]:
    """`serve` of the code in `tree` on a free loopback port; returns the process and port once it listens."""
    env = {**os.environ, "PYTHONPATH": str(tree), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    process = subprocess.Popen([sys.executable, "-m", "medmemorybench.cli", "serve", "--model", "hf", "--model_args",
                                "threads=1", "--port", "0"], cwd=tree, env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL, text=True)
    for line in process.stdout:  # type: ignore[union-attr]
        found = re.search(r"http://127\.0\.0\.1:(\d+)/v1", line)
        if found:
            return process, int(found.group(1))
    raise RuntimeError(f"serve from {tree} did not start")


def body(content: str, max_tokens: int) -> bytes:
    return json.dumps({"messages": [{"role": "user", "content": content}], "max_tokens": max_tokens}).encode()


def ask(port: int, content: str, max_tokens: int) -> tuple[float, int, str]:
    """Seconds until the answer, its completion tokens and its text."""
    started = time.monotonic()
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=900)
    connection.request("POST", "/v1/chat/completions", body(content, max_tokens),
                       {"Content-Type": "application/json"})
    reply = json.loads(connection.getresponse().read())
    connection.close()
    return time.monotonic() - started, reply["usage"]["completion_tokens"], reply["choices"][0]["message"]["content"]


def cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK  # utime + stime


def busy_after_hangup(process: subprocess.Popen, port: int, lead_s: float, cap_s: float) -> float:
    """Seconds from the client's hang-up until the server's CPU falls idle (under 20 % of a core over 0.5 s)."""
    connection = socket.create_connection(("127.0.0.1", port))
    data = body(LONG, 600)
    connection.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                       + f"Content-Length: {len(data)}\r\n\r\n".encode() + data)
    time.sleep(lead_s)
    connection.close()
    hung_up = time.monotonic()
    while time.monotonic() - hung_up < cap_s:
        before, at = cpu_s(process.pid), time.monotonic()
        time.sleep(0.5)
        if (cpu_s(process.pid) - before) / (time.monotonic() - at) < 0.2:
            return at - hung_up
    return float("inf")


def measure(tree: Path, lead_s: float, cap_s: float) -> dict[str, float | str]:
    process, port = start_server(tree)
    try:
        ask(port, SHORT, 3)  # (warm: the model loaded, the first pass made)
        long_result: list[tuple[float, int, str]] = []
        worker = threading.Thread(target=lambda: long_result.append(ask(port, LONG, 600)))
        worker.start()
        time.sleep(lead_s)
        short_s, _, _ = ask(port, SHORT, 3)
        worker.join()
        long_s, long_tokens, long_text = long_result[0]
        busy_s = busy_after_hangup(process, port, lead_s, cap_s)
        return {"short_s": short_s, "long_s": long_s, "long_tokens": long_tokens, "long_text": long_text,
                "busy_after_hangup_s": busy_s}
    finally:
        process.terminate()
        process.wait(30)


def export(rev: str, into: Path) -> Path:
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev], check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before_rev", default=None, help="git revision of the code before (omit: after only)")
    parser.add_argument("--lead_s", type=float, default=3.0, help="seconds the long request runs before the other")
    parser.add_argument("--cap_s", type=float, default=120.0, help="longest wait for the server to fall idle")
    args = parser.parse_args()
    load = os.getloadavg()[0]
    results: dict[str, dict] = {}
    with tempfile.TemporaryDirectory() as tmp:
        if args.before_rev:
            results[f"before ({args.before_rev})"] = measure(export(args.before_rev, Path(tmp)), args.lead_s,
                                                             args.cap_s)
        results["after (this tree)"] = measure(ROOT, args.lead_s, args.cap_s)
    print(f"load average at the start {load:.2f}, {os.cpu_count()} CPUs; one torch thread per server")
    print("| code | 3-token request's latency | 600-token request's latency (tokens) | CPU busy after a hang-up |")
    print("|---|---|---|---|")
    for name, r in results.items():
        print(f"| {name} | {r['short_s']:.1f} s | {r['long_s']:.1f} s ({r['long_tokens']:.0f}) | "
              f"{r['busy_after_hangup_s']:.1f} s |")
    texts = {r["long_text"] for r in results.values()}
    print(f"the 600-token reply is the same text in every version: {len(texts) == 1}")
    print(json.dumps({name: {k: v for k, v in r.items() if k != "long_text"} for name, r in results.items()}))


if __name__ == "__main__":
    main()
