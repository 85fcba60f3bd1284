"""Facts as dialogue acts: which intent states a fact and who says it (language-free), and the slot values
that intent is filled with in one language.

Every fact is stated verbatim by a fact intent (`templates.REQUIRED` makes each of its variants contain the
value, the unit, the drug's name ...), so a question's key facts are in the session whichever phrasing is
drawn. Patient-side facts (symptoms, allergies, habits ...) come with the doctor's acknowledgement.
"""

from __future__ import annotations

from dataclasses import dataclass

from medmemorybench.knowledge.base import KnowledgeBase
from medmemorybench.knowledge.models import Text
from medmemorybench.render.acts import Act
from medmemorybench.render.fields import (
    budget_text,
    format_lab_value,
    format_number,
    lab_status,
    status_word_key,
    text_of,
    trap_detail,
)
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
    HistoryFact,
    LabFact,
    MedicationFact,
    PreferenceFact,
    RefillFact,
    SettingFact,
    StressorFact,
    SymptomFact,
    TestFact,
    Trap,
)
from medmemorybench.simulate.prescribing import ladder_of
from medmemorybench.simulate.safety import rule_text


@dataclass(frozen=True)
class AvoidedGroup:
    """Usual drugs a visit does not give for the same disclosed facts, and the one it gives instead: said once ("with
    your statin allergy, not atorvastatin, simvastatin or pravastatin: ezetimibe"), not a sentence per drug."""

    facts: tuple[AvoidedFact, ...]


def _said_alike(fact: AvoidedFact) -> tuple:
    """What the sentence of an avoided drug says: its trap facts, its replacement, and the causes a trap binds through
    (the drug a long-term drug interacts with is told apart from the disease it is taken for)."""
    causes = sorted({rule.partition("+")[0] for rule in fact.rules
                     if rule.startswith(("interaction:", "contraindication:"))})
    return tuple(fact.traps), fact.instead, tuple(causes)


def grouped_avoided(decisions: list) -> list:
    """A visit's decisions with each run of avoided drugs said alike (`_said_alike`) made one `AvoidedGroup` (a drug
    avoided for its own reason keeps its own sentence)."""
    out: list = []
    for fact in decisions:
        previous = out[-1] if out else None
        last = previous.facts[-1] if isinstance(previous, AvoidedGroup) else previous
        if isinstance(fact, AvoidedFact) and fact.traps and isinstance(last, AvoidedFact) \
                and _said_alike(last) == _said_alike(fact):
            out[-1] = AvoidedGroup((*(previous.facts if isinstance(previous, AvoidedGroup) else (previous,)), fact))
        else:
            out.append(fact)
    return out


def caution_partner(fact: CautionFact) -> str | None:
    """The drug the patient takes that an interaction caution is about (its key: the rule is
    `interaction:<taken>+<given>`); None for any other caution."""
    kind, _, pair = fact.rule.partition(":")
    return pair.partition("+")[0] if kind == "interaction" else None


def caution_is_personal(fact: CautionFact) -> bool:
    """Whether a caution is about one of the patient's facts (a trap, or a drug they take), so it is said with it;
    not a rule on the drug alone (pregnancy, age)."""
    return fact.trap is not None or caution_partner(fact) is not None


def bars_through_disease(trap: Trap, rules: list[str]) -> str | None:
    """The history condition a long-term drug is taken for, where that disease (not the drug) is what a rule binds
    through: `contraindication:<history>` among `rules` and no interaction of the drug itself (the seed-53 read:
    ibuprofen refused "with your current metoprolol prescription in mind" for the heart failure metoprolol treats).
    None for any other trap, or a drug whose own interaction is a cause."""
    history = (trap.indication or "").removeprefix("history:")
    if trap.category != "medication_history" or f"contraindication:{history}" not in rules:
        return None
    return history


def adverse_cause(year: CareYear, fact: MedicationFact) -> str | None:
    """The drug whose adverse effect a medication fact's `adverse_effect:<key>` reason is: the latest drug on record
    with that effect up to the fact's visit (None where the fact is not the year's, or no such effect is on record)."""
    effect = fact.reason.partition(":")[2]
    cause = None
    for event in year.events:
        for other in event.facts:
            if isinstance(other, AdverseFact) and other.effect == effect:
                cause = other.drug
        if any(other is fact for other in event.facts):
            return cause
    return None


