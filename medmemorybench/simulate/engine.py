"""The care-year engine: turns a condition, traps and a care plan into 100 dated, causally linked events.

The year is laid out before it is played: each phase gets its encounter dates and an ordered list of
planned actions (the story of that phase, see `PHASE_PLANS`) spread evenly over them, with routine
encounters (follow-ups, lab checks, advice) in between. Then the actions run in date order against a
small state (active drugs, lab trajectories, named events for causal links), so causes always
precede effects. The engine never names a disease: everything specific comes from the knowledge base.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import date, timedelta

from medmemorybench.errors import InputError
from medmemorybench.knowledge.base import KnowledgeBase
from medmemorybench.knowledge.models import Condition
from medmemorybench.simulate.care_plan import StepPlan
from medmemorybench.simulate.labs import LabModel
from medmemorybench.simulate.models import (
    AdherenceFact,
    AdverseFact,
    AdviceFact,
    AvoidedFact,
    ComplicationFact,
    DiagnosisFact,
    Event,
    Fact,
    LabFact,
    MedicationFact,
    StressorFact,
    SymptomFact,
    TestFact,
    Trap,
)
from medmemorybench.simulate.safety import SafetyProfile

YEAR_START = date(2024, 1, 1)
DAYS_IN_YEAR = 366  # 2024 is a leap year
N_PHASES = 5
MIN_ENCOUNTERS, MAX_ENCOUNTERS = 10, 365

# (action, priority): when a phase has fewer encounters than actions, the lowest priorities go first.
PHASE_PLANS: dict[int, list[tuple[str, int]]] = {
    1: [("first_symptoms", 1), ("disclose:allergy", 1), ("baseline_labs", 2),
        ("disclose:medication_history", 1), ("misdiagnosis", 2), ("disclose:disease_history", 1),
        ("disclose:medication_preference", 1), ("symptoms_persist", 3), ("disclose:diet_preference", 1),
        ("disclose:lifestyle_economic", 1)],
    2: [("turning_point", 2), ("diagnostic_test", 2), ("diagnosis", 1), ("start_first_line", 1),
        ("lab_check", 2), ("titrate", 2), ("lab_check", 3), ("advice", 3)],
    3: [("complication_lab", 2), ("adverse_onset", 2), ("complication", 2), ("adverse_confirm", 2),
        ("lab_check", 3), ("adverse_switch", 2), ("complication_treat", 2), ("start_steps", 1),
        ("lab_check", 3), ("titrate", 3)],
    4: [("start_steps", 1), ("stressor", 2), ("lapse", 2), ("lapse_lab", 2), ("counselling", 2),
        ("titrate", 2), ("lab_check", 3), ("advice", 3)],
    5: [("start_steps", 1), ("lab_check", 2), ("titrate", 2), ("lab_check", 3), ("titrate", 3), ("final_review", 2)],
}


def phase_sizes(n_encounters: int) -> list[int]:
    """Encounters per phase: an even split, the remainder to the earliest phases."""
    base, extra = divmod(n_encounters, N_PHASES)
    return [base + (1 if phase < extra else 0) for phase in range(N_PHASES)]


def _fit(plan: list[tuple[str, int]], slots: int) -> list[str]:
    """Drop the lowest-priority actions (latest first) until the plan fits the phase's encounters."""
    kept = list(plan)
    for priority in (3, 2, 1):
        for index in range(len(kept) - 1, -1, -1):
            if len(kept) <= slots:
                return [name for name, _ in kept]
            if kept[index][1] == priority:
                del kept[index]
    return [name for name, _ in kept][:slots]


@dataclass
class _Active:
    dose: float
    unit: str
    frequency: str
    step: str | None


