"""Dialogue acts: the language-free plan of a consultation, and the slot values acts carry.

A consultation is planned as a list of turns, each a list of `Act`s (who speaks, which act, the ground-truth
values it needs). The plan depends only on the care year and a language-free seeded RNG, so every language
renders the same acts in the same order; each language's phrasing file realizes them (`templates.py`).

`ACTS` declares every act a phrasing file must realize and the slots its phrasings may use; the fact intents
(what states a fact verbatim) are declared in `templates.PLACEHOLDERS`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal, get_args

from medmemorybench.knowledge.models import AdherenceAid, Text
from medmemorybench.simulate.models import EVENT_KINDS, TRAP_CATEGORIES

Role = Literal["patient", "doctor"]


@dataclass(frozen=True)
class Word:
    """An entry of a phrasing file's word table (`words.<table>.<key>`)."""

    table: str
    key: str


@dataclass(frozen=True)
class Day:
    """A date, said as `spoken` (4 March), `full` (4 March 2024), `month` (March) or `weekday` (Monday)."""

    iso: str
    form: Literal["spoken", "full", "month", "weekday"] = "spoken"


@dataclass(frozen=True)
class DrugName:
    """A drug's generic name, with its formulation where an extended-release form was chosen."""

    key: str
    release: str = "immediate"


@dataclass(frozen=True)
class LayName:
    """A patient's name for something, without its leading "my"/"the" (the phrasing puts "my" or "your")."""

    text: Text


@dataclass(frozen=True)
class Count:
    """A number said with its noun (`words.<table>.one` or `.many`, with `{n}`): "tomorrow", "in 4 days"."""

    table: str
    n: int


@dataclass(frozen=True)
class Money:
    """An amount a patient pays, in the currency the knowledge base keeps (USD)."""

    usd: float


SlotValue = str | Text | Word | Day | DrugName | Money | LayName | Count


@dataclass(frozen=True)
class Act:
    """One dialogue act: `key` names a fact intent or an act of the phrasing file."""

    role: Role
    key: str
    slots: Mapping[str, SlotValue] = field(default_factory=dict)
    filler: bool = False
    """Says nothing specific to this patient or visit (thanks, "I see"): counted by the variety report."""
    fact: object | None = None
    """The ground-truth fact a fact intent states (its slots are that fact's surface forms)."""


SESSION_SLOTS = frozenset({"name", "occupation", "weekday", "weekday_before", "weekday_after", "month", "relative",
                           "relative_yours", "relative_name", "helper", "helper_name", "housemate", "housemate_name",
                           "aid", "meals", "day"})
"""Slots every act of a regular session may use: how the doctor addresses the patient, their job, today, a weekday
two or three days before and after it (an illness "since Saturday" told on a Tuesday, never "since Tuesday"; a
start "from Sunday"), a relative of theirs the visit may mention in passing (in the patient's words, the doctor's,
and by name), one able to do something for them (`helper`: drive them in, tell them what they think) and one of
those who shares their home (`housemate`), and what the persona holds all year: how they keep to their tablets
(`aid`, a phrase of `aid.<kind>`), what they eat (`meals`) and their lifestyle in their own words (`day`)."""

_KINDS = tuple(EVENT_KINDS)
_LABS = ("blood", "urine", "stool", "breath", "sleep_study", "ecg", "imaging", "score", "vital")
"""What a result is measured on or by (`Lab.kind`, and `Lab.specimen` for a lab test)."""

