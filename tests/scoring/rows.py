"""Question rows for the scoring tests, shaped like the `questions` config (defaults filled in)."""

from __future__ import annotations

from typing import Any

MQ_OPTIONS = ["A. telmisartan", "B. pioglitazone", "C. lisinopril", "D. ezetimibe"]


def row(query_type: str, answer: str = "", **fields: Any) -> dict[str, Any]:
    """A question row of `query_type` with every key present."""
    base: dict[str, Any] = {
        "query_id": f"P0001-C010-{query_type}1", "persona_id": "P0001", "checkpoint": 10, "query_type": query_type,
        "question": "What is it?", "options": [], "answer": answer, "answer_aliases": [], "correct_options": [],
        "evidence_session_ids": ["P0001-S005"], "key_facts": [], "reasoning_chain": [], "trap_category": None,
        "abstain": False, "absent_fact": None, "common_wrong_answer": None, "template": f"{query_type.lower()}.x",
    }
    return {**base, **fields}


def eem(answer: str = "500 mg", aliases: list[str] | None = None) -> dict[str, Any]:
    return row("EEM", answer, answer_aliases=aliases or [], key_facts=[answer])


def tla(day: str = "2024-03-04") -> dict[str, Any]:
    return row("TLA", day, answer_aliases=["4 March 2024", "March 4, 2024", "2024/03/04"], key_facts=[day])


def mq(correct: list[str] | None = None, trap: str | None = "allergy") -> dict[str, Any]:
    correct = correct or ["A", "B", "D"]
    return row("MQ", ", ".join(correct), options=list(MQ_OPTIONS), correct_options=correct, key_facts=["ramipril"],
               trap_category=trap)


def ig() -> dict[str, Any]:
    return row("IG", "No. duloxetine is not suitable for you because of the sumatriptan you already take",
               question="A friend swears by duloxetine. Should I ask to be put on it?", key_facts=["sumatriptan"],
               trap_category="medication_history",
               common_wrong_answer="Yes, duloxetine is a standard treatment for LADA and would be a reasonable option.")


def ig_suitable() -> dict[str, Any]:
    """An IG question whose gold is "Yes": the drug is fine although the patient has a trap."""
    return row("IG", "Yes. amoxicillin would be suitable for you: your allergy to cefalexin does not rule it out, "
                     "and nothing in your records rules it out.",
               question="Would amoxicillin be a good option for me to clear the infection?",
               key_facts=["allergy to cefalexin"], trap_category="allergy",
               common_wrong_answer="No, amoxicillin would not be suitable for you.")


def ig_habit() -> dict[str, Any]:
    habit = "I do intermittent fasting: I skip breakfast and lunch and only eat one meal in the evening."
    return row("IG", f"Yes: {habit} This works against the advice: eat three meals at regular times.",
               key_facts=[habit], trap_category="diet_preference",
               common_wrong_answer="No, your diet does not matter for your treatment.")


def mcd() -> dict[str, Any]:
    chain = [{"node": "stressor: supplies cost", "session_id": "P0001-S063"},
             {"node": "missed 7 days of metformin", "session_id": "P0001-S066"},
             {"node": "HbA1c 8.7 %", "session_id": "P0001-S068"}]
    return row("MCD", "stressor: supplies cost Then: missed 7 days of metformin Then: HbA1c 8.7 %",
               key_facts=["7", "8.7 %"], reasoning_chain=chain,
               evidence_session_ids=["P0001-S063", "P0001-S066", "P0001-S068"])


def abstain() -> dict[str, Any]:
    return row("ABS", "That is not in my records of your consultations.",
               answer_aliases=["not in my records", "no record", "I don't know"], evidence_session_ids=[],
               abstain=True, absent_fact="memory test score")
