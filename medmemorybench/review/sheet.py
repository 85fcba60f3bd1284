"""Review sheets: a seeded sample of a built dataset's care-year events and questions, stratified by
event kind and question type, written as CSV (what reviewers fill in and `score` reads) and Markdown
(the same items, for reading)."""

from __future__ import annotations

import csv
import hashlib
import io
import json
from collections import Counter
from dataclasses import dataclass
from itertools import zip_longest
from pathlib import Path
from typing import NamedTuple

from jinja2 import StrictUndefined

from medmemorybench.dataset.schema import METADATA_FILE
from medmemorybench.errors import InputError
from medmemorybench.files import write_atomic
from medmemorybench.review._text import event_lines, question_lines, session_text
from medmemorybench.templating import BoundedSandbox

ITEM_TYPES = ("event", "question")
VERDICTS = ("correct", "incorrect", "unsure")
REVIEWER_COLUMNS = ("verdict", "correction", "comment")
COLUMNS = ("item_id", "item_type", "category", "persona_id", "condition", "date", "checkpoint", "what",
           "evidence", *REVIEWER_COLUMNS)
"""The CSV columns, in order; the last three are left empty for the reviewer."""
CSV_ENCODING = "utf-8-sig"  # the byte-order mark makes spreadsheet programs read the file as UTF-8
TEMPLATE = Path(__file__).parent / "templates" / "sheet.md.jinja"


@dataclass(frozen=True)
class ReviewItem:
    """One thing a reviewer judges: a care-year event or a question with its gold answer."""

    item_id: str
    """The event's `event_id` or the question's `query_id`."""
    item_type: str
    """`event` or `question`."""
    category: str
    """The event's kind (`lab_check`, ...) or the question's type (`EEM`, ...): the stratum."""
    persona_id: str
    condition: str
    """The patient's condition key in the knowledge base."""
    date: str
    """An event's date (empty for a question)."""
    checkpoint: int | None
    """A question's checkpoint (None for an event)."""
    what: tuple[str, ...]
    """The statement under review, one line each: an event's facts, or a question with its gold."""
    evidence: tuple[str, ...]
    """The quoted sessions: an event's own session, or a question's evidence sessions."""

    def csv_row(self) -> dict[str, str]:
        """The item as a CSV row with empty reviewer columns."""
        return {"item_id": self.item_id, "item_type": self.item_type, "category": self.category,
                "persona_id": self.persona_id, "condition": self.condition, "date": self.date,
                "checkpoint": "" if self.checkpoint is None else str(self.checkpoint),
                "what": "\n".join(self.what), "evidence": "\n\n".join(self.evidence),
                **dict.fromkeys(REVIEWER_COLUMNS, "")}


class ReviewSheet(NamedTuple):
    """What `write_review_sheet` wrote."""

    csv_path: Path
    markdown_path: Path
    items: list[ReviewItem]
    pool: Counter
    """Items in the dataset per (item_type, category), the population the sample was drawn from."""


def collect_items(rows: dict[str, dict[str, list[dict]]]) -> list[ReviewItem]:
    """Every event (`personas` config) and every question (`questions` config) of a dataset's rows.

    Raises:
        InputError: when a question's patient or evidence session, or an event's session, is missing.
    """
    sessions: dict[str, dict] = {}
    by_event: dict[str, list[dict]] = {}
    for split_rows in rows["efficient"].values():
        for row in split_rows:
            for session in row["sessions"]:
                sessions[session["session_id"]] = session
                for event_id in session["event_ids"]:
                    by_event.setdefault(event_id, []).append(session)
    personas = {p["persona_id"]: p for p in rows["personas"]["patients"]}
    items: list[ReviewItem] = []
    for persona in personas.values():
        for event in persona["events"]:
            own = by_event.get(event["event_id"])
            if not own:
                raise InputError(f"personas/patients: {event['event_id']}: no session of the efficient config "
                                 "renders this event")
            items.append(ReviewItem(event["event_id"], "event", event["kind"], persona["persona_id"],
                                    persona["condition"], event["date"], None, tuple(event_lines(event)),
                                    tuple(session_text(s) for s in own)))
    for split, split_rows in sorted(rows["questions"].items()):
        for question in split_rows:
            where = f"questions/{split}: {question['query_id']}"
            persona = personas.get(question["persona_id"])
            if persona is None:
                raise InputError(f"{where}: patient '{question['persona_id']}' is not in the personas config")
            missing = [s for s in question["evidence_session_ids"] if s not in sessions]
            if missing:
                raise InputError(f"{where}: evidence session {missing[0]} is not in the efficient config")
            evidence = tuple(session_text(sessions[s]) for s in question["evidence_session_ids"])
            items.append(ReviewItem(question["query_id"], "question", question["query_type"], persona["persona_id"],
                                    persona["condition"], "", question["checkpoint"], tuple(question_lines(question)),
                                    evidence or ("(no evidence sessions: the honest answer is that the records "
                                                 "do not say)",)))
    return items


def _draw_key(seed: int, text: str) -> str:
    # A hash, not `random`: the same seed draws the same items on every Python version and platform.
    return hashlib.sha256(f"{seed}\x00{text}".encode()).hexdigest()