class YearBuilder:
    """Plays one patient's year; `build()` returns the events in date order."""

    def __init__(
        self,
        kb: KnowledgeBase,
        condition: Condition,
        persona_id: str,
        traps: list[Trap],
        plan: list[StepPlan],
        safety: SafetyProfile,
        rngs: dict[str, random.Random],
        n_encounters: int,
    ) -> None:
        if not MIN_ENCOUNTERS <= n_encounters <= MAX_ENCOUNTERS:
            raise InputError(
                f"--encounters: {n_encounters} is out of range; a year holds "
                f"{MIN_ENCOUNTERS} to {MAX_ENCOUNTERS} encounters (one per day at most)"
            )
        self.kb, self.condition, self.persona_id = kb, condition, persona_id
        self.traps = {trap.category: trap for trap in traps}
        self.plan = {p.step.key: p for p in plan}
        self.safety = safety
        self.rng = rngs["events"]
        self.schedule = self._lay_out(rngs["dates"], n_encounters)
        diagnosis_day = next((day for day, _, name in self.schedule if name == "diagnosis"), 146)
        self.labs = LabModel.for_condition(kb.labs, condition.monitored, rngs["labs"], diagnosis_day)
        self.events: list[Event] = []
        self.handles: dict[str, str] = {}
        self.active: dict[str, _Active] = {}
        self.started_by: dict[str, str] = {}
        self.step_drug: dict[str, str] = {}
        self.fill_turn = 0
        self.misdiagnosis = self.rng.choice(condition.misdiagnoses)
        self.complication = self.rng.choice(condition.complications)
        self.adverse: tuple[str, str] | None = None
        history = self.traps.get("medication_history")
        if history is not None and isinstance(history.fact, MedicationFact):
            fact = history.fact
            self.active[fact.drug] = _Active(fact.dose, fact.unit, fact.frequency, None)

    # --- layout ---------------------------------------------------------------------------------

    def _lay_out(self, rng: random.Random, n_encounters: int) -> list[tuple[int, int, str]]:
        """(day of year, phase, action) for every encounter; action '' means a routine encounter."""
        schedule = []
        for phase, size in enumerate(phase_sizes(n_encounters), start=1):
            low = DAYS_IN_YEAR * (phase - 1) // N_PHASES
            high = DAYS_IN_YEAR * phase // N_PHASES
            days = sorted(rng.sample(range(low, high), size))
            actions = _fit(PHASE_PLANS[phase], size)
            slots = [""] * size
            for i, action in enumerate(actions):
                slots[i * size // len(actions)] = action
            schedule.extend((day, phase, action) for day, action in zip(days, slots, strict=True))
        return schedule

    def build(self) -> list[Event]:
        """Run every encounter in date order."""
        for day, phase, action in self.schedule:
            event = self._run(action, day, phase) if action else None
            if event is None:
                self._fill(day, phase)
        return self.events

    # --- helpers --------------------------------------------------------------------------------

    def _emit(self, day: int, phase: int, kind: str, facts: list[Fact], triggered_by: list[str | None],
              handle: str | None = None) -> Event:
        event = Event(
            event_id=f"{self.persona_id}-E{len(self.events) + 1:03d}",
            index=len(self.events) + 1,
            date=(YEAR_START + timedelta(days=day)).isoformat(),
            phase=phase,
            kind=kind,  # type: ignore[arg-type]
            facts=facts,
            triggered_by=sorted({t for t in triggered_by if t}),
        )
        self.events.append(event)
        if handle:
            self.handles[handle] = event.event_id
        if kind in ("prescription", "dose_change", "switch"):
            self.handles["last_change"] = event.event_id
        return event

    def _measure(self, labs: list[str], day: int) -> list[Fact]:
        return [LabFact(lab=lab, value=self.labs.measure(lab, day), unit=self.kb.labs[lab].unit)
                for lab in dict.fromkeys(labs)]

    def _key_labs(self) -> list[str]:
        """The two labs followed at every check, plus one of the others in turn."""
        monitored = [m.lab for m in self.condition.monitored]
        others = monitored[2:]
        extra = [others[self.fill_turn % len(others)]] if others else []
        return monitored[:2] + extra

    def _vitals(self) -> list[str]:
        vitals = [m.lab for m in self.condition.monitored if self.kb.labs[m.lab].kind == "vital"]
        return vitals[:2] or [self.condition.monitored[0].lab]

    def _start(self, drug: str, reason: str, step: str | None, event_handle: str) -> MedicationFact:
        dose = self.kb.drugs[drug].dose
        self.active[drug] = _Active(dose.start, dose.unit, dose.frequency, step)
        self.started_by[drug] = event_handle
        if step:
            self.step_drug[step] = drug
        return MedicationFact(drug=drug, action="start", dose=dose.start, unit=dose.unit,
                              frequency=dose.frequency, reason=reason)

    def _stop(self, drug: str, reason: str) -> MedicationFact:
        active = self.active.pop(drug)
        return MedicationFact(drug=drug, action="stop", dose=active.dose, unit=active.unit,
                              frequency=active.frequency, reason=reason)

    def _continue(self, drug: str, reason: str) -> MedicationFact:
        active = self.active[drug]
        return MedicationFact(drug=drug, action="continue", dose=active.dose, unit=active.unit,
                              frequency=active.frequency, reason=reason)

    def _increase(self, drug: str, reason: str) -> MedicationFact | None:
        active, spec = self.active[drug], self.kb.drugs[drug].dose
        new_dose = round(active.dose + spec.step, 3)
        if spec.step <= 0 or new_dose > spec.max:
            return None
        previous, active.dose = active.dose, new_dose
        return MedicationFact(drug=drug, action="increase", dose=new_dose, unit=active.unit,
                              frequency=active.frequency, previous_dose=previous, reason=reason)

    def _pick_for_step(self, plan: StepPlan, exclude: str | None = None) -> str | None:
        """The step's drug, or the next allowed one when it (or its class) is already taken."""
        active_classes = {self.kb.drugs[d].drug_class for d in self.active if d != exclude}
        for drug in (plan.chosen, *plan.alternatives):
            if drug != exclude and drug not in self.active and self.kb.drugs[drug].drug_class not in active_classes:
                return drug
        return None

    def _prescribe_step(self, plan: StepPlan, day: int, phase: int, reason: str,
                        triggered_by: list[str | None]) -> Event | None:
        drug = self._pick_for_step(plan)
        if drug is None:
            return None
        event_id = f"{self.persona_id}-E{len(self.events) + 1:03d}"
        facts: list[Fact] = [self._start(drug, reason, plan.step.key, event_id)]
        trap_events = []
        for avoided, category in plan.avoided:
            facts.append(AvoidedFact(drug=avoided, trap=category, instead=drug))
            trap_events.append(self.handles.get(f"trap:{category}"))
        self.labs.start_treatment(day)
        self.labs.intensify(0.1 if plan.step.role != "first_line" else 0.0)
        return self._emit(day, phase, "prescription", facts, [*triggered_by, *trap_events])

    # --- planned actions ------------------------------------------------------------------------

    def _run(self, action: str, day: int, phase: int) -> Event | None:
        name, _, arg = action.partition(":")
        return getattr(self, f"_act_{name}")(day, phase, arg) if arg else getattr(self, f"_act_{name}")(day, phase)

    def _symptoms(self, count: int) -> list[Fact]:
        return [SymptomFact(symptom=s.key, name=s.name, lay=s.lay)
                for s in self.rng.sample(self.condition.symptoms, k=count)]

    def _act_first_symptoms(self, day: int, phase: int) -> Event:
        facts = [*self._symptoms(2), *self._measure(self._vitals(), day)]
        return self._emit(day, phase, "symptom_report", facts, [], "symptoms")

    def _act_disclose(self, day: int, phase: int, category: str) -> Event | None:
        trap = self.traps.get(category)
        if trap is None:
            return None
        return self._emit(day, phase, "trap_disclosure", [trap.fact], [], f"trap:{category}")

    def _act_baseline_labs(self, day: int, phase: int) -> Event:
        labs = [m.lab for m in self.condition.monitored]
        return self._emit(day, phase, "lab_check", self._measure(labs, day), [], "last_lab")

    def _act_misdiagnosis(self, day: int, phase: int) -> Event:
        mis = self.misdiagnosis
        facts: list[Fact] = [DiagnosisFact(name=mis.name, icd11=mis.icd11, status="suspected")]
        event_id = f"{self.persona_id}-E{len(self.events) + 1:03d}"
        drug = mis.drug
        taken_classes = {self.kb.drugs[d].drug_class for d in self.active}
        if drug and self.safety.is_allowed(drug) and self.kb.drugs[drug].drug_class not in taken_classes:
            facts.append(self._start(drug, "misdiagnosis", None, event_id))
        return self._emit(day, phase, "misdiagnosis", facts, [self.handles.get("symptoms")], "misdiagnosis")

    def _act_symptoms_persist(self, day: int, phase: int) -> Event:
        facts = [*self._symptoms(2), *self._measure(self._vitals(), day)]
        trigger = self.handles.get("misdiagnosis") or self.handles.get("symptoms")
        return self._emit(day, phase, "symptom_report", facts, [trigger], "persist")

    def _act_turning_point(self, day: int, phase: int) -> Event:
        facts = [*self._symptoms(min(3, len(self.condition.symptoms))),
                 *self._measure(self._key_labs()[:2], day)]
        trigger = self.handles.get("persist") or self.handles.get("symptoms")
        return self._emit(day, phase, "symptom_report", facts, [trigger], "turning")

    def _act_diagnostic_test(self, day: int, phase: int) -> Event:
        facts: list[Fact] = [TestFact(test=t.key, name=t.name, finding=t.finding)
                             for t in self.condition.diagnostic_tests[:3]]
        return self._emit(day, phase, "diagnostic_test", facts, [self.handles.get("turning")], "tests")

    def _act_diagnosis(self, day: int, phase: int) -> Event:
        cond = self.condition
        facts: list[Fact] = [DiagnosisFact(name=cond.name, icd11=cond.icd11.code, status="confirmed")]
        if "misdiagnosis" in self.handles:
            mis = self.misdiagnosis
            facts.append(DiagnosisFact(name=mis.name, icd11=mis.icd11, status="ruled_out"))
            if mis.drug in self.active and self.active[mis.drug].step is None and mis.drug != self._history_drug():
                facts.append(self._stop(mis.drug, "diagnosis_revised"))
        facts.extend(self._measure([m.lab for m in cond.monitored], day))
        triggers = [self.handles.get("tests"), self.handles.get("turning")]
        return self._emit(day, phase, "diagnosis", facts, triggers, "diagnosis")

    def _history_drug(self) -> str | None:
        trap = self.traps.get("medication_history")
        return trap.option if trap else None

    def _act_start_first_line(self, day: int, phase: int) -> Event | None:
        plan = next(p for p in self.plan.values() if p.step.role == "first_line")
        event = self._prescribe_step(plan, day, phase, "first_line", [self.handles.get("diagnosis")])
        if event:
            self.handles["first_line"] = event.event_id
        return event

    def _act_lab_check(self, day: int, phase: int) -> Event:
        """A planned check: it follows up the latest change of treatment."""
        return self._lab_check(day, phase, [self.handles.get("last_change")])

    def _lab_check(self, day: int, phase: int, triggers: list[str | None]) -> Event:
        self.fill_turn += 1
        return self._emit(day, phase, "lab_check", self._measure(self._key_labs(), day), triggers, "last_lab")

    def _act_titrate(self, day: int, phase: int) -> Event | None:
        for plan in self.plan.values():
            drug = self.step_drug.get(plan.step.key)
            if drug in self.active:
                fact = self._increase(drug, "titration")
                if fact is not None:
                    self.labs.intensify(0.1)
                    return self._emit(day, phase, "dose_change", [fact], [self.handles.get("last_lab")])
        return None

    def _act_advice(self, day: int, phase: int) -> Event:
        return self._advice_event(day, phase, [])

    def _advice_event(self, day: int, phase: int, triggers: list[str | None]) -> Event:
        self.fill_turn += 1
        options = self.condition.lifestyle_advice
        facts: list[Fact] = [AdviceFact(advice=options[self.fill_turn % len(options)]),
                             *self._measure(self._vitals()[:1], day)]
        return self._emit(day, phase, "lifestyle", facts, triggers)

    def _act_complication_lab(self, day: int, phase: int) -> Event | None:
        if "first_line" not in self.handles:
            return None
        comp = self.complication
        self.labs.add_offset("complication", comp.lab, day, comp.lab_delta)
        facts = self._measure([comp.lab, *self._key_labs()], day)
        return self._emit(day, phase, "lab_check", facts, [], "complication_lab")

    def _act_complication(self, day: int, phase: int) -> Event | None:
        if "complication_lab" not in self.handles:
            return None
        comp = self.complication
        facts: list[Fact] = [
            SymptomFact(symptom=comp.key, name=comp.name, lay=comp.lay),
            DiagnosisFact(name=comp.name, icd11=comp.icd11, status="complication"),
            ComplicationFact(complication=comp.key),
            *self._measure([comp.lab], day),
        ]
        return self._emit(day, phase, "complication", facts, [self.handles["complication_lab"]], "complication")

    def _act_complication_treat(self, day: int, phase: int) -> Event | None:
        if "complication" not in self.handles:
            return None
        comp = self.complication
        plan = self.plan[comp.treatment]
        reason = f"complication:{comp.key}"
        trigger = [self.handles["complication"]]
        self.labs.resolve("complication", day)
        drug = self.step_drug.get(plan.step.key)
        if drug in self.active:
            fact = self._increase(drug, reason)
            if fact is not None:
                self.labs.intensify(0.05)
                return self._emit(day, phase, "dose_change", [fact], trigger)
            return self._emit(day, phase, "follow_up", [self._continue(drug, reason),
                                                         *self._measure([comp.lab], day)], trigger)
        return self._prescribe_step(plan, day, phase, reason, trigger)

    def _act_adverse_onset(self, day: int, phase: int) -> Event | None:
        for plan in self.plan.values():
            drug = self.step_drug.get(plan.step.key)
            if drug not in self.active or not self.kb.drugs[drug].adverse_effects:
                continue
            if self._pick_for_step(plan, exclude=drug) is None:
                continue
            effect = self.rng.choice(self.kb.drugs[drug].adverse_effects)
            self.adverse = (drug, effect.key)
            if effect.lab is not None and effect.lab_delta is not None:
                self.labs.add_offset("adverse", effect.lab, day, effect.lab_delta)
            facts: list[Fact] = [SymptomFact(symptom=effect.key, name=effect.name, lay=effect.lay),
                                 AdverseFact(drug=drug, effect=effect.key)]
            return self._emit(day, phase, "adverse_event", facts, [self.started_by.get(drug)], "adverse")
        return None

    def _adverse_effect(self):  # noqa: ANN202
        assert self.adverse is not None
        drug, key = self.adverse
        return drug, next(e for e in self.kb.drugs[drug].adverse_effects if e.key == key)

    def _act_adverse_confirm(self, day: int, phase: int) -> Event | None:
        if self.adverse is None:
            return None
        drug, effect = self._adverse_effect()
        facts: list[Fact] = [AdverseFact(drug=drug, effect=effect.key)]
        if effect.lab is not None:
            facts.extend(self._measure([effect.lab], day))
            kind = "lab_check"
        else:
            facts.append(SymptomFact(symptom=effect.key, name=effect.name, lay=effect.lay))
            kind = "follow_up"
        return self._emit(day, phase, kind, facts, [self.handles["adverse"]], "adverse_confirm")

    def _act_adverse_switch(self, day: int, phase: int) -> Event | None:
        if self.adverse is None:
            return None
        drug, effect = self._adverse_effect()
        step = self.active[drug].step
        plan = self.plan[step] if step else None
        replacement = self._pick_for_step(plan, exclude=drug) if plan else None
        if replacement is None:
            return None
        reason = f"adverse_effect:{effect.key}"
        event_id = f"{self.persona_id}-E{len(self.events) + 1:03d}"
        facts: list[Fact] = [self._stop(drug, reason), self._start(replacement, reason, step, event_id)]
        self.labs.resolve("adverse", day)
        trigger = self.handles.get("adverse_confirm") or self.handles["adverse"]
        return self._emit(day, phase, "switch", facts, [trigger], "adverse_switch")

    def _act_start_steps(self, day: int, phase: int) -> Event | None:
        """Start every care step of this phase not started yet, in one prescription."""
        events = []
        for plan in self.plan.values():
            if plan.step.phase == phase and plan.step.role != "first_line" and plan.step.key not in self.step_drug:
                event = self._prescribe_step(plan, day, phase, plan.step.role, [self.handles.get("last_lab")])
                if event is not None:
                    events.append(self.events.pop())
        if not events:
            return None
        merged = events[0].model_copy(update={
            "facts": [f for e in events for f in e.facts],
            "triggered_by": sorted({t for e in events for t in e.triggered_by}),
        })
        self.events.append(merged)
        self.handles["last_change"] = merged.event_id
        return merged

    def _act_stressor(self, day: int, phase: int) -> Event:
        self.fill_turn += 1
        stressor = self.condition.stressors[self.fill_turn % len(self.condition.stressors)]
        facts: list[Fact] = [StressorFact(stressor=stressor.key), *self._measure(self._vitals()[:1], day)]
        return self._emit(day, phase, "psychological", facts, [], "stressor")

    def _lapsed_drug(self) -> str | None:
        return next((d for d, a in self.active.items() if a.step is not None), None)

    def _act_lapse(self, day: int, phase: int) -> Event | None:
        drug = self._lapsed_drug()
        if drug is None or "stressor" not in self.handles:
            return None
        self.labs.push_back("lapse", day, 0.5)
        facts: list[Fact] = [AdherenceFact(drug=drug, missed_days=self.rng.randint(5, 14))]
        return self._emit(day, phase, "follow_up", facts, [self.handles["stressor"]], "lapse")

    def _act_lapse_lab(self, day: int, phase: int) -> Event | None:
        if "lapse" not in self.handles:
            return None
        facts = self._measure(self._key_labs(), day)
        return self._emit(day, phase, "lab_check", facts, [self.handles["lapse"]], "lapse_lab")

    def _act_counselling(self, day: int, phase: int) -> Event | None:
        drug = self._lapsed_drug()
        if "lapse_lab" not in self.handles or drug is None:
            return None
        self.labs.resolve("lapse", day)
        options = self.condition.lifestyle_advice
        advice = "stress_management" if "stress_management" in options else options[-1]
        facts: list[Fact] = [AdviceFact(advice=advice), self._continue(drug, "adherence")]
        return self._emit(day, phase, "psychological", facts, [self.handles["lapse_lab"]])

    def _act_final_review(self, day: int, phase: int) -> Event | None:
        facts: list[Fact] = [self._continue(drug, "stable") for drug in sorted(self.active)]
        facts.extend(self._measure(self._key_labs(), day))
        return self._emit(day, phase, "follow_up", facts, [self.handles.get("last_lab")])

    # --- routine encounters ---------------------------------------------------------------------

    def _fill(self, day: int, phase: int) -> Event:
        self.fill_turn += 1
        if "diagnosis" not in self.handles:
            if self.fill_turn % 2:
                return self._emit(day, phase, "symptom_report",
                                  [*self._symptoms(1), *self._measure(self._vitals(), day)], [])
            return self._lab_check(day, phase, [])
        turn = self.fill_turn % (4 if phase == 4 else 3)
        if turn == 0:
            return self._lab_check(day, phase, [])
        if turn == 1:
            return self._advice_event(day, phase, [])
        if turn == 3:
            return self._act_stressor(day, phase)
        drugs = sorted(self.active)
        if not drugs:
            return self._lab_check(day, phase, [])
        drug = drugs[self.fill_turn % len(drugs)]
        facts: list[Fact] = [self._continue(drug, "stable"), *self._measure(self._vitals()[:1], day)]
        return self._emit(day, phase, "follow_up", facts, [])
