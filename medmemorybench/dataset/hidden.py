"""Hidden-gold releases: a build split into a public folder that holds no gold and a sealed file that does.

With public gold a run is only self-reported: a script can write answers = gold and retrieved ids = evidence, and
every check of consistency passes. A generated benchmark can do what a fixed one cannot: build a fresh release
from a secret seed, publish the sessions and questions, and keep the gold. The public folder then has

- each question with its gold blanked (`GOLD_FIELDS`): no answer, aliases, key facts, facts, evidence ids,
  correct options, chain, trap category, absent fact or common wrong answer; an abstention question typed as the
  type whose wording and prompt it borrows (`prompting.shown_as`), so its type does not give it away;
- each session without its `event_ids` (the links into the ground truth);
- no `personas` config (the whole ground truth) and no seed (a known seed rebuilds the gold).

The sealed file (`SEALED_FORMAT`, gzip JSON) holds exactly what was taken out, with both fingerprints;
`reveal_rows` puts it back and checks the result is the full build, row for row (`fingerprint_rows`).
"""

from __future__ import annotations

import gzip
import json
import random
from collections import Counter
from pathlib import Path
from typing import Any

from medmemorybench.dataset.build import Rows, fingerprint_rows
from medmemorybench.dataset.schema import base_config, language_of
from medmemorybench.errors import InputError
from medmemorybench.files import atomic_path, loads_json

SEALED_FORMAT = 1
GOLD_FIELDS: dict[str, Any] = {
    "answer": "", "answer_aliases": [], "correct_options": [], "evidence_session_ids": [], "key_facts": [],
    "facts": [], "reasoning_chain": [], "trap_category": None, "abstain": False, "absent_fact": None,
    "common_wrong_answer": None,
}
"""A question's gold fields and what the public release holds in their place."""
HIDDEN_CONFIGS = ("personas",)
"""Configs left out of the public release (the ground truth itself)."""
MAX_SEALED_BYTES = 2 << 30
"""Largest sealed file read (decompressed): a 1,000-patient build's gold is ~1 GB."""


def public_question(question: dict, public_id: str) -> dict:
    """A question as a hidden release publishes it: gold blanked, an abstention typed as the type it borrows, and an
    id that names no type (`P0001-C010-Q07`, numbered in a secret shuffle: `...-ABS1` would give it away)."""
    from medmemorybench.harness.prompting import shown_as

    shown = shown_as(question)
    return {**question, **GOLD_FIELDS, "query_type": shown, "query_id": public_id, "template": shown.lower()}


def withheld_questions(rows: Rows, seed: int) -> set[str]:
    """Query ids a hidden release leaves out so that no question type's count gives an abstention away: the schedule
    asks a fixed number of each type per patient and checkpoint, and an abstention question comes on top, typed as
    the type it borrows (EEM 2 questions, or 3 with the abstention). In each group that holds one, one answerable
    question of that type (one without a trap category where there is one, by a coin of the secret seed) is withheld
    from both halves."""
    from medmemorybench.harness.prompting import shown_as

    groups: dict[tuple[str, int, str], list[dict]] = {}
    for config, splits in sorted(rows.items()):
        if base_config(config) == "questions":
            for split_rows in splits.values():
                for q in split_rows:
                    groups.setdefault((q["persona_id"], q["checkpoint"], shown_as(q)), []).append(q)
            break  # (one language: ids and types are shared)
    withheld = set()
    for (persona, checkpoint, shown), group in sorted(groups.items()):
        if any(q["query_type"] == "ABS" for q in group):
            answerable = [q for q in group if q["query_type"] != "ABS"]
            candidates = sorted(q["query_id"] for q in answerable if not q["trap_category"]) or \
                sorted(q["query_id"] for q in answerable)  # (a trap's question only where every one tests a trap)
            if candidates:
                withheld.add(random.Random(f"{seed}/withheld/{persona}/{checkpoint}/{shown}").choice(candidates))
    return withheld


def without_questions(rows: Rows, withheld: set[str]) -> Rows:
    """`rows` less the questions `withheld` (in every config and language)."""
    out: Rows = {}
    for config, splits in rows.items():
        if base_config(config) == "questions":
            out[config] = {split: [q for q in split_rows if q["query_id"] not in withheld]
                           for split, split_rows in splits.items()}
        elif base_config(config) in ("efficient", "mixed"):
            out[config] = {split: [{**row, "questions": [q for q in row["questions"] if q["query_id"] not in withheld]}
                                   for row in split_rows] for split, split_rows in splits.items()}
        else:
            out[config] = splits
    return out


