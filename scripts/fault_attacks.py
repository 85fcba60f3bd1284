"""The `attacks` group of `scripts/bench_faults.py`: issue 28's attacks, each run end to end as an attacker would,
through the `medmemorybench` command (and `serve` over HTTP), never through test code.

1. a forged run on a hidden-gold release (answers = the questions' own text or invented, from a loopback "model"):
   scored against the sealed gold as what it is; a claimed score is refused by `submit`;
2. a tampered bundle (an edited summary, `submission.json` re-hashed) and a copied bundle (the same samples under
   another name): both left out of the board with a reason, the page still written;
3. a dataset whose persona_id is an absolute path or a `../` traversal: `validate` and `run` refuse it, nothing
   outside `--output_path` is touched (a sentinel folder survives);
4. a server whose 401 body echoes the Authorization header (and the base URL's `user:pw@`): one line, exit 2, no
   secret in any file of the run or on the terminal;
5. deeply nested JSON in a run's samples, a bundle's `samples.jsonl` and `system.json`, and a `--system` YAML: one
   line, exit 2, and the board still written;
6. deep nesting in the other files the commands read: a run's run.json, summary.json and a stray `{"a": 1}` samples
   line (`run --resume`, `report`), a build's metadata (`validate`, `run`);
7. a run on another build (a 1-patient private build of another seed) handed in as the release's, then its build
   edited to agree with it (`fault_attack_builds.py`): never a ranked row; with `--other_release`, in its own table;
   the edited build refused;
8. `serve` head-of-line: a 3-token request behind a `max_tokens=600` one on the embedded SmolLM2, then the long
   request's client hangs up (`fault_attack_serve.py`, as the next);
9. `serve` and hostile clients: 50 slow-header connections, a 100,000-input embeddings flood, client mistakes.

Each attack is one row: attack, expected, observed, pass/fail, seconds (`run_attacks` returns them).
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CLI = [sys.executable, "-m", "medmemorybench.cli"]
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep),
       "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "COLUMNS": "400"}
TINY = ["--personas", "1", "--encounters", "20", "--health_sessions", "3", "--family_sessions", "3", "--language",
        "en", "--no-register", "--allow_audit_failures"]
DEEP_JSON = "[" * 30_000 + "]" * 30_000  # (60 KB: inside every size limit, far past any parser's recursion)
INVENTED = ["5 mg", "yes", "metformin", "A, C", "three weeks ago", "no"]


@dataclass
class Row:
    """One attack's line of the table."""

    attack: str
    expected: str
    observed: str
    passed: bool
    seconds: float


