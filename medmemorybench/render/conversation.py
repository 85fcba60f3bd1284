"""The template renderer: one regular event becomes a 6–10 turn consultation that states every fact.

The patient opens in lay words, the doctor asks, results and decisions follow, and the visit closes.
Patient-side facts (symptoms, allergies, habits ...) are spoken by the patient and acknowledged by the
doctor; clinical facts (labs, diagnoses, drugs ...) are spoken by the doctor with values and units.
Later visits refer back to earlier ones. The doctor never contradicts a trap fact.
"""

from __future__ import annotations

from medmemorybench.knowledge.base import KnowledgeBase
from medmemorybench.render.fields import (
    budget_text,
    dose_with_unit,
    format_lab_value,
    format_number,
    full_date,
    lab_status,
    spoken_date,
    text_of,
    trap_detail,
)
from medmemorybench.render.models import Session, Turn, regular_session_id
from medmemorybench.render.templates import Templates
from medmemorybench.simulate.models import (
    AdherenceFact,
    AdverseFact,
    AdviceFact,
    AllergyFact,
    AvoidedFact,
    CareYear,
    CautionFact,
    ComplicationFact,
    DiagnosisFact,
    DietFact,
    EconomicFact,
    Event,
    HistoryFact,
    LabFact,
    MedicationFact,
    PreferenceFact,
    SettingFact,
    StressorFact,
    SymptomFact,
    TestFact,
    Trap,
)
from medmemorybench.simulate.rng import rng_for
from medmemorybench.simulate.safety import rule_text

Line = tuple[str, str]  # (role, text)

BACKREF_PROBABILITY = 0.45
FILLER_PROBABILITY = 0.35
DATE_SAID_PROBABILITY = 0.4
"""Share of visits where the doctor says the day's date (as clinicians do for the record): a dated question is
then answerable from what was said, not only from the session's metadata."""


