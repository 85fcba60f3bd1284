"""The fault suite at scale, through the CLI as a user runs it: `medmemorybench run --model openai` against the
fault-injecting server of `tests/faults.py`, at a share of mixed faults over several seeds, then at 100 %; then
SIGKILLs at random instants (also during a resume's own start) followed by `--resume`, compared with a clean run;
then Ctrl-C while every request hangs; then every case of the bad-input table (`tests/bad_inputs.py`), one
process each; then issue 28's attacks (`--only attacks`, `scripts/fault_attacks.py`), each end to end through the
command as an attacker would: a forged run on a hidden-gold release, a tampered and a copied bundle, a persona_id
that is a path, a server echoing the API key in its 401 body, deeply nested JSON and YAML, a run on another build
handed in as the release's (and its build edited), and `serve`'s head-of-line latency on the embedded SmolLM2.

Run: .venv/bin/python scripts/bench_faults.py [--seeds 11] [--share 0.2] [--kills 20] [--only inputs attacks ...]
Prints the figures of docs/benchmarks.md (runs completed, faults served by kind, errors recorded, tracebacks,
samples lost / duplicated / changed after the kills, seconds from SIGINT to exit, bad inputs refused clearly, and
one row per attack: expected, observed, pass/fail, seconds). Exits 1 when an attack fails.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # (tests/faults.py holds the server)

from tests.bad_inputs import CASES, Workspace, markers, problems, run_in_child  # noqa: E402
from tests.faults import fault_server  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from fault_attacks import print_table, run_attacks  # noqa: E402

CLI = [sys.executable, "-m", "medmemorybench.cli"]
ENV = {**os.environ, "HF_HUB_OFFLINE": "1"}


def cli_run(url: str, data: Path, out: Path, *extra: str) -> subprocess.Popen:
    args = f"model=m,base_url={url},max_retries=1,backoff_s=0.01,timeout_s=1.0,concurrency=4"
    return subprocess.Popen([*CLI, "run", "--tasks", "medmemorybench_efficient", "--memory", "bm25", "--model",
                             "openai", "--model_args", args, "--dataset_path", str(data), "--output_path", str(out),
                             "--no_cache", *extra], env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)


def samples(out: Path) -> list[dict]:
    path = out / "samples.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()] if path.exists() else []


def stable(sample: dict) -> dict:
    """A sample without what depends on the machine's speed (latency, the memory's seconds)."""
    out = {k: v for k, v in sample.items() if k not in ("latency_ms",)}
    if out.get("memory_cost"):
        out["memory_cost"] = {k: v for k, v in out["memory_cost"].items() if not k.endswith("_s")}
    return out


def faults(data: Path, work: Path, seeds: int, share: float) -> None:
    completed, tracebacks, served, errors, answered = 0, 0, Counter(), 0, 0
    for seed in range(seeds):
        with fault_server(share, seed) as (url, server):
            process = cli_run(url, data, work / f"faults{seed}", "--max_error_rate", "1")
            _, stderr = process.communicate()
        tracebacks += "Traceback" in stderr
        completed += process.returncode == 0
        served.update(server.served)
        got = samples(work / f"faults{seed}")
        errors += sum(s["status"] == "error" for s in got)
        answered += len(got)
    print(f"{seeds} runs at {share:.0%} mixed faults: {completed} completed (exit 0), tracebacks {tracebacks}; "
          f"{answered} samples, {errors} recorded as errors (never scored)")
    print("requests served by kind: " + ", ".join(f"{k} {v}" for k, v in sorted(served.items())))
    with fault_server(1.0, 99) as (url, _):
        process = cli_run(url, data, work / "all_fail")
        _, stderr = process.communicate()
    print(f"100 % faults: exit {process.returncode}, stderr: {stderr.strip().splitlines()[-1][:160]!r}")


def kills(data: Path, work: Path, count: int, seed: int) -> None:
    rng = random.Random(seed)
    with fault_server(0.0, 0) as (url, _):
        clean = work / "clean"
        cli_run(url, data, clean).communicate()
        killed, out, resumes, empty_seen = 0, work / "killed", 0, 0
        started = time.perf_counter()
        while True:
            process = cli_run(url, data, out, *(["--resume"] if (out / "samples.jsonl").exists() else []))
            if killed < count:
                time.sleep(rng.uniform(0.0, 4.0))  # from the process start: imports, resume repair, answering
                if process.poll() is None:
                    process.send_signal(signal.SIGKILL)
                    killed += 1
                process.communicate()
                path = out / "samples.jsonl"
                empty_seen += path.exists() and path.stat().st_size == 0 and bool(samples(clean))
                resumes += 1
                continue
            _, stderr = process.communicate()
            if process.returncode != 0:
                print(f"final resume failed: exit {process.returncode}: {stderr.strip()[-300:]}")
            break
    mine, theirs = samples(out), samples(clean)
    keys = [(s["task"], s["query_id"]) for s in mine]
    by_key = {(s["task"], s["query_id"]): stable(s) for s in theirs}
    lost = len(set(by_key) - set(keys))
    changed = sum(1 for s in mine if by_key.get((s["task"], s["query_id"])) != stable(s))
    print(f"{killed} SIGKILLs at random instants over {resumes} starts ({time.perf_counter() - started:.0f} s), then "
          f"--resume: {len(mine)} samples vs {len(theirs)} clean; lost {lost}, "
          f"duplicated {len(keys) - len(set(keys))}, changed {changed}; "
          f"samples file seen empty after a kill: {empty_seen}")


def interrupts(data: Path, work: Path, tries: int = 3) -> None:
    """Seconds from SIGINT to exit while four requests hang (a minute each, inside the client's timeout)."""
    took = []
    for attempt in range(tries):
        with fault_server(1.0, attempt, kinds=["hang"], hang_s=60) as (url, server):
            args = f"model=m,base_url={url},max_retries=0,timeout_s=90,concurrency=4"
            process = subprocess.Popen([*CLI, "run", "--tasks", "medmemorybench_efficient", "--memory", "bm25",
                                        "--model", "openai", "--model_args", args, "--dataset_path", str(data),
                                        "--output_path", str(work / f"interrupt{attempt}"), "--no_cache"],
                                       env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            while sum(server.served.values()) < 4 and process.poll() is None:
                time.sleep(0.05)
            sent = time.perf_counter()
            process.send_signal(signal.SIGINT)
            process.communicate(timeout=120)
            took.append(time.perf_counter() - sent)
    print(f"Ctrl-C with 4 requests hanging: exit {process.returncode}, stopped in "
          + ", ".join(f"{t:.2f}" for t in took) + " s")


def bad_inputs(data: Path, work: Path) -> None:
    """Every case of the bad-input table through the command, one process each."""
    found, failed, tracebacks, silent, started = [], 0, 0, 0, time.perf_counter()
    for number, case in enumerate(CASES):
        workspace = Workspace(work / f"input{number}", data)
        workspace.root.mkdir()
        env = {"MEDMEMORYBENCH_CACHE": str(work / "input-cache"), **case.env(workspace)}
        args = case.args(workspace)
        before = markers(workspace.root)
        outcome = run_in_child(args, env, case.file_size_limit, work)
        tracebacks += outcome.traceback
        silent += outcome.exit_code == 0
        wrong = problems(case, workspace, outcome, before)
        failed += bool(wrong)
        found += wrong
    print(f"bad inputs: {len(CASES)} cases in {time.perf_counter() - started:.0f} s; refused clearly "
          f"{len(CASES) - failed}; tracebacks {tracebacks}; silent acceptances "
          f"{silent}")
    for problem in found:
        print(f"  {problem}")


SECTIONS = ("faults", "kills", "interrupts", "inputs", "attacks")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seeds", type=int, default=11)
    parser.add_argument("--share", type=float, default=0.2)
    parser.add_argument("--kills", type=int, default=20)
    parser.add_argument("--only", nargs="+", choices=SECTIONS, default=list(SECTIONS))
    args = parser.parse_args()
    print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} at the start")
    failed = False
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        data = work / "data" / "medmemorybench"
        if set(args.only) - {"attacks"}:  # (the attacks make tiny builds of their own)
            subprocess.run([*CLI, "build", "--seed", "0", "--personas", "2", "--health_sessions", "10",
                            "--family_sessions", "10", "--out", str(work / "data")], env=ENV, check=True,
                           capture_output=True)
        if "faults" in args.only:
            faults(data, work, args.seeds, args.share)
        if "kills" in args.only:
            kills(data, work, args.kills, seed=0)
        if "interrupts" in args.only:
            interrupts(data, work)
        if "inputs" in args.only:
            bad_inputs(data, work)
        if "attacks" in args.only:
            started = time.perf_counter()
            rows = run_attacks(work / "attacks")
            print_table(rows)
            failed = not all(row.passed for row in rows)
            print(f"attacks: {sum(row.passed for row in rows)} of {len(rows)} passed in "
                  f"{time.perf_counter() - started:.0f} s")
    if failed:
        sys.exit(1)


if __name__ == "__main__":
    main()