def cli(*args: str, env: dict | None = None, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([*CLI, *args], env={**ENV, **(env or {})}, capture_output=True, text=True,
                          timeout=timeout)


def errors(result: subprocess.CompletedProcess) -> list[str]:
    """The `error:` lines of a command's stderr (a clear refusal is exactly one, and no traceback)."""
    return [line for line in result.stderr.splitlines() if line.startswith("error:")]


def is_one_line(result: subprocess.CompletedProcess, code: int = 2) -> bool:
    return result.returncode == code and len(errors(result)) == 1 and "Traceback" not in result.stderr


def short(text: str, width: int = 90) -> str:
    """`text` on one line for the table: paths to their last part, at most `width` characters."""
    text = re.sub(r"(?<![\w.-])(?:/[^\s/:']+)+/([^\s/:']+)", r"…/\1", " ".join(text.split())).replace("|", "/")
    return text if len(text) <= width else text[:width - 1] + "…"


def left_out(result: subprocess.CompletedProcess) -> list[str]:
    return [line[len("left out: "):] for line in result.stderr.splitlines() if line.startswith("left out: ")]


def page_rows(html_dir: Path) -> list[dict]:
    """The run rows of a written board, read from the JSON the page embeds (none when no page was written)."""
    if not (html_dir / "index.html").exists():
        return []
    page = (html_dir / "index.html").read_text(encoding="utf-8")
    found = re.search(r'<script[^>]*type="application/json"[^>]*>(.*?)</script>', page, re.S)
    return [row for row in json.loads(found.group(1))["rows"] if row["kind"] == "run"] if found else []


def bundles(results: Path) -> set[Path]:
    return set(results.glob("submissions/*/*/*")) if results.exists() else set()


def submit(run_dir: Path, results: Path, release: Path, *extra: str) -> tuple[subprocess.CompletedProcess, Path | None]:
    """`submit` into a local results folder; the bundle it wrote (None if refused)."""
    before = bundles(results)
    result = cli("submit", str(run_dir), "--results", str(results), "--dataset_path", str(release), *extra)
    new = bundles(results) - before
    return result, (new.pop() if len(new) == 1 else None)


def rehash(bundle: Path, name: str) -> None:
    """What a tamperer does after editing a bundle's file: its hash in `submission.json` made to match."""
    manifest = json.loads((bundle / "submission.json").read_text(encoding="utf-8"))
    manifest["files"][name] = hashlib.sha256((bundle / name).read_bytes()).hexdigest()
    (bundle / "submission.json").write_text(json.dumps(manifest, indent=1), encoding="utf-8")


def snapshot(root: Path, skip: Path) -> dict[str, tuple[int, int]]:
    """Every file and folder under `root` but `skip`: path -> (size, mtime_ns)."""
    seen = {}
    for path in root.rglob("*"):
        if path == skip or skip in path.parents:
            continue
        stat = path.lstat()
        seen[str(path.relative_to(root))] = (stat.st_size, stat.st_mtime_ns)
    return seen


@contextmanager
def http_server(respond: Callable[[BaseHTTPRequestHandler, dict], tuple[int, dict]]) -> Iterator[str]:
    """A loopback server answering every POST with `respond(handler, request_json)`; yields its /v1 URL."""

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args) -> None:  # noqa: ANN002
            pass

        def do_POST(self) -> None:  # noqa: N802
            request = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
            status, reply = respond(self, request)
            data = json.dumps(reply).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


def completion(text: str) -> dict:
    return {"id": "x", "object": "chat.completion", "created": 0, "model": "forger",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}


def forged_answer(_handler: BaseHTTPRequestHandler, request: dict) -> tuple[int, dict]:
    """The forger's "model": the question's own text for half the questions, an invented answer for the rest."""
    prompt = request["messages"][-1]["content"]
    question = next((line[len("Question: "):] for line in prompt.splitlines() if line.startswith("Question: ")), "")
    pick = int(hashlib.sha256(question.encode()).hexdigest(), 16)
    return 200, completion(question if pick % 2 else INVENTED[pick % len(INVENTED)])


def run_args(release: Path, out: Path, tasks: str, *extra: str) -> list[str]:
    return ["run", "--tasks", tasks, "--memory", "bm25", "--dataset_path", str(release), "--output_path", str(out),
            "--no_cache", *extra]


