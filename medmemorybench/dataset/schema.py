"""The published rows: one `datasets.Features` per config. Builder, loader and card all use these."""

from __future__ import annotations

import re

from datasets import Features, List, Value

LANGUAGES = ("en", "zh")
"""The languages a build renders: English configs keep their plain names, others carry a suffix (`mixed_zh`)."""
RENDERED = ("efficient", "mixed", "questions")
"""Configs rendered once per language; `personas` (the ground truth) is one for all."""


def config_name(config: str, language: str) -> str:
    """`mixed` in English, `mixed_zh` in Chinese."""
    return config if language == "en" else f"{config}_{language}"


def language_of(config: str) -> str:
    """The language of a rendered config (`mixed_zh` -> `zh`)."""
    base, _, suffix = config.rpartition("_")
    return suffix if base and suffix in LANGUAGES else "en"


def base_config(config: str) -> str:
    """`mixed_zh` -> `mixed`."""
    return config.removesuffix(f"_{language_of(config)}") if language_of(config) != "en" else config


ALL_CONFIGS = tuple(config_name(c, lang) for lang in LANGUAGES for c in RENDERED) + ("personas",)
"""Every config a build may hold, in the order files, card and loader list them."""
CONFIGS = ("efficient", "mixed", "questions", "personas")
"""The English (default) configs."""
STREAM_CONFIGS = tuple(c for c in ALL_CONFIGS if base_config(c) in ("efficient", "mixed"))
METADATA_FILE = "medmemorybench.json"  # the build's options, stats and fingerprint, beside the configs
PERSONAS_SPLIT = "patients"  # "all" is reserved by `datasets` (the union of splits)

TURN = {"role": Value("string"), "text": Value("string")}

SESSION = {
    "session_id": Value("string"),
    "kind": Value("string"),
    "date": Value("string"),
    "family_member": Value("string"),
    "turns": List(TURN),
    "event_ids": List(Value("string")),
    "renderer": Value("string"),
}

GOLD_FACT = {"text": Value("string"), "kind": Value("string"), "aliases": List(Value("string")),
             "required": Value("bool"), "group": Value("string")}

QUESTION = {
    "query_id": Value("string"),
    "persona_id": Value("string"),
    "checkpoint": Value("int32"),
    "query_type": Value("string"),
    "question": Value("string"),
    "options": List(Value("string")),
    "answer": Value("string"),
    "answer_aliases": List(Value("string")),
    "correct_options": List(Value("string")),
    "evidence_session_ids": List(Value("string")),
    "key_facts": List(Value("string")),
    "facts": List(GOLD_FACT),
    "reasoning_chain": List({"node": Value("string"), "session_id": Value("string"), "facts": List(GOLD_FACT)}),
    "trap_category": Value("string"),
    "abstain": Value("bool"),
    "absent_fact": Value("string"),
    "common_wrong_answer": Value("string"),
    "subject": Value("string"),
    "template": Value("string"),
}

STREAM_FEATURES = Features(
    {
        "persona_id": Value("string"),
        "checkpoint": Value("int32"),
        "sessions": List(SESSION),
        "questions": List(QUESTION),
    }
)
"""`efficient` and `mixed`: one patient at one checkpoint (the new sessions, then that checkpoint's questions)."""

QUESTION_FEATURES = Features(QUESTION)
"""`questions`: one question per row."""

PERSONA_FEATURES = Features(
    {
        "persona_id": Value("string"),
        "condition": Value("string"),
        "condition_name": Value("string"),
        "icd11": Value("string"),
        "group": Value("string"),
        "sex": Value("string"),
        "age": Value("int32"),
        "traps": List({"category": Value("string"), "option": Value("string"), "detail": Value("string"),
                       "forbidden_drugs": List(Value("string")), "disclosed_in": Value("string")}),
        "family": List({"relation": Value("string"), "sex": Value("string"), "age": Value("int32"),
                        "conditions": List(Value("string")), "drugs": List(Value("string"))}),
        "events": List({"event_id": Value("string"), "date": Value("string"), "phase": Value("int32"),
                        "kind": Value("string"), "triggered_by": List(Value("string")),
                        "facts_json": Value("string")}),
        "care_year_json": Value("string"),
    }
)
"""`personas`: one patient, with the whole event graph (facts as JSON) and the full care-year record."""

NULLABLE = frozenset({"family_member", "date", "trap_category", "absent_fact", "common_wrong_answer", "subject"})
"""Fields of the stream and question configs that may be null (a noise session has no date or relative of
its own; only some questions have a trap, an absent fact, a common wrong answer or a subject); every other must
hold a value."""

NULL_CHECKED = tuple(c for c in ALL_CONFIGS if c != "personas")
"""The configs whose rows are checked for nulls outside `NULLABLE` when read."""

FEATURES = {config: {"efficient": STREAM_FEATURES, "mixed": STREAM_FEATURES, "questions": QUESTION_FEATURES,
                     "personas": PERSONA_FEATURES}[base_config(config)] for config in ALL_CONFIGS}


def split_name(checkpoint: int) -> str:
    """`checkpoint_10` (dashes are not allowed in split names)."""
    return f"checkpoint_{checkpoint}"


PERSONA_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
"""What a persona id may be: a plain name (`P0001`), never a path. A run names each patient's memory folder after it,
and a hostile dataset's "/home/user" or "../.." would have that folder removed and written outside the run."""


def is_persona_id(value: object) -> bool:
    return isinstance(value, str) and PERSONA_ID.fullmatch(value) is not None and ".." not in value
