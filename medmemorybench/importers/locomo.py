"""LoCoMo (snap-research/locomo, `data/locomo10.json`) as MedMemoryBench rows.

One conversation is one persona stream: its sessions in their number order, dated, the speakers' names kept in the
text (`Caroline: Hey Mel!`) since the questions name them; `speaker_a` takes our `patient` role, `speaker_b` our
`doctor` role. A question is asked at the checkpoint after its last evidence session (`placement="evidence"`), or
after the whole conversation as LoCoMo's own evaluation does (`placement="end"`); a question whose evidence names no
session of the conversation goes to the end. The category id stays beside our type in `template`
(`locomo.category_2.temporal`); docs/other_benchmarks.md has the mapping and every quirk counted.
"""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path
from typing import Any

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

CATEGORIES: dict[int, tuple[str, str]] = {
    1: ("multi_hop", "MCD"),
    2: ("temporal", "TLA"),
    3: ("open_domain", "IG"),
    4: ("single_hop", "EEM"),
    5: ("adversarial", "ABS"),
}
"""Source category id -> (its name, our type). The ids follow LoCoMo's own evaluation code
(`task_eval/evaluation.py`: 1 is scored as multi-hop, 5 as adversarial; `task_eval/gpt_utils.py` adds the
conversation DATE hint to 2), not the order the paper lists the categories in."""

NOT_MENTIONED = "Not mentioned in the conversation"
"""Gold of a category-5 question: the option LoCoMo's evaluation counts right (`'not mentioned'` in the answer)."""

KNOWN_FILES = {
    "79fa87e90f04081343b8c8debecb80a9a6842b76a7aa537dc9fdf651ea698ff4":
        "published 2024-08-09 (snap-research/locomo, data/locomo10.json)",
}
"""SHA-256 of published files -> the version they are; another file is imported as an `unpublished copy`."""

PLACEMENTS = ("evidence", "end")
URL = "https://github.com/snap-research/locomo"
LICENSE = "cc-by-nc-4.0"

_SESSION_KEY = re.compile(r"session_(\d+)(_date_time)?")
_DIA_ID = re.compile(r"D:?(\d+):(\d+)")
"""A dialog id `D3:5` (session 3, turn 5); `D:11:26` (a typo of the published file) is read as `D11:26`."""
_DATE = re.compile(r"(\d{1,2}):(\d{2})\s*([ap]m)\s+on\s+(\d{1,2})\s+([A-Za-z]+),?\s+(\d{4})", re.IGNORECASE)
"""`1:56 pm on 8 May, 2023`, LoCoMo's `session_N_date_time`."""


def import_locomo(path: Path, out: Path, *, placement: str = "evidence", overwrite: bool = False) -> ImportReport:
    """Write `<out>/medmemorybench/` from a LoCoMo file and say what was met on the way.

    Raises:
        InputError: one line naming the file and the place when it is not LoCoMo's JSON (not JSON, not a list of
            samples, a sample or question missing a field or holding the wrong type, an unknown category), naming
            the option for an unknown `placement`, or the output folder when it exists and `overwrite` is false.
    """
    if placement not in PLACEMENTS:
        raise InputError(f"placement: '{placement}' is not one of {', '.join(PLACEMENTS)}")
    path = Path(path)
    data, digest = read_source(path)
    version = KNOWN_FILES.get(digest, "unpublished copy")
    report = ImportReport("locomo", "locomo10", version, digest, path.name)
    samples = need(data, list, path, "top level (a list of conversations)")
    taken: set[str] = set()
    streams = [_stream(need(sample, dict, path, f"sample {index}"), index, path, placement, report, taken)
               for index, sample in enumerate(samples)]
    source = Source("locomo", "LoCoMo", "locomo10", version, digest, path.name, LICENSE, URL, "source:locomo")
    write_import(streams, source, report, out, path, overwrite)
    return report


