"""Verifying a run folder against the gold: the release it ran on, its tasks and prompts, one sample per asked
question and nothing else, every sample re-scored from its answer and the dataset's question, and its summary
re-computed from the re-scored samples. `summary.json` and the scores inside the samples are never trusted:
they must equal what re-scoring gives, or the run is refused with the first difference.

What cannot be re-computed from the files is taken as recorded and checked as far as the files allow: a
judge's verdicts (re-asking needs the judge model), the `echo` flag (deciding it needs the whole prompt; an
answer marked not an echo that copies the recorded records is refused), the memory's costs and token counts.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from medmemorybench.dataset.build import fingerprint_rows
from medmemorybench.dataset.hidden import gold_rows
from medmemorybench.dataset.load import find_local, read_rows
from medmemorybench.dataset.schema import METADATA_FILE, base_config
from medmemorybench.errors import InputError
from medmemorybench.harness.observed import retrieval_query
from medmemorybench.harness.prompting import template_hashes
from medmemorybench.harness.results import RUN_HEADER, SAMPLES, SUMMARY
from medmemorybench.harness.samples import METRIC_FIELDS, make_record
from medmemorybench.harness.stream import first_patients, split_is_asked
from medmemorybench.harness.summary import summarize
from medmemorybench.harness.tasks import TaskConfig, resolve_tasks
from medmemorybench.leaderboard.bundle import Coverage, read_json_object, read_sample_lines
from medmemorybench.memory.base import MemoryItem, Retrieval
from medmemorybench.models.base import Completion
from medmemorybench.scoring import is_echo
from medmemorybench.scoring.base import Score
from medmemorybench.scoring.source import SOURCE_SCORERS

COMPARED_FIELDS = ("status", "query_type", "persona_id", "checkpoint", "gold", "target_hash", "recall_at_k", "mrr",
                   *METRIC_FIELDS, "hallucinated", "trap_safe", "trap_abstained", "echo", "judge")
"""Sample fields that must equal what re-scoring gives."""
TOLERANCE = 1e-9


@dataclass
class VerifiedRun:
    """A run that passed every check, with what `submit` sends."""

    header: dict[str, Any]
    samples: list[dict[str, Any]]
    """The re-scored samples (equal to the submitted ones in every compared field)."""
    summary: dict[str, Any]
    """Re-computed from the re-scored samples."""
    coverage: Coverage
    fingerprint: str
    verification: str = "public gold"
    """How its scores were had (`VERIFICATIONS`)."""


VERIFICATIONS = ("hidden gold", "public gold", "unscored")
"""A run on a hidden-gold release scored against the sealed gold (its answers could not be written from the gold);
a run on a public release, re-scored (its answers and retrieved ids are self-reported: only their consistency is
checked); a run on a hidden release checked without the gold (nothing to score it with)."""


def verify_run(run_dir: Path, dataset_path: str | Path | None = None,
               sealed: dict[str, Any] | None = None) -> VerifiedRun:
    """Re-score a run folder from its samples and the gold, and check it is whole.

    Args:
        run_dir: holds run.json, samples.jsonl and summary.json (a run folder, or a bundle).
        dataset_path: the release the run must have used (default: the header's dataset folder, else a local
            build as `run` finds one).
        sealed: the sealed gold of a hidden-gold release (`dataset.hidden.read_sealed`); without it a run on such
            a release is checked for consistency only and comes back "unscored".

    Raises:
        InputError: the first problem, naming the file and field (or line and query id).
    """
    run_dir = Path(run_dir)
    header = read_json_object(run_dir / RUN_HEADER)
    submitted = read_json_object(run_dir / SUMMARY)
    samples = read_sample_lines(run_dir / SAMPLES)
    config = _field(header, "config", dict, run_dir / RUN_HEADER)
    rows, fingerprint, hidden = _release(header, run_dir, dataset_path)
    tasks = _tasks(header, run_dir / RUN_HEADER)
    asked, coverage = _asked_questions(tasks, rows, config, run_dir / RUN_HEADER)
    rescored = _rescore_samples(samples, tasks, asked, header, run_dir / SAMPLES, hidden)
    _check_cited_sessions(rescored, tasks, rows, run_dir / SAMPLES)
    summary = summarize(header, tasks, rescored)
    _compare(submitted, summary, run_dir / SUMMARY)
    if not hidden:
        return VerifiedRun(header, rescored, summary, coverage, fingerprint)
    if sealed is None:
        return VerifiedRun(header, rescored, summary, coverage, fingerprint, "unscored")
    revealed = _gold_rows(rows, fingerprint, sealed)  # (by public id: a type-filtered task asks by its shown type)
    gold = {task.task: {q["query_id"]: q for split_rows in revealed[task.dataset_name].values() for row in split_rows
                        for q in row["questions"]} for task in tasks}
    by_name = {task.task: task for task in tasks}
    scored = [_score_hidden(sample, by_name[sample["task"]], gold[sample["task"]][sample["query_id"]], header)
              for sample in rescored]
    return VerifiedRun(header, scored, summarize(header, tasks, scored), coverage, fingerprint, "hidden gold")


def _score_hidden(sample: dict, task: TaskConfig, question: dict, header: dict) -> dict:
    """A consistent sample of a hidden-release run, scored against its sealed question (under its public id)."""
    completion = _completion(sample, header)
    echo = sample.get("echo") if completion is not None and completion.error is None else None
    record = make_record(task, question, sample["retrieval_query"], _retrieval(sample), completion,
                         sample.get("prompt_hash"), hashlib.sha256(question["answer"].encode()).hexdigest(), None,
                         echo=echo)
    for key in ("memory_cost", "native_steps"):
        if key in sample:
            record[key] = sample[key]
    return record


def _field(mapping: dict, key: str, kind: type, where: Path) -> Any:
    value = mapping.get(key)
    if not isinstance(value, kind):
        raise InputError(f"{where}: {key}: missing or not a {kind.__name__}")
    return value


def _release(header: dict, run_dir: Path, dataset_path: str | Path | None) -> tuple[dict, str, bool]:
    """The release's rows and fingerprint, and whether it is a hidden-gold release; the fingerprint is re-computed
    from the rows, so an edited gold folder is not taken for the release, and must be the one the run recorded."""
    recorded = _field(header, "dataset_fingerprint", str, run_dir / RUN_HEADER)
    given = dataset_path if dataset_path is not None else header.get("dataset")
    folder = find_local(str(given) if given is not None else None)
    if folder is None:
        raise InputError(f"--dataset_path: no MedMemoryBench build at {given or './out'}; pass the release the "
                         "run used (the gold re-scoring reads)")
    rows, fingerprint, hidden = read_release(folder)
    if recorded != fingerprint:
        raise InputError(f"{run_dir / RUN_HEADER}: dataset_fingerprint {recorded[:12]} is not the release at "
                         f"{folder} ({fingerprint[:12]}); pass --dataset_path of the release the run used")
    return rows, fingerprint, hidden


def read_release(folder: Path) -> tuple[dict, str, bool]:
    """A build folder's rows, their fingerprint (re-computed, and refused unless it is the one the folder records)
    and whether it is a hidden-gold release.

    Raises:
        InputError: naming the folder when its rows are not the build its metadata records (an edited folder).
    """
    rows, fingerprint = _read_release(folder)
    meta = read_json_object(folder / METADATA_FILE)
    if meta.get("fingerprint") != fingerprint:
        raise InputError(f"{folder}: its rows do not match its own fingerprint ({METADATA_FILE} says "
                         f"{str(meta.get('fingerprint'))[:12]}, the rows give {fingerprint[:12]}): not a release "
                         "as built; rebuild or download it again")
    return rows, fingerprint, meta.get("hidden") is True


@dataclass(frozen=True)
class ReleaseFacts:
    """Which data a table's runs ran on, as the page names it: its fingerprint and size (None when the board did
    not read its rows: `--no-verify`)."""

    fingerprint: str
    patients: int | None = None
    questions: int | None = None
    """Distinct questions of the build (each is asked in both modes)."""


def release_facts(folder: Path) -> ReleaseFacts:
    """A build's fingerprint and size, counted from its rows (`read_release`: an edited folder is refused)."""
    rows, fingerprint, _hidden = read_release(folder)
    first = next((config for config in sorted(rows) if base_config(config) == "questions"), None)  # (one language's)
    questions = [q for split_rows in rows[first].values() for q in split_rows] if first else []
    return ReleaseFacts(fingerprint, len({q["persona_id"] for q in questions}), len(questions))