class SessionRenderer:
    """Renders the regular sessions of one care year, in order (back references need the earlier ones)."""

    def __init__(self, kb: KnowledgeBase, templates: Templates, year: CareYear) -> None:
        self.kb, self.templates, self.year = kb, templates, year
        self.lang = templates.language
        self.rng = rng_for(year.seed, year.persona.persona_id, f"render/{self.lang}")
        self.traps: dict[str, Trap] = {t.category: t for t in year.persona.traps}
        self.memorable: list[tuple[str, str]] = []
        self.date_rng = rng_for(year.seed, year.persona.persona_id, f"render/{self.lang}/dates")  # (own stream:
        # saying the date leaves every other wording draw as it was)

    # --- phrasing helpers -----------------------------------------------------------------------

    def say(self, intent: str, **fields: str) -> str:
        """A random variant of `intent`, filled in."""
        return self.rng.choice(self.templates.variants(intent)).format(**fields)

    def _t(self, text) -> str:  # noqa: ANN001
        return text_of(text, self.lang)

    def drug(self, key: str, release: str = "immediate") -> str:
        """A drug's generic name (with its formulation where an extended-release form was chosen)."""
        name = self._t(self.kb.drugs[key].name)
        if release == "extended" and "extended" not in name and "modified" not in name:
            name += " " + self.templates.word("release", "extended")
        return name

    def trap_detail(self, category: str) -> str:
        """What the doctor cites when the trap of `category` rules a drug out."""
        return trap_detail(self.kb, self.traps[category], self.lang)

    def _reason(self, code: str) -> str:
        return self.templates.word("reason", code.partition(":")[0])

    def rule_phrase(self, rule_id: str) -> str:
        """Why a rule bars or qualifies a drug, as a full sentence."""
        kind, _, key = rule_id.partition(":")
        if kind == "toxicity":
            return self.templates.word("toxicity", key).capitalize() + "."
        if kind == "complication":
            comp = next(c for c in self.kb.conditions[self.year.persona.condition].complications if c.key == key)
            return self._t(comp.name).capitalize() + "."
        text = rule_text(self.kb, rule_id)
        phrase = self._t(text) if text is not None else rule_id
        return phrase[0].upper() + phrase[1:] + ("" if phrase.endswith(".") else ".")

    # --- facts to lines -------------------------------------------------------------------------

    def fact_lines(self, fact: object) -> list[Line]:
        """The lines that state one fact, in order (patient facts come with the doctor's acknowledgement)."""
        kb, t = self.kb, self._t
        if isinstance(fact, SymptomFact):
            return [("patient", self.say("fact.symptom", lay=t(fact.lay))),
                    ("doctor", self.say("ack.symptom", name=t(fact.name), lay=t(fact.lay)))]
        if isinstance(fact, LabFact):
            lab = kb.labs[fact.lab]
            status = self.templates.word("status", lab_status(kb, fact.lab, fact.value))
            return [("doctor", self.say("fact.lab", lab=t(lab.name), lab_lay=t(lab.lay),
                                        value=format_lab_value(kb, fact.lab, fact.value), unit=fact.unit,
                                        status=status))]
        if isinstance(fact, DiagnosisFact):
            lay = t(kb.conditions[self.year.persona.condition].lay) if fact.status == "confirmed" else t(fact.name)
            return [("doctor", self.say(f"fact.diagnosis.{fact.status}", diagnosis=t(fact.name),
                                        diagnosis_lay=lay, icd11=fact.icd11))]
        if isinstance(fact, TestFact):
            return [("doctor", self.say("fact.test", test=t(fact.name), finding=t(fact.finding)))]
        if isinstance(fact, MedicationFact):
            fields = {"drug": self.drug(fact.drug, fact.release), "dose": format_number(fact.dose), "unit": fact.unit,
                      "frequency": self.templates.word("frequency", fact.frequency),
                      "reason": self._reason(fact.reason)}
            if fact.action in ("increase", "decrease", "correct"):
                fields["previous_dose"] = format_number(fact.previous_dose or fact.dose)
            if fact.reason == "long_term":  # the patient discloses a drug they already take, and what for
                if fact.indication and fact.indication.startswith("history:"):
                    hist = kb.history_conditions[fact.indication.partition(":")[2]]
                    return [("patient", self.say("fact.medication.long_term", condition=t(hist.lay), **fields))]
                return [("patient", self.say("fact.medication.continue", **fields))]
            if fact.action == "correct":
                return [("patient", self.say("fact.medication.correct", **fields)),
                        ("doctor", self.say("ack.medication.correct", drug=fields["drug"], dose=fields["dose"],
                                            unit=fact.unit))]
            if fact.action == "start" and fact.course_days:
                return [("doctor", self.say("fact.medication.start_course", days=str(fact.course_days), **fields))]
            return [("doctor", self.say(f"fact.medication.{fact.action}", **fields))]
        if isinstance(fact, AvoidedFact):
            drug, instead = self.drug(fact.drug), self.drug(fact.instead)
            if fact.traps:
                reasons = [self.say(f"trap_reason.{c}", detail=self.trap_detail(c)) for c in fact.traps]
                reason = self.templates.word("joiner", "and").join(reasons)
                return [("doctor", self.say("fact.avoided", drug=drug, instead=instead, trap_reason=reason))]
            reason = " ".join(self.rule_phrase(r) for r in fact.rules)
            return [("doctor", self.say("fact.avoided_rule", drug=drug, instead=instead, reason=reason))]
        if isinstance(fact, CautionFact):
            if fact.trap is not None and fact.rule.startswith("diet:"):
                caution = self.say(f"trap_reason.{fact.trap}", detail=self.trap_detail(fact.trap)) + ". " + \
                    self.rule_phrase(fact.rule)
            else:
                caution = self.rule_phrase(fact.rule)
            return [("doctor", self.say("fact.caution", drug=self.drug(fact.drug), caution=caution))]
        if isinstance(fact, SettingFact):
            return [("doctor", self.say(f"fact.setting.{fact.setting}"))]
        if isinstance(fact, AllergyFact):
            fields = {"agent": t(fact.agent), "reaction": t(fact.reaction)}
            if fact.corrected_from is not None:
                return [("patient", self.say("fact.allergy_correction", previous=t(fact.corrected_from), **fields)),
                        ("doctor", self.say("ack.allergy_correction", **fields))]
            return [("patient", self.say("fact.allergy", **fields)), ("doctor", self.say("ack.allergy", **fields))]
        if isinstance(fact, HistoryFact):
            hist = kb.history_conditions[fact.history]
            fields = {"history": t(hist.name), "history_lay": t(hist.lay)}
            return [("patient", self.say("fact.history", **fields)), ("doctor", self.say("ack.history", **fields))]
        if isinstance(fact, PreferenceFact):
            text = t(kb.preferences[fact.preference].text)
            return [("patient", self.say("fact.preference", text=text)),
                    ("doctor", self.say("ack.preference", text=text))]
        if isinstance(fact, DietFact):
            text = t(kb.habits[fact.habit].text)
            return [("patient", self.say("fact.diet", text=text)), ("doctor", self.say("ack.diet", text=text))]
        if isinstance(fact, EconomicFact):
            budget = budget_text(fact.monthly_budget_usd)
            text = t(kb.economic_profiles[fact.profile].text).replace("{budget}", str(fact.monthly_budget_usd))
            return [("patient", self.say("fact.economic", text=text, budget=budget)),
                    ("doctor", self.say("ack.economic", text=text, budget=budget))]
        if isinstance(fact, AdverseFact):
            effect = next(e for e in kb.drugs[fact.drug].adverse_effects if e.key == fact.effect)
            return [("doctor", self.say("fact.adverse", drug=self.drug(fact.drug), effect=t(effect.name),
                                        effect_lay=t(effect.lay)))]
        if isinstance(fact, ComplicationFact):
            comps = kb.conditions[self.year.persona.condition].complications
            comp = next(c for c in comps if c.key == fact.complication)
            if comp.finding is None:
                return []  # stated by the complication's DiagnosisFact and SymptomFact
            return [("doctor", self.say("fact.complication_finding", diagnosis=t(comp.name), finding=t(comp.finding)))]
        if isinstance(fact, AdviceFact):
            return [("doctor", self.say("fact.advice", advice=t(kb.advice[fact.advice].text)))]
        if isinstance(fact, StressorFact):
            stressor = next(s for s in kb.conditions[self.year.persona.condition].stressors if s.key == fact.stressor)
            return [("patient", self.say("fact.stressor", text=t(stressor.text))),
                    ("doctor", self.say("ack.stressor", text=t(stressor.text)))]
        if isinstance(fact, AdherenceFact):
            fields = {"drug": self.drug(fact.drug), "days": str(fact.missed_days)}
            return [("patient", self.say("fact.adherence", **fields)), ("doctor", self.say("ack.adherence", **fields))]
        raise TypeError(f"no rendering for fact {type(fact).__name__}")

    def _remember(self, event: Event) -> None:
        """Note what a later visit may refer back to."""
        for fact in event.facts:
            earlier = None
            if isinstance(fact, AllergyFact):
                earlier = f"{self._t(fact.agent)} ({self._t(fact.reaction)})"
            elif isinstance(fact, MedicationFact) and fact.action in ("start", "administer"):
                earlier = f"{self.drug(fact.drug)} {dose_with_unit(fact.dose, fact.unit)}"
            elif isinstance(fact, DiagnosisFact) and fact.status in ("confirmed", "complication"):
                earlier = self._t(fact.name)
            elif isinstance(fact, AdverseFact):
                earlier = self.drug(fact.drug)
            if earlier:
                self.memorable.append((event.date, earlier))

    # --- assembling a session -------------------------------------------------------------------

    def render(self, event: Event) -> Session:
        """The consultation of one event."""
        patient: list[str] = []
        doctor: list[str] = []
        for fact in event.facts:
            for role, text in self.fact_lines(fact):
                (patient if role == "patient" else doctor).append(text)
        ask = self.say(f"ask.{event.kind}")
        if self.date_rng.random() < DATE_SAID_PROBABILITY:
            ask = self.date_rng.choice(self.templates.variants("today")).format(date=full_date(event.date)) + " " + ask
        lines: list[Line] = [("patient", self.say(f"open.{event.kind}")), ("doctor", ask)]
        if self.rng.random() < FILLER_PROBABILITY:
            lines += [("patient", self.say("filler.patient")), ("doctor", self.say("filler.doctor"))]
        lines.append(("patient", " ".join(patient) if patient else self.say("filler.patient")))
        if len(doctor) > 2:
            half = (len(doctor) + 1) // 2
            lines += [("doctor", " ".join(doctor[:half])), ("patient", self.say("react.patient")),
                      ("doctor", " ".join(doctor[half:]))]
        else:
            lines.append(("doctor", " ".join(doctor) if doctor else self.say("filler.doctor")))
        closing = self.say("close.doctor")
        if self.memorable and self.rng.random() < BACKREF_PROBABILITY:
            when, earlier = self.rng.choice(self.memorable)
            closing = self.say("backref", date=spoken_date(when), earlier=earlier) + " " + closing
        goodbye = self.say("close.patient")
        if not doctor:  # the doctor's last line was a question: answer it before saying goodbye
            goodbye = self.say("filler.patient") + " " + goodbye
        lines += [("patient", goodbye), ("doctor", closing)]
        self._remember(event)
        return Session(
            session_id=regular_session_id(event.event_id),
            kind="regular",
            date=event.date,
            turns=[Turn(role=role, text=text) for role, text in lines],  # type: ignore[arg-type]
            event_ids=[event.event_id],
        )

    def render_year(self) -> list[Session]:
        """Every regular session of the year, in order."""
        return [self.render(event) for event in self.year.events]
