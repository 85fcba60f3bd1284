"""The bad-input table: command lines a user could give, each wrong in one way, and what the error must name.

Every case must end with exit code 2, one `error:` line (or click's usage error) naming the file, field or option
at fault, no traceback, and nothing new that looks complete (a `summary.json`, a dataset's metadata, a cohort's
manifest). `tests/cli/test_bad_input_table.py` runs the table in-process; `scripts/bench_faults.py` runs it
through the installed command, one process per case.

A case builds its command line in a `Workspace`: a fresh folder with a small valid dataset beside it, which
a case copies before breaking it. Cases with `file_size_limit` run in a child process whose writes fail beyond
that many bytes (RLIMIT_FSIZE), as writes fail on a full disk.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import signal
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

UNWRITABLE = Path("/sys/medmemorybench-cannot-write-here")
"""A folder no process may create, not even root (sysfs refuses new entries), for read-only output paths."""

COMPLETE_MARKERS = ("summary.json", "medmemorybench.json", "manifest.json")
"""Files whose presence says a run, a dataset or a cohort is complete."""


_SUBMITTABLE_RUNS: dict[Path, Path] = {}
"""Dataset folder -> a finished run of it (`Workspace.valid_run`)."""


@dataclass
class Workspace:
    """A case's folder; `data` is a valid dataset (shared, never modified: break a `copy_data()`)."""

    root: Path
    data: Path

    @property
    def out(self) -> Path:
        return self.root / "run"

    def file(self, name: str, text: str | bytes) -> Path:
        path = self.root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(text, bytes):
            path.write_bytes(text)
        else:
            path.write_text(text, encoding="utf-8")
        return path

    def copy_data(self) -> Path:
        target = self.root / "data"
        if not target.exists():
            shutil.copytree(self.data, target)
        return target

    def split(self, name: str = "checkpoint_10", config: str = "efficient") -> Path:
        """A split file of a private copy of the dataset."""
        return self.copy_data() / config / f"{name}.parquet"

    def edit_questions(self, change: Callable[[dict], None], drop: str | None = None) -> Path:
        """A dataset copy whose first question of efficient/checkpoint_10 is passed to `change`, and whose
        schema lacks the field `drop` (e.g. "questions.answer"); returns the folder."""
        return self.edit_rows(lambda row: change(row["questions"][0]), drop)

    def edit_rows(self, change: Callable[[dict], None], drop: str | None = None) -> Path:
        """As `edit_questions`, for the first row."""
        from datasets import Features

        path = self.split()
        table = pq.read_table(path)
        rows = table.to_pylist()
        change(rows[0])
        features = Features.from_arrow_schema(table.schema)  # (kept, so only what the case breaks differs)
        if drop:
            parent, _, leaf = drop.rpartition(".")
            del (features[parent].feature if parent else features)[leaf]
        pq.write_table(pa.Table.from_pylist(rows, schema=features.arrow_schema), path)
        return self.copy_data()

    def knowledge(self, filename: str, text: str) -> Path:
        """A copy of the packaged knowledge base with `filename` replaced by `text`."""
        from medmemorybench.knowledge import DATA_DIR

        target = self.root / "knowledge"
        if not target.exists():
            shutil.copytree(DATA_DIR, target)
        (target / filename).write_text(text, encoding="utf-8")
        return target

    def valid_run(self) -> Path:
        """A private copy of a finished retrieval-only run of `data` (one patient, checkpoint 10) to submit or
        break; the run itself is made once per dataset."""
        source = _SUBMITTABLE_RUNS.get(self.data)
        if source is None:
            from medmemorybench.harness.config import RunConfig
            from medmemorybench.harness.runner import run_evaluation

            source = self.data.parent / "submittable-run"
            shutil.rmtree(source, ignore_errors=True)
            run_evaluation(RunConfig(tasks=["medmemorybench_efficient"], output_path=source, memory="bm25",
                                     dataset_path=str(self.data), limit=1, checkpoints=[10], use_cache=False))
            _SUBMITTABLE_RUNS[self.data] = source
        target = self.root / "submit-run"
        if not target.exists():
            shutil.copytree(source, target, ignore=shutil.ignore_patterns("memory"))
        return target

    def tampered_run(self, name: str, change: Callable[[object], object]) -> Path:
        """`valid_run` with its file `name` (run.json, summary.json: a JSON object; samples.jsonl: the list of
        samples) replaced by `change` of its content."""
        path = self.valid_run() / name
        if name == "samples.jsonl":
            samples = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
            path.write_text("".join(json.dumps(s) + "\n" for s in change(samples)), encoding="utf-8")
        else:
            value = json.loads(path.read_text(encoding="utf-8"))
            path.write_text(json.dumps(change(value) or value), encoding="utf-8")
        return path.parent

    def run_folder(self, header: str | None = None, samples: str | None = None, summary: str | None = None) -> Path:
        """An output folder holding the given run.json / samples.jsonl / summary.json texts."""
        self.out.mkdir(parents=True, exist_ok=True)
        for name, text in (("run.json", header), ("samples.jsonl", samples), ("summary.json", summary)):
            if text is not None:
                (self.out / name).write_text(text, encoding="utf-8")
        return self.out


