"""Sessions: the labelled records of the dataset, and the observed view a memory system reads.

One regular session per event; noise sessions are marked. A memory never sees those marks: the
runner hands it `ObservedSession`s (`medmemorybench/harness/observed.py`).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from medmemorybench.segment import has_cjk

SessionKind = Literal["regular", "health_noise", "family_noise"]


class Turn(BaseModel):
    """One utterance."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    role: Literal["patient", "doctor"]
    """Who speaks."""
    text: str = Field(min_length=1)
    """What they say."""


class Session(BaseModel):
    """A consultation in the stream."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    session_id: str
    """Unique id: `P0001-S017` (regular, the 17th encounter), `P0001-H003` (health), `P0001-F012` (family)."""
    kind: SessionKind
    """Regular encounter or one of the two kinds of noise."""
    date: str | None = None
    """ISO date (regular sessions only; noise is undated)."""
    family_member: str | None = None
    """Relation of the relative consulted for (family noise only)."""
    turns: list[Turn] = Field(min_length=2)
    """The dialogue, patient first."""
    event_ids: list[str] = Field(default_factory=list)
    """Ground-truth events the session renders (regular sessions only)."""
    renderer: str = "template"
    """What produced the text: `template` or `llm:<model>`."""


class ObservedSession(BaseModel):
    """A consultation as a deployed assistant's memory sees it: when, and what was said; no labels."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    session_id: str
    """Opaque id, in stream order (`P0001-X0042`); it says nothing about the kind of session."""
    date: str
    """ISO date; every session has one (the harness dates noise between the patient's visits)."""
    turns: list[Turn] = Field(min_length=2)
    """The dialogue, patient first."""


ROLE_LABELS = {"en": {"patient": "Patient: ", "doctor": "Doctor: ", "date": "Date: "},
               "zh": {"patient": "患者：", "doctor": "医生：", "date": "日期："}}
"""How a session's text labels its speakers and its date, per language (a Chinese session reads 患者：…)."""


def session_labels(session: Session | ObservedSession) -> dict[str, str]:
    """The speaker and date labels of a session's text, in its language."""
    return ROLE_LABELS["zh" if has_cjk(session.turns[0].text) else "en"]


def turn_line(turn: Turn, labels: dict[str, str] | None = None) -> str:
    """One turn as memories read it: `Patient: …` or `Doctor: …` (`患者：…` in a Chinese session)."""
    return f"{(labels or ROLE_LABELS['en'])[turn.role]}{turn.text}"


def session_text(session: Session | ObservedSession) -> str:
    """The text a memory system indexes: a date header (every dated session) then the turns."""
    labels = session_labels(session)
    header = f"{labels['date']}{session.date}\n" if session.date else ""
    return header + "\n".join(turn_line(t, labels) for t in session.turns)


def regular_session_id(event_id: str) -> str:
    """`P0001-E017` -> `P0001-S017`: a regular session is named after the event it renders."""
    persona, _, number = event_id.rpartition("-E")
    return f"{persona}-S{number}"
