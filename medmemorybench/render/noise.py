"""Noise sessions for the mixed mode: anonymous health consultations and family proxy consultations.

Both are planned as dialogue acts like the regular sessions (`acts.NOISE_ACTS`), from a language-free RNG, and
realized by the language's phrasing file:

- a health consultation asks a knowledge-base question (on a sub-topic not yet used while any remain), the
  doctor may ask who it is for, then answers point by point while the asker follows up with the sub-topic's
  other questions, and asks last when to see a doctor;
- a family consultation has the patient describe a relative in their own words (their condition, drug, latest
  results, an allergy), the same lab names and drug classes as the patient's with other values (the confusers
  of attribution), and ask about each; the doctor answers each from the knowledge base (the usual dose range,
  the commonest side effect, what is monitored and how often, the reference range), never the same reply twice.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable

from medmemorybench.knowledge.base import KnowledgeBase
from medmemorybench.render.fields import (
    budget_text,
    format_lab_value,
    format_number,
    lab_status,
    status_word_key,
    text_of,
)
from medmemorybench.render.models import Session, Turn
from medmemorybench.render.templates import Templates
from medmemorybench.simulate.models import CareYear, Relative
from medmemorybench.simulate.rng import rng_for

INTERVALS = ((10, "week"), (21, "weeks"), (45, "month"), (120, "months"), (270, "half_year"))
"""Monitoring intervals in days, as the `interval` word table names them (longer: a year)."""


class _Writer:
    """Turns of one noise session: each beat's utterances realized and joined."""

    def __init__(self, templates: Templates, rng: random.Random, slots: dict[str, str] | None = None) -> None:
        self.templates, self.rng, self.slots = templates, rng, slots or {}
        self.beats: list[list[str]] = []
        self.used: set[tuple[str, int]] = set()

    def say(self, role: str, key: str, **slots: str) -> None:
        """Add an utterance: to the current beat if it is this role's, else as a new beat."""
        text = self.templates.realize(key, self.rng, {**self.slots, **slots}, self.used)
        if not self.beats or len(self.beats) % 2 != (0 if role == "doctor" else 1):
            self.beats.append([])
        self.beats[-1].append(text)

    def turns(self) -> list[Turn]:
        return [Turn(role="patient" if i % 2 == 0 else "doctor", text=self.templates.joined(b))  # type: ignore[arg-type]
                for i, b in enumerate(self.beats)]


def render_health_sessions(
    kb: KnowledgeBase, templates: Templates, year: CareYear, count: int, rng: random.Random,
    stats: Counter | None = None,
) -> list[Session]:
    """`count` anonymous health consultations, each on a different sub-topic while any remain unused.

    Args:
        rng: the plan's generator (language-free: every language asks the same questions in the same order).
        stats: counts patient turns (all are questions or context here, none stock filler).
    """
    lang = templates.language
    words = rng_for(year.seed, year.persona.persona_id, f"noise/health/{lang}")
    pool = [(topic, sub) for topic in sorted(kb.topics.values(), key=lambda t: t.key) for sub in topic.subtopics]
    sessions = []
    order: list[int] = []
    for number in range(1, count + 1):
        if not order:
            order = list(range(len(pool)))
            rng.shuffle(order)
        topic, sub = pool[order.pop()]
        questions = list(sub.questions)
        rng.shuffle(questions)
        points = [text_of(p, lang) for p in sub.points]
        clarify = len(points) < 3  # (three points and more fill six turns without it)
        subject = text_of(topic.name, lang)
        w = _Writer(templates, words, {"topic": subject})
        w.say("patient", "health.ask", question=text_of(questions[0], lang))
        if clarify:
            w.say("doctor", "health.clarify")
            w.say("patient", "health.context")
        w.say("doctor", "health.point", point=points[0])
        for index, point in enumerate(points[1:], start=1):
            last = index == len(points) - 1
            if last and len(points) > 2:
                w.say("patient", "health.last")
            elif index < len(questions):
                w.say("patient", "health.follow.question", question=text_of(questions[index], lang))
            else:
                w.say("patient", "health.follow")
            w.say("doctor", "health.point.more", point=point)
        w.say("doctor", "health.close")
        if stats is not None:
            stats["patient_turns"] += (len(w.beats) + 1) // 2
        sessions.append(Session(session_id=f"{year.persona.persona_id}-H{number:03d}", kind="health_noise",
                                turns=w.turns()))
    return sessions


def _interval(days: int) -> str:
    return next((name for limit, name in INTERVALS if days <= limit), "year")