def run_args(w: Workspace, *extra: str, data: Path | None = None) -> list[str]:
    """A quick valid retrieval-only run of one patient at checkpoint 10, with `extra` options overriding."""
    return ["run", "--tasks", "medmemorybench_efficient", "--memory", "bm25", "--model", "none", "--limit", "1",
            "--checkpoints", "10", "--output_path", str(w.out), "--dataset_path", str(data or w.data), *extra]


def run_without(w: Workspace, field_name: str) -> list[str]:
    """A run of a dataset copy whose checkpoint_10 schema lacks `field_name` (e.g. "questions.answer")."""
    return run_args(w, data=w.edit_rows(lambda row: None, drop=field_name))


def openai_args(w: Workspace, model_args: str, *extra: str) -> list[str]:
    """A run against an OpenAI-compatible endpoint nobody listens on (options are checked before any call)."""
    return run_args(w, "--model", "openai", "--model_args", model_args, *extra)


def submit_args(w: Workspace, *extra: str, run: Path | None = None) -> list[str]:
    """A dry-run submission of a run (`valid_run` unless given) against `data`, the slice allowed."""
    return ["submit", str(run or w.valid_run()), "--dataset_path", str(w.data), "--allow_partial", "--dry_run",
            *extra]


def system_file(w: Workspace, text: str) -> str:
    return str(w.file("system.yaml", text))


def _raise_first_mean(summary: dict) -> None:
    summary["tasks"]["medmemorybench_efficient"]["metrics"]["recall_at_k"]["overall"][0]["mean"] = 0.99


def build_out(w: Workspace) -> str:
    return str(w.root / "build-out")


def sim_out(w: Workspace) -> str:
    return str(w.root / "sim-out")


DEAD_URL = "model=m,base_url=http://127.0.0.1:9/v1,max_retries=0,timeout_s=0.5"
"""An endpoint that refuses connections at once (port 9, discard, is closed here)."""


@dataclass(frozen=True)
class Case:
    """One bad input: `args` builds the command line in a workspace; the error must contain `names`."""

    name: str
    args: Callable[[Workspace], list[str]]
    names: str | Callable[[Workspace], str]
    env: Callable[[Workspace], dict[str, str]] = field(default=lambda w: {})
    file_size_limit: int | None = None

    def expected(self, w: Workspace) -> str:
        return self.names(w) if callable(self.names) else self.names


def _summary(text: str) -> Callable[[Workspace], list[str]]:
    return lambda w: ["report", str(w.run_folder(summary=text))]


_HEADER_OK = json.dumps({"config": {}, "dataset_fingerprint": "x"})

