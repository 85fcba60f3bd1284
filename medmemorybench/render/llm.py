"""The optional LLM renderer: a patient agent and a doctor agent write each session, turn by turn.

Both agents are prompted (`prompts/render/*.jinja`) with the facts they must state. The turns of all
sessions are generated together, one batch per turn, through any `Backbone`. A fact verifier then
checks that every fact the questions may need appears verbatim; a session that fails is retried, then
falls back to the template renderer. `Session.renderer` records which renderer made each session.
"""

from __future__ import annotations

import logging
from collections import Counter

from jinja2 import StrictUndefined

from medmemorybench.knowledge.base import KnowledgeBase
from medmemorybench.models.base import Backbone, ChatRequest
from medmemorybench.normalize import normalize_text
from medmemorybench.render.conversation import SessionRenderer
from medmemorybench.render.fields import budget_text, dose_with_unit, lab_with_unit, text_of, trap_detail
from medmemorybench.render.models import ROLE_LABELS, Session, Turn
from medmemorybench.render.templates import Templates, load_templates
from medmemorybench.resources import prompts_dir
from medmemorybench.simulate.models import (
    AdherenceFact,
    AdverseFact,
    AdviceFact,
    AllergyFact,
    AvoidedFact,
    CareYear,
    CautionFact,
    DiagnosisFact,
    DietFact,
    EconomicFact,
    Event,
    HistoryFact,
    LabFact,
    MedicationFact,
    PreferenceFact,
    RefillFact,
    StressorFact,
    SymptomFact,
    TestFact,
)
from medmemorybench.templating import BoundedSandbox

logger = logging.getLogger(__name__)

TURNS = 8
MAX_TOKENS_PER_TURN = 96


def required_facts(kb: KnowledgeBase, year: CareYear, event: Event, templates: Templates | None = None
                   ) -> dict[str, list[str]]:
    """The exact strings each role must say for the session of `event` ({"patient": [...], "doctor": [...]}), in the
    language of the renderer's `templates` (English by default), units as they say them."""
    templates = templates or load_templates("en")
    language, unit = templates.language, templates.unit
    t = lambda text: text_of(text, language)  # noqa: E731
    drug = lambda key: t(kb.drugs[key].name)  # noqa: E731
    need: dict[str, list[str]] = {"patient": [], "doctor": []}
    traps = {trap.category: trap for trap in year.persona.traps}
    for fact in event.facts:
        if isinstance(fact, SymptomFact):
            need["doctor"].append(t(fact.name))
        elif isinstance(fact, LabFact):
            need["doctor"].append(lab_with_unit(kb, fact.lab, fact.value, unit(fact.unit)))
        elif isinstance(fact, DiagnosisFact):
            need["doctor"].append(t(fact.name))
        elif isinstance(fact, TestFact):
            need["doctor"] += [t(fact.name), t(fact.finding)]
        elif isinstance(fact, MedicationFact):
            role = "patient" if fact.reason in ("long_term", "patient_correction") else "doctor"
            need[role].append(drug(fact.drug))
            if fact.reason == "long_term" and fact.indication and fact.indication.startswith("history:"):
                need[role].append(t(kb.history_conditions[fact.indication.partition(":")[2]].lay))
            if fact.action != "stop":
                need[role].append(dose_with_unit(fact.dose, unit(fact.unit)))
        elif isinstance(fact, AvoidedFact):
            need["doctor"] += [drug(fact.drug), drug(fact.instead)]
            need["doctor"] += [trap_detail(kb, traps[category], language) for category in fact.traps]
        elif isinstance(fact, CautionFact):
            need["doctor"].append(drug(fact.drug))
        elif isinstance(fact, AllergyFact):
            need["patient"] += [t(fact.agent), t(fact.reaction)]
        elif isinstance(fact, HistoryFact):
            need["doctor"].append(t(kb.history_conditions[fact.history].name))
        elif isinstance(fact, PreferenceFact):
            need["patient"].append(t(kb.preferences[fact.preference].text))
        elif isinstance(fact, DietFact):
            need["patient"].append(t(kb.habits[fact.habit].text))
        elif isinstance(fact, EconomicFact):
            need["patient"].append(budget_text(fact.monthly_budget_usd, language))
        elif isinstance(fact, AdverseFact):
            effect = next(e for e in kb.drugs[fact.drug].adverse_effects if e.key == fact.effect)
            need["doctor"] += [t(effect.name), drug(fact.drug)]
        elif isinstance(fact, AdviceFact):
            need["doctor"].append(t(kb.advice[fact.advice].text))
        elif isinstance(fact, StressorFact):
            stressor = next(s for s in kb.conditions[year.persona.condition].stressors if s.key == fact.stressor)
            need["patient"].append(t(stressor.text))
        elif isinstance(fact, AdherenceFact):
            need["patient"] += [drug(fact.drug), str(fact.missed_days)]
        elif isinstance(fact, RefillFact):
            need["patient"].append(drug(fact.drug))
    return {role: list(dict.fromkeys(items)) for role, items in need.items()}


