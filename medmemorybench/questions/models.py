"""The question record: one question at one checkpoint, with its gold answer, evidence and key facts."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, field_validator

from medmemorybench.questions.spec import type_codes

FACT_KINDS = ("quantity", "date", "name", "finding", "gist", "sentence", "polarity")
"""How a gold fact is compared with an answer (`scoring.facts`)."""


class GoldFact(BaseModel):
    """One thing a correct answer states, in any of its forms (`scoring.facts` compares it by its kind)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    text: str
    """The fact as the gold states it ("80 mg", "2024-03-04", "metformin", "yes")."""
    kind: str
    """One of `FACT_KINDS`."""
    aliases: list[str] = Field(default_factory=list)
    """Other accepted forms (a brand, an abbreviation, a lay name); for a `gist`, its concept groups, each one's
    words joined by "|"; for a chain's record value (`scoring.facts.RECORD_GROUP`), the ISO days it was measured."""
    required: bool = True
    """False: need not be stated, but another value in its place is wrong (the dose beside a "yes, carry on")."""
    group: str = ""
    """Facts sharing a non-empty group are alternatives: stating one suffices (any fact that bars a drug)."""

    @field_validator("kind")
    @classmethod
    def _known_kind(cls, value: str) -> str:
        if value not in FACT_KINDS:
            raise ValueError(f"unknown fact kind {value!r}; known: {', '.join(FACT_KINDS)}")
        return value


class ChainNode(BaseModel):
    """One step of a multi-hop reasoning chain and the session that states it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    node: str
    """What happened at this step."""
    session_id: str
    """Regular session that states it."""
    facts: list[GoldFact] = Field(default_factory=list)
    """What shows an answer told this step: stating any one of them covers it."""


class Question(BaseModel):
    """A benchmark question."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    query_id: str
    """Globally unique: `<persona>-C<checkpoint>-<type><n>`."""
    persona_id: str
    """Patient."""
    checkpoint: int
    """Asked after this many regular sessions."""
    query_type: str
    """A registered type's code (`questions.spec`): the paper's six, plus ABS (abstention)."""
    question: str
    """What the patient asks."""
    options: list[str] = Field(default_factory=list)
    """MQ: the four options, letter-prefixed ("A. metformin")."""
    answer: str
    """Gold answer."""
    answer_aliases: list[str] = Field(default_factory=list)
    """Other accepted surface forms of the answer."""
    correct_options: list[str] = Field(default_factory=list)
    """MQ: letters of the correct options."""
    evidence_session_ids: list[str] = Field(default_factory=list)
    """Regular sessions (<= checkpoint) the answer rests on."""
    key_facts: list[str] = Field(default_factory=list)
    """Normalized strings a correct answer must contain; each appears in the evidence sessions."""
    facts: list[GoldFact] = Field(default_factory=list)
    """What a correct answer states, each in any of its forms (`scoring.facts`); empty for MQ, ABS and MCD (whose
    steps carry theirs)."""
    reasoning_chain: list[ChainNode] = Field(default_factory=list)
    """MCD: the causal chain, in order."""
    trap_category: str | None = None
    """The trap category the question tests, if any."""
    abstain: bool = False
    """Whether the honest answer is that the records do not say."""
    absent_fact: str | None = None
    """ABS: the term asked about, which the patient's own sessions never mention."""
    common_wrong_answer: str | None = None
    """IG: the textbook answer that is wrong for this patient."""
    subject: str | None = None
    """IG: the drug asked about, as the question names it (for analysis, and the audit's cohort probe)."""
    template: str
    """Phrasing intent the question was worded from (`<type>.<intent>`; an ABS question borrows an answerable
    type's, so its wording does not give it away)."""

    @field_validator("query_type")
    @classmethod
    def _known_type(cls, value: str) -> str:
        if value not in type_codes():
            raise ValueError(f"unknown question type {value!r}; known: {', '.join(type_codes())}")
        return value