class _Family:
    """What the patient can tell and ask about one relative, and the doctor's knowledge-base answers, in one
    language: each a `Topic` (the patient's utterances, the doctor's), so a session is a few of them."""

    def __init__(self, kb: KnowledgeBase, templates: Templates, relative: Relative) -> None:
        self.kb, self.templates, self.relative = kb, templates, relative
        self.lang = templates.language

    def t(self, text) -> str:  # noqa: ANN001
        return text_of(text, self.lang)

    def topics(self) -> dict[str, Callable[[random.Random], tuple[Said, Said]]]:
        """Every exchange the relative's record allows, by name (drawn from with the plan's RNG)."""
        out: dict[str, Callable[[random.Random], tuple[Said, Said]]] = {}
        drug = self.relative.drugs[0]
        for topic in ("dose", "effects", "monitor", "cost", "missed"):
            out[f"drug:{topic}"] = lambda rng, topic=topic: self.drug_topic(drug, topic, rng)
        for lab in self.relative.labs:
            for topic in ("range", "meaning"):
                out[f"lab:{lab.lab}:{topic}"] = lambda rng, lab=lab, topic=topic: self.lab_topic(lab, topic)
        condition = self.kb.conditions.get(self.relative.conditions[0])
        if condition is not None:
            out["condition:watch"] = lambda rng: self.watch_topic(condition, rng)
            out["condition:self_care"] = lambda rng: self.self_care_topic(condition, rng)
        if self.relative.allergies:
            out["allergy"] = lambda rng: self.allergy_topic()
        return out

    def drug_told(self, drug) -> tuple[str, dict[str, str]]:  # noqa: ANN001
        return "family.drug", {"drug": self.t(self.kb.drugs[drug.drug].name), "dose": format_number(drug.dose),
                               "unit": self.templates.unit(drug.unit),
                               "frequency": self.templates.word("frequency", drug.frequency)}

    def drug_topic(self, drug, topic: str, rng: random.Random) -> tuple[Said, Said]:  # noqa: ANN001
        """The relative's drug (stated with its dose: a confuser of the patient's own) and a question on it."""
        info = self.kb.drugs[drug.drug]
        name = self.t(info.name)
        asked: Said = [self.drug_told(drug), (f"family.ask_{topic}", {"drug": name})]
        if topic == "dose":
            spec = info.dose
            key = "family.reply.dose.fixed" if spec.start == spec.max else "family.reply.dose"
            return asked, [(key, {"drug": name, "low": format_number(spec.start),
                                                  "high": format_number(spec.max),
                                                  "unit": self.templates.unit(spec.unit),
                                                  "frequency": self.templates.word("frequency", spec.frequency)})]
        if topic == "effects":
            if not info.adverse_effects:
                return asked, [("family.reply.effects.none", {"drug": name})]
            effect = rng.choice(info.adverse_effects)
            return asked, [("family.reply.effects", {"drug": name, "effect": self.t(effect.name),
                                                     "effect_lay": self.t(effect.lay)})]
        if topic == "monitor":
            if not info.monitoring:
                return asked, [("family.reply.monitor.none", {"drug": name})]
            check = rng.choice(info.monitoring)
            return asked, [("family.reply.monitor", {"drug": name, "lab": self.t(self.kb.labs[check.lab].name),
                                                     "every": self.templates.word("interval",
                                                                                  _interval(check.every_days))})]
        if topic == "cost":
            return asked, [("family.reply.cost", {"drug": name, "cost": budget_text(round(info.monthly_cost_usd),
                                                                                     self.lang)})]
        return asked, [("family.reply.missed", {"drug": name, "form": self.templates.word("form",
                                                                                           info.forms[0].form)})]

    def lab_topic(self, lab, topic: str) -> tuple[Said, Said]:  # noqa: ANN001
        """The relative's result (a confuser of the patient's own) and what it means or what normal is."""
        info = self.kb.labs[lab.lab]
        name = self.t(info.name)
        told = ("family.lab", {"lab": name, "value": format_lab_value(self.kb, lab.lab, lab.value),
                                "unit": self.templates.unit(lab.unit)})
        if topic == "meaning":
            return [told, ("family.ask_lab_meaning", {"lab": name})], [
                ("family.reply.lab_meaning", {"lab": name, "lab_lay": self.templates.lay(self.t(info.lay)),
                                              "status": self.templates.word("status", status_word_key(
                                                  self.kb, lab.lab, lab.value,
                                                  lab_status(self.kb, lab.lab, lab.value)))})]
        return [told, ("family.ask_lab", {"lab": name})], [("family.reply.lab", self.lab_reply(lab.lab, lab.value))]

    def lab_reply(self, lab_key: str, value: float) -> dict[str, str]:
        lab = self.kb.labs[lab_key]
        low, high = lab.reference
        return {"lab": self.t(lab.name), "low": format_lab_value(self.kb, lab_key, low),
                "high": format_lab_value(self.kb, lab_key, high), "unit": self.templates.unit(lab.unit),
                "status": self.templates.word("status", status_word_key(self.kb, lab_key, value,
                                                                        lab_status(self.kb, lab_key, value)))}

    def watch_topic(self, condition, rng: random.Random) -> tuple[Said, Said]:  # noqa: ANN001
        complication = rng.choice(condition.complications)
        return [("family.ask_watch", {})], [("family.reply.watch", {"complication": self.t(complication.name)})]

    def self_care_topic(self, condition, rng: random.Random) -> tuple[Said, Said]:  # noqa: ANN001
        advice = self.kb.advice[rng.choice(condition.lifestyle_advice)]
        return [("family.ask_self_care", {})], [("family.reply.self_care", {"advice": self.t(advice.text)})]

    def allergy_topic(self) -> tuple[Said, Said]:
        allergy = self.relative.allergies[0]
        agent = self.t(allergy.agent)
        return [("family.allergy", {"agent": agent, "reaction": self.t(allergy.reaction)})], \
            [("family.reply.allergy", {"agent": agent})]


