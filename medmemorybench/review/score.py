"""Scoring filled review sheets: error rates per category, and two reviewers' agreement and Cohen's κ."""

from __future__ import annotations

import csv
import io
import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from medmemorybench.errors import InputError
from medmemorybench.files import write_atomic
from medmemorybench.review.sheet import CSV_ENCODING, ITEM_TYPES, VERDICTS

REQUIRED_COLUMNS = ("item_id", "item_type", "category", "verdict")
OVERALL = "overall"
"""The category label of the row over all items (`all events` and `all questions` are the per-type rows)."""


@dataclass(frozen=True)
class ReviewedItem:
    """One row of a filled sheet."""

    item_id: str
    item_type: str
    category: str
    verdict: str | None
    """`correct`, `incorrect` or `unsure`; None when the reviewer left it empty."""
    row: int
    """The spreadsheet row number (the header is row 1)."""


@dataclass(frozen=True)
class ErrorRate:
    """One reviewer's verdicts over one category."""

    category: str
    n_items: int
    n_reviewed: int
    """Items with a verdict (correct, incorrect or unsure)."""
    correct: int
    incorrect: int
    unsure: int
    error_rate: float | None
    """incorrect / (correct + incorrect); None when neither was given."""


@dataclass(frozen=True)
class Agreement:
    """Two reviewers' verdicts over the items of one category that both reviewed."""

    category: str
    n_both: int
    """Items with a verdict on both sheets."""
    n_agree: int
    percent_agreement: float | None
    kappa: float | None
    """Cohen's κ; None when there are no items or chance agreement is 1 (both always gave one verdict)."""


def _delimiter(header_line: str) -> str:
    # Spreadsheets in some locales save "CSV" with semicolons or tabs.
    return next((d for d in (",", ";", "\t") if d in header_line), ",")


def read_sheet(path: Path) -> list[ReviewedItem]:
    """Read a filled review sheet (CSV), checking its columns and verdicts.

    Empty verdicts mean "not reviewed"; verdicts are read case-insensitively; blank rows are skipped.

    Raises:
        InputError: naming the file, row and field of a missing file or column, an empty or repeated
            item_id, an unknown item_type or an unknown verdict.
    """
    path = Path(path)
    if not path.is_file():
        raise InputError(f"{path}: no such file")
    try:
        text = path.read_text(encoding=CSV_ENCODING)
    except UnicodeDecodeError:
        raise InputError(f"{path}: not UTF-8 text; save the sheet as 'CSV UTF-8'") from None
    if not text.strip():
        raise InputError(f"{path}: empty file; expected a header row with {', '.join(REQUIRED_COLUMNS)}")
    records = csv.reader(io.StringIO(text, newline=""), delimiter=_delimiter(text.split("\n", 1)[0]))
    header = [name.strip() for name in next(records)]
    missing = [c for c in REQUIRED_COLUMNS if c not in header]
    if missing:
        raise InputError(f"{path}: row 1: missing column{'s' if len(missing) > 1 else ''} {', '.join(missing)} "
                         f"(expected {', '.join(REQUIRED_COLUMNS)}, found {', '.join(header) or 'none'})")
    index = {name: header.index(name) for name in REQUIRED_COLUMNS}
    items: list[ReviewedItem] = []
    seen: dict[str, int] = {}
    for row, cells in enumerate(records, start=2):
        if not any(cell.strip() for cell in cells):
            continue  # spreadsheets often keep blank rows at the end
        if len(cells) > len(header):
            raise InputError(f"{path}: row {row}: {len(cells)} cells but the header has {len(header)} columns")
        value = {name: cells[k].strip() if k < len(cells) else "" for name, k in index.items()}
        item_id = value["item_id"]
        if not item_id:
            raise InputError(f"{path}: row {row}: item_id: empty")
        where = f"{path}: row {row} ({item_id})"
        if item_id in seen:
            raise InputError(f"{where}: item_id: repeats row {seen[item_id]}")
        seen[item_id] = row
        if value["item_type"] not in ITEM_TYPES:
            raise InputError(f"{where}: item_type: '{value['item_type']}' is not one of {', '.join(ITEM_TYPES)}")
        if not value["category"]:
            raise InputError(f"{where}: category: empty")
        verdict = value["verdict"].lower() or None
        if verdict is not None and verdict not in VERDICTS:
            raise InputError(f"{where}: verdict: '{value['verdict']}' is not one of {', '.join(VERDICTS)} "
                             "(leave it empty when not reviewed)")
        items.append(ReviewedItem(item_id, value["item_type"], value["category"], verdict, row))
    return items


@dataclass(frozen=True)
class SheetScore:
    """One sheet's error rates: per category, per item type (`all events`, `all questions`), overall."""

    path: str
    error_rates: list[ErrorRate]


@dataclass(frozen=True)
class ReviewScores:
    """What `score_sheets` found: each sheet's error rates and, for two sheets, their agreement."""

    sheets: list[SheetScore]
    agreement: list[Agreement] | None
    """Per category, per item type and overall; None for a single sheet."""

    def to_dict(self) -> dict:
        """Plain JSON-ready data (None stays null: an undefined rate is not zero)."""
        return asdict(self)


