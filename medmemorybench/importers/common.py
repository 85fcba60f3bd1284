"""What both importers share: reading a source file into one clear error, checking its fields, and laying imported
streams out as our rows (efficient = mixed, questions, personas) written with `export_dataset`.

A public benchmark's conversation becomes one persona's stream: its sessions numbered in order (`<persona>-S001`),
split at the checkpoints where its questions are asked (a checkpoint is the number of sessions read before asking,
as in our own builds), and always at its last session, so every source session is in the stream.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from medmemorybench.dataset.build import BuildOptions, BuiltDataset, Rows, fingerprint_rows
from medmemorybench.dataset.export import export_dataset
from medmemorybench.dataset.schema import (
    METADATA_FILE,
    PERSONAS_SPLIT,
    QUESTION,
    is_persona_id,
    split_name,
)
from medmemorybench.errors import InputError
from medmemorybench.files import loads_json, write_atomic

PLACEHOLDER_REPLY = "(no reply)"
"""The turn added to a source session of one turn: our sessions hold at least two turns (`render.models.Session`);
the added turn is counted (`sessions_padded`) and says nothing."""

ROLES = ("patient", "doctor")
"""Our turn roles (`render.models.Turn`): the first speaker of a source maps to `patient`, the other to `doctor`."""


@dataclass
class ImportReport:
    """What an import wrote and every quirk of the source it met, counted (nothing is dropped unseen)."""

    source: str
    variant: str
    version: str
    sha256: str
    file: str
    output: Path | None = None
    personas: int = 0
    sessions: int = 0
    turns: int = 0
    questions: int = 0
    questions_by_type: dict[str, int] = field(default_factory=dict)
    questions_by_source_category: dict[str, int] = field(default_factory=dict)
    checkpoints: int = 0
    quirks: Counter = field(default_factory=Counter)
    """Quirk name -> how many times it was met (see docs/other_benchmarks.md for each name)."""
    examples: dict[str, list[str]] = field(default_factory=dict)
    """Quirk name -> up to `MAX_EXAMPLES` places it was met (`conv-26 qa 17: 'D:11:26'`), for checking by hand."""

    def note(self, quirk: str, where: str, count: int = 1) -> None:
        """Count a quirk and keep a few of the places it was met."""
        self.quirks[quirk] += count
        seen = self.examples.setdefault(quirk, [])
        if len(seen) < MAX_EXAMPLES:
            seen.append(where)

    def to_dict(self) -> dict[str, Any]:
        return {"source": self.source, "variant": self.variant, "version": self.version, "sha256": self.sha256,
                "file": self.file, "output": str(self.output) if self.output else None, "personas": self.personas,
                "sessions": self.sessions, "turns": self.turns, "questions": self.questions,
                "questions_by_type": dict(sorted(self.questions_by_type.items())),
                "questions_by_source_category": dict(sorted(self.questions_by_source_category.items())),
                "checkpoints": self.checkpoints, "quirks": dict(sorted(self.quirks.items())),
                "examples": {k: v for k, v in sorted(self.examples.items())}}

    def summary(self) -> str:
        """A few lines for a terminal."""
        lines = [f"{self.source} ({self.variant}, {self.version}, sha256 {self.sha256[:12]}): {self.personas} streams, "
                 f"{self.sessions} sessions, {self.questions} questions at {self.checkpoints} checkpoints"]
        lines += [f"  {name}: {count}" for name, count in sorted(self.quirks.items())]
        return "\n".join(lines)


MAX_EXAMPLES = 5


def read_source(path: Path) -> tuple[Any, str]:
    """The parsed JSON of a source file and its SHA-256 (of the bytes read).

    Raises:
        InputError: one line naming the file when it is missing, unreadable, not UTF-8 JSON or nested too deeply.
    """
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise InputError(f"{path}: cannot read ({exc.strerror or exc})") from None
    digest = hashlib.sha256(data).hexdigest()
    try:
        return loads_json(data), digest
    except UnicodeDecodeError:
        raise InputError(f"{path}: not UTF-8 text (expected the benchmark's JSON file)") from None
    except json.JSONDecodeError as exc:
        raise InputError(f"{path}: not JSON ({exc.msg}, line {exc.lineno} column {exc.colno})") from None


_KIND_NAMES = {list: "a list", dict: "an object", str: "a string", int: "an integer", float: "a number"}


def need(value: Any, kind: type | tuple[type, ...], path: Path, where: str) -> Any:
    """`value` when it is of `kind`, else one line naming the file, the place and what it should be (`True` is no
    number here, though Python counts it an int).

    Raises:
        InputError: `path: where: expected a list, got a str` (or `got nothing` for a missing field).
    """
    kinds = kind if isinstance(kind, tuple) else (kind,)
    if value is _MISSING or not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
        wanted = " or ".join(_KIND_NAMES.get(k, k.__name__) for k in kinds)
        got = "nothing" if value is _MISSING else _KIND_NAMES.get(type(value), f"a {type(value).__name__}")
        raise InputError(f"{path}: {where}: expected {wanted}, got {got}")
    return value


def get(obj: dict, key: str, kind: type | tuple[type, ...], path: Path, where: str) -> Any:
    """`obj[key]` checked to be of `kind` (see `need`)."""
    return need(obj.get(key, _MISSING), kind, path, f"{where}: '{key}'")


_MISSING: Any = object()


def answer_text(value: Any, report: ImportReport, where: str) -> str:
    """A gold answer as text: numbers (`2022`, `3`) are written out and counted as `answers_not_text`."""
    if isinstance(value, str):
        return value
    report.note("answers_not_text", f"{where}: {value!r}"[:120])
    return json.dumps(value, ensure_ascii=False) if not isinstance(value, (int, float)) else str(value)


def plain_id(raw: str, taken: set[str], report: ImportReport, where: str) -> str:
    """`raw` as a persona id (`schema.is_persona_id`): other characters become '_', a clash gets a suffix; both are
    counted as `persona_ids_rewritten`."""
    candidate = raw if is_persona_id(raw) else re.sub(r"[^A-Za-z0-9_.-]", "_", raw).strip("._-")[:60] or "stream"
    candidate = candidate.replace("..", "_")
    base, n = candidate, 1
    while candidate in taken:
        n += 1
        candidate = f"{base[:56]}_{n}"
    if candidate != raw:
        report.note("persona_ids_rewritten", f"{where}: {raw!r} -> {candidate}")
    taken.add(candidate)
    return candidate


def session_id(persona_id: str, number: int) -> str:
    """`conv-26-S003`: our regular-session id (the validator reads the number after `-S` as the stream position)."""
    return f"{persona_id}-S{number:03d}"


def session_row(persona_id: str, number: int, date: str | None, turns: list[dict], source_id: str,
                renderer: str) -> dict:
    """One session of our schema; `event_ids` keeps the source's own session id."""
    return {"session_id": session_id(persona_id, number), "kind": "regular", "date": date, "family_member": None,
            "turns": turns, "event_ids": [source_id], "renderer": renderer}