def lapse_acted_on(kb: KnowledgeBase, year: CareYear, fact: AdherenceFact) -> bool:
    """Whether the visit that tells these missed doses acts on them (`MissedDoseCare`: a beta-blocker missed in long
    QT syndrome, a lapse after suicidal ideation)."""
    cares = [c for h in kb.history_conditions.values() for c in h.missed_doses]
    cares += [c for cond in kb.conditions.values() for comp in cond.complications for c in comp.missed_doses]
    cares += kb.drugs[fact.drug].missed_doses
    event = next((e for e in year.events if any(other is fact for other in e.facts)), None)
    return event is not None and any(isinstance(f, AdviceFact) and f.advice in {c.advice for c in cares}
                                     for f in event.facts)


def complication_name(kb: KnowledgeBase, year: CareYear, key: str) -> Text:
    """The knowledge base's name of the year's complication `key`."""
    return next(c for c in kb.conditions[year.persona.condition].complications if c.key == key).name


def complication_finding(kb: KnowledgeBase, year: CareYear, fact: ComplicationFact) -> Text | None:
    """What the examination showed: the finding the simulator filled with the visit's values (a year simulated
    before findings were filled holds none: the knowledge base's own, which then names no value)."""
    if fact.finding is not None:
        return fact.finding
    comp = next(c for c in kb.conditions[year.persona.condition].complications if c.key == fact.complication)
    return comp.finding


def fact_acts(kb: KnowledgeBase, year: CareYear, fact: object) -> list[Act]:
    """The acts that state one fact, in order (a patient's fact is followed by the doctor's acknowledgement)."""
    def one(role: str, key: str) -> Act:
        return Act(role, key, fact=fact)  # type: ignore[arg-type]

    if isinstance(fact, SymptomFact):
        return [one("patient", "fact.symptom"), one("doctor", "ack.symptom")]
    if isinstance(fact, LabFact):
        return [one("doctor", "fact.lab")]
    if isinstance(fact, DiagnosisFact):
        # (an intercurrent illness that comes back, perennial rhinitis or migraine, is not "a short-lived illness")
        if fact.status == "acute" and any(i.recurrent and i.icd11 == fact.icd11 for i in kb.illnesses.values()):
            return [one("doctor", "fact.diagnosis.recurrent")]
        return [one("doctor", f"fact.diagnosis.{fact.status}")]
    if isinstance(fact, TestFact):
        return [one("doctor", "fact.test")]
    if isinstance(fact, MedicationFact):
        if fact.reason == "long_term":  # a drug they already take, and what for
            has_history = bool(fact.indication and fact.indication.startswith("history:"))
            return [one("patient", "fact.medication.long_term" if has_history else "fact.medication.continue")]
        if fact.action == "correct":
            return [one("patient", "fact.medication.correct"), one("doctor", "ack.medication.correct")]
        if fact.action == "start" and fact.course_days:  # (an as-needed supply is no course to finish)
            as_needed = ".as_needed" if fact.frequency == "as_needed" else ""
            return [one("doctor", f"fact.medication.start_course{as_needed}")]
        if fact.action == "continue" and fact.reason == "repeat":  # (what a refill request or a lapse is answered by)
            return [one("doctor", "fact.medication.repeat")]
        return [one("doctor", f"fact.medication.{fact.action}")]
    if isinstance(fact, AvoidedFact):
        return [one("doctor", "fact.avoided" if fact.traps else "fact.avoided_rule")]
    if isinstance(fact, AvoidedGroup):
        return [one("doctor", "fact.avoided_several")]
    if isinstance(fact, CautionFact):  # (said with what it is about for this patient, where that is one of their facts)
        return [one("doctor", "fact.caution_given" if caution_is_personal(fact) else "fact.caution")]
    if isinstance(fact, SettingFact):
        return [one("doctor", f"fact.setting.{fact.setting}")]
    if isinstance(fact, AllergyFact):
        if fact.corrected_from is not None:
            return [one("patient", "fact.allergy_correction"), one("doctor", "ack.allergy_correction")]
        return [one("patient", "fact.allergy"), one("doctor", "ack.allergy")]
    if isinstance(fact, HistoryFact):
        return [one("patient", "fact.history"), one("doctor", "ack.history")]
    if isinstance(fact, PreferenceFact):
        return [one("patient", "fact.preference"), one("doctor", "ack.preference")]
    if isinstance(fact, DietFact):
        return [one("patient", "fact.diet"), one("doctor", "ack.diet")]
    if isinstance(fact, EconomicFact):
        return [one("patient", "fact.economic"), one("doctor", "ack.economic")]
    if isinstance(fact, AdverseFact):
        return [one("doctor", "fact.adverse")]
    if isinstance(fact, ComplicationFact):
        # without a finding it is stated by the complication's DiagnosisFact and SymptomFact
        return [one("doctor", "fact.complication_finding")] if complication_finding(kb, year, fact) else []
    if isinstance(fact, AdviceFact):
        return [one("doctor", "fact.advice_safety" if kb.advice[fact.advice].safety else "fact.advice")]
    if isinstance(fact, StressorFact):
        return [one("patient", "fact.stressor"), one("doctor", "ack.stressor")]
    if isinstance(fact, AdherenceFact):  # (missed doses the visit acts on are never "restart as usual")
        return [one("patient", "fact.adherence"),
                one("doctor", "ack.adherence_serious" if lapse_acted_on(kb, year, fact) else "ack.adherence")]
    if isinstance(fact, RefillFact):
        return [one("patient", "fact.refill"), one("doctor", "ack.refill")]
    raise TypeError(f"no rendering for fact {type(fact).__name__}")