_RELEASES: dict[tuple, tuple[dict, str]] = {}
"""Releases read in this process, keyed by folder and the size and time of each file (a board re-scores every
bundle against the same release: it is read once)."""


_GOLD: dict[tuple[str, str], dict] = {}
"""A hidden release's rows with their sealed gold, by (release, sealed build) fingerprint: a board scores every
hidden bundle against the same pair, and restoring it re-fingerprints the whole build (read once, as `_RELEASES`)."""


def _gold_rows(rows: dict, fingerprint: str, sealed: dict[str, Any]) -> dict:
    key = (fingerprint, str(sealed.get("fingerprint")))
    if key not in _GOLD:
        _GOLD.clear()  # (one at a time: a full build's rows are large)
        _GOLD[key] = gold_rows(rows, sealed)
    return _GOLD[key]


def _read_release(folder: Path) -> tuple[dict, str]:
    files = sorted(folder.rglob("*.parquet"))
    key = (str(folder.resolve()), *((str(f), f.stat().st_size, f.stat().st_mtime_ns) for f in files))
    if key not in _RELEASES:
        rows = read_rows(folder)
        _RELEASES.clear()  # (one release at a time: a full build's rows are large)
        _RELEASES[key] = (rows, fingerprint_rows(rows))
    return _RELEASES[key]