HIDDEN_STATS = ("audit_table", "audit_failures", "evidence_age")
"""Card statistics computed on the gold (the memory-less probes' best rules name words that mark abstentions): sealed,
not published."""


def public_stats(stats: dict[str, Any], public: Rows) -> dict[str, Any]:
    """A hidden release's card statistics: what the gold decides left out (`HIDDEN_STATS`), the question counts as
    published (by the type each question is shown as)."""
    first = next(c for c in sorted(public) if base_config(c) == "questions")
    questions = [q for split_rows in public[first].values() for q in split_rows]
    return {**{k: v for k, v in stats.items() if k not in HIDDEN_STATS},
            "audit_table": {}, "audit_failures": [], "evidence_age": {}, "questions": len(questions),
            "questions_by_type": dict(sorted(Counter(q["query_type"] for q in questions).items())),
            "questions_by_checkpoint": {str(k): v for k, v in sorted(Counter(q["checkpoint"]
                                                                             for q in questions).items())}}


def _public_ids(rows: Rows, seed: int) -> dict[str, str]:
    """Original query id -> public id: each patient's questions at a checkpoint numbered in a seeded shuffle (the
    same in every language: ids are shared)."""
    groups: dict[tuple[str, int], list[str]] = {}
    for config, splits in rows.items():
        if base_config(config) == "questions":
            for split_rows in splits.values():
                for q in split_rows:
                    group = groups.setdefault((q["persona_id"], q["checkpoint"]), [])
                    if q["query_id"] not in group:
                        group.append(q["query_id"])
    ids = {}
    for (persona, checkpoint), group in sorted(groups.items()):
        shuffled = sorted(group)
        random.Random(f"{seed}/hidden/{persona}/{checkpoint}").shuffle(shuffled)
        width = len(str(len(shuffled)))
        ids.update({qid: f"{persona}-C{checkpoint:03d}-Q{n:0{width}d}" for n, qid in enumerate(shuffled, start=1)})
    return ids


def hide_rows(rows: Rows, seed: int) -> tuple[Rows, dict[str, Any]]:
    """The public rows of a build (`seed`: the build's secret seed, which shuffles the public ids and picks the
    `withheld_questions`), and the sealed gold that `reveal_rows` restores them with (the build less those)."""
    withheld = withheld_questions(rows, seed)
    rows = without_questions(rows, withheld)
    ids = _public_ids(rows, seed)
    questions: dict[str, dict[str, dict]] = {}  # language -> public id -> the full question
    order: dict[str, dict[str, list]] = {}  # config -> split -> each row's original question ids (or the row's id)
    event_ids: dict[str, dict[str, list[str]]] = {}  # config -> "persona/session" -> event ids
    public: Rows = {}
    for config, splits in rows.items():
        if config in HIDDEN_CONFIGS:
            continue
        gold = questions.setdefault(language_of(config), {})
        public[config], order[config] = {}, {}
        for split, split_rows in splits.items():
            out = []
            if base_config(config) == "questions":
                for q in split_rows:
                    gold[ids[q["query_id"]]] = q
                order[config][split] = [q["query_id"] for q in split_rows]
                public[config][split] = sorted((public_question(q, ids[q["query_id"]]) for q in split_rows),
                                               key=lambda q: q["query_id"])
                continue
            order[config][split] = [[q["query_id"] for q in row["questions"]] for row in split_rows]
            for row in split_rows:
                sessions = []
                for session in row["sessions"]:
                    if session["event_ids"]:
                        event_ids.setdefault(config, {})[f"{row['persona_id']}/{session['session_id']}"] = \
                            session["event_ids"]
                    sessions.append({**session, "event_ids": []})
                asked = sorted((public_question(q, ids[q["query_id"]]) for q in row["questions"]),
                               key=lambda q: q["query_id"])
                out.append({**row, "sessions": sessions, "questions": asked})
            public[config][split] = out
    sealed = {"format": SEALED_FORMAT, "fingerprint": fingerprint_rows(rows), "public_fingerprint":
              fingerprint_rows(public), "questions": questions, "public_ids": ids, "order": order,
              "event_ids": event_ids, "hidden_configs": {c: rows[c] for c in HIDDEN_CONFIGS if c in rows},
              "withheld": sorted(withheld)}
    return public, sealed