ACTS: dict[str, frozenset[str]] = {k: frozenset(v) for k, v in {
    # --- the patient's opening: why they came, by visit kind and what led to it -------------------------------
    **{f"open.{kind}": () for kind in _KINDS},
    **{f"open.lab_check.{lab}": () for lab in _LABS},
    "open.symptom_report.again": ("since",),
    "open.symptom_report.again.recent": ("since",),
    "open.symptom_report.illness": (),
    "open.follow_up.review": ("course_drug",),
    "open.follow_up.review.as_needed": ("course_drug",),
    "open.follow_up.on_drug": ("drug", "form"),
    "open.adverse_event.drug": ("form", "since"),
    "open.complication.urgent": (),
    "open.prescription.diagnosed": (),
    # --- the doctor's greeting and first question -------------------------------------------------------------
    "greet.doctor": ("last_seen", "gap"),
    "aside.patient": (),
    "aside.doctor": (),
    "greet.doctor.urgent": (),
    # --- history taking: the doctor asks, the patient answers --------------------------------------------------
    "hx.onset": (),
    "ans.onset.new": (),
    "ans.onset.acute": (),
    "ans.onset.since": ("since",),
    "ans.onset.since.recent": ("since",),
    "ans.onset.corrected": (),
    "ans.urgent": (),
    "hx.severity": (),
    "ans.severity": ("score",),
    "hx.trigger": (),
    "ans.trigger": (),
    "hx.impact": (),
    "ans.impact": (),
    "hx.tried": (),
    "ans.tried": (),
    "hx.adherence": ("drug",),
    "ans.adherence.ok": ("drug", "frequency"),
    "ans.adherence.vague": ("form", "frequency"),
    "ans.adherence.missed": ("drug",),
    "clarify.drug": ("drug",),
    "hx.side_effects": ("drug",),
    "ans.side_effects.none": ("drug",),
    "hx.general": (),
    "ans.general": ("relative",),
    "hx.mood": (),
    "hx.routine": (),
    "ans.routine.working": (),
    "ans.routine.retired": (),
    "ans.routine.cook_other": ("cook",),
    "ans.routine.cook_for": ("household",),
    "ans.routine.cook_alone": (),
    "hx.tests_how": (),
    "ans.tests_how": (),
    "hx.disclosure": (),
    "ans.disclosure": (),
    "ans.mood": (),
    "hx.self_harm": (),
    "ans.self_harm": (),
    "ans.self_harm.before": (),
    "hx.illness": (),
    "ans.illness.worse": (),
    "hx.review": ("course_drug",),
    "ans.review": ("course_drug",),
    "hx.review.as_needed": ("course_drug",),
    "ans.review.as_needed": ("course_drug",),
    "hx.urgent": (),
    "plan.none": (),
    "advice.again": ("since", "advice"),
    "advice.again_safety": ("since", "advice"),
    # --- examination and results --------------------------------------------------------------------------------
    "exam.general": (),
    "exam.urgent": (),
    **{f"results.{lab}": () for lab in _LABS},
    "results.tests": (),
    **{f"trend.{way}{size}": ("lab", "since") for way in ("up", "down") for size in ("_slight", "", "_marked")},
    "trend.same": ("lab", "since"),
    **{f"explain.{status}": ("lab_lay", "value", "low", "high", "unit", "place")
       for status in ("high", "low", "normal", "above_target", "below_target", "in_target", "above_goal", "in_goal")},
    # --- the patient reacts, asks, raises what matters ----------------------------------------------------------
    "react.result": ("lab_lay", "value"),
    "ask.side_effects": ("drug",),
    "ask.cost": ("drug",),
    "ask.alternative": ("drug",),
    "ask.duration": ("drug",),
    "ask.meaning": (),
    "ask.urgent": (),
    **{f"raise.{category}": ("detail",) for category in TRAP_CATEGORIES},
    # --- the doctor answers -------------------------------------------------------------------------------------
    "answer.side_effects": ("drug", "effect"),
    "answer.side_effects.none": ("drug",),
    "answer.cost": ("drug", "cost"),
    "answer.alternative": ("drug",),
    "answer.alternative.avoided": ("drug", "other"),
    "answer.duration": ("drug", "days"),
    "answer.duration.as_needed": ("drug", "days"),
    "answer.meaning": ("diagnosis",),
    "answer.urgent": (),
    "answer.raise": (),
    # --- closing: teach-back, safety-netting, the next visit, a reference to an earlier one ----------------------
    "teachback.drug": ("drug", "dose", "frequency"),
    "teachback.stop": ("drug",),
    "teachback.results": ("lab_lay",),
    "teachback.advice": (),
    "teachback.advice_safety": (),
    "teachback.diagnosis": ("diagnosis",),
    "teachback.general": (),
    "teachback.admission": (),
    "safety.new_drug": ("drug", "effect"),
    "safety.urgent": (),
    "safety.admission": (),
    "safety.acute_home": (),
    "safety.illness": (),
    "safety.general": (),
    "next.visit": ("when", "in_days", "next_day", "next_weekday"),
    "next.tests": ("when", "in_days", "next_day", "next_weekday", "lab"),
    "next.tests_again": ("when", "in_days", "next_day", "next_weekday", "lab"),
    "next.none": (),
    "backref.start": ("drug", "since"),
    "backref.start.settled": ("drug", "since"),
    "backref.start.working": ("drug", "since"),
    "backref.change": ("drug", "since"),
    "backref.diagnosis": ("diagnosis", "since"),
    "backref.diagnosis.well": ("diagnosis", "since"),
    "bye.patient": (),
    "bye.doctor": (),
    # --- a patient who faints at needles: how a needle procedure was or will be managed --------------------------
    "needle.blood": (),
    "needle.procedure": (),
    "needle.given": (),
    "needle.self": (),
    # --- how the patient keeps to their tablets (said inside another sentence: the `aid` session slot) ---------------
    **{f"aid.{kind}": ("aid_helper", "aid_helper_name") for kind in get_args(AdherenceAid)},
}.items()}
"""Every act a phrasing file realizes, with the slots its phrasings may use beyond `SESSION_SLOTS`."""