def fit_turns(turns: list[dict], report: ImportReport, where: str) -> list[dict]:
    """A session's turns as our schema needs them: at least two (a one-turn session gets `PLACEHOLDER_REPLY` from the
    other role, counted as `sessions_padded`)."""
    if len(turns) == 1:
        other = ROLES[1] if turns[0]["role"] == ROLES[0] else ROLES[0]
        report.note("sessions_padded", where)
        return [*turns, {"role": other, "text": PLACEHOLDER_REPLY}]
    return turns


def question_row(*, query_id: str, persona_id: str, checkpoint: int, query_type: str, question: str, answer: str,
                 evidence: list[str], template: str, abstain: bool = False, absent_fact: str | None = None,
                 common_wrong_answer: str | None = None) -> dict:
    """One question of our schema; the fields our generator fills for its own types (facts, chains, traps, options)
    stay empty."""
    row: dict[str, Any] = {name: [] for name, feature in QUESTION.items() if not hasattr(feature, "dtype")}
    row.update({"query_id": query_id, "persona_id": persona_id, "checkpoint": checkpoint, "query_type": query_type,
                "question": question, "answer": answer, "evidence_session_ids": evidence, "trap_category": None,
                "abstain": abstain, "absent_fact": absent_fact, "common_wrong_answer": common_wrong_answer,
                "subject": None, "template": template})
    return row