class FactSlots:
    """The slot values of fact intents in one language."""

    def __init__(self, kb: KnowledgeBase, templates: Templates, year: CareYear) -> None:
        self.kb, self.templates, self.year = kb, templates, year
        self.lang = templates.language
        self.traps = {t.category: t for t in year.persona.traps}

    def treated(self, lab: str) -> tuple[float, float] | None:
        """The range treatment holds a marker of the patient's condition in (None for a lab it does not treat)."""
        monitored = next((m for m in self.kb.conditions[self.year.persona.condition].monitored if m.lab == lab), None)
        return monitored.treated if monitored is not None else None

    def status_key(self, fact: LabFact) -> str:
        """The status word a lab result is said with, its severity from the value (`status_word_key`)."""
        status = lab_status(self.kb, fact.lab, fact.value, fact.target, fact.goal)
        return status_word_key(self.kb, fact.lab, fact.value, status, self.treated(fact.lab))

    def body_mass(self, fact: LabFact) -> float | None:
        """The BMI a weight gives: the one measured with it, else the weight over the patient's height squared (None:
        no height on record)."""
        event = next((e for e in self.year.events if any(f is fact for f in e.facts)), None)
        measured = next((f.value for f in event.facts if isinstance(f, LabFact) and f.lab == "bmi"), None) if (
            event is not None) else None
        height = self.year.persona.height_cm
        if measured is not None or height is None:
            return measured
        return round(fact.value / (height / 100) ** 2, self.kb.labs["bmi"].decimals)

    def status_words(self, fact: LabFact, rng) -> str:  # noqa: ANN001
        """What a result is said to be: its status against the range it is judged by, or, for a weight, which has
        none, the BMI it gives and that BMI's WHO band ("a BMI of 28.6 kg/m², overweight")."""
        key = self.status_key(fact)
        if key != "unjudged":
            return self.templates.word("status", key, rng)
        bmi = self.body_mass(fact)
        if bmi is None:
            return self.templates.word("status", key, rng)
        grades = self.kb.labs["bmi"].grades
        return self.templates.realize("body.bmi", rng, {
            "bmi": format_lab_value(self.kb, "bmi", bmi), "unit": self.templates.unit(self.kb.labs["bmi"].unit),
            "grade": self.t(grades.text_of(bmi)) if grades is not None else ""})

    def t(self, text) -> str:  # noqa: ANN001
        return text_of(text, self.lang)

    def drug(self, key: str, release: str = "immediate") -> str:
        """A drug's generic name (with its formulation where an extended-release form was chosen)."""
        name = self.t(self.kb.drugs[key].name)
        if release == "extended" and "extended" not in name and "modified" not in name and "缓释" not in name:
            name += self.templates.word("release", "extended")
        return name

    def sentence(self, phrase: str) -> str:
        """A phrase as a full sentence: a capital (where the language has them) and the end mark."""
        stop = self.templates.word("joiner", "stop")
        phrase = phrase[0].upper() + phrase[1:] if self.lang != "zh" else phrase
        return phrase if phrase.endswith((".", "。", stop.strip())) else phrase + stop

    def rule_phrase(self, rule_id: str, drug: str | None = None, bars: bool | None = None) -> str:
        """Why a rule bars (`bars`) or qualifies a drug, as a full sentence: the words of that rule for that drug."""
        kind, _, key = rule_id.partition(":")
        if kind == "toxicity":
            return self.sentence(self.templates.word("toxicity", key))
        if kind == "complication":
            return self.sentence(self.t(complication_name(self.kb, self.year, key)))
        text = rule_text(self.kb, rule_id, drug, bars)
        return self.sentence(self.t(text) if text is not None else rule_id)

    def reason(self, fact: MedicationFact, rng) -> str:  # noqa: ANN001
        """Why a drug is started, changed or stopped; an adverse effect another drug caused names that drug ("the
        reaction you've had to enalapril" for the amlodipine that replaces it), never "it"."""
        kind = fact.reason.partition(":")[0]
        cause = adverse_cause(self.year, fact) if kind == "adverse_effect" else None
        if cause is not None and cause != fact.drug:
            return self.templates.realize("reason.adverse_effect_of", rng, {"cause": self.drug(cause)})
        if kind == "adverse_effect" and fact.action == "continue":  # (kept with the measures for it, not stopped)
            kind = "adverse_effect_kept"
        top = max(ladder_of(self.kb, fact.drug, fact.release, fact.frequency).doses()) if kind == "titration" else None
        if top is not None and fact.dose >= top:  # ("full strength" only of the top of the label's ladder: seed 53)
            kind = "titration_full"
        return self.templates.word("reason", kind, rng)

    def trap_reason(self, category: str, rng, rules: list[str]) -> str:  # noqa: ANN001
        """Why a trap fact bars or qualifies a drug under `rules`: a long-term drug's disease where that is the cause
        ("the heart failure you take metoprolol for"), else the trap fact itself."""
        trap = self.traps[category]
        detail = trap_detail(self.kb, trap, self.lang)
        history = bars_through_disease(trap, rules)
        if history is not None:
            condition = self.t(self.kb.history_conditions[history].name)
            return self.templates.realize("trap_reason.medication_history_for", rng,
                                          {"detail": detail, "condition": condition})
        return self.templates.realize(f"trap_reason.{category}", rng, {"detail": detail})

    def slots(self, key: str, fact: object, rng) -> dict[str, str]:  # noqa: ANN001, C901, PLR0911, PLR0912
        """What the intent `key` stating `fact` is filled with (`rng` draws the wording of nested reasons)."""
        kb, t, word = self.kb, self.t, self.templates.word
        if isinstance(fact, SymptomFact):
            return {"lay": t(fact.lay), "name": t(fact.name)}
        if isinstance(fact, LabFact):
            lab = kb.labs[fact.lab]
            return {"lab": t(lab.name), "lab_lay": self.templates.lay(t(lab.lay)),
                    "value": format_lab_value(kb, fact.lab, fact.value),
                    "unit": self.templates.unit(fact.unit),
                    "status": self.status_words(fact, rng)}
        if isinstance(fact, DiagnosisFact):
            lay = t(kb.conditions[self.year.persona.condition].lay) if fact.status == "confirmed" else t(fact.name)
            return {"diagnosis": t(fact.name), "diagnosis_lay": lay}
        if isinstance(fact, TestFact):
            return {"test": t(fact.name), "finding": t(fact.finding)}
        if isinstance(fact, MedicationFact):
            out = {"drug": self.drug(fact.drug, fact.release), "dose": format_number(fact.dose),
                   "unit": self.templates.unit(fact.unit),
                   "frequency": word("frequency", fact.frequency),
                   "reason": self.reason(fact, rng),
                   "previous_dose": format_number(fact.previous_dose or fact.dose), "days": str(fact.course_days)}
            if fact.indication and fact.indication.startswith("history:"):
                out["condition"] = t(kb.history_conditions[fact.indication.partition(":")[2]].lay)
            return out
        if isinstance(fact, AvoidedGroup):
            names = [self.drug(f.drug) for f in fact.facts]
            drugs = word("joiner", "list").join(names[:-1]) + word("joiner", "or") + names[-1]
            first = fact.facts[0]
            reason = word("joiner", "and").join(self.trap_reason(c, rng, first.rules) for c in first.traps)
            return {"drugs": drugs, "instead": self.drug(fact.facts[0].instead), "trap_reason": reason}
        if isinstance(fact, AvoidedFact):
            out = {"drug": self.drug(fact.drug), "instead": self.drug(fact.instead)}
            if fact.traps:
                out["trap_reason"] = word("joiner", "and").join(self.trap_reason(c, rng, fact.rules)
                                                                for c in fact.traps)
            else:
                out["reason"] = word("joiner", "space").join(self.rule_phrase(r, fact.drug, bars=True)
                                                             for r in fact.rules)
            return out
        if isinstance(fact, CautionFact):
            out = {"drug": self.drug(fact.drug), "caution": self.rule_phrase(fact.rule, fact.drug, bars=False)}
            if fact.trap is not None:  # (the nadolol they take, their history of stroke, their habit)
                out["reason"] = self.trap_reason(fact.trap, rng, [fact.rule])
            elif (partner := caution_partner(fact)) is not None:  # (a drug of the year they take)
                out["reason"] = self.templates.realize("trap_reason.medication_history", rng,
                                                      {"detail": self.drug(partner)})
            return out
        if isinstance(fact, AllergyFact):
            out = {"agent": t(fact.agent), "reaction": t(fact.reaction)}
            if fact.corrected_from is not None:
                out["previous"] = t(fact.corrected_from)
            return out
        if isinstance(fact, HistoryFact):
            hist = kb.history_conditions[fact.history]
            return {"history": t(hist.name), "history_lay": t(hist.lay)}
        if isinstance(fact, PreferenceFact):
            return {"text": t(kb.preferences[fact.preference].text)}
        if isinstance(fact, DietFact):
            return {"text": t(kb.habits[fact.habit].text)}
        if isinstance(fact, EconomicFact):
            text = t(kb.economic_profiles[fact.profile].text).replace("{budget}", str(fact.monthly_budget_usd))
            return {"text": text, "budget": budget_text(fact.monthly_budget_usd, self.lang)}
        if isinstance(fact, AdverseFact):
            effect = next(e for e in kb.drugs[fact.drug].adverse_effects if e.key == fact.effect)
            return {"drug": self.drug(fact.drug), "effect": t(effect.name), "effect_lay": t(effect.lay)}
        if isinstance(fact, ComplicationFact):
            return {"diagnosis": t(complication_name(kb, self.year, fact.complication)),
                    "finding": t(complication_finding(kb, self.year, fact))}
        if isinstance(fact, AdviceFact):
            return {"advice": t(kb.advice[fact.advice].text)}
        if isinstance(fact, StressorFact):
            stressor = next(s for s in kb.conditions[self.year.persona.condition].stressors if s.key == fact.stressor)
            return {"text": t(stressor.text)}
        if isinstance(fact, AdherenceFact):
            return {"drug": self.drug(fact.drug), "days": str(fact.missed_days)}
        if isinstance(fact, RefillFact):
            return {"drug": self.drug(fact.drug)}
        if isinstance(fact, SettingFact):
            return {}
        raise TypeError(f"no rendering for fact {type(fact).__name__}")