FAMILY_SLOTS = frozenset({"relative", "yours", "pronoun", "pronoun_obj", "pronoun_pos", "rel_name", "condition",
                          "age"})
"""Slots every act of a family consultation may use: the relative in the patient's words ("my mother") and the
doctor's ("your mother"), and the pronouns (she, her, her)."""

HEALTH_SLOTS = frozenset({"topic"})
"""Slots every act of a health consultation may use: the topic asked about."""

NOISE_ACTS: dict[str, frozenset[str]] = {k: frozenset(v) for k, v in {
    # health consultations (anonymous, general)
    "health.ask": ("question",),
    "health.clarify": (),
    "health.context": (),
    "health.point": ("point",),
    "health.point.more": ("point",),
    "health.follow": (),
    "health.follow.question": ("question",),
    "health.last": (),
    "health.close": (),
    # family proxy consultations
    "family.ask_dose": ("drug",),
    "family.ask_effects": ("drug",),
    "family.ask_lab": ("lab",),
    "family.ask_monitor": ("drug",),
    "family.ask_cost": ("drug",),
    "family.ask_missed": ("drug",),
    "family.ask_lab_meaning": ("lab",),
    "family.ask_watch": (),
    "family.ask_self_care": (),
    "family.reply.cost": ("drug", "cost"),
    "family.reply.missed": ("drug", "form"),
    "family.reply.lab_meaning": ("lab", "lab_lay", "status"),
    "family.reply.watch": ("complication",),
    "family.reply.self_care": ("advice",),
    "family.reply.dose": ("drug", "low", "high", "unit", "frequency"),
    "family.reply.dose.fixed": ("drug", "low", "unit", "frequency"),
    "family.reply.effects": ("drug", "effect", "effect_lay"),
    "family.reply.effects.none": ("drug",),
    "family.reply.lab": ("lab", "low", "high", "unit", "status"),
    "family.reply.monitor": ("drug", "lab", "every"),
    "family.reply.monitor.none": ("drug",),
    "family.reply.allergy": ("agent",),
    "family.reply.condition": ("condition",),
    "family.worry": (),
    "family.close": (),
}.items()}
"""The acts of noise sessions and the slots each may use (noise sessions have no session slots)."""