def cohen_kappa(pairs: Sequence[tuple[str, str]]) -> float | None:
    """Cohen's κ of two raters' labels on the same items: (p_o - p_e) / (1 - p_e).

    p_o is the share of items with equal labels; p_e the agreement expected by chance, the sum over
    labels of the product of the two raters' shares. None for no items, or when p_e is 1 (both raters
    gave a single, identical label to every item, so κ is 0/0).
    """
    n = len(pairs)
    if n == 0:
        return None
    observed = sum(a == b for a, b in pairs) / n
    first, second = Counter(a for a, _ in pairs), Counter(b for _, b in pairs)
    expected = sum(first[label] * second[label] for label in first) / (n * n)
    if expected == 1:
        return None
    return (observed - expected) / (1 - expected)


def _groups(items: Sequence[ReviewedItem]) -> list[tuple[str, list[int]]]:
    """(label, indices of `items`): each category (events first), then `all events`, `all questions`, overall."""
    groups: list[tuple[str, list[int]]] = []
    for item_type in ITEM_TYPES:
        categories = sorted({i.category for i in items if i.item_type == item_type})
        groups += [(c, [k for k, i in enumerate(items) if i.item_type == item_type and i.category == c])
                   for c in categories]
    for item_type in ITEM_TYPES:
        members = [k for k, i in enumerate(items) if i.item_type == item_type]
        if members:
            groups.append((f"all {item_type}s", members))
    groups.append((OVERALL, list(range(len(items)))))
    return groups


def error_rates(items: Sequence[ReviewedItem]) -> list[ErrorRate]:
    """One sheet's counts and error rate per category, per item type and overall."""
    rates = []
    for label, members in _groups(items):
        counts = Counter(items[k].verdict for k in members)
        judged = counts["correct"] + counts["incorrect"]
        rates.append(ErrorRate(label, len(members), len(members) - counts[None], counts["correct"],
                               counts["incorrect"], counts["unsure"],
                               counts["incorrect"] / judged if judged else None))
    return rates


def match_sheets(first_path: Path, first: Sequence[ReviewedItem], second_path: Path,
                 second: Sequence[ReviewedItem]) -> list[tuple[ReviewedItem, ReviewedItem]]:
    """Pair two sheets' rows by item_id, in the first sheet's order.

    Raises:
        InputError: when an item_id is on one sheet only, or an item's type or category differs.
    """
    by_id = {item.item_id: item for item in first}
    for item in second:
        other = by_id.get(item.item_id)
        where = f"{second_path}: row {item.row} ({item.item_id})"
        if other is None:
            raise InputError(f"{where}: item_id: not in {first_path}; both sheets must hold the same items")
        for field in ("item_type", "category"):
            if getattr(item, field) != getattr(other, field):
                raise InputError(f"{where}: {field}: '{getattr(item, field)}' differs from "
                                 f"'{getattr(other, field)}' in {first_path} row {other.row}")
    in_second = {item.item_id for item in second}
    absent = [item for item in first if item.item_id not in in_second]
    if absent:
        raise InputError(f"{second_path}: item_id: {len(absent)} item(s) of {first_path} are missing, "
                         f"first {absent[0].item_id} ({first_path} row {absent[0].row})")
    second_by_id = {item.item_id: item for item in second}
    return [(item, second_by_id[item.item_id]) for item in first]


def agreement(pairs: Sequence[tuple[ReviewedItem, ReviewedItem]]) -> list[Agreement]:
    """Percent agreement and Cohen's κ per category, per item type and overall, over items both reviewed."""
    rows = []
    for label, members in _groups([a for a, _ in pairs]):
        both = [(pairs[k][0].verdict, pairs[k][1].verdict) for k in members
                if pairs[k][0].verdict is not None and pairs[k][1].verdict is not None]
        agree = sum(a == b for a, b in both)
        rows.append(Agreement(label, len(both), agree, agree / len(both) if both else None, cohen_kappa(both)))
    return rows


def score_sheets(paths: Sequence[Path]) -> ReviewScores:
    """Score one filled sheet, or two reviewers' sheets of the same items (adding their agreement).

    Raises:
        InputError: for no or more than two sheets, or any bad sheet (`read_sheet`, `match_sheets`).
    """
    if not 1 <= len(paths) <= 2:
        raise InputError(f"--score: give one or two filled sheets (got {len(paths)})")
    sheets = [read_sheet(Path(p)) for p in paths]
    scores = [SheetScore(str(p), error_rates(items)) for p, items in zip(paths, sheets, strict=True)]
    if len(sheets) == 1:
        return ReviewScores(scores, None)
    return ReviewScores(scores, agreement(match_sheets(Path(paths[0]), sheets[0], Path(paths[1]), sheets[1])))


def write_scores_json(scores: ReviewScores, path: Path) -> Path:
    """Write the scores as JSON (atomically) and return the path."""
    path = Path(path)
    write_atomic(path, json.dumps(scores.to_dict(), indent=1, ensure_ascii=False) + "\n")
    return path