def _stream(sample: dict, index: int, path: Path, placement: str, report: ImportReport, taken: set[str]) -> Stream:
    raw_id = get(sample, "sample_id", str, path, f"sample {index}")
    where = f"sample {index} ({raw_id[:40]})"
    pid = plain_id(raw_id, taken, report, where)
    conversation = get(sample, "conversation", dict, path, where)
    speakers = [get(conversation, key, str, path, f"{where}: conversation") for key in ("speaker_a", "speaker_b")]
    sessions, numbers = _sessions(conversation, pid, speakers, path, where, report)
    turns = [t for key, value in conversation.items() if re.fullmatch(r"session_\d+", key) and isinstance(value, list)
             for t in value if isinstance(t, dict)]
    dia_ids = {d for d in (_canonical(t.get("dia_id")) for t in turns) if d}
    questions = [_question(need(qa, dict, path, f"{where}: qa {n}"), n, pid, numbers, dia_ids, len(sessions),
                           placement, path, where, report)
                 for n, qa in enumerate(get(sample, "qa", list, path, where))]
    if not sessions:
        raise InputError(f"{path}: {where}: no session holds a turn")
    return Stream(pid, sessions, questions, {"source": "locomo", "sample_id": raw_id,
                                             "speakers": dict(zip(("patient", "doctor"), speakers, strict=True)),
                                             "sessions": {session_id(pid, n): f"session_{k}"
                                                          for k, n in numbers.items()}})


def _sessions(conversation: dict, pid: str, speakers: list[str], path: Path, where: str,
              report: ImportReport) -> tuple[list[dict], dict[int, int]]:
    """Our sessions in source-number order, and source session number -> our stream position."""
    found = sorted({int(m.group(1)) for key in conversation if (m := _SESSION_KEY.fullmatch(key))})
    sessions: list[dict] = []
    numbers: dict[int, int] = {}
    for number in found:
        place = f"{where}: session_{number}"
        turns = need(conversation.get(f"session_{number}", []), list, path, place)
        if not turns:
            report.note("sessions_without_turns", place)
            continue
        stamp = conversation.get(f"session_{number}_date_time")
        date = _date(stamp, place, report)
        ours = [_turn(need(t, dict, path, f"{place}: turn {i}"), speakers, path, f"{place}: turn {i}", report)
                for i, t in enumerate(turns)]
        ours = [t for t in ours if t is not None]
        if not ours:
            report.note("sessions_without_turns", place)
            continue
        numbers[number] = len(sessions) + 1
        sessions.append(session_row(pid, numbers[number], date, fit_turns(ours, report, place),
                                    f"session_{number}", "source:locomo"))
    return sessions, numbers


def _date(stamp: Any, place: str, report: ImportReport) -> str | None:
    """`1:56 pm on 8 May, 2023` -> `2023-05-08` (the time of day is dropped: our sessions carry an ISO date)."""
    if stamp is None:
        report.note("sessions_without_date", place)
        return None
    match = _DATE.search(stamp) if isinstance(stamp, str) else None
    if match is None:
        report.note("dates_unparsed", f"{place}: {str(stamp)[:60]!r}")
        return None
    try:
        day = dt.datetime.strptime(f"{match[4]} {match[5]} {match[6]}", "%d %B %Y")
    except ValueError:
        report.note("dates_unparsed", f"{place}: {stamp[:60]!r}")
        return None
    return day.date().isoformat()


def _turn(turn: dict, speakers: list[str], path: Path, place: str, report: ImportReport) -> dict | None:
    """`{speaker, text, blip_caption?}` -> our turn: the name kept in the text, a shared image as its caption."""
    speaker = get(turn, "speaker", str, path, place)
    text = get(turn, "text", str, path, place).strip()
    caption = turn.get("blip_caption")
    if isinstance(caption, str) and caption.strip():
        report.note("image_captions_kept", place)
        text = f"{text} [shares an image: {caption.strip()}]".strip()
    if not text:
        report.note("empty_turns_dropped", place)
        return None
    if speaker not in speakers:
        report.note("turns_of_unknown_speaker", f"{place}: {speaker[:40]!r}")
    role = "patient" if speaker == speakers[0] else "doctor"
    return {"role": role, "text": f"{speaker}: {text}"}


