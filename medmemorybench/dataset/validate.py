"""The dataset validator: schema, unique ids, leakage, answerability, abstention, MQ shape, trap coverage.

Works on rows (dicts), so the builder can refuse to export an invalid dataset and `medmemorybench
validate DIR` can check a folder on disk with the same code.
"""

from __future__ import annotations

import re
from collections import defaultdict

from medmemorybench.dataset.build import Rows
from medmemorybench.dataset.hidden import GOLD_FIELDS, HIDDEN_CONFIGS
from medmemorybench.dataset.schema import (
    FEATURES,
    LANGUAGES,
    PERSONAS_SPLIT,
    STREAM_CONFIGS,
    config_name,
    is_persona_id,
)
from medmemorybench.normalize import normalize_text
from medmemorybench.questions.models import FACT_KINDS
from medmemorybench.render.models import Session, session_text
from medmemorybench.simulate.models import TRAP_CATEGORIES

_REGULAR_ID = re.compile(r"^(?P<persona>.+)-S(?P<number>\d+)$")
MAX_REPORTED = 50


def _session_texts(rows: Rows, config: str = "efficient") -> dict[str, str]:
    texts = {}
    for split_rows in rows.get(config, {}).values():
        for row in split_rows:
            for session in row["sessions"]:
                texts[session["session_id"]] = session_text(Session.model_validate(session))
    return texts


def _check_schema(rows: Rows, problems: list[str]) -> None:
    for config, splits in rows.items():
        features = FEATURES[config]
        for split, split_rows in splits.items():
            for index, row in enumerate(split_rows):
                missing = set(features) - set(row)
                extra = set(row) - set(features)
                if missing or extra:
                    problems.append(f"{config}/{split}[{index}]: fields missing {sorted(missing)} "
                                    f"or unexpected {sorted(extra)}")
                    continue
                if "persona_id" in row and not is_persona_id(row["persona_id"]):
                    problems.append(f"{config}/{split}[{index}]: persona_id {str(row['persona_id'])[:80]!r} is not a "
                                    "plain id (letters, digits, '_', '.', '-'; no path)")
                    continue
                try:
                    features.encode_example(row)
                except (TypeError, ValueError, KeyError) as exc:
                    problems.append(f"{config}/{split}[{index}]: does not match the schema: {exc}")


def _check_streams(rows: Rows, problems: list[str]) -> None:
    for config in (c for c in STREAM_CONFIGS if c in rows):
        seen: set[str] = set()
        for split, split_rows in rows.get(config, {}).items():
            for row in split_rows:
                for session in row["sessions"]:
                    sid = session["session_id"]
                    if sid in seen:
                        problems.append(f"{config}/{split}: duplicate session_id {sid}")
                    seen.add(sid)
                    match = _REGULAR_ID.match(sid)
                    if session["kind"] == "regular" and match and int(match["number"]) > row["checkpoint"]:
                        problems.append(f"{config}/{split}: {row['persona_id']} holds {sid} beyond its checkpoint "
                                        f"{row['checkpoint']}")