def forged_hidden_run(work: Path, hidden: Path) -> Row:
    release, sealed, results = hidden / "medmemorybench", hidden / "sealed-gold.json.gz", work / "results-hidden"
    with http_server(forged_answer) as url:
        ran = cli(*run_args(release, work / "forged", "medmemorybench", "--model", "openai", "--model_args",
                            f"model=forger,base_url={url},max_retries=0,timeout_s=30,concurrency=4"),
                  env={"OPENAI_API_KEY": "forger"})
    samples = [json.loads(line) for line in (work / "forged" / "samples.jsonl").read_text().splitlines()]
    submitted, _ = submit(work / "forged", results, release)
    claimed = work / "forged-claim"  # (the same run claiming every answer correct)
    shutil.copytree(work / "forged", claimed, ignore=shutil.ignore_patterns("memory"))
    (claimed / "samples.jsonl").write_text("".join(json.dumps({**s, "correct": 1.0}) + "\n" for s in samples))
    claim, _ = submit(claimed, work / "results-claim", release)
    no_gold = cli("leaderboard", "--results", str(results), "--html", str(work / "board-no-gold"), "--dataset_path",
                  str(release))
    gold = cli("leaderboard", "--results", str(results), "--html", str(work / "board-gold"), "--gold", str(sealed),
               "--dataset_path", str(release))
    rows = page_rows(work / "board-gold")
    mean = rows[0]["mean"] if len(rows) == 1 else None
    passed = (ran.returncode == 0 and submitted.returncode == 0 and is_one_line(claim) and no_gold.returncode == 0
              and gold.returncode == 0
              and not page_rows(work / "board-no-gold") and any("sealed gold" in r for r in left_out(no_gold))
              and len(rows) == 1 and rows[0]["verification"] == "hidden gold" and mean is not None and mean < 50)
    return Row("forged run on a hidden release", "scored against the sealed gold far below 100; a claimed score "
               "refused; no row without --gold",
               f"{len(samples)} forged answers; run exit {ran.returncode}, submit exit {submitted.returncode}; "
               f"no --gold: {len(page_rows(work / 'board-no-gold'))} rows, left out "
               f"({short(left_out(no_gold)[0] if left_out(no_gold) else '-', 70)}); --gold: "
               f"exit {gold.returncode}, {rows[0]['verification'] if rows else 'no row'}, accuracy "
               f"{'-' if mean is None else f'{mean:.1f}'} %; 'correct: 1.0' claimed: exit {claim.returncode} "
               f"({short(errors(claim)[0] if errors(claim) else claim.stderr, 80)})", passed, 0)


def first_mean(value: object) -> dict | None:
    """The first dict holding a numeric "mean" in a summary (what a tamperer raises)."""
    if isinstance(value, dict):
        if isinstance(value.get("mean"), float):
            return value
        children = value.values()
    elif isinstance(value, list):
        children = value
    else:
        return None
    return next((found for child in children if (found := first_mean(child)) is not None), None)


def tampered_and_copied(work: Path, public: Path, runs: dict[str, Path]) -> Row:
    release, results = public / "medmemorybench", work / "results-tamper"
    honest, _ = submit(runs["both"], results, release)
    (work / "copy.yaml").write_text("name: My Copy\nparadigm: graph\n")
    copied, _ = submit(runs["both"], results, release, "--system", str(work / "copy.yaml"))
    other, bundle = submit(runs["efficient"], results, release)
    summary = json.loads((bundle / "summary.json").read_text())
    target = first_mean(summary["tasks"])
    raised = target["mean"] = 0.97 if target["mean"] != 0.97 else 0.98
    (bundle / "summary.json").write_text(json.dumps(summary, indent=1))
    rehash(bundle, "summary.json")
    board = cli("leaderboard", "--results", str(results), "--html", str(work / "board-tamper"), "--dataset_path",
                str(release))
    rows = page_rows(work / "board-tamper")
    reasons = left_out(board)
    copy_reason = next((r for r in reasons if "a copy of" in r), "")
    tamper_reason = next((r for r in reasons if bundle.name in r and r != copy_reason), "")
    passed = (honest.returncode == copied.returncode == other.returncode == 0 and board.returncode == 0
              and [r["system"] for r in rows] == ["BM25 RAG"] and bool(copy_reason) and f"is {raised}" in tamper_reason)
    return Row("tampered and copied bundles", "both left out with a reason; the honest row shown; page written",
               f"board exit {board.returncode}, rows {[r['system'] for r in rows]}; copy: "
               f"{short(copy_reason or '(shown)', 80)}; tampered: {short(tamper_reason or '(shown)', 100)}", passed, 0)


