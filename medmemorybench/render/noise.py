"""Noise sessions for the mixed mode: anonymous health consultations and family proxy consultations.

Health consultations are generic questions on knowledge-base topics. Family consultations are the
patient asking for a relative, stating that relative's own drugs, labs and allergies: the same lab
names and drug classes as the patient's, other values — the confusers of attribution.
"""

from __future__ import annotations

import random

from medmemorybench.knowledge.base import KnowledgeBase
from medmemorybench.render.fields import format_lab_value, format_number, text_of
from medmemorybench.render.models import Session, Turn
from medmemorybench.render.templates import Templates
from medmemorybench.simulate.models import CareYear, Relative


def _turns(lines: list[tuple[str, str]]) -> list[Turn]:
    return [Turn(role=role, text=text) for role, text in lines]  # type: ignore[arg-type]


def render_health_sessions(
    kb: KnowledgeBase, templates: Templates, year: CareYear, count: int, rng: random.Random
) -> list[Session]:
    """`count` anonymous health consultations, each on a different sub-topic while any remain unused."""
    lang = templates.language
    pool = [(topic, sub) for topic in sorted(kb.topics.values(), key=lambda t: t.key) for sub in topic.subtopics]
    sessions = []
    order: list[int] = []
    for number in range(1, count + 1):
        if not order:
            order = list(range(len(pool)))
            rng.shuffle(order)
        _, sub = pool[order.pop()]
        question = text_of(rng.choice(sub.questions), lang)
        lines = [("patient", rng.choice(templates.variants("health.open")).format(question=question))]
        points = [text_of(p, lang) for p in sub.points]
        for index, point in enumerate(points):
            if index:
                lines.append(("patient", rng.choice(templates.variants("health.follow"))))
            lines.append(("doctor", point))
        lines[-1] = ("doctor", lines[-1][1] + " " + rng.choice(templates.variants("health.close")))
        sessions.append(Session(session_id=f"{year.persona.persona_id}-H{number:03d}", kind="health_noise",
                                turns=_turns(lines)))
    return sessions


def _family_lines(kb: KnowledgeBase, templates: Templates, relative: Relative, rng: random.Random) -> list[str]:
    """What the patient says about the relative: one or two drugs, one or two labs, maybe an allergy."""
    lang = templates.language
    who = text_of(kb.relatives[relative.relation].text, lang)
    say = lambda intent, **f: rng.choice(templates.variants(intent)).format(relative=who, **f)  # noqa: E731
    lines = []
    for drug in rng.sample(relative.drugs, k=min(len(relative.drugs), rng.randint(1, 2))):
        lines.append(say("family.drug", drug=text_of(kb.drugs[drug.drug].name, lang), dose=format_number(drug.dose),
                         unit=drug.unit, frequency=templates.word("frequency", drug.frequency)))
    for lab in rng.sample(relative.labs, k=min(len(relative.labs), rng.randint(1, 2))):
        lines.append(say("family.lab", lab=text_of(kb.labs[lab.lab].name, lang),
                         value=format_lab_value(kb, lab.lab, lab.value), unit=lab.unit))
    if relative.allergies and rng.random() < 0.5:
        allergy = relative.allergies[0]
        lines.append(say("family.allergy", agent=text_of(allergy.agent, lang),
                         reaction=text_of(allergy.reaction, lang)))
    return lines


def render_family_sessions(
    kb: KnowledgeBase, templates: Templates, year: CareYear, count: int, rng: random.Random
) -> list[Session]:
    """`count` proxy consultations spread evenly over the patient's relatives."""
    lang = templates.language
    family = year.persona.family
    sessions = []
    for number in range(1, count + 1):
        relative = family[(number - 1) % len(family)]
        who = text_of(kb.relatives[relative.relation].text, lang)
        condition_key = relative.conditions[0]
        condition = kb.conditions.get(condition_key)
        condition_name = condition.name if condition else kb.history_conditions[condition_key].name
        facts = _family_lines(kb, templates, relative, rng)

        def pick(intent: str, who: str = who) -> str:
            return rng.choice(templates.variants(intent)).format(relative=who)

        lines = [
            ("patient", rng.choice(templates.variants("family.open")).format(
                relative=who, name=text_of(relative.name, lang), age=relative.age,
                condition=text_of(condition_name, lang))),
            ("doctor", pick("family.doctor")),
            ("patient", " ".join(facts[: (len(facts) + 1) // 2])),
            ("doctor", pick("family.doctor")),
        ]
        if facts[(len(facts) + 1) // 2:]:
            lines += [("patient", " ".join(facts[(len(facts) + 1) // 2:])), ("doctor", pick("family.doctor"))]
        lines += [("patient", pick("family.close")), ("doctor", rng.choice(templates.variants("close.doctor")))]
        sessions.append(Session(session_id=f"{year.persona.persona_id}-F{number:03d}", kind="family_noise",
                                family_member=relative.relation, turns=_turns(lines)))
    return sessions