CASES: list[Case] = [
    # --- dataset files -------------------------------------------------------------------------------------
    Case("dataset path missing", lambda w: run_args(w, data=w.root / "nowhere"), "--dataset_path"),
    Case("dataset path is a file", lambda w: run_args(w, data=w.file("f.txt", "x")), "--dataset_path"),
    Case("dataset path is an empty folder", lambda w: run_args(w, data=w.root), "--dataset_path"),
    Case("split is random bytes", lambda w: (w.split().write_bytes(os.urandom(4096)),
                                             run_args(w, data=w.copy_data()))[1], "checkpoint_10.parquet"),
    Case("split truncated", lambda w: (w.split().write_bytes(w.split().read_bytes()[:2000]),
                                        run_args(w, data=w.copy_data()))[1], "checkpoint_10.parquet"),
    Case("split empty", lambda w: (w.split().write_bytes(b""), run_args(w, data=w.copy_data()))[1],
         "checkpoint_10.parquet"),
    Case("split is a folder", lambda w: (w.split().unlink(), w.split().mkdir(), run_args(w, data=w.copy_data()))[2],
         "checkpoint_10.parquet"),
    Case("split missing", lambda w: (w.split("checkpoint_20").unlink(),
                                     run_args(w, "--checkpoints", "10,20", data=w.copy_data()))[1], "checkpoint_20"),
    Case("split missing, not asked for", lambda w: (w.split("checkpoint_20").unlink(),
                                                    run_args(w, data=w.copy_data()))[1], "checkpoint_20"),
    Case("config missing", lambda w: (shutil.rmtree(w.copy_data() / "mixed"),
                                      run_args(w, "--tasks", "medmemorybench", data=w.copy_data()))[1], "mixed"),
    Case("row without questions", lambda w: run_without(w, "questions"),
         "questions"),
    Case("row with null sessions", lambda w: run_args(w, data=w.edit_rows(lambda r: r.update(sessions=None))),
         "sessions"),
    Case("row without persona_id", lambda w: run_without(w, "persona_id"),
         "persona_id"),
    Case("a session of 2 MB", lambda w: run_args(w, data=w.edit_rows(
        lambda row: row["sessions"][0]["turns"][0].update(text="x" * 2_000_000))), "over the 200,000"),
    Case("unknown query_type", lambda w: run_args(w, data=w.edit_questions(lambda q: q.update(query_type="XYZ"))),
         "query_type"),
    Case("null query_type", lambda w: run_args(w, data=w.edit_questions(lambda q: q.update(query_type=None))),
         "query_type"),
    Case("question without answer", lambda w: run_without(w, "questions.answer"), "answer"),
    Case("question with null answer", lambda w: run_args(w, data=w.edit_questions(lambda q: q.update(answer=None))),
         "answer"),
    Case("turn with null text", lambda w: run_args(w, data=w.edit_rows(
        lambda r: r["sessions"][0]["turns"][0].update(text=None))), "text"),
    Case("question with null text", lambda w: run_args(w, data=w.edit_questions(lambda q: q.update(question=None))),
         "question"),
    Case("question without evidence ids", lambda w: run_without(w, "questions.evidence_session_ids"),
         "evidence_session_ids"),
    Case("question without query_id", lambda w: run_without(w, "questions.query_id"), "query_id"),
    Case("session without turns", lambda w: run_without(w, "sessions.turns"), "turns"),
    Case("metadata not JSON", lambda w: ((w.copy_data() / "medmemorybench.json").write_text("{oops"),
                                         run_args(w, data=w.copy_data()))[1], "medmemorybench.json"),
    Case("metadata a list", lambda w: ((w.copy_data() / "medmemorybench.json").write_text("[1, 2]"),
                                       run_args(w, data=w.copy_data()))[1], "medmemorybench.json"),
    Case("validate: folder missing", lambda w: ["validate", str(w.root / "nowhere")], "nowhere"),
    Case("validate: corrupt split", lambda w: (w.split().write_bytes(b"PAR1 not really"),
                                               ["validate", str(w.copy_data())])[1], "checkpoint_10.parquet"),
    Case("validate: a file", lambda w: ["validate", str(w.file("f.txt", "x"))], "f.txt"),
    # (a metadata file `run` refuses was "valid": `validate` never read it; issue 28 found it nested)
    Case("validate: metadata nested too deeply", lambda w: (
        (w.copy_data() / "medmemorybench.json").write_text('{"stats": ' + "[" * 30_000 + "]" * 30_000 + "}"),
        ["validate", str(w.copy_data())])[1], "medmemorybench.json"),
    Case("validate: metadata a list", lambda w: ((w.copy_data() / "medmemorybench.json").write_text("[1, 2]"),
                                                 ["validate", str(w.copy_data())])[1], "medmemorybench.json"),
    Case("audit: folder missing", lambda w: ["audit", str(w.root / "nowhere")], "nowhere"),
    Case("audit: no questions config", lambda w: (shutil.rmtree(w.copy_data() / "questions"),
                                                  ["audit", str(w.copy_data())])[1], "questions"),
    Case("audit: corrupt split", lambda w: (w.split().write_bytes(os.urandom(512)), ["audit", str(w.copy_data())])[1],
         "checkpoint_10.parquet"),
    Case("review: folder missing", lambda w: ["review", str(w.root / "nowhere"), "--sample", "5", "--out",
                                              str(w.root / "r.csv")], "nowhere"),
    Case("review: corrupt split", lambda w: (w.split().write_bytes(os.urandom(512)),
                                             ["review", str(w.copy_data()), "--sample", "5", "--out",
                                              str(w.root / "r.csv")])[1], "checkpoint_10.parquet"),
    Case("publish: folder missing", lambda w: ["publish", str(w.root / "nowhere"), "--repo_id", "a/b", "--dry_run"],
         "nowhere"),
    Case("show: file missing", lambda w: ["show", str(w.root / "P0001.json")], "P0001.json"),
    Case("show: not JSON", lambda w: ["show", str(w.file("P0001.json", "{not json"))], "P0001.json"),
    Case("show: a JSON list", lambda w: ["show", str(w.file("P0001.json", "[1]"))], "P0001.json"),
    Case("show: a folder", lambda w: ["show", str(w.root)], lambda w: str(w.root)),
    # --- run options ---------------------------------------------------------------------------------------
    Case("--limit 0", lambda w: run_args(w, "--limit", "0"), "--limit"),
    Case("--limit -1", lambda w: run_args(w, "--limit", "-1"), "--limit"),
    Case("--limit not a number", lambda w: run_args(w, "--limit", "two"), "--limit"),
    Case("--checkpoints letters", lambda w: run_args(w, "--checkpoints", "a,b"), "--checkpoints"),
    Case("--checkpoints not a checkpoint", lambda w: run_args(w, "--checkpoints", "15"), "--checkpoints"),
    Case("--checkpoints 0", lambda w: run_args(w, "--checkpoints", "0"), "--checkpoints"),
    Case("--checkpoints negative", lambda w: run_args(w, "--checkpoints", "-10"), "--checkpoints"),
    Case("--tasks unknown", lambda w: run_args(w, "--tasks", "medmemorybench_nope"), "--tasks"),
    Case("--tasks empty", lambda w: run_args(w, "--tasks", ""), "--tasks"),
    Case("--tasks only commas", lambda w: run_args(w, "--tasks", ",,"), "--tasks"),
    Case("--memory unknown", lambda w: run_args(w, "--memory", "bm2"), "--memory"),
    Case("--model unknown", lambda w: run_args(w, "--model", "gpt"), "--model"),
    Case("--judge unknown", lambda w: run_args(w, "--judge", "gpt"), "--judge"),
    Case("--judge_args without =", lambda w: run_args(w, "--judge_args", "model"), "--judge_args"),
    Case("--model_args without =", lambda w: openai_args(w, "model"), "--model_args"),
    Case("--model_args with no model to take them", lambda w: run_args(w, "--model_args", "temperature=0"),
         "--model_args for 'none'"),
    Case("--model_args empty key", lambda w: openai_args(w, "=x"), "--model_args"),
    Case("openai: base_url empty", lambda w: openai_args(w, "model=m,base_url="), "base_url"),
    Case("openai: base_url without scheme", lambda w: openai_args(w, "model=m,base_url=localhost:8000"), "base_url"),
    Case("openai: no model", lambda w: openai_args(w, "base_url=http://127.0.0.1:9/v1"), "model"),
    Case("openai: max_retries -1", lambda w: openai_args(w, DEAD_URL + ",max_retries=-1"), "max_retries"),
    Case("openai: max_retries not a number", lambda w: openai_args(w, DEAD_URL + ",max_retries=many"), "max_retries"),
    Case("openai: timeout_s 0", lambda w: openai_args(w, DEAD_URL + ",timeout_s=0"), "timeout_s"),
    Case("openai: timeout_s not a number", lambda w: openai_args(w, DEAD_URL + ",timeout_s=soon"), "timeout_s"),
    Case("openai: concurrency 0", lambda w: openai_args(w, DEAD_URL + ",concurrency=0"), "concurrency"),
    Case("openai: temperature not a number", lambda w: openai_args(w, DEAD_URL + ",temperature=hot"), "temperature"),
    Case("openai: max_tokens 0", lambda w: openai_args(w, DEAD_URL + ",max_tokens=0"), "max_tokens"),
    Case("openai: unknown option", lambda w: openai_args(w, DEAD_URL + ",tempreature=0"), "tempreature"),
    Case("hf: unknown option", lambda w: run_args(w, "--model", "hf", "--model_args", "batch=4"), "batch"),
    Case("hf: batch_size 0", lambda w: run_args(w, "--model", "hf", "--model_args", "batch_size=0"), "batch_size"),
    Case("hf: pretrained folder missing", lambda w: run_args(w, "--model", "hf", "--model_args",
                                                             f"pretrained={w.root / 'no-model'}"), "pretrained"),
    Case("hf: pretrained not a model", lambda w: run_args(w, "--model", "hf", "--model_args", f"pretrained={w.root}"),
         "pretrained"),
    Case("--judge_args bad value", lambda w: run_args(w, "--judge", "openai", "--judge_args", "model=m,max_retries=-1"),
         "--judge_args"),
    Case("--memory_args stride 0", lambda w: run_args(w, "--memory_args", "stride=0"), "stride"),
    Case("--memory_args stride not a number", lambda w: run_args(w, "--memory_args", "stride=wide"), "stride"),
    Case("--memory_args unknown option", lambda w: run_args(w, "--memory_args", "strid=2"), "strid"),
    Case("--memory_args without =", lambda w: run_args(w, "--memory_args", "stride"), "--memory_args"),
    Case("memos without a model", lambda w: run_args(w, "--memory", "memos"), "--memory memos"),
    Case("memos max_items 0", lambda w: run_args(w, "--memory", "memos", "--memory_args", "max_items=0"),
         "max_items"),
    Case("--memory_model unknown", lambda w: run_args(w, "--memory", "memos", "--memory_model", "gpt"),
         "--memory_model"),
    Case("--memory_model_args bad value", lambda w: run_args(w, "--memory", "memos", "--memory_model", "openai",
                                                             "--memory_model_args", "model=m,timeout_s=0"),
         "--memory_model_args"),
    Case("--embedder not a folder", lambda w: run_args(w, "--embedder", str(w.root / "no-embedder")), "--embedder"),
    Case("--answer_mode unknown", lambda w: run_args(w, "--answer_mode", "sideways"), "--answer_mode"),
    Case("--answer_mode native for a memory that only retrieves",
         lambda w: run_args(w, "--answer_mode", "native", "--memory", "bm25"), "--answer_mode native"),
    Case("--max_error_rate negative", lambda w: run_args(w, "--max_error_rate", "-0.1"), "--max_error_rate"),
    Case("--max_error_rate above 1", lambda w: run_args(w, "--max_error_rate", "1.5"), "--max_error_rate"),
    Case("--max_error_rate nan", lambda w: run_args(w, "--max_error_rate", "nan"), "--max_error_rate"),
    Case("--max_error_rate not a number", lambda w: run_args(w, "--max_error_rate", "some"), "--max_error_rate"),
    # --- run folders and resume ----------------------------------------------------------------------------
    Case("resume: run.json not JSON", lambda w: (w.run_folder(header="{cut"), run_args(w, "--resume"))[1],
         "run.json"),
    Case("resume: run.json a list", lambda w: (w.run_folder(header="[]"), run_args(w, "--resume"))[1], "run.json"),
    Case("resume: run.json of another run", lambda w: (w.run_folder(header=_HEADER_OK), run_args(w, "--resume"))[1],
         "run.json"),
    Case("resume: a damaged line inside samples", lambda w: (w.run_folder(samples='{"a": 1}\n{bad\n{"b": 2}\n'),
                                                             run_args(w, "--resume"))[1], "samples.jsonl"),
    Case("resume: samples.jsonl a folder", lambda w: ((w.out / "samples.jsonl").mkdir(parents=True),
                                                      run_args(w, "--resume"))[1], "samples.jsonl"),
    Case("output holds another run", lambda w: (w.run_folder(samples='{"task": "t", "query_id": "q"}\n'),
                                                run_args(w))[1], "--output_path"),
    Case("output path is a file", lambda w: run_args(w, "--output_path", str(w.file("out.txt", "x"))), "out.txt"),
    Case("output path under a file", lambda w: run_args(w, "--output_path", str(w.file("out.txt", "x") / "run")),
         "out.txt"),
    Case("output path unwritable", lambda w: run_args(w, "--output_path", str(UNWRITABLE / "run")), str(UNWRITABLE)),
    Case("output disk full", lambda w: run_args(w, "--limit", "2", "--checkpoints", "10,20,30"), "samples.jsonl",
         file_size_limit=60_000),
    Case("cache path is a file", lambda w: openai_args(w, DEAD_URL), "cache",
         env=lambda w: {"MEDMEMORYBENCH_CACHE": str(w.file("cache", "x"))}),
    Case("cache file not a database", lambda w: (w.file("cache/responses.sqlite", os.urandom(4096)),
                                                 openai_args(w, DEAD_URL))[1], "responses.sqlite",
         env=lambda w: {"MEDMEMORYBENCH_CACHE": str(w.root / "cache")}),
    Case("cache_path under a file", lambda w: openai_args(w, DEAD_URL, "--cache_path",
                                                          str(w.file("cache-file", "x") / "responses.sqlite")),
         "cache-file"),
    Case("cache folder unwritable", lambda w: openai_args(w, DEAD_URL), str(UNWRITABLE),
         env=lambda w: {"MEDMEMORYBENCH_CACHE": str(UNWRITABLE)}),
    # --- report ---------------------------------------------------------------------------------------------
    Case("report: folder missing", lambda w: ["report", str(w.root / "nowhere")], "nowhere"),
    Case("report: summary not JSON", _summary("{cut"), "summary.json"),
    Case("report: summary empty", _summary(""), "summary.json"),
    Case("report: summary a list", _summary("[]"), "summary.json"),
    Case("report: summary without tasks", _summary(json.dumps({"header": {}})), "summary.json"),
    Case("report: summary with tasks a string", _summary(json.dumps({"header": {"memory": {"memory": "x"},
                                                                               "model": {}}, "tasks": "x"})),
         "summary.json"),
    Case("report: plot under a file", lambda w: ["report", str(w.root / "nowhere"), "--plot",
                                                 str(w.file("p.txt", "x") / "plot.png")], "nowhere"),
    # --- submit, leaderboard and publishing results -------------------------------------------------------------
    Case("submit: run folder missing", lambda w: submit_args(w, run=w.root / "nowhere"), "nowhere"),
    Case("submit: summary tampered", lambda w: submit_args(w, run=w.tampered_run("summary.json", _raise_first_mean)),
         "summary.json: tasks.medmemorybench_efficient.metrics.recall_at_k.overall[0].mean"),
    Case("submit: a sample repeated", lambda w: submit_args(w, run=w.tampered_run("samples.jsonl",
                                                                                  lambda s: [*s, s[0]])),
         "samples.jsonl"),
    Case("submit: a sample missing", lambda w: submit_args(w, run=w.tampered_run("samples.jsonl", lambda s: s[1:])),
         "samples.jsonl"),
    Case("submit: a sample of another dataset", lambda w: submit_args(w, run=w.tampered_run(
        "samples.jsonl", lambda s: [{**s[0], "query_id": "P0999-C010-EEM1"}, *s[1:]])), "P0999-C010-EEM1"),
    Case("submit: a sample's recall raised", lambda w: submit_args(w, run=w.tampered_run(
        "samples.jsonl", lambda s: [{**s[0], "recall_at_k": 1.0, "mrr": 1.0} if s[0]["recall_at_k"] != 1.0 else
                                    {**s[0], "recall_at_k": 0.5}, *s[1:]])), "samples.jsonl"),
    Case("submit: samples not JSON", lambda w: ((w.valid_run() / "samples.jsonl").write_text("{cut\n"),
                                                submit_args(w))[1], "samples.jsonl"),
    Case("submit: run.json not JSON", lambda w: ((w.valid_run() / "run.json").write_text("{cut"), submit_args(w))[1],
         "run.json"),
    Case("submit: run.json of another release", lambda w: submit_args(w, run=w.tampered_run(
        "run.json", lambda h: h.update(dataset_fingerprint="0" * 64))), "dataset_fingerprint"),
    Case("submit: run.json of another task version", lambda w: submit_args(w, run=w.tampered_run(
        "run.json", lambda h: h["tasks"][0].update(version="0.1"))), "tasks[0].version"),
    Case("submit: a slice without --allow_partial", lambda w: [a for a in submit_args(w) if a != "--allow_partial"],
         "--allow_partial"),
    Case("submit: --system not YAML", lambda w: submit_args(w, "--system", system_file(w, "name: [oops\n")),
         "system.yaml"),
    Case("submit: --system unknown key", lambda w: submit_args(w, "--system", system_file(w, "colour: red\n")),
         "colour"),
    Case("submit: --system unknown paradigm", lambda w: submit_args(w, "--system", system_file(
        w, "paradigm: quantum\n")), "paradigm"),
    Case("submit: --system link not http", lambda w: submit_args(w, "--system", system_file(
        w, "link: 'javascript:alert(1)'\n")), "link"),
    Case("submit: --system name of control characters", lambda w: submit_args(w, "--system", system_file(
        w, 'name: "a\\x00b"\n')), "name"),
    Case("submit: --repo_id without a slash", lambda w: submit_args(w, "--repo_id", "results"), "--repo_id"),
    Case("submit: neither --repo_id nor --results", lambda w: [a for a in submit_args(w) if a != "--dry_run"],
         "--repo_id"),
    Case("submit: --results under a file", lambda w: [a for a in submit_args(w, "--results", str(
        w.file("results-file", "x") / "results")) if a != "--dry_run"], "results-file"),
    Case("leaderboard: results folder missing", lambda w: ["leaderboard", "--results", str(w.root / "nowhere"),
                                                           "--html", str(w.root / "board"), "--no-verify"], "nowhere"),
    Case("leaderboard: --verify without a release", lambda w: (w.file("results/submissions/.keep", ""), [
        "leaderboard", "--results", str(w.root / "results"), "--html", str(w.root / "board"), "--verify",
        "--dataset_path", str(w.root / "no-release")])[1], "--dataset_path"),
    Case("leaderboard: --html under a file", lambda w: (w.file("results/submissions/.keep", ""), [
        "leaderboard", "--results", str(w.root / "results"), "--html", str(w.file("board-file", "x") / "board"),
        "--no-verify"])[1],
         "board-file"),
    Case("leaderboard: --gold not a sealed gold file", lambda w: (w.file("results/submissions/.keep", ""), [
        "leaderboard", "--results", str(w.root / "results"), "--html", str(w.root / "board"), "--gold",
        str(w.file("gold.json.gz", "not gzip")), "--dataset_path", str(w.data)])[1], "gold.json.gz"),
    Case("leaderboard: --gold without --dataset_path", lambda w: (w.file("results/submissions/.keep", ""), [
        "leaderboard", "--results", str(w.root / "results"), "--html", str(w.root / "board"), "--gold",
        str(w.file("gold.json.gz", "x"))])[1], "--dataset_path"),
    Case("leaderboard: --other_release not a build", lambda w: (w.file("results/submissions/.keep", ""), [
        "leaderboard", "--results", str(w.root / "results"), "--html", str(w.root / "board"), "--dataset_path",
        str(w.data), "--other_release", str(w.root / "no-build")])[1], "--other_release"),
    Case("leaderboard: --other_release with --no-verify", lambda w: (w.file("results/submissions/.keep", ""), [
        "leaderboard", "--results", str(w.root / "results"), "--html", str(w.root / "board"), "--no-verify",
        "--other_release", str(w.data)])[1], "--other_release"),
    Case("leaderboard: --no-verify --dataset_path not a build", lambda w: (w.file("results/submissions/.keep", ""), [
        "leaderboard", "--results", str(w.root / "results"), "--html", str(w.root / "board"), "--no-verify",
        "--dataset_path", str(w.root / "no-release")])[1], "--dataset_path"),
    Case("publish: nothing to publish", lambda w: ["publish", "--dry_run"], "publish"),
    Case("publish: a folder without --repo_id", lambda w: ["publish", str(w.data), "--dry_run"], "--repo_id"),
    Case("publish: --space without --results", lambda w: ["publish", "--space", "org/board", "--dry_run"],
         "--results"),
    Case("publish: --space not ORG/NAME", lambda w: (w.file("results/submissions/.keep", ""), [
        "publish", "--space", "board", "--results", str(w.root / "results"), "--dry_run", "--no-verify"])[1],
         "--space"),
    # --- build and simulate ---------------------------------------------------------------------------------
    Case("build --personas 0", lambda w: ["build", "--personas", "0", "--out", build_out(w)], "--personas"),
    Case("build --health-sessions -1", lambda w: ["build", "--health-sessions", "-1", "--out", build_out(w)],
         "--health_sessions"),
    Case("build --family_sessions -1", lambda w: ["build", "--family_sessions", "-1", "--output_path", build_out(w)],
         "--family_sessions"),
    Case("build --encounters 5", lambda w: ["build", "--encounters", "5", "--out", build_out(w)], "--encounters"),
    Case("build --encounters 1000", lambda w: ["build", "--encounters", "1000", "--out", build_out(w)],
         "--encounters"),
    Case("build --renderer unknown", lambda w: ["build", "--renderer", "gpt", "--out", build_out(w)],
         "--renderer"),
    Case("build --seed not a number", lambda w: ["build", "--seed", "x", "--out", build_out(w)], "--seed"),
    Case("build --language unknown", lambda w: ["build", "--language", "fr", "--out", build_out(w)], "--language"),
    Case("build --hidden: sealed gold inside the public folder", lambda w: [
        "build", "--hidden", "--out", build_out(w), "--sealed_gold", build_out(w) + "/medmemorybench/gold.json.gz"],
         "--sealed_gold"),
    Case("build --sealed_gold without --hidden", lambda w: ["build", "--out", build_out(w), "--sealed_gold",
                                                            str(w.root / "gold.json.gz")], "--sealed_gold"),
    Case("build --out exists", lambda w: ((w.root / "build-out" / "medmemorybench").mkdir(parents=True),
                                          ["build", "--personas", "1", "--out", build_out(w)])[1], "--out"),
    Case("build --out is a file", lambda w: ["build", "--personas", "1", "--out", str(w.file("build-out", "x"))],
         "build-out"),
    Case("build --out unwritable", lambda w: ["build", "--personas", "1", "--out", str(UNWRITABLE)], str(UNWRITABLE)),
    Case("build --out disk full", lambda w: ["build", "--personas", "1", "--health-sessions", "2",
                                             "--family-sessions", "2", "--allow-audit-failures", "--out", build_out(w)],
         "build-out",
         file_size_limit=20_000),
    Case("build llm: unknown model", lambda w: ["build", "--renderer", "llm", "--model", "gpt", "--out",
                                                build_out(w)], "--model"),
    Case("build llm: base_url empty", lambda w: ["build", "--renderer", "llm", "--model", "openai", "--model_args",
                                                 "model=m,base_url=", "--out", build_out(w)], "base_url"),
    Case("build --model without --renderer llm", lambda w: ["build", "--model", "hf", "--output_path", build_out(w)],
         "--model"),
    Case("build --renderer llm without --model", lambda w: ["build", "--renderer", "llm", "--output_path",
                                                            build_out(w)], "--renderer"),
    Case("register: not a build", lambda w: ["register", str(w.file("empty/x.txt", "x").parent)], "empty"),
    Case("register: corrupt split", lambda w: (w.split().write_bytes(os.urandom(512)),
                                               ["register", str(w.copy_data())])[1], "checkpoint_10.parquet"),
    Case("register: cache unwritable", lambda w: ["register", str(w.data)], str(UNWRITABLE),
         env=lambda w: {"HF_DATASETS_CACHE": str(UNWRITABLE)},
         file_size_limit=10**9),  # (in a child: `datasets` reads HF_DATASETS_CACHE once, when it is imported)
    Case("publish --repo_id without a slash", lambda w: ["publish", str(w.data), "--repo_id", "nope", "--dry_run"],
         "--repo_id"),
    Case("demo --qa_patients 0", lambda w: ["demo", "--qa_patients", "0", "--output_path", str(w.root / "demo")],
         "--qa_patients"),
    Case("simulate --personas 0", lambda w: ["simulate", "--personas", "0", "--out", sim_out(w)],
         "--personas"),
    Case("simulate --encounters 5", lambda w: ["simulate", "--encounters", "5", "--out", sim_out(w)],
         "--encounters"),
    Case("simulate --condition unknown", lambda w: ["simulate", "--condition", "flu", "--out", sim_out(w)],
         "flu"),
    Case("simulate --out is a file", lambda w: ["simulate", "--personas", "1", "--out", str(w.file("sim-out", "x"))],
         "sim-out"),
    Case("simulate --out unwritable", lambda w: ["simulate", "--personas", "1", "--out", str(UNWRITABLE)],
         str(UNWRITABLE)),
    # --- knowledge YAML ---------------------------------------------------------------------------------------
    Case("knowledge folder missing", lambda w: ["knowledge", "--knowledge", str(w.root / "kb")], "kb"),
    Case("knowledge YAML syntax error", lambda w: ["knowledge", "--knowledge", str(w.knowledge("labs.yaml",
                                                                                                "labs: [a, b\n"))],
         "labs.yaml"),
    Case("knowledge YAML empty", lambda w: ["knowledge", "--knowledge", str(w.knowledge("labs.yaml", ""))],
         "labs.yaml"),
    Case("knowledge YAML a list", lambda w: ["knowledge", "--knowledge", str(w.knowledge("labs.yaml", "- 1\n"))],
         "labs.yaml"),
    Case("knowledge YAML python tag", lambda w: ["knowledge", "--knowledge", str(w.knowledge(
        "labs.yaml", "labs: !!python/object/apply:os.system ['true']\n"))], "labs.yaml"),
    Case("knowledge YAML not UTF-8", lambda w: (w.knowledge("labs.yaml", ""), (w.root / "knowledge" / "labs.yaml")
                                                .write_bytes(b"labs: \xff\xfe\n"),
                                                ["knowledge", "--knowledge", str(w.root / "knowledge")])[2],
         "labs.yaml"),
    Case("knowledge YAML wrong field type", lambda w: ["knowledge", "--knowledge", str(w.knowledge(
        "people.yaml", "first_names: 5\n"))], "people.yaml"),
    Case("simulate with broken knowledge", lambda w: ["simulate", "--personas", "1", "--out", sim_out(w),
                                                      "--knowledge", str(w.knowledge("labs.yaml", "labs: 3\n"))],
         "labs.yaml"),
    # --- review sheets ----------------------------------------------------------------------------------------
    Case("review --score file missing", lambda w: ["review", "--score", str(w.root / "a.csv")], "a.csv"),
    Case("review --score not a sheet", lambda w: ["review", "--score", str(w.file("a.csv", "x,y\n1,2\n"))], "a.csv"),
    Case("review --score binary", lambda w: ["review", "--score", str(w.file("a.csv", os.urandom(300)))], "a.csv"),
    Case("review --score three sheets", lambda w: ["review", "--score", *(str(w.file(f"{n}.csv", "x\n")) for n in
                                                                           "abc")], "--score"),
    Case("review --sample 0", lambda w: ["review", str(w.data), "--sample", "0", "--out", str(w.root / "r.csv")],
         "--sample"),
    Case("review --sample -3", lambda w: ["review", str(w.data), "--sample", "-3", "--out", str(w.root / "r.csv")],
         "--sample"),
    Case("review --out under a file", lambda w: ["review", str(w.data), "--sample", "5", "--out",
                                                 str(w.file("sheet-dir", "x") / "r.csv")], "sheet-dir"),
    Case("review --json without --score", lambda w: ["review", str(w.data), "--json", str(w.root / "s.json")],
         "--json"),
    # --- serve and ls -----------------------------------------------------------------------------------------
    Case("serve --port negative", lambda w: ["serve", "--port", "-1"], "--port"),
    Case("serve --port too large", lambda w: ["serve", "--port", "70000"], "--port"),
    Case("serve --max-batch 0", lambda w: ["serve", "--max-batch", "0"], "--max_batch"),
    Case("serve --model unknown", lambda w: ["serve", "--model", "gpt"], "--model"),
    Case("serve --model none", lambda w: ["serve", "--model", "none"], "--model"),
    Case("ls unknown", lambda w: ["ls", "tricks"], "tricks"),
]