def _check_questions(rows: Rows, texts: dict[str, str], problems: list[str], config: str = "questions",
                     hidden: bool = False) -> None:
    normalized = {sid: normalize_text(text) for sid, text in texts.items()}
    own_text: dict[str, str] = defaultdict(str)
    for sid, text in normalized.items():
        match = _REGULAR_ID.match(sid)
        if match:
            own_text[match["persona"]] += " " + text
    ids: set[str] = set()
    categories: dict[str, set[str]] = defaultdict(set)
    for split, split_rows in rows.get(config, {}).items():
        for q in split_rows:
            qid = q["query_id"]
            where = f"{config}/{split}: {qid}"
            if qid in ids:
                problems.append(f"{where}: duplicate query_id")
            ids.add(qid)
            if q["trap_category"]:
                categories[q["persona_id"]].add(q["trap_category"])
            for sid in q["evidence_session_ids"]:
                match = _REGULAR_ID.match(sid)
                if match is None or match["persona"] != q["persona_id"]:
                    problems.append(f"{where}: evidence {sid} is not one of the patient's regular sessions")
                elif int(match["number"]) > q["checkpoint"]:
                    problems.append(f"{where}: leakage: evidence {sid} comes after checkpoint {q['checkpoint']}")
            evidence = " ".join(normalized.get(sid, "") for sid in q["evidence_session_ids"])
            for fact in q["key_facts"]:
                if normalize_text(fact) not in evidence:
                    problems.append(f"{where}: key fact {fact!r} appears in none of its evidence sessions")
            if q["abstain"]:
                absent = q["absent_fact"] or ""
                if not absent:
                    problems.append(f"{where}: abstention question without absent_fact")
                elif normalize_text(absent) in own_text[q["persona_id"]]:
                    problems.append(f"{where}: abstention fact {absent!r} appears in the patient's own sessions")
            kinds = {f["kind"] for f in q.get("facts") or []} | {
                f["kind"] for step in q.get("reasoning_chain") or [] for f in step.get("facts") or []}
            if kinds - set(FACT_KINDS):
                problems.append(f"{where}: unknown fact kind(s) {sorted(kinds - set(FACT_KINDS))}; known: "
                                f"{', '.join(FACT_KINDS)}")
            if hidden:
                leaked = [name for name, blank in GOLD_FIELDS.items() if q[name] != blank]
                if leaked or q["query_type"] == "ABS":
                    problems.append(f"{where}: a hidden-gold release holds gold: {leaked or ['query_type ABS']}")
                if q["query_type"] == "MQ" and len(q["options"]) != 4:
                    problems.append(f"{where}: MQ needs 4 options, got {q['options']}")
            elif q["query_type"] == "MQ":
                letters = {o.split(".")[0] for o in q["options"]}
                if len(q["options"]) != 4 or not 1 <= len(q["correct_options"]) <= 3 or \
                        not set(q["correct_options"]) <= letters:
                    problems.append(f"{where}: MQ needs 4 options with 1-3 correct, got {q['options']} / "
                                    f"{q['correct_options']}")
    for persona in rows.get("personas", {}).get(PERSONAS_SPLIT, []):
        last = max((q["checkpoint"] for q in _questions_of(rows, persona["persona_id"], config)), default=0)
        required = [t["category"] for t in persona["traps"]
                    if t["disclosed_in"] and int(_REGULAR_ID.match(t["disclosed_in"])["number"]) <= last]
        missing = [c for c in TRAP_CATEGORIES if c in required and c not in categories[persona["persona_id"]]]
        if missing:
            problems.append(f"{config}: {persona['persona_id']}: trap categories never tested: {missing}")


def _questions_of(rows: Rows, persona_id: str, config: str = "questions") -> list[dict]:
    return [q for split_rows in rows.get(config, {}).values() for q in split_rows if q["persona_id"] == persona_id]


RENDERING_FIELDS = ("persona_id", "checkpoint", "query_type", "evidence_session_ids", "correct_options", "abstain",
                    "trap_category", "template")
"""What every language's rendering of a question must share (one truth, many renderings)."""


def _check_renderings(rows: Rows, languages: list[str], problems: list[str]) -> None:
    """Every language holds the same questions (same ids, evidence, right letters ...) and the same sessions."""
    first = languages[0]
    reference = {q["query_id"]: q for split in rows[config_name("questions", first)].values() for q in split}
    for lang in languages[1:]:
        config = config_name("questions", lang)
        mine = {q["query_id"]: q for split in rows[config].values() for q in split}
        if set(mine) != set(reference):
            problems.append(f"{config}: question ids differ from {config_name('questions', first)} "
                            f"({len(set(mine) ^ set(reference))} not in both)")
            continue
        for qid, q in mine.items():
            differing = [f for f in RENDERING_FIELDS if q[f] != reference[qid][f]]
            if differing:
                problems.append(f"{config}: {qid}: differs from its {first} rendering in {differing}")
        for base in ("efficient", "mixed"):
            ids = lambda c: [s["session_id"] for split in sorted(rows[c]) for r in rows[c][split]  # noqa: E731
                             for s in r["sessions"]]
            if ids(config_name(base, lang)) != ids(config_name(base, first)):
                problems.append(f"{config_name(base, lang)}: sessions differ from {config_name(base, first)}")


def validate_rows(rows: Rows, hidden: bool = False) -> list[str]:
    """Every violation found, each naming config/split and id (empty: valid). `hidden`: the public half of a
    hidden-gold release (`dataset.hidden`), whose questions must hold no gold and no personas config."""
    problems: list[str] = []
    _check_schema(rows, problems)
    if problems:  # the other checks read fields the schema guarantees
        return problems
    _check_streams(rows, problems)
    languages = [lang for lang in LANGUAGES if config_name("questions", lang) in rows]
    for lang in languages:
        _check_questions(rows, _session_texts(rows, config_name("efficient", lang)), problems,
                         config_name("questions", lang), hidden)
    if hidden:
        problems += [f"{config}: a hidden-gold release holds the ground truth" for config in HIDDEN_CONFIGS
                     if config in rows]
        problems += [f"{config}/{split}: {row['persona_id']} {s['session_id']}: a hidden-gold release holds event ids"
                     for config in STREAM_CONFIGS if config in rows for split, split_rows in rows[config].items()
                     for row in split_rows for s in row["sessions"] if s["event_ids"]][:20]
    if len(languages) > 1:
        _check_renderings(rows, languages, problems)
    return problems