def plant_persona_id(folder: Path, persona_id: str) -> None:
    """Every row's and question's persona_id in every parquet file of a build set to `persona_id`."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    for path in sorted(folder.rglob("*.parquet")):
        rows = pq.read_table(path).to_pylist()
        for row in rows:
            for record in [row, *(row.get("questions") or [])]:
                if "persona_id" in record:
                    record["persona_id"] = persona_id
        pq.write_table(pa.Table.from_pylist(rows, schema=pq.read_schema(path)), path)


def traversal_ids(work: Path, public: Path) -> Row:
    seen, passed = [], True
    for label, name in (("absolute", "absolute"), ("../", "dots")):
        place = work / "traversal" / name  # (each id its own sentinel, so one's damage is not the other's)
        victim = place / "victim"  # (what both ids point at from run/memory/<task>/<id>)
        victim.mkdir(parents=True)
        (victim / "keep.txt").write_text("mine")
        evil = place / "data"
        shutil.copytree(public / "medmemorybench", evil)
        plant_persona_id(evil, str(victim) if label == "absolute" else "../../../victim")
        out = place / "run"
        before = snapshot(place, out)
        checked = cli("validate", str(evil))
        ran = cli(*run_args(evil, out, "medmemorybench_efficient", "--model", "none"))
        kept = (victim / "keep.txt").is_file() and (victim / "keep.txt").read_text() == "mine"
        untouched = snapshot(place, out) == before and kept
        named = [line for line in checked.stderr.splitlines() if "is not a plain id" in line]
        ok_validate = checked.returncode in (1, 2) and bool(named) and "Traceback" not in checked.stderr
        ok_run = is_one_line(ran) and "is not a plain id" in errors(ran)[0]
        passed &= ok_validate and ok_run and untouched
        seen.append(f"{label}: validate exit {checked.returncode} ({len(named)} lines name it), run exit "
                    f"{ran.returncode} ({len(errors(ran))} error line), outside untouched {untouched}"
                    + ("" if kept else " (the sentinel folder's file is gone)"))
    example = short(errors(ran)[0] if errors(ran) else ran.stderr, 70)
    return Row("persona_id as a path", "validate refuses, naming it (exit 1: its documented code for problems "
               "found, a line per row); run: one line, exit 2; nothing outside --output_path touched",
               "; ".join(seen) + f"; e.g. {example}", passed, 0)


def echoed_secret(work: Path, public: Path) -> Row:
    key, user, password = "a-private-key-h28b-0123456789abcdef", "bob", "hunter2-h28b"
    basic = base64.b64encode(f"{user}:{password}".encode()).decode()
    got: list[str] = []

    def echo(handler: BaseHTTPRequestHandler, _request: dict) -> tuple[int, dict]:
        got.append(str(handler.headers.get("Authorization")))
        return 401, {"error": {"message": f"bad credentials: Authorization: {handler.headers.get('Authorization')} "
                                          f"for {handler.headers.get('Host')}"}}

    texts, codes, redacted = {}, [], True
    with http_server(echo) as url:  # (the key as a Bearer token, then a `user:pw@` URL: httpx sends it as Basic)
        for name, base_url in (("key", url), ("userinfo", url.replace("http://", f"http://{user}:{password}@"))):
            out = work / f"echo-{name}"
            ran = cli(*run_args(public / "medmemorybench", out, "medmemorybench_efficient", "--checkpoints", "10",
                                "--model", "openai", "--model_args",
                                f"model=m,base_url={base_url},max_retries=1,backoff_s=0.01"),
                      env={"OPENAI_API_KEY": key})
            codes.append(ran.returncode if "Traceback" not in ran.stderr else "traceback")
            texts[f"{name}: terminal"] = ran.stdout + ran.stderr
            texts.update({f"{name}: {p.relative_to(out)}": p.read_text(errors="replace")
                          for p in out.rglob("*") if p.is_file()})
            redacted &= "<redacted>" in ran.stderr.strip().splitlines()[-1] if ran.stderr.strip() else False
    leaks = sorted(name for name, text in texts.items() if key in text or password in text or basic in text)
    echoed = [secret for secret in (key, basic) if any(secret in header for header in got)]
    passed = codes == [2, 2] and len(echoed) == 2 and not leaks and redacted
    return Row("401 body echoing the key", "one line, exit 2 (a refused key); no key, password or base64 in "
               "samples, run.json, any file or the terminal; the server's error kept, redacted",
               f"run exits {codes}; {len(got)} requests, echoed back: key {key in echoed}, base64 user:pw "
               f"{basic in echoed}; {len(texts)} files and terminals scanned, leaks {leaks or 'none'}; the error line "
               f"holds '<redacted>' {redacted}", passed, 0)


def deep_nesting(work: Path, public: Path, runs: dict[str, Path]) -> Row:
    release, results = public / "medmemorybench", work / "results-deep"
    deep_run = work / "run-deep"
    shutil.copytree(runs["both"], deep_run, ignore=shutil.ignore_patterns("memory"))
    with (deep_run / "samples.jsonl").open("a") as handle:
        handle.write(DEEP_JSON + "\n")
    samples_refused, _ = submit(deep_run, work / "results-unused", release)
    (work / "deep.yaml").write_text("name: " + "[" * 30_000 + "]" * 30_000 + "\n")
    yaml_refused, _ = submit(runs["both"], work / "results-unused", release, "--system", str(work / "deep.yaml"))
    honest, bundle = submit(runs["both"], results, release)
    other, nested_system = submit(runs["efficient"], results, release)
    (nested_system / "system.json").write_text(DEEP_JSON)
    rehash(nested_system, "system.json")
    lines = (bundle / "samples.jsonl").read_bytes() + DEEP_JSON.encode() + b"\n"
    nested_samples = bundle.parent / hashlib.sha256(lines).hexdigest()[:12]  # (named as submit names a bundle)
    shutil.copytree(bundle, nested_samples)
    (nested_samples / "samples.jsonl").write_bytes(lines)
    rehash(nested_samples, "samples.jsonl")
    board = cli("leaderboard", "--results", str(results), "--html", str(work / "board-deep"), "--dataset_path",
                str(release))
    rows = page_rows(work / "board-deep")
    reasons = {name: next((r for r in left_out(board) if r.startswith(str(folder / name))), "")
               for name, folder in (("system.json", nested_system), ("samples.jsonl", nested_samples))}
    passed = (is_one_line(samples_refused) and is_one_line(yaml_refused) and honest.returncode == 0
              and other.returncode == 0 and board.returncode == 0 and len(rows) == 1 and all(reasons.values())
              and "Traceback" not in board.stderr)
    return Row("deeply nested JSON / YAML", "submit: one line, exit 2; nested bundles left out, the board written",
               f"submit of a nested samples line: exit {samples_refused.returncode}, {len(errors(samples_refused))} "
               f"line; nested --system YAML: exit {yaml_refused.returncode}, {len(errors(yaml_refused))} line "
               f"({short(errors(yaml_refused)[0] if errors(yaml_refused) else '-', 60)}); board "
               f"exit {board.returncode}, {len(rows)} row; left out: "
               + "; ".join(f"{short(r, 70) if r else name + ' bundle shown'}"
                           for name, r in reasons.items()), passed, 0)


def nested_run_files(work: Path, public: Path, runs: dict[str, Path]) -> Row:
    """The other files the commands read made hostile: a nested run.json and a stray `{"a": 1}` samples line under
    `run --resume`, a nested summary.json under `report`, nested dataset metadata under `validate` and `run`."""
    release, seen = public / "medmemorybench", {}

    def run_copy(name: str) -> Path:
        folder = work / f"nested-{name}"
        shutil.copytree(runs["efficient"], folder)
        return folder

    def resume(folder: Path, data: Path = release) -> subprocess.CompletedProcess:
        return cli(*run_args(data, folder, "medmemorybench_efficient", "--model", "none", "--resume"))

    (run_copy("header") / "run.json").write_text(DEEP_JSON)
    seen["run --resume, nested run.json"] = resume(work / "nested-header")
    with (run_copy("stray") / "samples.jsonl").open("a") as handle:
        handle.write('{"a": 1}\n')
    seen["run --resume, a stray {\"a\": 1} line"] = resume(work / "nested-stray")
    (run_copy("summary") / "summary.json").write_text(DEEP_JSON)
    seen["report, nested summary.json"] = cli("report", str(work / "nested-summary"))
    data = work / "nested-data"
    shutil.copytree(release, data)
    (data / "medmemorybench.json").write_text('{"fingerprint": ' + DEEP_JSON + "}")
    seen["validate, nested dataset metadata"] = cli("validate", str(data))
    seen["run, nested dataset metadata"] = cli(*run_args(data, work / "nested-run", "medmemorybench_efficient",
                                                         "--model", "none"))
    passed = all(is_one_line(result) for result in seen.values())
    return Row("nested run, summary and dataset files", "each one line naming the file, exit 2, no traceback",
               "; ".join(f"{name}: exit {result.returncode}, {len(errors(result))} line"
                         + ("" if "Traceback" not in result.stderr else ", TRACEBACK")
                         + f" ({short(errors(result)[0] if errors(result) else result.stderr[-200:], 70)})"
                         for name, result in seen.items()), passed, 0)


def timed(name: str, attack: Callable[[], Row]) -> Row:
    started = time.perf_counter()
    try:
        row = attack()
    except Exception as exc:  # (an attack that breaks the bench is a failed row, the others still run)
        row = Row(name, "-", f"bench error: {type(exc).__name__}: {short(str(exc), 200)}", False, 0)
    row.seconds = time.perf_counter() - started
    return row


def run_attacks(work: Path) -> list[Row]:
    """Every attack, in order; the tiny builds and runs they share are made first (three builds side by side). The
    seeds are fixed, so the bench is repeatable: a 1-patient build of a drawn seed can fail validation (a trap
    category no question tests), and the forger never uses the hidden build's seed."""
    from fault_attack_builds import OTHER_SEED, other_build_run
    from fault_attack_serve import hostile_clients, serve_head_of_line

    work.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    builds = [subprocess.Popen([*CLI, "build", *TINY, *flags, "--output_path", str(work / name)], env=ENV,
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
              for name, flags in (("public", ["--seed", "11"]), ("hidden", ["--hidden", "--seed", "1"]),
                                  ("other", ["--seed", str(OTHER_SEED)]))]
    for build in builds:
        _, stderr = build.communicate()
        if build.returncode != 0:
            raise RuntimeError(f"build failed: {stderr[-400:]}")
    public, hidden = work / "public", work / "hidden"
    runs = {"both": work / "run-both", "efficient": work / "run-efficient"}
    for name, tasks in (("both", "medmemorybench"), ("efficient", "medmemorybench_efficient")):
        result = cli(*run_args(public / "medmemorybench", runs[name], tasks, "--model", "none"))
        if result.returncode != 0:
            raise RuntimeError(f"run {name} failed: {result.stderr[-400:]}")
    print(f"attacks: three tiny builds (1 patient, 20 encounters, 3+3 noise sessions, English) and two retrieval-only "
          f"runs in {time.perf_counter() - started:.0f} s", flush=True)
    attacks = {"forged run on a hidden release": lambda: forged_hidden_run(work, hidden),
               "tampered and copied bundles": lambda: tampered_and_copied(work, public, runs),
               "persona_id as a path": lambda: traversal_ids(work, public),
               "401 body echoing the key": lambda: echoed_secret(work, public),
               "deeply nested JSON / YAML": lambda: deep_nesting(work, public, runs),
               "nested run, summary and dataset files": lambda: nested_run_files(work, public, runs),
               "run on another build as if official": lambda: other_build_run(work, public, work / "other", runs),
               "serve head-of-line": serve_head_of_line,
               "serve hostile clients": hostile_clients}
    return [timed(name, attack) for name, attack in attacks.items()]


def print_table(rows: list[Row]) -> None:
    print("| attack | expected | observed | result | seconds |")
    print("|---|---|---|---|---|")
    for row in rows:
        print(f"| {row.attack} | {row.expected} | {row.observed} | {'pass' if row.passed else 'FAIL'} | "
              f"{row.seconds:.1f} |")