@dataclass
class Stream:
    """One imported persona: its sessions in stream order (numbered 1..n) and its questions, each with its
    checkpoint set."""

    persona_id: str
    sessions: list[dict]
    questions: list[dict]
    source: dict[str, Any] = field(default_factory=dict)
    """What the `personas` row keeps of the source (its ids, speakers), as JSON in `care_year_json`."""

    def checkpoints(self) -> list[int]:
        """Where the stream is split: every checkpoint a question is asked at, and the last session."""
        return sorted({q["checkpoint"] for q in self.questions} | {len(self.sessions)})


def stream_rows(streams: list[Stream]) -> Rows:
    """Our rows: per checkpoint, each stream's new sessions and that checkpoint's questions (`efficient`, and the
    same as `mixed`: a public benchmark has no noise of ours), the questions one per row, a `personas` row each."""
    rows: Rows = {"efficient": {}, "mixed": {}, "questions": {}, "personas": {PERSONAS_SPLIT: []}}
    for stream in sorted(streams, key=lambda s: s.persona_id):
        previous = 0
        for checkpoint in stream.checkpoints():
            asked = [q for q in stream.questions if q["checkpoint"] == checkpoint]
            row = {"persona_id": stream.persona_id, "checkpoint": checkpoint,
                   "sessions": stream.sessions[previous:checkpoint], "questions": asked}
            for config in ("efficient", "mixed"):
                rows[config].setdefault(split_name(checkpoint), []).append(row)
            if asked:
                rows["questions"].setdefault(split_name(checkpoint), []).extend(asked)
            previous = checkpoint
        rows["personas"][PERSONAS_SPLIT].append(persona_row(stream))
    return rows


def persona_row(stream: Stream) -> dict:
    """The `personas` row of an imported stream: no condition, traps, family or events of ours; the source's ids in
    `care_year_json`."""
    return {"persona_id": stream.persona_id, "condition": "", "condition_name": "", "icd11": "", "group": "",
            "sex": "", "age": 0, "traps": [], "family": [], "events": [],
            "care_year_json": json.dumps(stream.source, ensure_ascii=False, sort_keys=True)}


@dataclass(frozen=True)
class Source:
    """Where the rows came from, as the metadata and the card record it."""

    name: str
    """`locomo` or `longmemeval`."""
    title: str
    variant: str
    version: str
    sha256: str
    file: str
    license: str
    """The Hub's licence id of the source data (the card's header carries it)."""
    url: str
    renderer: str