def _tasks(header: dict, where: Path) -> list[TaskConfig]:
    """The run's tasks as this package defines them; their versions, modes, k and prompts must be the run's."""
    recorded = _field(header, "tasks", list, where)
    if not recorded:
        raise InputError(f"{where}: tasks: empty")
    answered = (header.get("model") or {}).get("backbone") != "none"
    tasks = []
    for index, entry in enumerate(recorded):
        if not isinstance(entry, dict) or not isinstance(entry.get("task"), str):
            raise InputError(f"{where}: tasks[{index}]: not a task entry")
        try:
            (task,) = resolve_tasks([entry["task"]])
        except Exception:  # noqa: BLE001 - an unknown name raises the registry's error, a group gives several
            raise InputError(f"{where}: tasks[{index}].task: '{entry['task']}' is not a task of medmemorybench "
                             "(`medmemorybench ls tasks`)") from None
        for key, known in (("version", task.version), ("mode", task.mode),
                           ("retrieval_k", task.retrieval_k), ("query_types", task.types())):
            if entry.get(key) != known:
                raise InputError(f"{where}: tasks[{index}].{key}: {entry.get(key)!r}, but {task.task} here has "
                                 f"{known!r}; re-run with this version of medmemorybench")
        if answered:
            _check_prompts(entry.get("prompts"), template_hashes(task), f"{where}: tasks[{index}].prompts")
        tasks.append(task)
    judge = header.get("judge")
    if isinstance(judge, dict):
        from medmemorybench.scoring import load_judge_prompts

        _check_prompts(judge.get("prompts"), {k: p.sha256 for k, p in load_judge_prompts().items()},
                       f"{where}: judge.prompts")
        if any(t.metadata.scoring == "longmemeval" for t in tasks):  # (its verdicts came from the pinned prompts)
            from medmemorybench.scoring.longmemeval import load_longmemeval_prompts

            _check_prompts(judge.get("longmemeval_prompts"),
                           {p.name: p.sha256 for p in load_longmemeval_prompts().values()},
                           f"{where}: judge.longmemeval_prompts")
    return tasks


def _check_prompts(recorded: object, known: dict[str, str], where: str) -> None:
    if not isinstance(recorded, dict):
        raise InputError(f"{where}: missing (a run made before prompts were recorded); re-run to submit it")
    for name, digest in known.items():
        if recorded.get(name) != digest:
            raise InputError(f"{where}['{name}']: the run's prompt differs from this package's (an edited or "
                             "older template); runs are compared on the same prompts")


def _asked_questions(tasks: list[TaskConfig], rows: dict, config: dict,
                     where: Path) -> tuple[dict[str, dict[str, dict]], Coverage]:
    """Per task, the questions the run's options ask (its patients, checkpoints and types), by query id."""
    limit, checkpoints = config.get("limit"), config.get("checkpoints")
    if limit is not None and (not isinstance(limit, int) or isinstance(limit, bool) or limit < 1):
        raise InputError(f"{where}: config.limit: {limit!r} is not a number of patients")
    if checkpoints is not None and (not isinstance(checkpoints, list)
                                    or not all(isinstance(c, int) for c in checkpoints)):
        raise InputError(f"{where}: config.checkpoints: {checkpoints!r} is not a list of checkpoints")
    asked: dict[str, dict[str, dict]] = {}
    total = patients = all_patients = 0
    asked_points: set[int] = set()
    for task in tasks:
        types = set(task.types())
        mine: dict[str, dict] = {}
        everyone: set[str] = set()
        for split, split_rows in rows[task.dataset_name].items():
            in_task = split_is_asked(task, split, None)
            total += sum(1 for row in split_rows if in_task for q in row["questions"] if q["query_type"] in types)
            everyone.update(row["persona_id"] for row in split_rows)
            if not split_is_asked(task, split, checkpoints):
                continue
            for row in first_patients(split_rows, limit):
                for question in row["questions"]:
                    if question["query_type"] in types:
                        mine[question["query_id"]] = question
                        asked_points.add(question["checkpoint"])
        asked[task.task] = mine
        patients = max(patients, len({q["persona_id"] for q in mine.values()}))
        all_patients = max(all_patients, len(everyone))
    coverage = Coverage(questions=sum(len(m) for m in asked.values()), of_questions=total, patients=patients,
                        of_patients=all_patients, checkpoints=sorted(asked_points))
    return asked, coverage