Said = list[tuple[str, dict[str, str]]]
TOPICS_PER_SESSION = (2, 3)
"""Exchanges a family consultation holds beside its opening and close (6-10 turns in all)."""


def render_family_sessions(
    kb: KnowledgeBase, templates: Templates, year: CareYear, count: int, rng: random.Random,
    stats: Counter | None = None,
) -> list[Session]:
    """`count` proxy consultations spread evenly over the patient's relatives, each on a few topics of the
    relative's record (their drug or a result always among them), rotating so a relative's sessions differ.

    Args:
        rng: the plan's generator (language-free: every language tells the same facts in the same order).
        stats: counts patient turns.
    """
    lang = templates.language
    words = rng_for(year.seed, year.persona.persona_id, f"noise/family/{lang}")
    family = year.persona.family
    recent: dict[str, list[str]] = {r.relation: [] for r in family}
    sessions = []
    for number in range(1, count + 1):
        relative = family[(number - 1) % len(family)]
        who = _Family(kb, templates, relative)
        slots = {"relative": who.t(kb.relatives[relative.relation].text),
                 "yours": templates.word("relation", relative.relation),
                 "pronoun": templates.word("pronoun", relative.sex),
                 "pronoun_obj": templates.word("pronoun_obj", relative.sex),
                 "pronoun_pos": templates.word("pronoun_pos", relative.sex), "rel_name": who.t(relative.name),
                 "age": str(relative.age)}
        condition_key = relative.conditions[0]
        condition = kb.conditions.get(condition_key)
        condition_name = who.t(condition.name if condition else kb.history_conditions[condition_key].name)
        slots["condition"] = condition_name
        w = _Writer(templates, words, slots)
        w.say("patient", "family.open", name=who.t(relative.name), age=str(relative.age), condition=condition_name)
        w.say("doctor", "family.reply.condition", condition=condition_name)
        for patient_says, doctor_says in _pick_topics(who, recent[relative.relation], rng):
            for key, fields in patient_says:
                w.say("patient", key, **fields)
            for key, fields in doctor_says:
                w.say("doctor", key, **fields)
        w.say("patient", "family.worry")
        w.say("doctor", "family.close")
        if stats is not None:
            stats["patient_turns"] += (len(w.beats) + 1) // 2
        sessions.append(Session(session_id=f"{year.persona.persona_id}-F{number:03d}", kind="family_noise",
                                family_member=relative.relation, turns=w.turns()))
    return sessions


def _fact_of(topic: str) -> str:
    """What a topic is about: `drug` (the relative's one drug), `lab:<key>`, `condition`, `allergy`."""
    parts = topic.split(":")
    return ":".join(parts[:2]) if parts[0] == "lab" else parts[0]


def _pick_topics(who: _Family, recent: list[str], rng: random.Random) -> list[tuple[Said, Said]]:
    """A few topics, the relative's drug or a result first (the confusers), none of the last sessions' topics while
    others remain."""
    topics = who.topics()
    fresh = [name for name in topics if name not in recent] or list(topics)
    facts = [name for name in fresh if name.startswith(("drug:", "lab:"))] or \
        [name for name in topics if name.startswith(("drug:", "lab:"))]
    first = rng.choice(facts)
    rest = [name for name in fresh if _fact_of(name) != _fact_of(first)]
    chosen = [first, *rng.sample(rest, k=min(len(rest), rng.choice(TOPICS_PER_SESSION) - 1))]
    recent.extend(chosen)
    del recent[:-2 * len(topics) // 3]
    return [topics[name](rng) for name in chosen]