def sample_items(items: list[ReviewItem], sample: int, seed: int) -> list[ReviewItem]:
    """A seeded sample of `sample` items that covers every stratum (event kind, question type) it can.

    First one item from each stratum, alternating events and questions, strata in seeded order (all of
    them when `sample` is at least the number of strata); then the rest drawn at random from all
    remaining items, so larger strata get proportionally more. Returned sorted by patient, type and id.
    """
    by_stratum: dict[tuple[str, str], list[ReviewItem]] = {}
    for item in sorted(items, key=lambda i: _draw_key(seed, i.item_id)):
        by_stratum.setdefault((item.item_type, item.category), []).append(item)
    firsts = {kind: sorted((s for s in by_stratum if s[0] == kind), key=lambda s: _draw_key(seed, s[1]))
              for kind in ITEM_TYPES}
    interleaved = [s for pair in zip_longest(firsts["event"], firsts["question"]) for s in pair if s is not None]
    chosen = [by_stratum[s][0] for s in interleaved[:sample]]
    taken = {item.item_id for item in chosen}
    rest = [i for i in sorted(items, key=lambda i: _draw_key(seed, i.item_id)) if i.item_id not in taken]
    chosen += rest[: max(0, sample - len(chosen))]
    return sorted(chosen, key=lambda i: (i.persona_id, i.item_type, i.item_id))


def render_csv(items: list[ReviewItem]) -> str:
    """The sheet as CSV text: a header row, then one row per item (multi-line cells are quoted)."""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=COLUMNS, lineterminator="\n")
    writer.writeheader()
    for item in items:
        writer.writerow(item.csv_row())
    return buffer.getvalue()


def render_markdown(items: list[ReviewItem], personas: list[dict], *, seed: int, pool: Counter,
                    fingerprint: str, csv_name: str) -> str:
    """The sheet as Markdown: how to review, the patients' profiles, then one section per item."""
    sampled = Counter((i.item_type, i.category) for i in items)
    strata = [{"item_type": t, "category": c, "pool": pool[(t, c)], "sampled": sampled[(t, c)]}
              for t, c in sorted(pool)]
    env = BoundedSandbox(undefined=StrictUndefined, keep_trailing_newline=True, trim_blocks=True,
                               lstrip_blocks=True)
    template = env.from_string(TEMPLATE.read_text(encoding="utf-8"))
    return template.render(items=items, personas=personas, seed=seed, fingerprint=fingerprint, strata=strata,
                           pool_size=sum(pool.values()), csv_name=csv_name, verdicts=VERDICTS)


def _fingerprint(folder: Path) -> str:
    try:
        return json.loads((folder / METADATA_FILE).read_text(encoding="utf-8"))["fingerprint"]
    except (OSError, ValueError, KeyError, TypeError):
        return "unknown (no medmemorybench.json)"


def write_review_sheet(dataset: Path, out: Path, *, sample: int, seed: int = 0,
                       overwrite: bool = False) -> ReviewSheet:
    """Sample `sample` items of a built dataset folder and write `out` (CSV) and `out` with `.md` beside it.

    The same dataset, sample size and seed give byte-identical files. Each file is written to a
    temporary file first and renamed, so neither is ever left half-written.

    Raises:
        InputError: for a bad `out` (not `.csv`, or existing without `overwrite`), a `sample` out of
            range, or a dataset folder that cannot be read.
    """
    out = Path(out)
    if out.suffix.lower() != ".csv":
        raise InputError(f"--output_path: {out} must end in .csv (the Markdown copy is written beside it as .md)")
    markdown = out.with_suffix(".md")
    for path in (out, markdown):
        if path.exists() and not overwrite:
            raise InputError(f"--output_path: {path} already exists; choose another --output_path or pass --overwrite")
    if sample < 1:
        raise InputError(f"--sample: must be at least 1 (got {sample})")
    folder = Path(dataset)
    if not (folder / "README.md").is_file() and (folder / "medmemorybench" / "README.md").is_file():
        raise InputError(f"DATASET: {folder} holds a build; give the dataset folder {folder / 'medmemorybench'}")
    # Imported here: `medmemorybench.dataset` pulls in the whole builder, which scoring a sheet never needs.
    from medmemorybench.dataset.load import read_rows

    rows = read_rows(folder)
    items = collect_items(rows)
    if sample > len(items):
        raise InputError(f"--sample: {sample} is more than the {len(items)} events and questions in {folder}")
    chosen = sample_items(items, sample, seed)
    pool = Counter((i.item_type, i.category) for i in items)
    wanted = {i.persona_id for i in chosen}
    personas = [p for p in rows["personas"]["patients"] if p["persona_id"] in wanted]
    text = render_markdown(chosen, personas, seed=seed, pool=pool, fingerprint=_fingerprint(folder),
                           csv_name=out.name)
    write_atomic(out, render_csv(chosen), encoding=CSV_ENCODING)
    write_atomic(markdown, text)
    return ReviewSheet(out, markdown, chosen, pool)
