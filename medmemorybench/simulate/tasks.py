"""Clinical follow-through the year makes due: response checks, titrations, step-ups, new steps, monitoring,
rescue therapy, switches after an adverse effect, and the check that a lapse has been made good.

Each task has the day it becomes due and, where care cannot wait, a deadline; the engine runs a due
task at an encounter (always before its deadline). A response check comes only once the lab can show
the change (`response_days` after it); a dose increase only once the drug's `titration_days` have
passed and a check has shown the target is not reached; a step-up only when the previous step is at
its top dose and still short of target. A mixin of `YearBuilder`: it uses the builder's state.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import date

from medmemorybench.knowledge.models import (
    DOSES_PER_DAY,
    AdverseEffect,
    AfterDischarge,
    CareStep,
    Contraindication,
    DrugRedFlag,
    HistoryTarget,
    Illness,
    Symptom,
)
from medmemorybench.simulate.findings import Episode
from medmemorybench.simulate.models import (
    AdherenceFact,
    AdverseFact,
    AdviceFact,
    AvoidedFact,
    DiagnosisFact,
    Event,
    Fact,
    LabFact,
    MedicationFact,
    SymptomFact,
    TestFact,
)
from medmemorybench.simulate.prescribing import Prescription, choose_for_step, ladder_of, next_dose, prescribe
from medmemorybench.simulate.safety import Patient, applicable_rules, is_long_term, verdict

YEAR_START_DATE = date(2024, 1, 1)
"""Day 0 of the year (the engine's `YEAR_START`; repeated here to keep this module free of an import cycle)."""
MONITORING_CEILING_DAYS = 90
MONITORING_JITTER_DAYS = 14
"""Safety monitoring that starts every few weeks settles at about every three months."""
MONITORING_GRACE_DAYS = 21
"""A routine check of a level that needs rechecks (INR, lithium) is taken within three weeks of falling due."""
STEP_SPREAD_DAYS = 21
"""A step indicated by the diagnosis alone starts within this many days of its phase opening."""
PARTNER_MIN_DAYS = 28
"""A course shorter than this brings no partner drugs: bone protection goes with four weeks or more of a steroid, not
with a five-day burst."""
REVIEW_AFTER_COURSE_DAYS = (5, 14)
"""An intercurrent illness is reviewed from the first to the second of these days after its course ends."""


@dataclass
class Task:
    """A piece of care that has become due."""

    kind: str
    due: int
    deadline: int | None = None
    step: str | None = None
    lab: str | None = None
    drug: str | None = None
    trigger: str | None = None
    """Event that made it due (its cause, for the causal graph)."""
    reason: str | None = None
    yields: bool = False
    """Its deadline gives way to a required story item due at the same encounter (an acute illness's visits)."""
    books_visit: bool = False
    """Its deadline brings the next encounter forward when none falls by it (a restart after the last control drug
    ends: the year's visit schedule may have a gap of weeks)."""


def is_daily(frequency: str) -> bool:
    """Taken at least daily on a schedule (the only drugs whose doses a patient can 'miss for days')."""
    return frequency != "as_needed" and DOSES_PER_DAY[frequency] >= 1


class ClinicalTasks:
    """Due care, for `YearBuilder`."""

    # --- bookkeeping ---------------------------------------------------------------------------

    def add_task(self, task: Task) -> None:
        self.state.tasks.append(task)

    def due_tasks(self) -> list[Task]:
        return [t for t in self.state.tasks if t.due <= self.day]

    def run_task(self, task: Task) -> bool:
        handler = TASK_HANDLERS[task.kind]
        outcome = handler(self, task)
        if outcome is not None:
            if task in self.state.tasks:
                self.state.tasks.remove(task)
            return outcome
        return False

    def step(self, key: str) -> CareStep:
        return next(s for s in self.condition.care_path if s.key == key)

    def is_short_of_goal(self, step: CareStep, lab: str, value: float) -> bool:
        return self.condition.is_short_of_goal(lab, value, step)  # (the knowledge base's one reading of "controlled")

    def judged_by(self, step_key: str | None, indication: str | None) -> dict[str, CareStep | None]:
        """The condition's monitored labs a drug is judged by, each with the care step whose goal it is held to: those
        its own step moves or targets; for a drug with no step, the lab it is kept for (a misdiagnosis' antihypertensive
        before the revision, `Misdiagnosis.kept_for`, or `lab:<key>`), at the goal of the step that treats that lab
        (the seed-61 read: amlodipine "doing its job" at 154 mmHg while it treated "essential hypertension")."""
        monitored = {m.lab for m in self.condition.monitored}
        if step_key is not None:
            step = self.step(step_key)
            return {lab: step for lab in (*step.moves, *step.targets) if lab in monitored}
        lab = indication.removeprefix("lab:") if indication and indication.startswith("lab:") else None
        mis = self.misdiagnosis
        if mis is not None and indication == f"misdiagnosis:{mis.icd11}":
            lab = mis.kept_for
        if lab not in monitored:
            return {}
        return {lab: next((s for s in self.condition.care_path if s.indication.lab == lab), None)}

    # --- starting, changing, stopping ----------------------------------------------------------

    def start(self, rx: Prescription, reason: str, indication: str, event_id: str) -> list[Fact]:
        """Start (or administer) a prescription today; returns its facts (with co-prescribed drugs and the drugs it
        replaces, stopped)."""
        step = self.step(rx.step) if rx.step else None
        facts: list[Fact] = []
        if step is not None:
            replaced = set(step.candidate(rx.drug).replaces)
            for running in [d for d in self.state.active if {d, self.kb.drugs[d].drug_class} & replaced]:
                if running in self.state.active:  # (a partner may have gone with the drug before it)
                    resumed_step = self.state.active[running].step
                    facts += self.stop(running, f"replaced_by:{rx.drug}")
                    if rx.regimen == "course" and rx.course_days and resumed_step:
                        # an induction course hands back to maintenance when it ends (mycophenolate after
                        # cyclophosphamide for a lupus nephritis flare; KDIGO 2024)
                        resume_on = self.day + rx.course_days + 1
                        self.add_task(Task("resume", resume_on, deadline=resume_on + 1, step=resumed_step,
                                           drug=running, trigger=event_id, reason=rx.drug))
        tests = self.start_tests_due(rx)
        facts += tests
        rx = self.dosed_on(rx, step, tests)
        facts += self.treatments_first_due(rx, event_id)
        facts += rx.facts(reason, indication)
        facts += self.start_warnings(rx.drug, facts)
        facts += self.caution_checks(rx)
        effect = None
        if step is not None and (step.moves or step.targets):
            effect = self.labs.start_step(step.key, self.day, step.role, step.moves, step.targets,
                                          definitive=rx.regimen == "one_off")
            if rx.regimen == "course" and rx.course_days:
                self.labs.end_step(effect, self.day + rx.course_days + 1)
        self.hold_on_treatment(rx.drug, self.day, rx.regimen, rx.course_days)
        if step is not None:
            self.regain_weight()
            self.state.started_steps.setdefault(step.key, rx.drug)
        self.state.handles[f"started:{rx.drug}"] = event_id
        if rx.regimen == "one_off":
            self.patient.given_once.add(rx.drug)
        else:
            ends = self.day + rx.course_days if rx.regimen == "course" and rx.course_days else None
            self.state.active[rx.drug] = self._active(rx, indication, ends, effect)
            for monitored in self.kb.drugs[rx.drug].monitoring:
                self.add_task(Task("monitor", self.day + monitored.every_days, lab=monitored.lab, drug=rx.drug))
        self._schedule_target_titration(rx.drug, event_id)
        if step is not None and step.marker is not None:
            lab = step.marker
            if rx.regimen == "chronic":
                self.add_task(Task("response_check", self.day + self._response_days(lab), step=step.key, lab=lab,
                                   drug=rx.drug, trigger=event_id))
            elif rx.regimen == "course" and rx.course_days and step.role in ("first_line", "step_up"):
                # a disease-control course (a steroid induction) is judged when it ends: still active, the
                # next step up is due (advanced therapy for colitis that steroids did not settle)
                due = self.day + max(rx.course_days, self._response_days(lab))
                self.add_task(Task("response_check", due, step=step.key, lab=lab, drug=rx.drug, trigger=event_id))
        short_course = rx.regimen == "course" and (rx.course_days or 0) < PARTNER_MIN_DAYS
        for partner in [] if short_course else self.kb.drugs[rx.drug].co_prescribe:
            partner_rx = prescribe(self.kb, partner, self.refresh_patient())
            group = self.kb.therapy_group(partner)  # (iron already taken: no calcium beside it, the same group)
            if partner not in self.state.active and partner_rx is not None \
                    and not any(self.kb.therapy_group(d) == group for d in self.state.active):
                facts += partner_rx.facts("co_prescription", f"with:{rx.drug}")
                # (a partner stops with its drug, `co_prescription_ends_with_drug`: pyridoxine's course is isoniazid's)
                self.state.active[partner] = self._active(partner_rx, f"with:{rx.drug}", None, None)
                self.state.active[partner].partner_of = rx.drug
        return facts

    def start_tests_due(self, rx: Prescription) -> list[Fact]:
        """The tests a drug is started on (`Drug.before_start`): the once-only ones taken that day where they are not
        on record (TPMT before the first thiopurine, CPIC 2018; hepatitis B and C and chickenpox immunity before
        immunosuppression, BSG 2019, ECCO 2021), none a history already tells (`Lab.known_from`), and none before a
        course no longer than `course_days_over`; and the counts it must not start on low, taken that day where they
        can be (a restart waits for them first, `start_counts_due`; a step-up the seed-33 cohort started with no
        count at all)."""
        checks = self.kb.drugs[rx.drug].before_start
        if checks is None:
            return []
        short = rx.regimen == "course" and checks.course_days_over is not None \
            and (rx.course_days or 0) <= checks.course_days_over
        missing = [] if short else [lab for lab in checks.once if lab not in self.labs.last_measured
                                    and not set(self.kb.labs[lab].known_from) & set(self.patient.conditions)]
        return self.measure(missing, urgent=True) + self.measure(checks.not_low)

    def dosed_on(self, rx: Prescription, step: CareStep | None, tests: list[Fact]) -> Prescription:
        """The prescription again where a test taken for its start is one a patient rule reads (`RuleWhen.lab_below`):
        TPMT activity below the range starts a thiopurine at half the dose under half the ceiling (CPIC 2018)."""
        if not any(isinstance(f, LabFact) and f.lab in self.kb.rule_labs for f in tests):
            return rx
        again = prescribe(self.kb, rx.drug, self.refresh_patient(), step, avoided=rx.avoided)
        # (an activity that bars the drug is not drawn, `Lab.population`: the start is already chosen by now)
        assert again is not None, f"{rx.drug}: barred by a result taken for its own start"
        return again

    def treatments_first_due(self, rx: Prescription, event_id: str) -> list[Fact]:
        """What a caution of the patient's histories starts before `rx` (`Contraindication.treat_first`: isoniazid,
        pyridoxine with it, before a steroid course or a thiopurine in latent tuberculosis; NICE NG33), unless taken or
        started this year already, or `rx` is below the rule's daily dose or shorter than its course."""
        facts: list[Fact] = []
        for rule in self._history_cautions_of(rx.drug):
            first = rule.treat_first
            if first is None or rx.dose * DOSES_PER_DAY.get(rx.frequency, 1) < first.min_daily_dose.get(rx.drug, 0):
                continue
            if rx.regimen == "course" and first.min_days and (rx.course_days or 0) < first.min_days:
                continue
            for drug in first.drugs:
                if drug in self.state.active or f"started:{drug}" in self.state.handles:
                    continue
                preventive = prescribe(self.kb, drug, self.refresh_patient())
                if preventive is not None:
                    facts += self.start(preventive, "prevention", f"history:{rule.history}", event_id)
        return facts

    def start_counts_due(self, drug: str) -> list[str] | None:
        """The counts a start of `drug` must not be low on (`StartChecks.not_low`) that can be taken today, or None
        where the start waits: a count that cannot be repeated today while the latest on record is low, or none is
        on record (azathioprine two days after sulfasalazine took the white count to 2.9, the seed-73 read)."""
        checks = self.kb.drugs[drug].before_start
        due: list[str] = []
        for lab in checks.not_low if checks else []:
            if self.labs.can_measure(lab, self.day):
                due.append(lab)
                continue
            latest = self.latest_value(lab)
            if latest is None or latest[1] < (self.kb.labs[lab].harm_below or 0):
                return None
        return due

    def is_count_low(self, drug: str, facts: list[Fact]) -> bool:
        """Whether a count `drug` must not be started on is below its harm level in `facts`."""
        checks = self.kb.drugs[drug].before_start
        return checks is not None and any(
            isinstance(f, LabFact) and f.lab in checks.not_low and f.value < (self.kb.labs[f.lab].harm_below or 0)
            for f in facts)

    def start_warnings(self, drug_key: str, facts: list[Fact]) -> list[Fact]:
        """The warnings said the day a drug starts: its label's own, said at every start (`Drug.start_advice`: a
        dopamine agonist's sleep attacks), and the one a harm it can do calls for (`Advice.on_start`: a sedating
        drug's drowsiness and driving), which the drug's own stands in for except where the job makes it more (a
        crane operator: not at work either until they know how it affects them; MHRA 2014, BNF label 2)."""
        drug = self.kb.drugs[drug_key]
        said = [drug.start_advice] if drug.start_advice is not None else []
        for advice in self.kb.advice.values():
            if advice.on_start is not None and advice.on_start in drug.toxicities:
                now = self.advice_now(advice.key, facts)
                if now != advice.key or not said:
                    said.append(now)
        return [AdviceFact(advice=key) for key in said]

    def adopt(self, drug: str, step: CareStep, event_id: str) -> None:
        """A drug already taken becomes the drug of `step` from today (a misdiagnosis' antihypertensive kept at the
        revision for the true condition's blood-pressure step): it moves what the step moves, and its response is
        checked as at a start."""
        active = self.state.active[drug]
        active.step, active.indication = step.key, self.indication_of(step)
        self.state.started_steps.setdefault(step.key, drug)
        if step.moves or step.targets:
            active.effect = self.labs.start_step(step.key, self.day, step.role, step.moves, step.targets)
        if step.marker is not None:
            lab = step.marker
            self.add_task(Task("response_check", self.day + self._response_days(lab), step=step.key, lab=lab,
                               drug=drug, trigger=event_id))

    def caution_checks(self, rx: Prescription) -> list[Fact]:
        """A drug started under a caution that asks for checks (an ECG for a QT-prolonging drug in long QT
        syndrome): the labs measured today, and a recheck booked within `recheck_days`; with them the labs the
        caution needs not low for the start (`not_low_before`: potassium and magnesium), unless still fresh."""
        checks = self._caution_checks_of(rx.drug)
        for lab, within in checks:
            self._book_recheck(rx.drug, lab, within)
        before = [lab for rule in self._history_cautions_of(rx.drug) for lab in rule.not_low_before]
        labs = list(dict.fromkeys([*(lab for lab, _ in checks), *before]))
        return self.measure(labs) if labs else []

    def hold_on_treatment(self, drug: str, day: int, regimen: str = "chronic", course_days: int | None = None) -> None:
        """A drug that holds a lab in a range of its own (warfarin: INR 2-3) moves it there while taken."""
        # (a dose that works holds the level in the middle half of its range: lithium 0.55-0.85 mmol/L, NICE's
        # 0.6-0.8; INR 2.25-2.75), so a result outside the range is an event that is rechecked, not the rule
        ranges = {m.lab: (low + (high - low) / 4, high - (high - low) / 4)
                  for m in self.kb.drugs[drug].monitoring if m.on_treatment for low, high in [m.on_treatment]}
        if ranges:
            effect = self.labs.start_step(f"drug:{drug}", day, "first_line", [], ranges)
            if regimen == "course" and course_days:
                self.labs.end_step(effect, day + course_days + 1)
            self.state.held[drug] = effect

    def _active(self, rx: Prescription, indication: str, ends: int | None, effect):  # noqa: ANN001, ANN202
        from medmemorybench.simulate.engine import Active

        return Active(rx.drug, rx.dose, rx.unit, rx.frequency, rx.step, self.day, self.day, indication, rx.release,
                      ends, effect)

    def _response_days(self, lab: str) -> int:
        kinetics = self.kb.labs[lab].kinetics
        assert kinetics is not None
        return int(-(-kinetics.response_days // 1))

    def increase(self, drug: str, reason: str, event_id: str, acute: bool = False) -> MedicationFact | None:
        """Raise a drug one rung of its ladder (respecting its titration interval unless `acute`)."""
        active = self.state.active.get(drug)
        if active is None or active.suspected or active.ends is not None:
            return None
        spec = self.kb.drugs[drug].dose
        interval = spec.titration_days or 0
        if not acute and self.day - active.last_change < interval or self.raise_held(drug):
            return None
        dose = next_dose(self.kb, drug, active.dose, self.refresh_patient(), active.release, active.frequency)
        if dose is None or (active.ceiling is not None and dose > active.ceiling):
            return None
        previous, active.dose, active.last_change = active.dose, dose, self.day
        self._schedule_target_titration(drug, event_id)
        if active.effect is not None:
            self.labs.increase(active.effect, self.day)
            step = self.step(active.step) if active.step else None
            if step is not None and step.marker is not None:
                lab = step.marker
                self.add_task(Task("response_check", self.day + self._response_days(lab), step=step.key, lab=lab,
                                   drug=drug, trigger=event_id))
        return MedicationFact(drug=drug, action="increase", dose=dose, unit=active.unit, frequency=active.frequency,
                              previous_dose=previous, reason=reason, indication=active.indication, step=active.step,
                              release=active.release)  # type: ignore[arg-type]

    def raise_held(self, drug: str) -> bool:
        """Whether a caution of the patient's histories holds the dose where it is: the latest result of the lab it
        watches is past its `no_increase_above` (a QT-prolonging drug at a QTc over 470 ms in long QT syndrome; the
        seed-37 read: aripiprazole doubled at 486 ms). A recheck of that lab due today is read first: the raise waits
        for its result (seed 7: aripiprazole raised at a visit whose own QTc of 474 ms was taken after the decision)."""
        for rule in self.kb.contraindications:
            if rule.no_increase_above is None or rule.history not in self.patient.conditions \
                    or drug not in self.kb.expand(rule.drugs + rule.classes):
                continue
            if any(t.kind == "monitor" and t.reason == "recheck" and t.lab == rule.monitoring[0]
                   for t in self.due_tasks()):
                return True
            latest = self.latest_value(rule.monitoring[0])
            if latest is not None and latest[1] > rule.no_increase_above:
                return True
        return False

    def base_missing(self, step: CareStep) -> bool:
        """Whether an augmenting step (`CareStep.adds_to`) has no drug of the step it adds to taken."""
        return step.adds_to is not None and not any(a.step == step.adds_to for a in self.state.active.values())

    def without_lone_augmenters(self, facts: list[Fact]) -> list[Fact]:
        """The visit's facts with every augmenting drug whose base step has no drug left, and none coming (no switch
        pending), stopped instead of continued: it treats nothing alone (the seed-37 read: aripiprazole
        "augmentation" months after bupropion stopped)."""
        for drug, active in sorted(self.state.active.items()):
            step = self.step(active.step) if active.step else None
            if step is None or not self.base_missing(step) or drug not in self.state.active \
                    or any(t.kind == "switch" and t.step == step.adds_to for t in self.state.tasks) \
                    or any(isinstance(f, MedicationFact) and f.action == "stop" and f.step == step.adds_to
                           and f.reason.startswith("adverse_effect:") for f in facts):
                continue  # (its switch is booked for the next visit once the harm is acted on)
            facts = [f for f in facts if not (isinstance(f, MedicationFact) and f.drug == drug)]
            facts += self.stop(drug, "nothing_to_augment")
        return facts

    def _schedule_target_titration(self, drug: str, event_id: str) -> None:
        """A drug the label titrates to a target dose on a schedule gets its next step booked."""
        active = self.state.active.get(drug)
        if active is None or active.ends is not None:
            return
        spec = ladder_of(self.kb, drug, active.release, active.frequency)
        if spec.target is not None and active.dose < spec.target and spec.titration_days:
            due = self.day + spec.titration_days
            # (a label that titrates to effect steps weekly: the step is not left to whichever visit happens to be
            # free, the seed-47 read kept pramipexole's starting dose for months)
            deadline = due + spec.titration_days if spec.to_effect else None
            self.add_task(Task("titrate_to_target", due, deadline=deadline, drug=drug, trigger=event_id))

    def reduce(self, drug: str, reason: str) -> MedicationFact | None:
        """Lower a drug one rung of its ladder for a dose-related harm (None: already at the lowest dose)."""
        active = self.state.active[drug]
        ladder = ladder_of(self.kb, drug, active.release, active.frequency).doses()
        lower = [d for d in ladder if d < active.dose - 1e-9]
        if not lower and active.unit == "units" and active.dose >= 4:
            lower = [float(round(active.dose * 0.8))]  # insulin is dialled in single units: cut by a fifth (ADA 2024)
        if not lower:
            return None
        previous, active.dose, active.last_change = active.dose, lower[-1], self.day
        active.ceiling, active.suspected = lower[-1], False
        if active.effect is not None:
            self.labs.decrease(active.effect, self.day)
        return MedicationFact(drug=drug, action="decrease", dose=active.dose, unit=active.unit,
                              frequency=active.frequency, previous_dose=previous, reason=reason,
                              indication=active.indication, step=active.step, release=active.release)  # type: ignore[arg-type]

    def stop(self, drug: str, reason: str) -> list[Fact]:
        """Stop a drug today (and what was given alongside it)."""
        active = self.state.active.pop(drug)
        self.note_control_end(active.step, self.day, self.next_event_id())
        for effect in (active.effect, self.state.held.pop(drug, None)):
            if effect is not None and (effect.end is None or effect.end > self.day):
                self.labs.end_step(effect, self.day)
        facts: list[Fact] = [MedicationFact(drug=drug, action="stop", dose=active.dose, unit=active.unit,
                                            frequency=active.frequency, reason=reason, indication=active.indication,
                                            step=active.step, release=active.release)]  # type: ignore[arg-type]
        for partner, other in list(self.state.active.items()):
            if other.partner_of == drug:
                facts += self.stop(partner, f"with:{drug}")
        return facts

    def continue_fact(self, drug: str, reason: str) -> MedicationFact:
        active = self.state.active[drug]
        return MedicationFact(drug=drug, action="continue", dose=active.dose, unit=active.unit,
                              frequency=active.frequency, reason=reason, indication=active.indication,
                              step=active.step, release=active.release)  # type: ignore[arg-type]

    def too_early_dropped(self, labs: list[str], cause_id: str | None) -> list[str]:
        """The labs a check linked to `cause_id` may show: not those the cause moves whose response time has
        not passed (a result that could not yet reflect the change must not be read as its effect)."""
        cause = next((e for e in self.events if e.event_id == cause_id), None)
        if cause is None:
            return labs
        moved = {lab for f in cause.facts if isinstance(f, MedicationFact) and f.step
                 for lab in (*self.step(f.step).moves, *self.step(f.step).targets)}
        elapsed = self.day - (date.fromisoformat(cause.date) - YEAR_START_DATE).days
        return [lab for lab in labs if lab not in moved or elapsed >= self._response_days(lab)]

    def next_event_id(self) -> str:
        return f"{self.persona_id}-E{len(self.events) + 1:03d}"

    def traps_told(self, avoided: tuple[AvoidedFact, ...]) -> bool:
        """Whether every trap fact that rules out these drugs has been told (a doctor avoids only what they know)."""
        return all(self.handle(f"trap:{category}") is not None for fact in avoided for category in fact.traps)

    def trap_triggers(self, facts: list[Fact]) -> list[str | None]:
        """The disclosure events of the trap facts that ruled drugs out in these facts."""
        return [self.handle(f"trap:{c}") for f in facts if f.type == "avoided" for c in f.traps]

    def start_steps(self, steps: list[CareStep], reason_of, indication_of, triggers: list[str | None]  # noqa: ANN001
                    ) -> tuple[list[Fact], list[str | None]]:
        """Start a drug for each step the rules allow one for; returns facts and causal triggers."""
        facts: list[Fact] = []
        event_id = self.next_event_id()
        for step in steps:
            running = next((a for a in self.state.active.values() if a.step == step.key), None)
            if running is not None and (running.indication or "").startswith("symptom:"):
                # a red flag's drug, started before the diagnosis, goes on as the step's (indication now on record)
                running.indication = indication_of(step)
                facts.append(self.continue_fact(running.drug, reason_of(step)))
                continue
            if step.key in self.state.started_steps and running is not None or self.base_missing(step):
                continue
            rx = choose_for_step(self.kb, step, self.refresh_patient())
            if rx is None:
                continue
            facts += self.start(rx, reason_of(step), indication_of(step), event_id)
        return facts, [*triggers, *self.trap_triggers(facts)]

    def indication_of(self, step: CareStep) -> str:
        ind = step.indication
        if ind.complication:
            return f"complication:{ind.complication}"
        if ind.lab:
            return f"lab:{ind.lab}"
        return f"condition:{self.condition.key}"

    # --- task handlers (None: not possible today, keep the task) ------------------------------

    def _task_response_check(self, task: Task) -> bool | None:
        assert task.lab and task.step and task.drug
        if task.drug not in self.state.active and task.step not in self.state.started_steps:
            return False
        if not self.labs.can_measure(task.lab, self.day):
            return None
        step = self.step(task.step)
        facts = self.measure([task.lab]) + self.measure(self.too_early_dropped(self.vitals(), task.trigger))
        value = next(f.value for f in facts if isinstance(f, LabFact) and f.lab == task.lab)
        short = self.is_short_of_goal(step, task.lab, value)
        active = self.state.active.get(task.drug)
        taken = active is not None and active.ends is None and not active.suspected
        titratable = short and taken and self.can_raise(task.drug)
        next_step = self.next_step_for(step, task.lab) if short and taken and not titratable else None
        # the result is reviewed at a visit about the results, or at a follow-up of the drug itself; a drug at its top
        # dose with its marker short of goal and no next step open is kept saying why (`no_next_step`)
        reviewed = active is not None and not active.suspected and self.rng.random() < 0.35
        if short and taken and not titratable and next_step is None:
            event = self.emit("follow_up", [self.continue_fact(task.drug, "no_next_step"), *facts], [task.trigger],
                              "last_lab")
            self.state.handles[f"no_next_step:{task.drug}"] = event.event_id
        elif reviewed:
            facts = [self.continue_fact(task.drug, "stable"), *facts]
            event = self.emit("follow_up", facts, [task.trigger], "last_lab")
        else:
            event = self.emit("lab_check", facts, [task.trigger], "last_lab")
        if next_step is not None:
            self._queue_next_step(step, next_step, event.event_id)
        if short:
            booked = titratable and ladder_of(self.kb, task.drug, active.release, active.frequency).to_effect \
                and self._titration_booked(task.drug)  # (this visit's result booked it: `titrate_to_effect`)
            if titratable and not booked:
                interval = self.kb.drugs[task.drug].dose.titration_days or 0
                self.add_task(Task("titrate", max(self.day + 1, active.last_change + interval),
                                   deadline=None, step=task.step, drug=task.drug, trigger=event.event_id))
            elif not titratable:
                self.state.handles.setdefault("short_of_goal", event.event_id)
        return True

    def escalation_due(self, facts: list[Fact]) -> list[Fact]:
        """A drug of a care step whose marker (`marker`) has read short of goal on every result since its last one at
        goal, among those the present treatment could show (the lab's response time after the latest change of the
        drug, or the start of another drug taken that moves the marker), for at least one response time by this
        visit's reading, is taken on:
        its next dose booked, else the next step open (`next_step_for`), else it is kept at this visit saying why
        (`no_next_step`, once per change). The response check judges a change once; this judges the marker at each
        later reading (the seed-79 read: metformin "doing its job" at HbA1c 7.5-7.3 % for eight months, capsaicin kept
        while knee pain stayed 5-9/10 with every oral step barred)."""
        today = {f.lab: f.value for f in facts if isinstance(f, LabFact)}
        for drug, active in sorted(self.state.active.items()):
            if active.step is None or active.suspected or active.ends is not None or any(
                    isinstance(f, MedicationFact) and f.drug == drug and f.action != "continue" for f in facts):
                continue  # (changed at this visit: its effect is for later readings to show)
            step = self.step(active.step)
            lab = step.marker
            if lab not in today or self.kb.labs[lab].kinetics is None \
                    or not self.is_short_of_goal(step, lab, today[lab]):
                continue
            since = max([active.last_change] + [a.started for a in self.state.active.values()
                                                if a.step and lab in self.step(a.step).moves])
            shown = [((date.fromisoformat(e.date) - YEAR_START_DATE).days, f.value) for e in self.events
                     for f in e.facts if isinstance(f, LabFact) and f.lab == lab]
            shown = [(d, v) for d, v in shown if d >= since + self._response_days(lab)]
            at_goal = [d for d, v in shown if not self.is_short_of_goal(step, lab, v)]
            run = [d for d, _ in shown if not at_goal or d > at_goal[-1]]  # (short since the last reading at goal)
            if not run or self.day - run[0] < self._response_days(lab):
                continue
            said = self.handle(f"no_next_step:{drug}")
            if self._titration_booked(drug) or said is not None and self._day_of(said) >= since:
                continue
            if self.can_raise(drug):
                due = max(self.day + 1, active.last_change + (self.kb.drugs[drug].dose.titration_days or 0))
                self.add_task(Task("titrate", due, step=step.key, drug=drug, trigger=self.next_event_id()))
                continue
            next_step = self.next_step_for(step, lab)
            if next_step is not None:
                self._queue_next_step(step, next_step, self.next_event_id())
                continue
            facts = [f for f in facts if not (isinstance(f, MedicationFact) and f.drug == drug
                                              and f.action == "continue")]
            facts.append(self.continue_fact(drug, "no_next_step"))
            self.state.handles[f"no_next_step:{drug}"] = self.next_event_id()
        return facts

    def can_raise(self, drug: str) -> bool:
        """Whether `increase` can raise a drug taken today (a higher rung within its caps and ceiling, no caution
        holding it), its titration interval aside."""
        active = self.state.active[drug]
        dose = next_dose(self.kb, drug, active.dose, self.refresh_patient(), active.release, active.frequency)
        return dose is not None and (active.ceiling is None or dose <= active.ceiling) and not self.raise_held(drug)

    def _day_of(self, event_id: str) -> int:
        event = next(e for e in self.events if e.event_id == event_id)
        return (date.fromisoformat(event.date) - YEAR_START_DATE).days

    def next_step_for(self, step: CareStep, lab: str) -> CareStep | None:
        """The step that takes over a marker its drug at its top dose leaves short of goal (ADA 2024 §9, KDIGO 2022
        diabetes in CKD, NICE NG222 1.9: intensify, add or switch once the response interval shows the goal unmet):
        another care step of this phase that moves it, not started, that a drug is allowed for today, else a second
        drug of `step` where the step treats that lab itself (`Indication.lab`: a glucose-lowering add-on, never a
        second RAS blocker); None where none is open (the seed-79 read: metformin kept "doing its job" at an HbA1c of
        7.5 % with every add-on over the budget, and nothing said)."""
        patient = self.refresh_patient()
        for other in self.condition.care_path:
            if other.key == step.key or lab not in other.moves or other.phase > self.phase \
                    or other.key in self.state.started_steps or other.indication.complication is not None \
                    or other.indication.lab not in (None, lab) or self.base_missing(other):
                continue
            if choose_for_step(self.kb, other, patient) is not None:
                return other
        one_drug = sum(a.step == step.key for a in self.state.active.values()) == 1
        return step if one_drug and step.indication.lab == lab and choose_for_step(self.kb, step, patient) else None

    def _queue_next_step(self, step: CareStep, next_step: CareStep, trigger: str) -> None:
        """Book `next_step_for`'s answer: a second drug of the step, else the later step's start (once)."""
        if next_step.key == step.key:
            if not any(t.kind == "add_agent" and t.step == step.key for t in self.state.tasks):
                self.add_task(Task("add_agent", self.day + 1, step=step.key, trigger=trigger))
        elif not any(t.kind == "start_step" and t.step == next_step.key for t in self.state.tasks):
            self.add_task(Task("start_step", self.day + 1, step=next_step.key, trigger=trigger))

    def _titration_booked(self, drug: str) -> bool:
        return any(t.kind in ("titrate", "titrate_to_target") and t.drug == drug for t in self.state.tasks)

    def titrate_to_effect(self, event: Event) -> None:
        """A drug its label titrates to effect (`DoseSpec.to_effect`: a dopamine agonist) whose care step's marker is
        short of goal at this visit, on a result that can show its present dose (the marker's response time since
        its last change), has its next step booked: every such result, not only the check booked after a change
        (the seed-47 read: pramipexole left at its starting dose for five months while the motor score rose)."""
        values = {f.lab: f.value for f in event.facts if isinstance(f, LabFact)}
        for drug, active in sorted(self.state.active.items()):
            spec = ladder_of(self.kb, drug, active.release, active.frequency)
            if not spec.to_effect or active.step is None or active.suspected or active.ends is not None \
                    or self._titration_booked(drug):
                continue
            step = self.step(active.step)
            lab = step.marker
            if lab not in values or self.day - active.last_change < self._response_days(lab) \
                    or not self.is_short_of_goal(step, lab, values[lab]):
                continue
            if next_dose(self.kb, drug, active.dose, self.refresh_patient(), active.release, active.frequency) is None:
                continue
            due = max(self.day + 1, active.last_change + (spec.titration_days or 0))
            self.add_task(Task("titrate", due, deadline=due + (spec.titration_days or 0), step=step.key, drug=drug,
                               trigger=event.event_id))

    def step_up_to_target(self, event: Event) -> None:
        """A lab treated to a target (`Lab.to_target`: blood pressure) that has read above the goal of the drugs judged
        by it (`judged_by`) on its last `readings` results, each taken once the latest change of those drugs could show
        (the lab's response time), has the next step booked within `within_days`: the next dose of one of them (the
        drug of a step that treats that lab first), else the care path's next step (a second agent). The seed-61 read:
        amlodipine 5 mg kept "since it's doing its job" at 154, 165, 176 mmHg in HFpEF, never raised all year."""
        today = {f.lab: f.value for f in event.facts if isinstance(f, LabFact)}
        for lab in sorted(today):
            rule = self.kb.labs[lab].to_target
            if rule is None:
                continue
            taken = [(drug, active, judged[lab]) for drug, active in sorted(self.state.active.items())
                     if lab in (judged := self.judged_by(active.step, active.indication))
                     and not active.suspected and active.ends is None]
            if not taken:
                continue
            since = max(active.last_change for _, active, _ in taken) + self._response_days(lab)
            shown = [f.value for e in self.events if (date.fromisoformat(e.date) - YEAR_START_DATE).days >= since
                     for f in e.facts if isinstance(f, LabFact) and f.lab == lab]
            if len(shown) < rule.readings or not all(self.condition.is_short_of_goal(lab, v, taken[0][2])
                                                     for v in shown[-rule.readings:]):
                continue
            booked = [t for t in self.state.tasks if t.kind in ("titrate", "titrate_to_target")
                      and any(t.drug == drug for drug, _, _ in taken)]
            for task in booked:  # (a step already booked, by a response check with no deadline: by the next review)
                review = max(task.due, self.day + rule.within_days)
                task.deadline = review if task.deadline is None else min(task.deadline, review)
            if booked:
                continue
            taken.sort(key=lambda t: t[2] is None or t[2].indication.lab != lab)  # (the step that treats it first)
            patient = self.refresh_patient()
            for drug, active, _ in taken:
                dose = next_dose(self.kb, drug, active.dose, patient, active.release, active.frequency)
                if dose is None or (active.ceiling is not None and dose > active.ceiling) or self.raise_held(drug):
                    continue
                due = max(self.day + 1, active.last_change + (self.kb.drugs[drug].dose.titration_days or 0))
                self.add_task(Task("titrate", due, deadline=max(due, self.day + rule.within_days), step=active.step,
                                   drug=drug, trigger=event.event_id))
                break
            else:
                self._add_agent_for(lab, event.event_id, self.day + rule.within_days)

    def _add_agent_for(self, lab: str, trigger: str, deadline: int) -> None:
        """A second agent for a lab whose drugs are all at their top dose: the first care step of this phase that moves
        it, not started nor queued, else a second drug of the step that treats it (`add_agent`: a calcium-channel
        blocker beside a thiazide at 25 mg); none before the diagnosis, when the path is not yet the doctor's."""
        if self.handle("diagnosis") is None or any(
                t.kind == "add_agent" or t.kind == "start_step" and t.step and lab in self.step(t.step).moves
                for t in self.state.tasks):
            return
        step = next((s for s in self.condition.care_path if lab in s.moves and s.phase <= self.phase
                     and s.key not in self.state.started_steps and s.indication.complication is None
                     and s.indication.lab in (None, lab) and not self.base_missing(s)), None)
        if step is not None:
            if not self._raised_first(step, trigger):
                self.add_task(Task("start_step", self.day + 1, deadline=deadline, step=step.key, trigger=trigger))
            return
        treating = next((s for s in self.condition.care_path if s.indication.lab == lab
                         and s.key in self.state.started_steps), None)
        if treating is not None and sum(a.step == treating.key for a in self.state.active.values()) == 1 \
                and not self._raised_first(treating, trigger):
            self.add_task(Task("add_agent", self.day + 1, deadline=deadline, step=treating.key, trigger=trigger))

    def _task_add_agent(self, task: Task) -> bool | None:
        """A second drug of a step whose one drug is at its top dose (another class: `choose_for_step` passes over
        the therapy groups taken), started "because what you're on now isn't enough on its own"."""
        assert task.step
        step = self.step(task.step)
        if sum(a.step == step.key for a in self.state.active.values()) != 1 \
                or self._raised_first(step, task.trigger or ""):
            return False
        rx = choose_for_step(self.kb, step, self.refresh_patient())
        if rx is None:
            return False
        facts = self.start(rx, "step_up", self.indication_of(step), self.next_event_id())
        self.emit("prescription", facts, [task.trigger], "last_change")
        return True

    def _task_titrate(self, task: Task) -> bool | None:
        assert task.drug
        if task.drug not in self.state.active:
            return False
        event_id = self.next_event_id()
        fact = self.increase(task.drug, "titration", event_id)
        if fact is None:
            return False
        self.emit("dose_change", [fact], [task.trigger], "last_change")
        return True

    def _task_titrate_to_target(self, task: Task) -> bool | None:
        """The next scheduled step up toward the label's target dose (skipped while an effect is suspected)."""
        assert task.drug
        active = self.state.active.get(task.drug)
        if active is None or active.suspected:
            return False
        fact = self.increase(task.drug, "titration", self.next_event_id())
        if fact is None:
            interval = self.kb.drugs[task.drug].dose.titration_days or 0
            return None if self.day - active.last_change < interval else False
        self.emit("dose_change", [fact], [task.trigger], "last_change")
        return True

    def _task_start_step(self, task: Task) -> bool | None:
        if self.nuisance_pending():  # type: ignore[attr-defined]
            # (the switch a nuisance waits on was judged affordable when it began: a new step started first would
            # take its budget, and the step would be left empty: atorvastatin stopped for a liver-test rise and no
            # statin after, once chlorthalidone had taken the $35)
            return None
        due = [t for t in self.due_tasks() if t.kind == "start_step"]
        read = next((r for t in due if t.step and (r := self.mood_review_reading(self.step(t.step).marker))),
                    [])
        # (a step-up queued on a reading short of goal is not started once a newer one, today's included, shows the
        # goal reached)
        # (nor one waiting on another step's drug still able to rise, which may have changed since it was queued: a
        # RAS blocker switched to after a harm starts at its first dose)
        steps = [self.step(t.step) for t in due if t.step and self.still_indicated(self.step(t.step), read)
                 and not self._raised_first(self.step(t.step), t.trigger or "")]
        triggers = [t.trigger for t in due]
        facts, triggers = self.start_steps(steps, lambda s: task.reason or s.role, self.indication_of, triggers)
        for other in due:
            if other is not task:
                self.state.tasks.remove(other)
        if not facts:
            if read:  # (the score was read: the visit stands, with nothing started)
                self.emit("follow_up", read, triggers)
                return True
            return False
        self.emit("prescription", facts + read, triggers, "last_change")
        return True

    def _task_monitor(self, task: Task) -> bool | None:
        """Safety labs a drug needs: every due one measurable today, in one visit."""
        assert task.lab and task.drug
        if task.drug not in self.state.active:
            return False
        if not self.doctor_knows(task.drug) or not self.labs.can_measure(task.lab, self.day):
            return None
        due = [t for t in self.due_tasks() if t.kind == "monitor" and t.drug in self.state.active
               and self.doctor_knows(t.drug) and t.lab and self.labs.can_measure(t.lab, self.day)]
        for done in due:  # (gone before the results are recorded: a result out of range books its own recheck)
            if done in self.state.tasks:
                self.state.tasks.remove(done)
        self.emit("lab_check", self.measure(list(dict.fromkeys(t.lab for t in due))), [], "last_lab")
        for done in due:
            if done.reason == "recheck":
                self.recheck_again_early(done)
            if done.drug not in self.state.active or done.reason == "recheck":
                continue  # the result itself stopped it (lithium when the eGFR has fallen); a recheck is one-off
            jitter = self.rng.randint(0, MONITORING_JITTER_DAYS)  # a check is booked for a day that suits
            due_on = self.day + self.next_monitoring_interval(done) + jitter
            # a level that needs rechecks (INR, lithium) is never left to lapse for want of a free visit
            deadline = due_on + MONITORING_GRACE_DAYS if self._needs_rechecks(done) else None
            self.add_task(Task("monitor", due_on, deadline=deadline, lab=done.lab, drug=done.drug, yields=True))
        return True

    def schedule_rechecks(self, event: Event) -> None:
        """A drug whose lab moves with how it is taken is checked again within its `recheck_days` after anything
        that moves it (`Monitoring.recheck_days`): its start or a dose change, an interacting drug started, missed
        doses, an acute illness, an adverse event, or a result outside its target range. A long-term drug the patient
        tells of at this very visit counts (warfarin told beside a ciprofloxacin start: the INR within its days)."""
        told = {f.drug for f in event.facts if isinstance(f, MedicationFact) and f.action == "continue"}
        for drug in [d for d, a in sorted(self.state.active.items())
                     if a.ends is None and not a.suspected and (self.doctor_knows(d) or d in told)]:
            for monitored in self.kb.drugs[drug].monitoring:
                if monitored.recheck_days and self._moves_level(drug, monitored.lab, monitored.on_treatment, event):
                    self._book_recheck(drug, monitored.lab, monitored.recheck_days)
            raised = any(isinstance(f, MedicationFact) and f.drug == drug and f.action == "increase"
                         for f in event.facts)
            for lab, within in self._caution_checks_of(drug) if raised else []:
                self._book_recheck(drug, lab, within)  # (an ECG after a QT-prolonging drug's dose is raised)
            for rule in self._history_cautions_of(drug):
                self._follow_caution_labs(rule, drug, event)

    def _follow_caution_labs(self, rule: Contraindication, drug: str, event: Event) -> None:
        """A caution's lab taken at this visit while a drug it names is taken (the QTc on a QT-prolonging drug in long
        QT syndrome) books its next: within `recheck_days` where it rose past the one before (`recheck_on_rise`), else
        within `every_days`; a recheck already due sooner stands. A drug the doctor has just learnt of (lithium told
        after the long QT's baseline ECG) gets its first from the last result on record."""
        for lab in rule.monitoring if rule.every_days else []:
            booked = [t for t in self.state.tasks if t.kind == "monitor" and t.reason == "recheck" and t.drug == drug
                      and t.lab == lab]
            now = next((f.value for f in event.facts if isinstance(f, LabFact) and f.lab == lab), None)
            if now is None:
                last = self.latest_value(lab)
                if not booked:
                    since = self.day if last is None else (date.fromisoformat(last[0].date) - YEAR_START_DATE).days
                    self.add_task(Task("monitor", max(self.day + 1, since + rule.every_days), lab=lab, drug=drug,
                                       reason="recheck"))
                continue
            before = next((f.value for e in reversed(self.events[:-1]) for f in e.facts
                           if isinstance(f, LabFact) and f.lab == lab), None)
            rose = rule.recheck_on_rise and before is not None and now > before and rule.recheck_days
            due = self.day + (max(1, min(self._response_days(lab), rule.recheck_days - 1)) if rose
                              else rule.every_days)
            if any(t.due <= due for t in booked):
                continue
            for task in booked:
                self.state.tasks.remove(task)
            self.add_task(Task("monitor", due, lab=lab, drug=drug, reason="recheck"))

    def _history_cautions_of(self, drug: str) -> list[Contraindication]:
        """The cautions of this patient's histories that name `drug`."""
        conditions = set(self.patient.conditions)  # (a property that builds its list: once, not once per rule)
        return [rule for rule in self.kb.contraindications if rule.level == "caution"
                and rule.history in conditions and drug in self.kb.expand(rule.drugs + rule.classes)]

    def _caution_checks_of(self, drug: str) -> list[tuple[str, int]]:
        """(lab, recheck_days) a caution of this patient's histories or a patient rule asks for with `drug` (long QT:
        the QTc; a diuretic at 65 or over: the sodium)."""
        history = [(lab, rule.recheck_days) for rule in self._history_cautions_of(drug) if rule.recheck_days
                   for lab in rule.monitoring]
        patient = [(lab, rule.recheck_days) for rule in applicable_rules(self.kb, self.refresh_patient(), drug)
                   if rule.level == "caution" and rule.recheck_days for lab in rule.monitoring]
        return history + patient

    def _moves_level(self, drug: str, lab: str, target: tuple[float, float] | None, event: Event) -> bool:
        partners = {other for other, _ in self.kb.interaction_partners.get(drug, [])}
        for fact in event.facts:
            if isinstance(fact, MedicationFact) and fact.action in ("start", "increase", "decrease") \
                    and (fact.drug == drug or fact.drug in partners):
                return True
            if isinstance(fact, AdherenceFact) and fact.drug == drug or isinstance(fact, AdverseFact):
                return True
            if isinstance(fact, DiagnosisFact) and fact.status in ("acute", "complication"):
                return True
            if isinstance(fact, LabFact) and fact.lab == lab and target is not None \
                    and not target[0] <= fact.value <= target[1]:
                return True
        return False

    def taper_steps_due(self, facts: list[Fact]) -> list[Fact]:
        """The visit's facts with each tapering course's dose as its schedule has it by today, recorded at whatever
        visit this is (the patient steps down at home on the written plan; each visit's record shows where they are
        on it). A continuation of the course at its old dose gives way to the step (seed 44: prednisolone "unchanged"
        at 8 mg 33 days into a 56-day course, its step to 6 mg never recorded)."""
        out: list[Fact] = []
        for drug, active in sorted(self.state.active.items()):
            candidate = self.step(active.step).candidate(drug) if active.step and active.ends is not None else None
            if candidate is None or candidate.taper is None or candidate.dose is None \
                    or any(isinstance(f, MedicationFact) and f.drug == drug and f.action != "continue" for f in facts):
                continue
            # (the course's last day is its last step: a visit on the day after it ends takes no further step)
            days_in = min(self.day, active.ends - 1) - active.started
            dose = candidate.taper.dose_on(candidate.dose, days_in)
            if dose < active.dose - 1e-9:
                previous, active.dose, active.last_change = active.dose, dose, self.day
                out.append(MedicationFact(drug=drug, action="decrease", dose=dose, unit=active.unit,
                                          frequency=active.frequency, previous_dose=previous, reason="taper",
                                          indication=active.indication, step=active.step,
                                          release=active.release))  # type: ignore[arg-type]
        stepped = {f.drug for f in out}
        return [f for f in facts if not (isinstance(f, MedicationFact) and f.drug in stepped)] + out

    def rechecks_due_now(self, facts: list[Fact], triggers: list[str | None] = ()) -> list[Fact]:  # type: ignore[assignment]
        """Rechecks that have fallen due, taken at whatever visit this is ("while you're here, your INR"): a visit
        busy with something else must not push a level check past its window. Not at a visit whose result would
        read as the effect of what it follows up (`reads_as_effect`): that recheck waits for the next visit."""
        due = [t for t in self.due_tasks() if t.kind == "monitor" and t.reason == "recheck" and t.lab and t.drug
               and self.doctor_knows(t.drug) and self.labs.can_measure(t.lab, self.day)
               and not any(isinstance(f, LabFact) and f.lab == t.lab for f in facts)
               and not self.reads_as_effect(t.lab, facts, triggers)]
        for task in due:
            self.state.tasks.remove(task)
        measured = self.measure(list(dict.fromkeys(t.lab for t in due))) if due else []
        for task in due:
            self.recheck_again_early(task)
        return measured

    def reads_as_effect(self, lab: str, facts: list[Fact], triggers: list[str | None]) -> bool:
        """Whether `lab` measured at this visit would be read as the effect of a change it follows up before the lab
        can show it: a step's drug changed at a triggering visit within the lab's response time, or missed doses
        told here fewer than the drug's waning and the lab's response take (a potassium 8 days after an MRA start,
        in a visit linked to that start)."""
        if any(lab not in self.too_early_dropped([lab], t) for t in triggers if t):
            return True
        for lapse in (f for f in facts if isinstance(f, AdherenceFact)):
            active = self.state.active.get(lapse.drug)
            step = self.step(active.step) if active is not None and active.step else None
            needed = (self.kb.drugs[lapse.drug].wanes_days or 0) + self._response_days(lab)
            if step is not None and lab in (*step.moves, *step.targets) and lapse.missed_days < needed:
                return True
        return False

    def recheck_again_early(self, task: Task) -> None:
        """A recheck taken in a drug's first weeks books the next one while it falls inside them
        (`Monitoring.recheck_until_days`: azathioprine's count and liver tests weekly for the first 4 weeks, BNF)."""
        active = self.state.active.get(task.drug or "")
        monitored = next((m for m in self.kb.drugs[task.drug].monitoring if m.lab == task.lab), None) \
            if active is not None else None
        if monitored is None or monitored.recheck_days is None or monitored.recheck_until_days is None:
            return
        if self.day + monitored.recheck_days <= active.started + monitored.recheck_until_days:
            self._book_recheck(task.drug, task.lab, monitored.recheck_days)

    def _book_recheck(self, drug: str, lab: str, within: int) -> None:
        # due once the lab can show the change and inside the window (lithium: day 5, at steady state; INR: day 3);
        # no deadline: it is taken at the first visit once due, whatever that visit is for (`rechecks_due_now`)
        due = self.day + max(1, min(self._response_days(lab), within - 1))
        booked = [t for t in self.state.tasks if t.kind == "monitor" and t.reason == "recheck" and t.drug == drug
                  and t.lab == lab]
        if any(t.due <= due for t in booked):
            return
        for task in booked:  # (a later one, the three-monthly QTc, gives way to this)
            self.state.tasks.remove(task)
        self.add_task(Task("monitor", due, lab=lab, drug=drug, reason="recheck"))

    def _needs_rechecks(self, task: Task) -> bool:
        return any(m.lab == task.lab and m.recheck_days for m in self.kb.drugs[task.drug].monitoring)

    def next_monitoring_interval(self, task: Task) -> int:
        """Checks are close together at first and spread out later: the label's interval, doubling up to
        `MONITORING_CEILING_DAYS` (never shorter than the label's)."""
        every = next(m.every_days for m in self.kb.drugs[task.drug].monitoring if m.lab == task.lab)
        started = self.state.active[task.drug].started if self.state.active[task.drug].step else 0
        done_so_far = max(1, (self.day - started) // every)
        return max(every, min(MONITORING_CEILING_DAYS, every * 2 ** min(done_so_far, 4)))

    def _task_escalate(self, task: Task) -> bool | None:
        """Rescue therapy for a complication that has not settled: its escalation steps."""
        assert task.reason
        comp_key = task.reason.partition(":")[2]
        comp = next(c for c in self.condition.complications if c.key == comp_key)
        facts = self.treat([self.step(k) for k in comp.escalation], task.reason, comp.acute)
        if not facts:
            return False
        self.labs.resolve("complication", self.day)
        kind = "prescription" if any(f.type == "medication" and f.action in ("start", "administer") for f in facts) \
            else "dose_change"
        self.emit(kind, facts, [task.trigger, *self.trap_triggers(facts)], "last_change")
        return True

    def treat(self, steps: list[CareStep], reason: str, acute: bool, indication: str | None = None) -> list[Fact]:
        """Facts that treat with these steps today: increase a running drug, else start one (for `indication`,
        by default the reason)."""
        facts: list[Fact] = []
        event_id = self.next_event_id()
        for step in steps:
            running = next((a for a in self.state.active.values() if a.step == step.key and not a.suspected), None)
            if running is not None:
                increased = self.increase(running.drug, reason, event_id, acute=acute)
                held = increased is None and self.raise_held(running.drug)
                facts.append(increased or self.continue_fact(running.drug, "raise_held" if held else reason))
                continue
            if self.base_missing(step):
                continue
            rx = choose_for_step(self.kb, step, self.refresh_patient())
            if rx is not None:
                facts += self.start(rx, reason, indication or reason, event_id)
        return facts

    def _task_switch(self, task: Task) -> bool | None:
        """After an adverse effect: the step's next drug, of another class (not a look-alike of the culprit)."""
        assert task.step and task.reason and task.drug
        step = self.step(task.step)
        if not self.still_indicated(step):
            return False  # (the augmenting drug goes, and nothing takes its place while the depression is in goal)
        rx = None if self.base_missing(step) else \
            choose_for_step(self.kb, step, self.refresh_patient(), exclude=self.look_alikes(task.drug))
        if rx is None:
            # nothing else in its step: the disease it controlled is checked at once, and still active it is taken to
            # the next step (colitis left six months untreated after sulfasalazine stopped, seed-17 and -19 reads)
            lab = step.marker
            if lab is not None and step.role in ("first_line", "step_up"):
                self.add_task(Task("response_check", self.day + 1, deadline=self.day + 1, step=step.key, lab=lab,
                                   drug=task.drug, trigger=task.trigger))
            return False
        event_id = self.next_event_id()
        advice = self.restart_advice(step.key)
        facts = self.start(rx, task.reason, self.indication_of(step), event_id) + advice
        self.emit("switch", facts, [task.trigger, *self.trap_triggers(facts)], "last_change")
        return True

    def still_indicated(self, step: CareStep, today: tuple[Fact, ...] | list[Fact] = ()) -> bool:
        """Whether a step started only while the disease is short of goal (`CareStep.while_short_of_goal`) has that
        indication today: the latest value of its `titrate_on` lab (`today`'s readings first) is short of goal."""
        lab = step.marker
        if not step.while_short_of_goal or lab is None:
            return True
        read = next((f.value for f in today if isinstance(f, LabFact) and f.lab == lab), None)
        latest = self.latest_value(lab)
        value = read if read is not None else latest[1] if latest is not None else None
        return value is not None and self.is_short_of_goal(step, lab, value)

    def look_alikes(self, drug: str) -> set[str]:
        """Drugs a switch away from `drug` must not land on: its class (another mask or machine is no look-alike)."""
        culprit = self.kb.drugs[drug]
        if all(f.form == "device" for f in culprit.forms):
            return {drug}
        return set(self.kb.drugs_by_class[culprit.drug_class])

    def _task_resume(self, task: Task) -> bool | None:
        """Maintenance after an induction course that replaced it: the same drug if every rule still allows it,
        else the first its step allows (never the course drug again)."""
        assert task.step and task.drug and task.reason
        step = self.step(task.step)
        group = self.kb.therapy_group(task.drug)
        if any(d in step.drug_keys or self.kb.therapy_group(d) == group for d in self.state.active):
            return False  # maintenance is already running (its own care step started it)
        self.state.tasks.remove(task)  # (its budget share is released before the verdict)
        patient = self.refresh_patient()
        rx = prescribe(self.kb, task.drug, patient, step) if task.drug in step.drug_keys else None
        rx = rx or choose_for_step(self.kb, step, patient, exclude={task.reason})
        if rx is None:
            return False
        facts = self.start(rx, "maintenance", self.indication_of(step), self.next_event_id())
        self.emit("prescription", facts, [task.trigger, *self.trap_triggers(facts)], "last_change")
        return True

    # --- restart after the last control drug ends (`Condition.restart`) -------------------------

    def is_control_taken(self, ignoring: str | None = None) -> bool:
        """Whether the disease is held by a drug of a control step (`restart.steps`), `ignoring` one: a long-term drug,
        or an induction course of a step that has long-term drugs (cyclophosphamide for lupus nephritis, maintenance
        following it). A course of a step that has nothing but courses is a bridge (a steroid taper for colitis):
        the maintenance drug starts under it (ECCO 2022: a thiopurine started while the steroid is tapered)."""
        restart = self.condition.restart
        return restart is not None and any(
            a.step in restart.steps and (a.ends is None or not self._is_bridge(a.step))
            for d, a in self.state.active.items() if d != ignoring)

    def _is_bridge(self, key: str) -> bool:
        return all((c.regimen or self.kb.drugs[c.drug].regimen) != "chronic" for c in self.step(key).candidates)

    def note_control_end(self, step: str | None, day: int, cause: str | None) -> None:
        """Remember the day the last control drug left (stopped today, or a course whose days ran out)."""
        restart = self.condition.restart
        if restart is not None and step in restart.steps and not self.is_control_taken():
            self.state.control_ended = (day, cause)

    def queue_restart(self) -> None:
        """Book the next maintenance drug by `restart.within_days` after the last control drug ended (the seed-37 and
        seed-47 reads: colitis untreated for months after sulfasalazine stopped and the steroid taper ended)."""
        restart, ended = self.condition.restart, self.state.control_ended
        if restart is None or ended is None or self.is_control_taken():
            return
        self.state.control_ended = None
        day, cause = ended
        self.add_task(Task("restart", self.day, deadline=day + restart.within_days, trigger=cause, books_visit=True))

    def restart_choice(self, patient: Patient) -> Prescription | None:
        """The first long-term candidate of the control steps, in `restart.steps` order, the rules allow (never a
        course: steroids are no maintenance). A drug of the culprit's class may be it (azathioprine after
        mycophenolate, KDIGO 2024): the culprit itself and every drug of the harm's kind are barred by the rules."""
        restart = self.condition.restart
        assert restart is not None
        for key in restart.steps:
            step = self.step(key)
            if self.base_missing(step):
                continue
            courses = {c.drug for c in step.candidates if (c.regimen or self.kb.drugs[c.drug].regimen) != "chronic"}
            rx = choose_for_step(self.kb, step, patient, exclude=courses)
            if rx is not None:
                return rx
        return None

    def keeps_a_restart(self, drug: str, effect: AdverseEffect) -> bool:
        """Whether the disease keeps a maintenance drug to restart with if `drug` is stopped for `effect`: a harm that
        would leave it none is not drawn for a year (as a trap must leave every care step a drug), so the year is one
        a physician could carry on treating."""
        active = self.state.active[drug]
        if self.condition.restart is None or active.step not in self.condition.restart.steps \
                or self.is_control_taken(ignoring=drug) or self.condition.restart.referral is not None:
            return True  # (a referral carries on a disease the rules leave no drug for)
        if effect.is_dose_related and any(d < active.dose - 1e-9 for d in
                                          ladder_of(self.kb, drug, active.release, active.frequency).doses()):
            return True  # (a lower dose answers it: the drug is not stopped)
        patient = self.refresh_patient()
        after = replace(patient, taking=patient.taking - {drug}, intolerant=patient.intolerant | {drug},
                        toxicities=patient.toxicities | ({effect.bars_kind} if effect.bars_kind else set()),
                        spending_usd=patient.spending_usd - (self.kb.drugs[drug].monthly_cost_usd
                                                             if is_long_term(self.kb, drug) else 0))
        return self.restart_choice(after) is not None

    def restart_advice(self, step: str) -> list[Fact]:
        """The care the guideline puts beside the drug (`restart.advice`; depression: high-intensity psychological
        therapy) where a drug of `step` is about to start with no control drug taken: a restart, or a switch after a
        stop."""
        restart = self.condition.restart
        if restart is None or restart.advice is None or step not in restart.steps or self.is_control_taken():
            return []
        return [AdviceFact(advice=restart.advice)]

    def _task_restart(self, task: Task) -> bool | None:
        """The next maintenance drug, with the blood tests it is monitored by taken that day as its baseline."""
        if self.is_control_taken():
            return False  # (a switch or a step-up has already put a control drug back)
        patient = self.refresh_patient()
        rx = self.restart_choice(patient)
        if rx is None:
            return self._refer_without_drug(task)
        step = self.step(rx.step) if rx.step else None
        assert step is not None
        # (a baseline the drug it follows still moves is not taken before that drug's effect can show: it would read
        # as its effect)
        # (a low count still waiting for its repeat is repeated whole with it: the full count with its differential
        # that `count_rechecks_due` would otherwise take days later)
        counts = self.start_counts_due(rx.drug)
        if counts is None:
            return None  # (a count it must not start on is low and cannot be repeated yet: the start waits for it)
        labs = [m.lab for m in self.kb.drugs[rx.drug].monitoring]
        labs += [lab for flag in self.kb.drug_red_flags.values() if self.count_recovering_since(flag) is not None
                 for lab in flag.labs if lab not in labs]
        baseline = self.measure(self.too_early_dropped(labs + [c for c in counts if c not in labs], task.trigger))
        if self.is_count_low(rx.drug, baseline):  # (still low: repeated, and the start waits for it to recover)
            self.emit("lab_check", baseline, [task.trigger], "last_lab")
            self.add_task(Task("restart", self.day + 1, deadline=task.deadline, trigger=task.trigger,
                               books_visit=task.books_visit))
            return True
        advice = self.restart_advice(step.key)
        facts = baseline + self.start(rx, "restart", self.indication_of(step), self.next_event_id()) + advice
        self.emit("prescription", facts, [task.trigger, *self.trap_triggers(facts)], "last_change")
        return True

    def _refer_without_drug(self, task: Task) -> bool | None:
        """No control drug the rules allow: the referral the knowledge base sets in its place (`restart.referral`),
        whose care moves the disease's activity labs as a first treatment would; else tried again at each visit."""
        restart = self.condition.restart
        if restart is None or restart.referral is None:
            return None
        self.labs.start_step(f"referral:{restart.referral}", self.day, "first_line", self.condition.activity_labs, {})
        self.emit("follow_up", [AdviceFact(advice=restart.referral)], [task.trigger])
        return True

    # --- a value a history is treated to (`HistoryCondition.treat_to`) -------------------------

    def queue_history_targets(self) -> None:
        """After a visit: a history on record whose last readings are all past its target, with no drug of the target's
        classes taken, has one booked by `within_days` (the seed-53 read: systolic 142-155 at nine visits after a
        stroke, "we'll keep a close eye on it"); left to the condition's own care where a step of it moves the lab."""
        pending = {t.reason for t in self.state.tasks if t.kind == "history_target"}
        moved = {lab for s in self.condition.care_path for lab in (*s.moves, *s.targets)}
        for key in sorted(self.conditions_on_record([]) & set(self.kb.history_conditions)):
            for target in self.kb.history_conditions[key].treat_to:
                reason = f"{key}:{target.lab}"
                if reason in pending or reason in self.state.targets_referred or target.lab in moved \
                        or self.target_treated(target):
                    continue
                readings = [(e, f.value) for e in self.events for f in e.facts
                            if isinstance(f, LabFact) and f.lab == target.lab][-target.readings:]
                if len(readings) == target.readings and all(value > target.above for _, value in readings):
                    self.add_task(Task("history_target", self.day, deadline=self.day + target.within_days,
                                       lab=target.lab, trigger=readings[-1][0].event_id, reason=reason,
                                       books_visit=True))

    def target_treated(self, target: HistoryTarget) -> bool:
        """Whether a drug of the target's candidates' classes is taken, as the doctor knows."""
        classes = {self.kb.drugs[d].drug_class for d in target.candidates}
        return any(self.kb.drugs[d].drug_class in classes and self.doctor_knows(d) for d in self.state.active)

    def _task_history_target(self, task: Task) -> bool | None:
        """The first candidate every rule allows, said with the target and why; where none is, the reason and the
        referral instead (`no_drug_advice`). The drug brings the lab to the target's treated range while taken."""
        assert task.reason and task.lab
        key = task.reason.partition(":")[0]
        target = next(t for t in self.kb.history_conditions[key].treat_to if t.lab == task.lab)
        if self.target_treated(target):
            return False
        patient = self.refresh_patient()
        # (under a budget the cheapest first: the money the year's own care was drawn against stays for it, the
        # colitis restart after sulfasalazine included)
        budgeted = any(c.category == "lifestyle_economic" and c.budget_usd is not None for c in patient.constraints)
        step = target.step(key, sorted(target.candidates, key=lambda d: self.kb.drugs[d].monthly_cost_usd)
                           if budgeted else None)
        rx = choose_for_step(self.kb, step, patient)
        if rx is None:
            self.state.targets_referred.add(task.reason)
            self.emit("follow_up", [AdviceFact(advice=target.no_drug_advice)], [task.trigger])
            return True
        indication = f"history:{key}"
        facts = self.start(replace(rx, step=None), "history_target", indication, self.next_event_id())
        active = self.state.active[rx.drug]
        active.effect = self.labs.start_step(step.key, self.day, step.role, [], step.targets)
        facts.append(AdviceFact(advice=target.advice))
        self.emit("prescription", facts, [task.trigger, *self.trap_triggers(facts)], "last_change")
        return True

    def _task_review(self, task: Task) -> bool | None:
        """The follow-up after a complication: is it settling on treatment?"""
        labs = self.too_early_dropped([task.lab] if task.lab else [], task.trigger)
        facts = self.measure(labs) + self.measure(self.too_early_dropped(self.vitals(), task.trigger))
        running = [a.drug for a in self.state.active.values() if a.indication == task.reason and not a.suspected]
        after = self._after_discharge(task.reason)
        trigger = task.trigger
        if after is not None:
            # (a diuretic started on admission has not yet moved the weight: the review is then no reading of its
            # effect, and is not linked to it)
            cause = next(e for e in self.events if e.event_id == task.trigger)
            if any(isinstance(f, MedicationFact) and f.action in ("start", "increase") and f.step in after.dose_review
                   for f in cause.facts):
                trigger = None  # (the labs the discharge calls for are read as they are: that is the point)
            measured = {f.lab for f in facts if isinstance(f, LabFact)}
            facts += self.measure([lab for lab in after.labs if lab not in measured])
            reviewed = self._dose_review(after, task.reason)
            facts += reviewed
            running = [d for d in running if d not in {f.drug for f in reviewed}]
        facts += [self.continue_fact(d, "stable") for d in running[:2]]
        if not facts:
            return None
        self.emit("follow_up", facts, [trigger], "last_lab")
        return True

    def _after_discharge(self, reason: str | None) -> AfterDischarge | None:
        """The discharge review of the admitted complication `reason` names, if it has one."""
        kind, _, key = (reason or "").partition(":")
        if kind != "complication":
            return None
        return next((c.after_discharge for c in self.condition.complications if c.key == key), None)

    def _dose_review(self, after: AfterDischarge, reason: str) -> list[MedicationFact]:
        """The dose of each reviewed step's running drug after an admission: a rung higher (the decompensation
        happened on the dose taken at home), else kept with why (at its top rung, or a caution holds it)."""
        out = []
        for step in after.dose_review:
            running = next((a for a in self.state.active.values() if a.step == step and not a.suspected), None)
            if running is None:
                continue
            raised = self.increase(running.drug, reason, self.next_event_id(), acute=True)
            held = raised is None and self.raise_held(running.drug)
            out.append(raised or self.continue_fact(running.drug, "raise_held" if held else "top_dose"))
        return out

    def _task_recovery_check(self, task: Task) -> bool | None:
        assert task.lab
        if not self.labs.can_measure(task.lab, self.day):
            return None
        self.emit("lab_check", self.measure([task.lab]), [task.trigger], "last_lab")
        return True

    def _task_illness_treat(self, task: Task) -> bool | None:
        """An intercurrent illness that self-care has not settled: what showed it, and the first course every rule
        allows (the preferred ones it passes over said with why); the review is booked for after the course."""
        assert task.reason
        illness = self.kb.illnesses[task.reason]
        rx = choose_for_step(self.kb, illness.step, self.refresh_patient())
        if rx is None:
            return False  # (nothing the rules allow any longer: the episode ends with its self-care)
        if illness.alarm is not None and self.alarm_on_record(illness.alarm):
            return False  # (an alarm feature came on record since: no "no alarm features" course; seed-53 read)
        if not self.traps_told(rx.avoided):
            return None
        rx = replace(rx, step=None)  # a course for an illness is no step of the condition's care
        reason = f"illness:{illness.key}"
        labs = self.measure(self.vitals())
        finding, measured = self.state_finding(illness.finding, reason, illness.drawn, labs,
                                               episode=self.episode(illness, task.trigger))
        worse = [SymptomFact(symptom=f"{illness.key}.{s.key}", name=s.name, lay=s.lay) for s in illness.symptoms
                 if s.at_examination]  # (what brought the patient back, examined now)
        facts: list[Fact] = [*worse, *self.drug_red_flag_checks([s for s in illness.symptoms if s.at_examination]),
                             TestFact(test=reason, name=illness.test, finding=finding),
                             DiagnosisFact(name=illness.name, icd11=illness.icd11, status="acute"),
                             *self.start(rx, reason, reason, self.next_event_id()),
                             *self.sick_day_advice([s for s in illness.symptoms if s.at_examination]),
                             *labs, *measured]
        barring = [*self.trap_triggers(facts), *self.interaction_triggers(facts)]
        # (a vital the barring visit's drug moves, read before that drug could show in it, is no reading of its
        # effect: seed 38 P0004, a heart rate 4 days after bisoprolol began, linked there by warfarin's NSAID bar)
        early = [f for f in labs if self.reads_as_effect(f.lab, [], barring)]
        event = self.emit("acute_illness", [f for f in facts if f not in early], [task.trigger, *barring])
        review_on = self.day + (rx.course_days or 0) + REVIEW_AFTER_COURSE_DAYS[0]
        deadline = review_on + self.rng.randint(*REVIEW_AFTER_COURSE_DAYS)
        self.add_task(Task("illness_review", review_on, deadline=deadline, reason=illness.key, trigger=event.event_id,
                           yields=True))
        return True

    def drug_red_flag_checks(self, symptoms: list[Symptom]) -> list[Fact]:
        """A symptom told that can be the first sign of a drug's harm (a fever or a sore throat on sulfasalazine, a
        thionamide or mirtazapine: agranulocytosis; `Symptom.drug_red_flag`) is acted on that day: the count is
        measured and the drug held until it is known, then given back with the reason, or stopped when a count is
        below its harm threshold (the seed-31 read: gargles and no white count for a month). A drug awaiting action
        for a side effect reported of it (`Active.suspected`) is held for the count too, but a normal count does not
        give it back: the side effect's own action (`_adverse_confirm`, which comes promptly) decides what comes of
        it, never a restart in between (`adverse_stop`)."""
        flag = next((s.drug_red_flag for s in symptoms if s.drug_red_flag is not None), None)
        drugs = [d for d in sorted(self.state.active) if flag is not None and self.doctor_knows(d)
                 and flag.warns_of(self.kb.drugs[d])]
        if flag is None:
            return []
        if not drugs:
            # (no such drug now, but a low count not yet shown to have recovered: counted that day all the same, the
            # seed-53 read: sulfasalazine stopped at a white count of 2.4, never repeated, then gargles for a fever)
            if self.count_recovering_since(flag) is None:
                return []
            return [*self.measure(flag.labs, urgent=True), AdviceFact(advice=flag.recovering_advice)]
        facts: list[Fact] = [*self.measure(flag.labs, urgent=True), AdviceFact(advice=flag.advice)]
        low = any(isinstance(f, LabFact) and (harm := self.kb.labs[f.lab].harm_below) is not None and f.value < harm
                  for f in facts)
        for drug in drugs:
            if low:
                facts += self.stop(drug, "blood_count_low")
                self.patient.intolerant.add(drug)
                self.patient.toxicities.add(flag.toxicity)
            elif not self.state.active[drug].suspected:  # (held: its side effect's action decides)
                facts.append(self.continue_fact(drug, "blood_count_normal"))
        return facts

    def sick_day_advice(self, symptoms: list[Symptom]) -> list[Fact]:
        """A dehydrating illness told (`Symptom.sick_day`: a fever) to a patient taking a drug it turns harmful: which
        to pause while unwell and when to restart, and on lithium what toxicity to watch for, said that visit (NICE
        NG203; Think Kidneys 2018; the seed-79 read: pneumonia on metformin, losartan and lithium, none said)."""
        rule = next((s.sick_day for s in symptoms if s.sick_day is not None), None)
        if rule is None:
            return []
        taken = {d for d in self.state.active if self.doctor_knows(d)}
        said = [rule.advice] if taken & self.kb.expand(rule.pause) else []
        if rule.watch_advice is not None and taken & self.kb.expand(rule.watch):
            said.append(rule.watch_advice)
        return [AdviceFact(advice=key) for key in said]

    def count_recovering_since(self, flag: DrugRedFlag) -> int | None:
        """The day from which a low count of the flag's harm waits for its repeat (None: none does): the latest count
        below its harm level, stop of a drug for the harm, or full count still below the reference range, with no full
        count back in range since (`follow_counts`, kept as each visit is recorded)."""
        return self.state.counts_low_since.get(flag.toxicity)

    def follow_counts(self, event: Event) -> None:
        """What a recorded visit does to each flag's low count: opens it (a count below its harm level, a drug stopped
        for the harm), moves it on (a full count still below the reference range), or closes it (one back in range)."""
        for flag in self.kb.drug_red_flags.values():
            counts = {f.lab: f.value for f in event.facts if isinstance(f, LabFact) and f.lab in flag.labs}
            low = any(value < (self.kb.labs[lab].harm_below or 0) for lab, value in counts.items())
            stopped = any(isinstance(f, MedicationFact) and f.action == "stop" and self.stopped_for(flag, f)
                          for f in event.facts)
            waiting = self.state.counts_low_since
            if low or stopped:
                waiting[flag.toxicity] = self.day
            elif flag.toxicity in waiting and set(counts) == set(flag.labs):
                if all(value >= self.kb.labs[lab].reference[0] for lab, value in counts.items()):
                    del waiting[flag.toxicity]
                else:
                    waiting[flag.toxicity] = self.day

    def stopped_for(self, flag: DrugRedFlag, fact: MedicationFact) -> bool:
        """Whether a stop was for the flag's harm (a low count at a red flag, or the drug's adverse effect)."""
        kind, _, effect = fact.reason.partition(":")
        return fact.reason == "blood_count_low" or kind == "adverse_effect" and flag.is_harm(self.kb.drugs[fact.drug],
                                                                                            effect)

    def declines_acted_on(self, facts: list[Fact]) -> list[Fact]:
        """The advice a score's fall calls for (`Lab.decline`: a MoCA 3 points under the highest on record), once a
        decline from a peak, where the condition does not treat the score itself."""
        out: list[Fact] = []
        for fact in facts:
            decline = self.kb.labs[fact.lab].decline if isinstance(fact, LabFact) else None
            if decline is None or self.condition.treats(fact.lab):
                continue
            seen = [(e.index, f.value) for e in self.events for f in e.facts
                    if isinstance(f, LabFact) and f.lab == fact.lab]
            if not seen:
                continue
            peak_at, peak = max(seen, key=lambda s: (s[1], s[0]))  # (the latest of equal highs)
            said = any(isinstance(f, AdviceFact) and f.advice == decline.advice
                       for e in self.events[peak_at:] for f in e.facts)
            if fact.value <= peak - decline.points and not said:
                out.append(AdviceFact(advice=decline.advice))
        return out

    def count_rechecks_due(self, facts: list[Fact]) -> list[Fact]:
        """A low count repeated at whatever visit falls `recheck_days` or more after it, every lab of it, until it is
        back in range (BSR 2017: the white count after a drug stopped for leukopenia)."""
        out: list[Fact] = []
        for flag in self.kb.drug_red_flags.values():
            since = self.count_recovering_since(flag)
            if since is None or self.day - since < flag.recheck_days:
                continue
            measured = {f.lab for f in facts if isinstance(f, LabFact)}  # (a routine count's white cells: the rest now)
            out += self.measure([lab for lab in flag.labs if lab not in measured])
        return out

    def harm_care_due(self, facts: list[Fact]) -> list[Fact]:
        """A lab with a `harm_care` waiting for its repeat is measured at whatever visit falls `recheck_days` or more
        after the value it waits from; a value past its harm level found today (first of its episode) brings the
        advice that asks for its symptoms (a sodium of 125 on fluoxetine: the seed-73 read)."""
        out: list[Fact] = []
        for lab, since in sorted(self.state.harm_since.items()):
            care = self.kb.labs[lab].harm_care
            assert care is not None
            if self.day - since >= care.recheck_days and not any(isinstance(f, LabFact) and f.lab == lab
                                                                 for f in facts):
                out += self.measure([lab])
        for fact in [*facts, *out]:
            care = self.kb.labs[fact.lab].harm_care if isinstance(fact, LabFact) else None
            if care is not None and fact.lab not in self.state.harm_since and self.kb.labs[fact.lab].is_past_harm(
                    fact.value):
                out.append(AdviceFact(advice=care.advice))
        return out

    def follow_harms(self, event: Event) -> None:
        """What a recorded visit does to a lab with a `harm_care`: a value past its harm level opens (or moves on) its
        wait for a repeat, one still outside the reference range after it moves it on, one back inside closes it."""
        for fact in event.facts:
            if not isinstance(fact, LabFact) or (spec := self.kb.labs[fact.lab]).harm_care is None:
                continue
            low, high = spec.reference
            if spec.is_past_harm(fact.value) or (fact.lab in self.state.harm_since and not low <= fact.value <= high):
                self.state.harm_since[fact.lab] = self.day
            else:
                self.state.harm_since.pop(fact.lab, None)

    def _task_illness_review(self, task: Task) -> bool | None:
        """The review after an intercurrent illness's course, and what it finds."""
        assert task.reason
        illness = self.kb.illnesses[task.reason]
        labs = self.measure(self.vitals())
        outcome, measured = self.state_finding(illness.outcome, f"illness:{illness.key}", illness.drawn, labs)
        review = TestFact(test=f"illness:{illness.key}:review", name=illness.review, finding=outcome)
        self.emit("follow_up", [review, *labs, *measured], [task.trigger])
        return True

    def episode(self, illness: Illness, first: str | None) -> Episode:
        """What a score may read of an illness's episode: the symptoms told at its first visit, and the days since."""
        event = next((e for e in self.events if e.event_id == first), None)
        if event is None:
            return Episode()
        prefix = f"{illness.key}."
        told = frozenset(f.symptom.removeprefix(prefix) for f in event.facts
                         if isinstance(f, SymptomFact) and f.symptom.startswith(prefix))
        return Episode(told, self.day - (date.fromisoformat(event.date) - YEAR_START_DATE).days)

    def interaction_triggers(self, facts: list[Fact]) -> list[str | None]:
        """The visits that started the drugs whose interactions ruled drugs out in these facts (a drug told of as
        long-standing links through its trap instead: `trap_triggers`)."""
        return [self.handle(f"started:{rule.removeprefix('interaction:').partition('+')[0]}")
                for f in facts if isinstance(f, AvoidedFact) for rule in f.rules if rule.startswith("interaction:")]

    # --- steps the record now indicates --------------------------------------------------------

    def latest_value(self, lab: str) -> tuple[Event, float] | None:
        for event in reversed(self.events):
            for fact in event.facts:
                if isinstance(fact, LabFact) and fact.lab == lab:
                    return event, fact.value
        return None

    def queue_indicated_steps(self) -> None:
        """Queue a start for each later care step whose indication is now on record."""
        started_roles = {self.step(key).role for key in self.state.started_steps}
        if self.handle("diagnosis") is None or "first_line" not in started_roles:
            return
        queued = {t.step for t in self.state.tasks if t.kind == "start_step"}
        for step in self.condition.care_path:
            if step.key in self.state.started_steps or step.key in queued or step.phase > self.phase:
                continue
            if step.role == "first_line" or step.indication.complication:
                continue
            trigger, due = None, self.day + 1
            if step.indication.lab:
                seen = self.latest_value(step.indication.lab)
                if seen is None:
                    continue
                event, value = seen
                ind = step.indication
                if not ((ind.above is not None and value > ind.above) or (ind.below is not None and value < ind.below)):
                    continue
                trigger = event.event_id
                if self._raised_first(step, trigger):
                    continue
            elif step.role == "step_up":
                trigger = self.handle("short_of_goal")
                if trigger is None:
                    continue
                self.state.handles.pop("short_of_goal")
            else:
                from medmemorybench.simulate.engine import phase_bounds

                low, _ = phase_bounds(step.phase)
                due = max(self.day + 1, low + self.rng.randint(0, STEP_SPREAD_DAYS))
                trigger = self.handle("diagnosis")
            self.add_task(Task("start_step", due, step=step.key, trigger=trigger))

    def _raised_first(self, step: CareStep, trigger: str) -> bool:
        """Whether `step` (or a second drug of it) waits on the drug of its `after_top_of` step, taken and able to
        rise, or switched to after a harm: its next dose is booked (once) instead of the step's start (KDIGO 2022: the
        ACE inhibitor at its maximum tolerated dose before amlodipine; the seed-79 read, P0009 E040: amlodipine beside
        lisinopril 5 mg at a potassium of 4.5-4.8)."""
        if step.after_top_of is None:
            return False
        if any(t.kind == "switch" and t.step == step.after_top_of for t in self.state.tasks):
            return True  # (its drug stopped for a harm, the next one is coming: it is raised in its turn)
        patient = self.refresh_patient()
        for drug, active in sorted(self.state.active.items()):
            if active.step != step.after_top_of or active.suspected or active.ends is not None:
                continue
            dose = next_dose(self.kb, drug, active.dose, patient, active.release, active.frequency)
            if dose is None or (active.ceiling is not None and dose > active.ceiling) or self.raise_held(drug):
                continue
            if not self._titration_booked(drug):
                due = max(self.day + 1, active.last_change + (self.kb.drugs[drug].dose.titration_days or 0))
                self.add_task(Task("titrate", due, deadline=due + (self.kb.drugs[drug].dose.titration_days or 0),
                                   step=active.step, drug=drug, trigger=trigger))
            return True
        return False

    def allowed_drug(self, drug: str) -> bool:
        return verdict(self.kb, drug, self.refresh_patient()).is_allowed


TASK_HANDLERS = {
    "response_check": ClinicalTasks._task_response_check,
    "titrate": ClinicalTasks._task_titrate,
    "titrate_to_target": ClinicalTasks._task_titrate_to_target,
    "add_agent": ClinicalTasks._task_add_agent,
    "start_step": ClinicalTasks._task_start_step,
    "monitor": ClinicalTasks._task_monitor,
    "escalate": ClinicalTasks._task_escalate,
    "switch": ClinicalTasks._task_switch,
    "recovery_check": ClinicalTasks._task_recovery_check,
    "review": ClinicalTasks._task_review,
    "resume": ClinicalTasks._task_resume,
    "restart": ClinicalTasks._task_restart,
    "history_target": ClinicalTasks._task_history_target,
    "illness_treat": ClinicalTasks._task_illness_treat,
    "illness_review": ClinicalTasks._task_illness_review,
}
"""Task kind -> handler: an unknown kind fails at import time of the mapping, not mid-year."""