def _rescore_samples(samples: list[dict], tasks: list[TaskConfig], asked: dict[str, dict[str, dict]], header: dict,
                     where: Path, hidden: bool = False) -> list[dict]:
    by_name = {task.task: task for task in tasks}
    every_id = {qid for questions in asked.values() for qid in questions}
    seen: dict[tuple[str, str], int] = {}
    out = []
    for number, sample in enumerate(samples, start=1):
        task_name, query_id = sample.get("task"), sample.get("query_id")
        line = f"{where}: line {number}"
        if task_name not in by_name:
            raise InputError(f"{line}: task {task_name!r} is not one of the run's tasks")
        if not isinstance(query_id, str):
            raise InputError(f"{line}: query_id missing")
        if (task_name, query_id) in seen:
            raise InputError(f"{line} ({query_id}): repeats the sample of line {seen[(task_name, query_id)]}")
        seen[(task_name, query_id)] = number
        question = asked[task_name].get(query_id)
        if question is None:
            why = "not asked by the run's options" if query_id in every_id else "not a question of the dataset"
            raise InputError(f"{line} ({query_id}): {why}")
        record = _rescore(sample, by_name[task_name], question, header, line, hidden)
        out.append(record)
    for task in tasks:
        missing = [qid for qid in asked[task.task] if (task.task, qid) not in seen]
        if missing:
            raise InputError(f"{where}: lacks {len(missing)} of the {len(asked[task.task])} questions {task.task} "
                             f"asked (first: {missing[0]}); finish the run with `medmemorybench run ... --resume`")
    return out


def _check_cited_sessions(samples: list[dict], tasks: list[TaskConfig], rows: dict, where: Path) -> None:
    """Every retrieved item cites only sessions its patient's memory had been given by the question's checkpoint (the
    runner's leakage guard, checked again: an item citing every session of the year, later ones included, would
    score Recall@k 1)."""
    given: dict[tuple[str, str], list[tuple[int, set[str]]]] = {}  # (task, persona) -> (checkpoint, ids so far)
    for task in tasks:
        streams: dict[str, list[tuple[int, list[str]]]] = {}
        for split_rows in rows[task.dataset_name].values():
            for row in split_rows:
                streams.setdefault(row["persona_id"], []).append(
                    (row["checkpoint"], [session["session_id"] for session in row["sessions"]]))
        for persona, points in streams.items():
            seen: set[str] = set()
            for checkpoint, ids in sorted(points):
                seen |= set(ids)
                given.setdefault((task.task, persona), []).append((checkpoint, set(seen)))
    for sample in samples:
        allowed = next((ids for checkpoint, ids in given.get((sample["task"], sample["persona_id"]), [])
                        if checkpoint == sample["checkpoint"]), set())
        for item in sample["retrieved"]:
            foreign = [sid for sid in item["session_ids"] if sid not in allowed]
            if foreign:
                raise InputError(f"{where} ({sample['query_id']}): retrieved cites {str(foreign[0])[:40]}, a session "
                                 f"the memory had not been given by checkpoint {sample['checkpoint']}")


def _retrieval(sample: dict) -> Retrieval:
    return Retrieval(
        items=[MemoryItem(text=str(item.get("text", "")), session_ids=tuple(str(s) for s in item["session_ids"]),
                          score=float(item["score"])) for item in sample["retrieved"]],
        truncated_sessions=int(sample.get("truncated_sessions") or 0))


