"""LongMemEval (xiaowu0162/LongMemEval; `longmemeval_s*.json`, `longmemeval_m*.json`, `longmemeval_oracle.json`) as
MedMemoryBench rows.

One question's haystack is one persona stream (the persona id is the `question_id`): its sessions in date order
(stable, so S and M, already sorted, keep theirs; the oracle file's are not sorted), `user` turns as our `patient`
role, `assistant` turns as `doctor`, and the one question asked after the whole haystack, as LongMemEval asks it.
The evidence sessions are `answer_session_ids`; the question type stays beside ours in `template`
(`longmemeval.knowledge-update`, `...abstention` for the `_abs` ids); docs/other_benchmarks.md has the mapping and
every quirk counted.
"""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

from medmemorybench.errors import InputError
from medmemorybench.importers.common import (
    ImportReport,
    Source,
    Stream,
    answer_text,
    fit_turns,
    get,
    need,
    plain_id,
    question_row,
    read_source,
    session_id,
    session_row,
    write_import,
)

QUESTION_TYPES: dict[str, str] = {
    "single-session-user": "EEM",
    "single-session-assistant": "EEM",
    "single-session-preference": "IG",
    "multi-session": "MCD",
    "knowledge-update": "SUA",
    "temporal-reasoning": "TLA",
}
"""LongMemEval's `question_type` -> our type; a `question_id` ending in `_abs` is our ABS whatever its type."""

VARIANTS = ("s", "m", "oracle")
ROLES = {"user": "patient", "assistant": "doctor"}
URL = "https://github.com/xiaowu0162/LongMemEval"
LICENSE = "mit"
_DATE = re.compile(r"(\d{4})/(\d{1,2})/(\d{1,2})")
"""`2023/05/20 (Sat) 02:21`, LongMemEval's `haystack_dates` and `question_date`."""


def version_of(path: Path) -> str:
    """The release a file is, by the name the README gives it: `*_cleaned.json` is the 2025-09 cleaned release, any
    other the 2024-10 original (the oracle file kept its name; its SHA-256 tells the two apart)."""
    return "cleaned (2025-09)" if "cleaned" in Path(path).name else "original (2024-10) or oracle"


def import_longmemeval(path: Path, out: Path, variant: str, *, version: str | None = None,
                       overwrite: bool = False) -> ImportReport:
    """Write `<out>/medmemorybench/` from a LongMemEval file (`variant`: s, m or oracle) and say what was met.

    Raises:
        InputError: one line naming the file and the place when it is not LongMemEval's JSON (not JSON, not a list
            of questions, a field missing or of the wrong type, haystack lists of unequal lengths, an unknown
            question type, a repeated question id), naming the option for an unknown `variant`, or the output folder
            when it exists and `overwrite` is false.
    """
    if variant not in VARIANTS:
        raise InputError(f"variant: '{variant}' is not one of {', '.join(VARIANTS)}")
    path = Path(path)
    data, digest = read_source(path)
    release = version or version_of(path)
    report = ImportReport("longmemeval", variant, release, digest, path.name)
    items = need(data, list, path, "top level (a list of questions)")
    taken: set[str] = set()
    seen: set[str] = set()
    streams = []
    for index, item in enumerate(items):
        stream = _stream(need(item, dict, path, f"question {index}"), index, path, report, taken, seen)
        if stream is not None:
            streams.append(stream)
    source = Source("longmemeval", "LongMemEval", variant, release, digest, path.name, LICENSE, URL,
                    "source:longmemeval")
    write_import(streams, source, report, out, path, overwrite)
    return report