def evidence_sessions(evidence: list, place: str, report: ImportReport, dia_ids: set[str] | None = None) -> list[int]:
    """The source session numbers a question's evidence names, in order of first mention.

    Each entry should be one dialog id (`D3:5`); the published file also has several in one string (`D8:6; D9:17`,
    `D9:1 D4:4`), a stray colon (`D:11:26`), zero padding (`D30:05`) and a bare `D`. Entries read after such a fix
    are counted as `evidence_ids_repaired`, tokens that do not read as a dialog id as `evidence_ids_unparsed`, and
    ids of a turn the conversation does not hold (its session does) as `evidence_turns_unknown` (`dia_ids`: the
    conversation's own, when given).
    """
    out: list[int] = []
    for entry in evidence:
        if not isinstance(entry, str):
            report.note("evidence_ids_unparsed", f"{place}: {entry!r}"[:120])
            continue
        tokens = [t for t in re.split(r"[;,\s]+", entry.strip()) if t]
        if not tokens:
            report.note("evidence_ids_unparsed", f"{place}: {entry!r}")
        repaired = len(tokens) > 1
        for token in tokens:
            match = _DIA_ID.fullmatch(token)
            if match is None:
                report.note("evidence_ids_unparsed", f"{place}: {token!r}")
                continue
            canonical = f"D{int(match[1])}:{int(match[2])}"
            repaired = repaired or token != canonical
            if dia_ids is not None and canonical not in dia_ids:
                report.note("evidence_turns_unknown", f"{place}: {canonical}")
            if int(match[1]) not in out:
                out.append(int(match[1]))
        if repaired:
            report.note("evidence_ids_repaired", f"{place}: {entry!r}")
    return out


def _canonical(dia_id: Any) -> str | None:
    """`D3:05` -> `D3:5`; None for what is no dialog id."""
    match = _DIA_ID.fullmatch(dia_id) if isinstance(dia_id, str) else None
    return f"D{int(match[1])}:{int(match[2])}" if match else None


def _question(qa: dict, n: int, pid: str, numbers: dict[int, int], dia_ids: set[str], last: int,
              placement: str, path: Path, where: str, report: ImportReport) -> dict:
    place = f"{where}: qa {n}"
    question = get(qa, "question", str, path, place)
    category = get(qa, "category", int, path, place)
    if category not in CATEGORIES:
        raise InputError(f"{path}: {place}: 'category': {category} is not one of {', '.join(map(str, CATEGORIES))}")
    name, query_type = CATEGORIES[category]
    report.questions_by_source_category[str(category)] = report.questions_by_source_category.get(str(category), 0) + 1
    evidence = need(qa.get("evidence", []), list, path, f"{place}: 'evidence'")
    cited = evidence_sessions(evidence, place, report, dia_ids)
    unknown = [s for s in cited if s not in numbers]
    if unknown:
        report.note("evidence_sessions_unknown", f"{place}: session {unknown}", len(unknown))
    positions = sorted(numbers[s] for s in cited if s in numbers)
    if placement == "evidence" and positions:
        checkpoint = positions[-1]
    else:
        checkpoint = last
        if placement == "evidence":
            report.note("questions_at_end_no_evidence", place)
    common = {"query_id": f"{pid}-Q{n + 1:04d}", "persona_id": pid, "checkpoint": checkpoint,
              "query_type": query_type, "question": question, "template": f"locomo.category_{category}.{name}"}
    if category == 5:
        report.note("adversarial_questions", place)
        if "answer" in qa:
            report.note("adversarial_with_answer", f"{place}: answer {qa['answer']!r} not used"[:120])
        wrong = qa.get("adversarial_answer")
        if wrong is None:
            report.note("adversarial_without_adversarial_answer", place)
        if positions:
            report.note("adversarial_evidence_not_scored", place)
        return question_row(**common, answer=NOT_MENTIONED, evidence=[], abstain=True, absent_fact=question,
                            common_wrong_answer=None if wrong is None else answer_text(wrong, report, place))
    if "answer" not in qa:
        raise InputError(f"{path}: {place}: 'answer': missing (category {category} questions have one)")
    return question_row(**common, answer=answer_text(qa["answer"], report, place),
                        evidence=[session_id(pid, p) for p in positions])