def is_complete(session: Session, need: dict[str, list[str]]) -> bool:
    """Whether every required string appears (normalized) in the dialogue."""
    text = normalize_text(" ".join(turn.text for turn in session.turns))
    return all(normalize_text(item) in text for items in need.values() for item in items)


class LLMSessionRenderer:
    """Renders a year's regular sessions with two LLM agents, falling back to templates per session."""

    def __init__(self, kb: KnowledgeBase, templates: Templates, year: CareYear, backbone: Backbone,
                 retries: int = 1) -> None:
        self.kb, self.templates, self.year, self.backbone, self.retries = kb, templates, year, backbone, retries
        env = BoundedSandbox(undefined=StrictUndefined)
        folder = prompts_dir() / "render"
        if templates.language != "en":  # (a language's own agent prompts: prompts/render/<language>/)
            folder = folder / templates.language
        self.prompts = {role: env.from_string((folder / f"{role}.jinja").read_text(encoding="utf-8"))
                        for role in ("patient", "doctor")}
        self.stats: Counter = Counter()
        """Sessions that passed the fact verifier at the first try, after a retry, or fell back to templates."""

    def _context(self, event: Event) -> dict:
        p = self.year.persona
        lang = self.templates.language
        return {"name": text_of(p.name, lang), "age": p.age, "occupation": text_of(p.occupation, lang),
                "date": event.date}

    def _dialogues(self, events: list[Event], needs: list[dict[str, list[str]]]) -> list[list[Turn]]:
        dialogues: list[list[Turn]] = [[] for _ in events]
        for step in range(TURNS):
            role = "patient" if step % 2 == 0 else "doctor"
            requests = [
                ChatRequest(messages=[{"role": "user", "content": self.prompts[role].render(
                    **self._context(event), facts=need[role], turns=dialogue)}],
                    max_tokens=MAX_TOKENS_PER_TURN, temperature=0.0,
                    stop=["\nPatient:", "\nDoctor:", "\n患者：", "\n医生："])
                for event, need, dialogue in zip(events, needs, dialogues, strict=True)
            ]
            label = ROLE_LABELS["zh" if self.templates.language == "zh" else "en"][role].strip()
            for dialogue, completion in zip(dialogues, self.backbone.generate(requests), strict=True):
                text = completion.text.split("\n")[0].strip().removeprefix(label).strip()
                dialogue.append(Turn(role=role, text=text or "..."))  # type: ignore[arg-type]
        return dialogues

    def render_year(self) -> list[Session]:
        """All regular sessions; each one LLM-written if it passes the verifier, else the template's."""
        fallback = SessionRenderer(self.kb, self.templates, self.year).render_year()
        events = list(self.year.events)
        needs = [required_facts(self.kb, self.year, e, self.templates) for e in events]
        result: dict[int, Session] = {}
        pending = list(range(len(events)))
        for attempt in range(self.retries + 1):
            if not pending:
                break
            dialogues = self._dialogues([events[i] for i in pending], [needs[i] for i in pending])
            still = []
            for index, turns in zip(pending, dialogues, strict=True):
                session = fallback[index].model_copy(update={"turns": turns,
                                                              "renderer": f"llm:{self.backbone.model_id}"})
                if is_complete(session, needs[index]):
                    result[index] = session
                    self.stats["first_try" if attempt == 0 else "after_retry"] += 1
                else:
                    still.append(index)
            pending = still
        self.stats["fallback"] += len(pending)
        logger.info("%s: %d of %d sessions LLM-rendered, %d fell back to templates",
                    self.year.persona.persona_id, len(result), len(events), len(pending))
        return [result.get(i, fallback[i]) for i in range(len(events))]