def reveal_rows(public: Rows, sealed: dict[str, Any], where: str = "the sealed gold") -> Rows:
    """The full build: `public` rows with the sealed gold put back, in the build's own order and ids.

    Raises:
        InputError: the sealed gold is not this release's (another public fingerprint), or what it restores is not
            the build it was sealed from.
    """
    if fingerprint_rows(public) != sealed.get("public_fingerprint"):
        raise InputError(f"{where}: sealed for release {str(sealed.get('public_fingerprint'))[:12]}, not this one "
                         f"({fingerprint_rows(public)[:12]})")
    order, event_ids = sealed["order"], sealed["event_ids"]
    rows: Rows = {}
    try:
        for config, splits in public.items():
            gold = questions_by_original(sealed, language_of(config))
            if base_config(config) == "questions":
                rows[config] = {split: [gold[qid] for qid in order[config][split]] for split in splits}
                continue
            events = event_ids.get(config, {})
            rows[config] = {split: [{**row, "sessions": [
                {**s, "event_ids": events.get(f"{row['persona_id']}/{s['session_id']}", [])} for s in row["sessions"]],
                "questions": [gold[qid] for qid in asked]} for row, asked in zip(split_rows, order[config][split],
                                                                                strict=True)]
                for split, split_rows in splits.items()}
        rows.update(sealed["hidden_configs"])
    except (KeyError, TypeError, ValueError) as exc:
        raise InputError(f"{where}: does not hold this release's gold ({exc.__class__.__name__}: "
                         f"{str(exc)[:80]})") from None
    if fingerprint_rows(rows) != sealed.get("fingerprint"):
        raise InputError(f"{where}: restores rows that are not the build it was sealed from (fingerprint "
                         f"{str(sealed.get('fingerprint'))[:12]}); the file was edited")
    return rows


def gold_rows(public: Rows, sealed: dict[str, Any]) -> Rows:
    """`public` rows whose questions are the sealed ones under their public ids (what a run on the release is scored
    against); the sealed gold must restore the build it was sealed from (`reveal_rows`)."""
    reveal_rows(public, sealed)
    return {config: {split: [_gold_row(config, row, sealed) for row in split_rows]
                     for split, split_rows in splits.items()} for config, splits in public.items()}


def _gold_row(config: str, row: dict, sealed: dict[str, Any]) -> dict:
    gold = sealed["questions"][language_of(config)]
    if base_config(config) == "questions":
        return {**gold[row["query_id"]], "query_id": row["query_id"]}
    return {**row, "questions": [{**gold[q["query_id"]], "query_id": q["query_id"]} for q in row["questions"]]}


def questions_by_original(sealed: dict[str, Any], language: str) -> dict[str, dict]:
    """A language's full questions by their original query ids."""
    return {q["query_id"]: q for q in sealed["questions"][language].values()}


def write_sealed(sealed: dict[str, Any], path: Path) -> None:
    """The sealed gold as gzip JSON (written whole or not at all)."""
    data = gzip.compress(json.dumps(sealed, ensure_ascii=False, sort_keys=True).encode(), mtime=0)
    with atomic_path(path, mode=0o600) as tmp:  # (the owner's alone: the whole point is that others cannot read it)
        tmp.write_bytes(data)


def read_sealed(path: Path) -> dict[str, Any]:
    """A sealed gold file.

    Raises:
        InputError: naming the file when it is missing, not gzip JSON of a sealed gold, or too large.
    """
    try:
        with gzip.open(path, "rb") as handle:
            data = handle.read(MAX_SEALED_BYTES + 1)
    except (OSError, EOFError) as exc:
        raise InputError(f"--gold: {path}: not a sealed gold file ({exc.__class__.__name__})") from None
    if len(data) > MAX_SEALED_BYTES:
        raise InputError(f"--gold: {path}: over {MAX_SEALED_BYTES:,} bytes decompressed")
    try:
        sealed = loads_json(data.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise InputError(f"--gold: {path}: not JSON inside the gzip") from None
    if not isinstance(sealed, dict) or sealed.get("format") != SEALED_FORMAT or \
            not all(isinstance(sealed.get(k), dict)
                    for k in ("questions", "public_ids", "order", "event_ids", "hidden_configs")):
        raise InputError(f"--gold: {path}: not a sealed gold file of format {SEALED_FORMAT} (`build --hidden` "
                         "writes one)")
    return sealed


def is_hidden(folder: Path) -> bool:
    """Whether a build folder is the public half of a hidden-gold release (its metadata says so)."""
    from medmemorybench.dataset.load import build_metadata

    return build_metadata(folder).get("hidden") is True
