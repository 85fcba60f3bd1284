"""Reading a judge's JSON reply into a `Score`; anything malformed raises `VerdictError` (scored as an error)."""

from __future__ import annotations

import json
import math
import re
from typing import Any

from medmemorybench.scoring.base import Score

MCD_CC_LEVELS = (1.0, 0.7, 0.5, 0.3, 0.0)
"""The chain-completeness levels the paper allows."""
MCD_THRESHOLDS = {"ncr": 0.75, "crc": 0.75, "cc": 0.7}
"""Each sub-score must reach its threshold for an MCD answer to be correct."""
MCD_FLOOR = 0.5
"""Any sub-score below this is a veto by itself."""

_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.S | re.I)


class VerdictError(ValueError):
    """The judge's reply is not a valid verdict; the message says what is wrong."""


def extract_json(reply: str) -> dict[str, Any]:
    """The first JSON object in a reply (code fences and surrounding prose allowed).

    Raises:
        VerdictError: If the reply holds no JSON object.
    """
    fenced = _FENCE.search(reply)
    text = fenced.group(1) if fenced else reply
    decoder = json.JSONDecoder()
    for start in (i for i, char in enumerate(text) if char == "{"):
        try:
            value, _ = decoder.raw_decode(text[start:])
        except json.JSONDecodeError:
            continue
        if isinstance(value, dict):
            return value
    raise VerdictError(f"no JSON object in the judge reply: {reply[:200]!r}")


def _bool(verdict: dict[str, Any], key: str) -> bool:
    value = verdict.get(key)
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    if not isinstance(value, bool):
        raise VerdictError(f"judge verdict field {key!r} must be true or false, got {value!r}")
    return value


def _share(verdict: dict[str, Any], key: str) -> float:
    value = verdict.get(key)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or math.isnan(value) or not 0 <= value <= 1:
        raise VerdictError(f"judge verdict field {key!r} must be a number in [0, 1], got {value!r}")
    return float(value)


def read_rubric_verdict(reply: str) -> Score:
    """Score from {"correct": bool, "reason": str}: 1.0 when correct, else 0.0.

    Raises:
        VerdictError: If the reply is not such an object.
    """
    verdict = extract_json(reply)
    correct = _bool(verdict, "correct")
    reason = str(verdict.get("reason", ""))
    return Score(float(correct), extracted=json.dumps(verdict, ensure_ascii=False), explanation=reason,
                 metadata={"verdict": verdict})


def read_mcd_verdict(reply: str) -> Score:
    """Score from {"ncr", "crc", "cc", "same_conclusion", "veto", "reason"} with the paper's all-or-nothing rule.

    Correct only if NCR >= .75, CRC >= .75, CC >= .7, the conclusion is the same, there is no veto and
    no sub-score is below .5. The sub-scores and the failed conditions go into the metadata.

    Raises:
        VerdictError: If a field is missing or out of range, or CC is not one of 1, .7, .5, .3, 0.
    """
    verdict = extract_json(reply)
    scores = {key: _share(verdict, key) for key in ("ncr", "crc", "cc")}
    if not any(math.isclose(scores["cc"], level, abs_tol=1e-6) for level in MCD_CC_LEVELS):
        raise VerdictError(f"judge verdict field 'cc' must be one of {MCD_CC_LEVELS}, got {scores['cc']!r}")
    same, veto = _bool(verdict, "same_conclusion"), _bool(verdict, "veto")
    failed = [f"{key} < {limit}" for key, limit in MCD_THRESHOLDS.items() if scores[key] < limit]
    failed += [f"{key} < {MCD_FLOOR}" for key, value in scores.items() if value < MCD_FLOOR]
    failed += [] if same else ["different conclusion"]
    failed += ["veto"] if veto else []
    metadata = {**scores, "same_conclusion": same, "veto": veto, "failed": failed, "verdict": verdict}
    return Score(0.0 if failed else 1.0, extracted=json.dumps(verdict, ensure_ascii=False),
                 explanation=str(verdict.get("reason", "")), metadata=metadata)
