"""The labelled answer panel: answers written as a capable model writes them, each labelled by a physician-minded
reviewer, against which a scorer's false-reject and false-accept rates and its agreement (Cohen's kappa) are
measured (`scripts/bench_scorer.py`; `panels/README.md` says how the panel was made).

One JSON object per line:

| field | what |
|---|---|
| `id` | unique within the panel |
| `language` | `en` or `zh` |
| `question` | the question row exactly as the build exported it (gold, facts, chain) |
| `answer` | the answer text |
| `intent` | `correct` (the gold's facts in other words) or `near_miss` (a plausible wrong answer from the record) |
| `near_miss` | for a near miss, what it gets wrong ("previous dose", "neighbouring date", "relative's value", ...) |
| `label` | the reviewer's verdict, `correct` or `wrong`: what the rates are measured against |
| `note` | the reviewer's reason, where given |
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from medmemorybench.errors import InputError

LABELS = ("correct", "wrong")
INTENTS = ("correct", "near_miss")
FIELDS = ("id", "language", "question", "answer", "intent", "label")


@dataclass(frozen=True)
class PanelAnswer:
    """One labelled answer."""

    id: str
    language: str
    question: dict[str, Any]
    answer: str
    intent: str
    label: str
    near_miss: str = ""
    note: str = ""

    @property
    def query_type(self) -> str:
        return self.question["query_type"]


def load_panel(path: Path) -> list[PanelAnswer]:
    """Every answer of a panel file.

    Raises:
        InputError: One line naming the file, the line and what is wrong with it.
    """
    out: list[PanelAnswer] = []
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"{path}: cannot read the panel ({exc})") from None
    seen: set[str] = set()
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except (json.JSONDecodeError, RecursionError):
            raise InputError(f"{path}:{number}: not a JSON object") from None
        if not isinstance(row, dict) or any(k not in row for k in FIELDS):
            raise InputError(f"{path}:{number}: a panel line needs {', '.join(FIELDS)}")
        if row["label"] not in LABELS or row["intent"] not in INTENTS or not isinstance(row["question"], dict) \
                or not isinstance(row["answer"], str):
            raise InputError(f"{path}:{number}: label must be one of {LABELS}, intent one of {INTENTS}, question "
                             "an object and answer a string")
        if row["id"] in seen:
            raise InputError(f"{path}:{number}: id {row['id']!r} appears twice")
        seen.add(row["id"])
        out.append(PanelAnswer(row["id"], row["language"], row["question"], row["answer"], row["intent"],
                               row["label"], row.get("near_miss") or "", row.get("note") or ""))
    return out


def write_panel(panel: list[PanelAnswer], path: Path) -> None:
    """A panel file, one answer a line (what `load_panel` reads)."""
    rows = [{"id": a.id, "language": a.language, "question": a.question, "answer": a.answer, "intent": a.intent,
             "near_miss": a.near_miss, "label": a.label, "note": a.note} for a in panel]
    path.write_text("".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in rows), encoding="utf-8")


def with_fresh_rows(panel: list[PanelAnswer], build: Path) -> tuple[list[PanelAnswer], int]:
    """The panel with each question row replaced by the same question of a fresh build of its seed (today's gold
    facts and chains) where the question and its gold answer are word for word the same: a label judges the answer
    against the question and its gold, so it holds for the fresh row; how many were replaced."""
    from medmemorybench.dataset.load import read_rows
    from medmemorybench.dataset.schema import config_name

    rows = read_rows(build)
    fresh = {(row["query_id"], language): row for language in {a.language for a in panel}
             for split in rows.get(config_name("questions", language), {}).values() for row in split}
    out, replaced = [], 0
    for answer in panel:
        row = fresh.get((answer.question["query_id"], answer.language))
        same = row is not None and all(row[k] == answer.question[k] for k in ("question", "answer", "query_type"))
        out.append(replace(answer, question=row) if same else answer)
        replaced += same
    return out, replaced


@dataclass(frozen=True)
class Agreement:
    """A scorer against the panel's labels, for one slice."""

    n: int
    n_correct: int
    """Answers labelled correct."""
    n_wrong: int
    false_rejects: int
    """Labelled correct, scored wrong."""
    false_accepts: int
    """Labelled wrong, scored correct."""
    kappa: float | None
    """Cohen's kappa between the scorer's verdicts and the labels (None when it is undefined: one class only)."""

    @property
    def false_reject_rate(self) -> float | None:
        return self.false_rejects / self.n_correct if self.n_correct else None

    @property
    def false_accept_rate(self) -> float | None:
        return self.false_accepts / self.n_wrong if self.n_wrong else None


def cohen_kappa(pairs: list[tuple[bool, bool]]) -> float | None:
    """Cohen's kappa of two binary raters (None when chance agreement is 1: both always say the same class)."""
    if not pairs:
        return None
    n = len(pairs)
    observed = sum(a == b for a, b in pairs) / n
    p_a, p_b = sum(a for a, _ in pairs) / n, sum(b for _, b in pairs) / n
    expected = p_a * p_b + (1 - p_a) * (1 - p_b)
    return None if expected == 1 else (observed - expected) / (1 - expected)


def agreement(verdicts: Iterable[tuple[PanelAnswer, bool]]) -> Agreement:
    """How a scorer's verdicts (True: scored correct) agree with the labels."""
    pairs = [(answer.label == "correct", verdict) for answer, verdict in verdicts]
    return Agreement(len(pairs), sum(a for a, _ in pairs), sum(not a for a, _ in pairs),
                     sum(a and not v for a, v in pairs), sum(v and not a for a, v in pairs), cohen_kappa(pairs))


def by_slice(verdicts: list[tuple[PanelAnswer, bool]], key: Callable[[PanelAnswer], str]) -> dict[str, Agreement]:
    """`agreement` per slice (per type, per language, per type and language ...)."""
    groups: dict[str, list[tuple[PanelAnswer, bool]]] = defaultdict(list)
    for answer, verdict in verdicts:
        groups[key(answer)].append((answer, verdict))
    return {name: agreement(group) for name, group in sorted(groups.items())}