def _rescore(sample: dict, task: TaskConfig, question: dict, header: dict, line: str, hidden: bool = False) -> dict:
    """The sample's line as the runner would write it for its answer and retrieval, with every score re-computed
    from the dataset's question (`hidden`: a question of a hidden-gold release: nothing to score, the line is
    checked for consistency)."""
    query = retrieval_query(question)
    if sample.get("retrieval_query") != query:
        raise InputError(f"{line} ({question['query_id']}): retrieval_query is not what the question asks")
    try:
        retrieval = _retrieval(sample)
        completion = _completion(sample, header)
    except (KeyError, TypeError, ValueError) as exc:
        raise InputError(f"{line} ({question['query_id']}): not a sample line ({exc.__class__.__name__}: "
                         f"{str(exc)[:80]})") from None
    echo = sample.get("echo")
    if completion is not None and completion.error is None:
        if not isinstance(echo, bool):
            raise InputError(f"{line} ({question['query_id']}): echo: must be true or false for an answer")
        # (the recorded records are prefixes of what the model saw, so a copy of them is a copy of the prompt)
        if not echo and is_echo(completion.text, records=[item.text for item in retrieval.items]):
            raise InputError(f"{line} ({question['query_id']}): echo: false, but the answer copies its retrieved "
                             "records")
    judge = None
    if sample.get("judge") is not None:
        verdict_name = SOURCE_SCORERS.get(task.metadata.scoring, "llm_judge")  # (LongMemEval's judge: its own name)
        recorded = (sample.get("scores") or {}).get(verdict_name)
        if not isinstance(recorded, dict):
            raise InputError(f"{line} ({question['query_id']}): judge: a verdict without scores.{verdict_name}")
        judge = Score(value=recorded.get("value"), extracted=recorded.get("extracted"),
                      explanation=str(recorded.get("explanation", "")), metadata=dict(recorded.get("metadata") or {}),
                      status="error" if recorded.get("status") == "error" else "scored")
    target_hash = hashlib.sha256(question["answer"].encode()).hexdigest()
    record = make_record(task, question, query, retrieval, completion, sample.get("prompt_hash"), target_hash, judge,
                         echo=echo if completion is not None and completion.error is None else None, hidden=hidden)
    for key in ("memory_cost", "native_steps"):
        if key in sample:
            record[key] = sample[key]
    for key in COMPARED_FIELDS:
        if not _equal(sample.get(key), record.get(key)):
            raise InputError(f"{line} ({question['query_id']}): {key} is {_short(sample.get(key))}, but the answer "
                             f"re-scores to {_short(record.get(key))}")
    return record


def _completion(sample: dict, header: dict) -> Completion | None:
    """The sample's answer; None in a retrieval-only run (where every sample must be one, and only there)."""
    without_model = (header.get("model") or {}).get("backbone") == "none"
    if (sample.get("status") == "retrieval_only") != without_model:
        raise ValueError("an answer in a run without a model" if without_model else
                         "a retrieval-only sample in a run with a model")
    if without_model:
        return None
    tokens = sample.get("tokens") or {}
    return Completion(text=sample.get("output") or "", prompt_tokens=tokens.get("prompt") or 0,
                      completion_tokens=tokens.get("completion") or 0, cached_tokens=tokens.get("cached") or 0,
                      latency_ms=sample.get("latency_ms") or 0.0, truncated_tokens=sample.get("truncated_tokens") or 0,
                      error=sample.get("error"), cache_hit=bool(sample.get("cache_hit")))


def _equal(a: object, b: object) -> bool:
    """Equal as JSON values, floats within `TOLERANCE`."""
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return math.isclose(a, b, rel_tol=TOLERANCE, abs_tol=TOLERANCE)
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_equal(a[k], b[k]) for k in a)
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return len(a) == len(b) and all(_equal(x, y) for x, y in zip(a, b, strict=True))
    return a == b


def _short(value: object) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= 60 else text[:57] + "..."


def _compare(submitted: dict, recomputed: dict, where: Path) -> None:
    """The submitted summary must hold what the samples re-score to (its header aside, which run.json is)."""
    for key in ("n_samples", "n_errors", "tasks"):
        difference = _first_difference(submitted.get(key), json.loads(json.dumps(recomputed[key])), key)
        if difference:
            raise InputError(f"{where}: {difference}; the summary does not match its re-scored samples")


def _first_difference(a: object, b: object, path: str) -> str | None:
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(set(a) | set(b)):
            found = _first_difference(a.get(key), b.get(key), f"{path}.{key}")
            if found:
                return found
        return None
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for index, (x, y) in enumerate(zip(a, b, strict=True)):
            found = _first_difference(x, y, f"{path}[{index}]")
            if found:
                return found
        return None
    return None if _equal(a, b) else f"{path} is {_short(a)}, re-scored {_short(b)}"