def _stream(item: dict, index: int, path: Path, report: ImportReport, taken: set[str],
            seen: set[str]) -> Stream | None:
    raw_id = get(item, "question_id", str, path, f"question {index}")
    where = f"question {index} ({raw_id[:40]})"
    if raw_id in seen:
        raise InputError(f"{path}: {where}: 'question_id' repeats an earlier question's")
    seen.add(raw_id)
    qtype = get(item, "question_type", str, path, where)
    if qtype not in QUESTION_TYPES:
        raise InputError(f"{path}: {where}: 'question_type': {qtype[:40]!r} is not one of "
                         f"{', '.join(QUESTION_TYPES)}")
    question = get(item, "question", str, path, where)
    answer = answer_text(get(item, "answer", (str, int, float), path, where), report, where)
    asked_on = _date(get(item, "question_date", str, path, where), report, f"{where}: question_date")
    ids = get(item, "haystack_session_ids", list, path, where)
    dates = get(item, "haystack_dates", list, path, where)
    haystack = get(item, "haystack_sessions", list, path, where)
    if not len(ids) == len(dates) == len(haystack):
        raise InputError(f"{path}: {where}: haystack_session_ids, haystack_dates and haystack_sessions differ in "
                         "length "
                         f"({len(ids)}, {len(dates)}, {len(haystack)})")
    answer_ids = [need(a, str, path, f"{where}: answer_session_ids") for a in
                  get(item, "answer_session_ids", list, path, where)]
    abstain = raw_id.endswith("_abs")
    pid = plain_id(raw_id, taken, report, where)

    entries = []
    for n, (sid, stamp, turns) in enumerate(zip(ids, dates, haystack, strict=True)):
        place = f"{where}: session {n}"
        sid = need(sid, str, path, f"{place}: id")
        date = _date(need(stamp, str, path, f"{place}: date"), report, f"{place}: date")
        turns, marked = _turns(need(turns, list, path, place), path, place, report)
        entries.append((sid, date, turns, marked, place))
    if [e[1] or "" for e in entries] != sorted(e[1] or "" for e in entries):
        report.note("haystacks_reordered_by_date", where)
        entries.sort(key=lambda e: e[1] or "")  # (stable: same-day sessions keep the file's order)
    if len({e[0] for e in entries}) < len(entries):
        report.note("haystack_session_ids_repeated", where)

    sessions: list[dict] = []
    ours: dict[str, list[str]] = {}
    user_evidence: set[str] = set()
    for sid, date, turns, marked, place in entries:
        if not turns:
            report.note("sessions_without_turns", f"{place} ({sid[:40]})")
            continue
        if asked_on and date and date > asked_on:
            report.note("sessions_after_question", f"{place} ({sid[:40]})")
        position = len(sessions) + 1
        ours.setdefault(sid, []).append(session_id(pid, position))
        if "user" in marked:
            user_evidence.add(sid)
        sessions.append(session_row(pid, position, date, fit_turns(turns, report, place), sid, "source:longmemeval"))
    if not sessions:
        report.note("questions_without_haystack", where)
        return None

    missing = [a for a in answer_ids if a not in ours]
    if missing:
        report.note("answer_sessions_not_in_haystack", f"{where}: {missing[:3]}", len(missing))
    found = [a for a in answer_ids if a in ours]
    no_user_mark = [a for a in found if a not in user_evidence]
    if no_user_mark:
        report.note("answer_sessions_without_user_has_answer", f"{where}: {no_user_mark[:3]}", len(no_user_mark))
    if not abstain and found and not any(a in user_evidence for a in found):
        report.note("questions_without_user_has_answer", where)
    evidence = sorted({s for a in found for s in ours[a]})
    if abstain:
        report.note("abstention_questions", where)
        if evidence:
            report.note("abstention_evidence_not_scored", where)
        evidence = []
    category = f"{qtype}.abstention" if abstain else qtype
    report.questions_by_source_category[category] = report.questions_by_source_category.get(category, 0) + 1
    row = question_row(query_id=f"{pid}-Q1", persona_id=pid, checkpoint=len(sessions),
                       query_type="ABS" if abstain else QUESTION_TYPES[qtype], question=question, answer=answer,
                       evidence=evidence, template=f"longmemeval.{category}", abstain=abstain,
                       absent_fact=question if abstain else None)
    return Stream(pid, sessions, [row], {"source": "longmemeval", "question_id": raw_id, "question_type": qtype,
                                         "question_date": item["question_date"],
                                         "sessions": {ours_id: sid for sid, mine in ours.items() for ours_id in mine}})


def _date(stamp: str, report: ImportReport, place: str) -> str | None:
    """`2023/05/20 (Sat) 02:21` -> `2023-05-20` (the time of day is dropped: our sessions carry an ISO date); None,
    counted as `dates_unparsed`, for what does not read as a date."""
    match = _DATE.search(stamp)
    try:
        if match:
            return dt.date(int(match[1]), int(match[2]), int(match[3])).isoformat()
    except ValueError:
        pass
    report.note("dates_unparsed", f"{place}: {stamp[:60]!r}")
    return None


def _turns(turns: list, path: Path, place: str, report: ImportReport) -> tuple[list[dict], set[str]]:
    """A session's turns in our roles, and the source roles of its turns marked `has_answer` (counted as
    `has_answer_turns`; our turns have no such mark, the session's evidence id carries it)."""
    out: list[dict] = []
    marked: set[str] = set()
    for i, turn in enumerate(turns):
        where = f"{place}: turn {i}"
        turn = need(turn, dict, path, where)
        role = get(turn, "role", str, path, where)
        text = get(turn, "content", str, path, where).strip()
        if turn.get("has_answer") is True:
            report.note("has_answer_turns", where)
            marked.add(role)
        if role not in ROLES:
            report.note("turns_of_unknown_role", f"{where}: {role[:40]!r}")
        if not text:
            report.note("empty_turns_dropped", where)
            continue
        out.append({"role": ROLES.get(role, "doctor"), "text": text})
    return out, marked

