"""Plain text of dataset rows for a reviewer: an event's facts, a question with its gold, a session's dialogue.

Facts are described from the `facts_json` the dataset holds, field by field, without the simulator's
models: a sheet shows exactly what the published record says, and it can be written from any build
(a Hub download, an older version) with no matching simulator code (`docs/review.md`).
"""

from __future__ import annotations

import json
import re

_IDENTIFIER = re.compile(r"^[a-z0-9]+(?:_[a-z0-9]+)+$")
_WITH_UNIT = ("value", "dose", "previous_dose")


def _number(value: float) -> str:
    # `:g` drops a trailing '.0' (9.0 -> '9'), as the rendered sessions write numbers.
    return f"{value:g}" if abs(value) < 1e6 else f"{value:.0f}"


def _value_text(value: object) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int | float):
        return _number(value)
    if isinstance(value, dict):
        if "en" in value:  # a bilingual text: the sheet is English
            return str(value["en"])
        return ", ".join(f"{k.replace('_', ' ')} {_value_text(v)}" for k, v in value.items() if v is not None)
    if isinstance(value, list):
        return ", ".join(_value_text(v) for v in value)
    text = str(value)
    return text.replace("_", " ") if _IDENTIFIER.match(text) else text


def describe_fact(fact: dict) -> str:
    """One line for a typed fact: its type (and its own key, e.g. the lab), then every other field.

    `{"type": "lab", "lab": "hba1c", "value": 8.3, "unit": "%"}` gives `lab hba1c: value 8.3 %`.
    """
    kind = str(fact.get("type", "fact"))
    unit = fact.get("unit")
    head, parts = kind, []
    for key, value in fact.items():
        if key in ("type", "unit") or value is None or value in ("", [], {}):
            continue
        text = _value_text(value)
        if key in _WITH_UNIT and unit:
            text += f" {unit}"
        if key == kind:
            head = f"{kind} {text}"
        else:
            parts.append(f"{key.replace('_', ' ')} {text}")
    if unit and not any(fact.get(key) is not None for key in _WITH_UNIT):
        parts.append(f"unit {unit}")
    return head + (": " + "; ".join(parts) if parts else "")


def event_lines(event: dict) -> list[str]:
    """What an event of the `personas` config states: its date, phase and kind, then one line per fact."""
    lines = [f"{event['kind']} on {event['date']} (phase {event['phase']})"]
    if event.get("triggered_by"):
        lines.append(f"triggered by: {', '.join(event['triggered_by'])}")
    facts = json.loads(event["facts_json"] or "[]")
    lines += [f"fact: {describe_fact(fact)}" for fact in facts] or ["fact: (none recorded)"]
    return lines


def question_lines(question: dict) -> list[str]:
    """A question of the `questions` config with its gold: answer, options, key facts, reasoning chain."""
    lines = [f"question ({question['query_type']}, checkpoint {question['checkpoint']}): {question['question']}"]
    if question.get("options"):
        lines.append(f"options: {' | '.join(question['options'])}")
    lines.append(f"gold answer: {question['answer']}")
    if question.get("correct_options"):
        lines.append(f"correct options: {', '.join(question['correct_options'])}")
    if question.get("answer_aliases"):
        lines.append(f"also accepted: {' | '.join(question['answer_aliases'])}")
    if question.get("key_facts"):
        lines.append(f"key facts: {' | '.join(question['key_facts'])}")
    for number, step in enumerate(question.get("reasoning_chain") or [], start=1):
        lines.append(f"reasoning step {number} ({step['session_id']}): {step['node']}")
    if question.get("trap_category"):
        lines.append(f"trap tested: {question['trap_category']}")
    if question.get("common_wrong_answer"):
        lines.append(f"textbook answer that is wrong for this patient: {question['common_wrong_answer']}")
    if question.get("abstain"):
        lines.append(f"abstention: the records never mention {question.get('absent_fact') or 'it'}")
    return lines


def session_text(session: dict) -> str:
    """A session's dialogue: a header line with its id and date, then one `role: text` line per turn."""
    header = f"[{session['session_id']}{', ' + session['date'] if session.get('date') else ''}]"
    return "\n".join([header, *(f"{turn['role']}: {turn['text']}" for turn in session["turns"])])