def write_import(streams: list[Stream], source: Source, report: ImportReport, out: Path, path: Path,
                 overwrite: bool = False) -> Path:
    """Validate the rows, write them with `export_dataset`, and give the folder the source's card and metadata.

    Raises:
        InputError: naming the source file when the imported rows fail our validator (a quirk not handled), or when
            the output folder exists and `overwrite` is false.
    """
    from medmemorybench.dataset.audit import age_distribution
    from medmemorybench.dataset.validate import validate_rows

    if not streams:
        raise InputError(f"{path}: no conversation to import")
    rows = stream_rows(streams)
    problems = validate_rows(rows)
    if problems:
        raise InputError(f"{path}: the imported rows fail validation ({len(problems)} problems), first: {problems[0]}")
    questions = [q for split in rows["questions"].values() for q in split]
    sessions = sum(len(s.sessions) for s in streams)
    turns = sum(len(session["turns"]) for s in streams for session in s.sessions)
    by_type = Counter(q["query_type"] for q in questions)
    by_checkpoint = Counter(q["checkpoint"] for q in questions)
    report.personas, report.sessions, report.turns, report.questions = len(streams), sessions, turns, len(questions)
    report.questions_by_type = dict(sorted(by_type.items()))
    report.checkpoints = len(rows["efficient"])
    stats = {
        "personas": len(streams), "languages": ["en"], "questions": len(questions),
        "questions_by_type": dict(sorted(by_type.items())),
        "questions_by_checkpoint": {str(k): v for k, v in sorted(by_checkpoint.items())},
        "sessions": {"efficient": sessions, "mixed": sessions}, "turns": {"efficient": turns, "mixed": turns},
        "regular_sessions_by_renderer": {source.renderer: sessions}, "evidence_age": age_distribution(questions),
        "variety": {}, "filler_share": {}, "variety_table": {}, "audit_table": {}, "audit_failures": [],
        "source": {"name": source.name, "title": source.title, "variant": source.variant, "version": source.version,
                   "sha256": source.sha256, "file": source.file, "license": source.license, "url": source.url},
        "import_report": report.to_dict() | {"output": None},
    }
    options = BuildOptions(seed=0, personas=len(streams), encounters=max(len(s.sessions) for s in streams),
                           health_sessions=0, family_sessions=0, language="en", renderer=source.renderer)
    built = BuiltDataset(options, rows, stats, fingerprint_rows(rows))
    target = export_dataset(built, out, overwrite=overwrite)
    _write_card(target, source, report)
    report.output = target
    return target


def _write_card(folder: Path, source: Source, report: ImportReport) -> None:
    """Replace the MedMemoryBench card's claims with the source's: its title, licence and tags in the header (the
    configs and features stay as `export_dataset` wrote them), and a body saying what this folder holds."""
    import yaml

    card = folder / "README.md"
    text = card.read_text(encoding="utf-8")
    match = re.match(r"\A---\n(.*?)\n---\n", text, re.DOTALL)
    header = yaml.safe_load(match.group(1)) if match else {}
    header.update({"license": source.license, "pretty_name": f"{source.title} in MedMemoryBench format",
                   "size_categories": header.get("size_categories", []),
                   "task_categories": ["question-answering"], "task_ids": ["open-domain-qa"],
                   "annotations_creators": ["found"], "language_creators": ["found"],
                   "source_datasets": [f"extended|{source.name}"],
                   "tags": ["memory", "long-context", "agent-memory", source.name]})
    quirks = "\n".join(f"- {name}: {count}" for name, count in sorted(report.quirks.items())) or "- none"
    body = (f"# {source.title} (imported)\n\n"
            f"The public {source.title} file `{source.file}` ({source.variant}; {source.version}; SHA-256 "
            f"`{source.sha256}`), from {source.url}, laid out as MedMemoryBench rows by `medmemorybench.importers` "
            f"(see docs/other_benchmarks.md). Its licence is the source's: `{source.license}`. "
            "Not MedMemoryBench data: no patients, noise, traps or event graphs; `mixed` equals `efficient`.\n\n"
            f"- streams: {report.personas}; sessions: {report.sessions}; turns: {report.turns}; "
            f"questions: {report.questions}\n"
            f"- questions by our type: {', '.join(f'{k} {v}' for k, v in report.questions_by_type.items())}\n"
            f"- questions by source category: "
            f"{', '.join(f'{k} {v}' for k, v in sorted(report.questions_by_source_category.items()))}\n\n"
            f"Source quirks handled (counts; `{METADATA_FILE}` lists examples):\n\n{quirks}\n")
    front = yaml.safe_dump(header, sort_keys=False, allow_unicode=True).rstrip()
    write_atomic(card, f"---\n{front}\n---\n\n{body}")