def new_files(root: Path, before: set[Path]) -> list[Path]:
    """Markers of completeness (COMPLETE_MARKERS) under `root` that were not in `before`."""
    return [p for name in COMPLETE_MARKERS for p in root.rglob(name) if p not in before]


def markers(root: Path) -> set[Path]:
    return {p for name in COMPLETE_MARKERS for p in root.rglob(name)}


@dataclass
class Outcome:
    exit_code: int
    stderr: str
    traceback: bool


def run_in_child(args: list[str], env: dict[str, str], file_size_limit: int | None, cwd: Path) -> Outcome:
    """The command in its own process (as a user runs it), optionally with writes failing past a size."""
    def limit() -> None:
        if file_size_limit is not None:
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails (EFBIG) instead of killing
            resource.setrlimit(resource.RLIMIT_FSIZE, (file_size_limit, file_size_limit))

    result = subprocess.run([sys.executable, "-m", "medmemorybench.cli", *args], cwd=cwd, capture_output=True,
                            text=True, env={**os.environ, "HF_HUB_OFFLINE": "1", **env}, preexec_fn=limit,
                            timeout=300)
    return Outcome(result.returncode, result.stderr, "Traceback" in result.stderr + result.stdout)


def problems(case: Case, w: Workspace, outcome: Outcome, before: set[Path]) -> list[str]:
    """What is wrong with how the command treated the case (empty when it was refused as it should be)."""
    found = []
    if outcome.traceback:
        found.append("printed a traceback")
    if outcome.exit_code != 2:
        found.append(f"exit code {outcome.exit_code}, not 2")
    lines = [line for line in outcome.stderr.splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith(("error:", "Error:"))]
    if not errors:
        found.append("no error line")
    expected = case.expected(w)
    if not any(expected in line for line in lines):
        found.append(f"the error does not name {expected!r}")
    left = new_files(w.root, before)
    if left:
        found.append(f"left {', '.join(str(p.relative_to(w.root)) for p in left)} looking complete")
    return [f"{case.name}: {p} (stderr: {outcome.stderr.strip()[-300:]!r})" for p in found]
