"""What happens at each kind of visit: the story items of the year and the routine visits between them.

A mixin of `YearBuilder` (it uses the builder's state and the clinical-task helpers). Phase 1 shows only
what a misled clinician could have seen (no specific symptom, no diagnostic lab); the work-up at the
turning point looks for the true diagnosis; complications are treated in the window their severity
demands; an adverse effect stops the drug (and every drug that can do the same harm) before a
replacement is chosen; a lapse moves only labs that can respond within the days missed.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import date

from medmemorybench.knowledge.models import (
    DOSES_PER_DAY,
    AdverseEffect,
    AlarmFeatures,
    CareStep,
    Complication,
    Illness,
    Indication,
    Stressor,
    WeightLost,
)
from medmemorybench.simulate.body import WEIGHT, WEIGHT_LOST_KEY
from medmemorybench.simulate.labs import StepEffect
from medmemorybench.simulate.models import (
    AdherenceFact,
    AdverseFact,
    AdviceFact,
    AllergyFact,
    ComplicationFact,
    DiagnosisFact,
    Event,
    Fact,
    HistoryFact,
    LabFact,
    MedicationFact,
    RefillFact,
    SettingFact,
    StressorFact,
    SymptomFact,
    TestFact,
)
from medmemorybench.simulate.persona import advice_applies
from medmemorybench.simulate.prescribing import choose_for_step, ladder_of, prescribe
from medmemorybench.simulate.safety import verdict
from medmemorybench.simulate.story import StoryItem
from medmemorybench.simulate.tasks import YEAR_START_DATE, Task, is_daily

MAX_MISSED_DAYS = 21
"""Longest lapse in adherence a patient admits to."""
MIN_MISSED_DAYS = 3
"""Shortest lapse a patient brings up."""
REFILL_PROBABILITY = 0.1
"""Share of check-ups on a long-term drug where the patient asks for more of it (as often as the opening line that
said it without a fact behind it: half of such check-ups opened on the drug, one line in five asked for more)."""
DIAGNOSTIC_TESTS = 3
"""Tests the diagnostic work-up states (the condition's first ones whose findings the visit can state)."""
SELF_CARE_DAYS = (5, 14)
"""Days of self-care (at least, and at most: drawn) before an intercurrent illness that has not settled is seen
again and treated (NICE NG120, NG79, NG59: most acute coughs, sinus infections and back pain settle with self-care;
reassess if they do not)."""
REVIEW_MIN_DAYS = 7
REVIEW_WINDOW_DAYS = 28
"""A complication is reviewed once its lab can show the treatment working (at least a week on), within 4 weeks
(GOLD 2025: review within 4 weeks of an exacerbation; NICE: review after a flare or admission)."""
PUSH_STEPS = 40
"""Steps a progression's push is sized in, up to its largest (`_progression_push`: a unit of eGFR at a largest fall
of 40)."""
HARM_SHOWN_RESPONSES = 2
"""Response times of its lab a serious harm has been under way when it is told (`_harm_onset`): a lab closes 63 % of
the gap to a new value in half a response time (`labs.time_constant`), so 86 % in one and 98 % in two, past the
confirming value the harm's push settles beyond (`LabModel.harm_delta`: one measurement's CV past it)."""
ROUTINE_WEIGHTS_BEFORE_DIAGNOSIS = {"symptom_report": 1.5, "lab_check": 1.4, "lifestyle": 1.4, "follow_up": 0.8,
                                    "medication_review": 1.2}
ROUTINE_WEIGHTS_AFTER_DIAGNOSIS = {"follow_up": 0.6, "medication_review": 0.8, "lab_check": 1.1, "lifestyle": 1.5,
                                   "psychological": 1.3, "symptom_report": 1.5}
"""Relative frequency of routine visit kinds (each patient's own mix varies around it, see `ROUTINE_BIAS`): near
even, less for the kinds the year's own tasks already bring (follow-ups, lab reviews), so that no visit kind
dominates a session index across patients (the skeleton measure)."""
ROUTINE_BIAS = (0.4, 1.6)
"""Range of a patient's own factor on each routine kind: one patient is seen mostly for lab reviews, another
for advice and check-ins, as care is organised differently for different people."""


class StoryActions:
    """Story items and routine visits, for `YearBuilder`."""

    # --- dispatch -------------------------------------------------------------------------------

    def story_ready(self, item: StoryItem) -> bool:
        check = READINESS.get(item.action)
        return check is None or check(self, item)

    def run_story_item(self, item: StoryItem) -> Event | None:
        return STORY_ACTIONS[item.action](self, item)

    # --- helpers --------------------------------------------------------------------------------

    def symptoms(self, count: int, specific: bool | None = False) -> list[Fact]:
        """`count` symptoms: non-specific ones (`specific=False`), specific ones first (`True`), or any."""
        pool = [s for s in self.condition.symptoms if (specific is None or s.specific == specific)
                and not (s.weight_lost is not None and self.state.started_steps)]  # (treated, the weight comes back)
        chosen = self.rng.sample(pool, min(count, len(pool)))
        if specific and len(chosen) < count:  # a condition with few specific symptoms: fill with the others
            others = [s for s in self.condition.symptoms if not s.specific
                      and not (s.weight_lost is not None and self.state.started_steps)]
            chosen += self.rng.sample(others, min(count - len(chosen), len(others)))
        for symptom in chosen:
            if symptom.weight_lost is not None:
                self._weight_lost(symptom.weight_lost)
        return [SymptomFact(symptom=s.key, name=s.name, lay=s.lay) for s in chosen]

    def _weight_lost(self, lost: WeightLost) -> None:
        """A symptom that tells of weight loss stands for weight lost over the weeks before it (never before the last
        weighing), until the condition is treated (or, told again while missing doses, its next step): the scales show
        what the patient says."""
        if any(key.startswith(WEIGHT_LOST_KEY) and o.is_active(self.day) for key, o in self.labs.offsets.items()):
            return
        start = max(self.labs.unchanged_since(WEIGHT), self.day - lost.over_days, 0)
        delta = -self.labs.rng.uniform(*lost.share) * self.labs.true_value(WEIGHT, start)
        self.labs.add_offset(f"{WEIGHT_LOST_KEY}:{self.day}", WEIGHT, start, delta)
        self.state.weight_lost_days = lost.over_days

    def regain_weight(self) -> None:
        """A care step starts: weight lost to the untreated disease comes back at the pace it went (`over_days` on),
        not within days of the first tablet."""
        for key, offset in self.labs.offsets.items():
            if key.startswith(WEIGHT_LOST_KEY) and offset.end is None:
                offset.end = self.day + self.state.weight_lost_days

    def told_here(self, action: str) -> list[Fact]:
        """Trap facts told in passing at this visit."""
        return [self.traps[c].fact for c in self.story.told_at.get(action, ()) if c in self.traps]

    def mark_told(self, action: str, event: Event) -> None:
        for category in self.story.told_at.get(action, ()):
            self.state.handles[f"trap:{category}"] = event.event_id
            self.state.done.add(f"disclose:{category}")

    def monitored_now(self) -> list[str]:
        """Monitored labs that may be measured today (diagnostic ones only after the work-up)."""
        return [m.lab for m in self.condition.monitored if self.allowed_now(m.lab)]

    # --- phase 1 --------------------------------------------------------------------------------

    def _first_symptoms(self, item: StoryItem) -> Event:
        facts = [*self.symptoms(2), *self.measure(self.vitals()), *self.told_here(item.action)]
        event = self.emit("symptom_report", facts, [], "symptoms")
        self.mark_told(item.action, event)
        return event

    def _baseline_lab_keys(self) -> list[str]:
        labs = [lab for lab in self.monitored_now() if self.kb.labs[lab].kind != "imaging"]
        if "egfr" in self.kb.labs and self.allowed_now("egfr"):
            labs.append("egfr")
        return labs

    def _ready_baseline_labs(self, item: StoryItem) -> bool:
        """Something is due to measure (a drug's monitoring may just have measured everything)."""
        return any(self.labs.can_measure(lab, self.day) for lab in self._baseline_lab_keys())

    def _baseline_labs(self, item: StoryItem) -> Event:
        labs = self._baseline_lab_keys()
        facts = [*self.measure(labs), *self.told_here(item.action)]
        event = self.emit("lab_check", facts, [self.handle("symptoms")], "baseline")
        self.mark_told(item.action, event)
        return event

    def _ready_misdiagnosis(self, item: StoryItem) -> bool:
        """A wrong diagnosis fits the patient's values today: one resting on a reading of a lab the condition follows
        (essential hypertension on a systolic of 140 or more, NICE NG136 1.2) waits for a day it reads there."""
        return any(self.fits_own_values(m.findings) for m in self.condition.misdiagnoses)

    def _misdiagnosis(self, item: StoryItem) -> Event:
        fitting = [m for m in self.condition.misdiagnoses if self.fits_own_values(m.findings)]
        if self.misdiagnosis not in fitting and fitting:  # (its values moved since the year began: a BMI now under 30)
            self.misdiagnosis = fitting[0]
        mis = self.misdiagnosis
        for finding in mis.findings:
            if finding.lab not in self.labs.courses and finding.lab not in self.labs.baselines:
                self.labs.baselines[finding.lab] = self.rng.uniform(*finding.range)
        # (a followed lab's reading, its true value inside the finding's range today, is drawn in that range: the
        # raised reading the diagnosis rests on is the one taken that day)
        bands = {f.lab: f.range for f in mis.findings if f.lab in self.labs.courses}
        # (a screen of the true condition reads below its threshold now: the episode is still building)
        facts: list[Fact] = [*self.measure([f.lab for f in mis.findings] + mis.screened_with, within=bands),
                             DiagnosisFact(name=mis.name, icd11=mis.icd11, status="suspected")]
        for lab in sorted(self.labs.emerging):  # (the core symptoms come in from tomorrow)
            self.labs.emerge(lab, self.day + 1)
        event_id = self.next_event_id()
        if mis.drug and mis.drug not in self.state.active:
            rx = prescribe(self.kb, mis.drug, self.refresh_patient())
            taken = {self.kb.drugs[d].drug_class for d in self.state.active}
            if rx is not None and self.kb.drugs[mis.drug].drug_class not in taken:
                facts += self.start(rx, "misdiagnosis", f"misdiagnosis:{mis.icd11}", event_id)
        facts += self.told_here(item.action)
        triggers = [self.handle("symptoms"), self.handle("baseline") if mis.findings else None]
        event = self.emit("misdiagnosis", facts, triggers, "misdiagnosis")
        self.mark_told(item.action, event)
        return event

    def _symptoms_persist(self, item: StoryItem) -> Event:
        """The misdiagnosis' treatment has not helped: told at a visit about it, or at its follow-up."""
        facts = [*self.symptoms(2), *self.measure(self.vitals()), *self.told_here(item.action)]
        kind = "symptom_report" if self.rng.random() < 0.5 else "follow_up"
        event = self.emit(kind, facts, [self.handle("misdiagnosis")], "persist")
        self.mark_told(item.action, event)
        return event

    def _disclose(self, item: StoryItem) -> Event | None:
        trap = self.traps.get(item.arg)
        if trap is None:
            return None
        return self.emit("trap_disclosure", [trap.fact], [], f"trap:{item.arg}")

    # --- phase 2 --------------------------------------------------------------------------------

    def _turning_point(self, item: StoryItem) -> Event:
        """Signs that point at last to the true disease: the patient comes back about them, or they are
        noticed at a follow-up of the misdiagnosis."""
        self.state.handles["turning"] = self.next_event_id()  # (a screen that emerges is taken from this visit on)
        told = [*self.symptoms(2, specific=True), *self.symptoms(1)]
        # congestion told here is treated here, before the work-up confirms what causes it (NICE NG106 1.1: a
        # diuretic for fluid overload while the echo is awaited)
        acted = self._act_on_red_flags(told, turning=True) or []
        facts = [*told, *acted, *self.measure(self.vitals())]
        trigger = self.handle("persist") or self.handle("misdiagnosis")
        kind = "symptom_report" if self.rng.random() < 0.5 else "follow_up"
        return self.emit(kind, facts, [trigger], "turning")

    def _ready_turning_point(self, item: StoryItem) -> bool:
        """A screen that emerges (`Monitored.emerges`) is past its threshold beyond any measurement's noise, and can be
        taken: the core symptoms are told once the episode has declared itself."""
        for lab in sorted(self.labs.emerging):
            spec = self.kb.labs[lab]
            assert spec.positive_at is not None and spec.kinetics is not None
            if lab not in self.labs.rise_from or not self.labs.can_measure(lab, self.day) or not self.labs.is_past(
                    lab, self.day, spec.positive_at / (1 - spec.kinetics.spread), 1.0):
                return False
        return True

    def _diagnostic_test(self, item: StoryItem) -> Event:
        """The work-up: the diagnostic labs, and three tests with what they show in this patient. The condition's
        first tests whose labs can all be measured today come first; where fewer can, a test naming a lab measured
        too recently to repeat states the result on record."""
        self.state.handles["tests"] = self.next_event_id()  # diagnostic labs are allowed from this visit on
        labs = self.measure([m.lab for m in self.condition.monitored if m.diagnostic])
        patient = self.refresh_patient()  # (a test that gives a drug is a dose of it: not where a rule bars it)
        every = [t for t in self.condition.diagnostic_tests
                 if t.gives is None or verdict(self.kb, t.gives, patient, "one_off").is_allowed]
        chosen = [t for t in every if self.can_state(t.finding, labs, t.drawn)][:DIAGNOSTIC_TESTS]
        chosen += [t for t in every if t not in chosen][:DIAGNOSTIC_TESTS - len(chosen)]
        tests: list[Fact] = []
        for test in sorted(chosen, key=every.index):
            finding, measured = self.state_finding(test.finding, f"test:{test.key}", test.drawn, labs, test.labs)
            labs += measured
            tests.append(TestFact(test=test.key, name=test.name, finding=finding))
        # (what a finding calls for is done that visit: a PHQ-9 item 9 that scores, the risk assessed and a safety plan)
        advice = [AdviceFact(advice=t.advice) for t in sorted(chosen, key=every.index) if t.advice is not None]
        return self.emit("diagnostic_test", tests + labs + advice, [self.handle("turning")], "tests")

    def _history_it_treats(self, drug: str) -> str | None:
        """A history on record (told) whose own treatments (`HistoryCondition.treatments`) include `drug`."""
        told = {f.history for e in self.events for f in e.facts if isinstance(f, HistoryFact)}
        return next((key for key in sorted(told & set(self.patient.conditions))
                     if drug in self.kb.history_conditions[key].treatments), None)

    def _diagnosis(self, item: StoryItem) -> Event:
        cond = self.condition
        facts: list[Fact] = [DiagnosisFact(name=cond.name, icd11=cond.icd11.code, status="confirmed")]
        measured = self.measure(self.monitored_now())
        if "misdiagnosis" in self.state.handles:
            mis = self.misdiagnosis
            treating = self.kb.treating_step(cond, mis)
            above = treating is not None and self._above(treating, mis.kept_for, measured)
            # (a raised reading the true condition has too, hypertension in HFpEF or diabetic kidney disease, is not
            # ruled out: the diagnosis is revised and the reading treated as part of the true condition)
            facts.append(DiagnosisFact(name=mis.name, icd11=mis.icd11, status="revised" if above else "ruled_out"))
            drug = mis.drug
            active = self.state.active.get(drug) if drug else None
            if active is not None and active.indication == f"misdiagnosis:{mis.icd11}":
                keeping = self.kb.keeping_step(cond, mis)
                protected = self._history_it_treats(drug)
                if above and keeping is not None:
                    # (the pressure it lowers is still high: kept for it, NICE NG136, as the drug of the step that
                    # treats it, held to that step's goal and titrated to it)
                    self.adopt(drug, keeping, self.next_event_id())
                    facts.append(self.continue_fact(drug, "still_needed"))
                elif protected is not None:
                    # (a beta-blocker started for a wrong essential tremor protects a long QT on record: never stopped
                    # with the diagnosis, the seed-79 read, P0007 E027; HRS/EHRA/APHRS 2013, ESC 2022)
                    active.indication = f"history:{protected}"
                    facts.append(self.continue_fact(drug, "treats_history"))
                else:
                    facts += self.stop(drug, "diagnosis_revised")
                    if above:
                        # (a drug the true condition's care leaves out, a sulfonylurea in kidney disease, is switched
                        # the same visit to the step that treats its lab: no weeks without treatment at an HbA1c
                        # of 8.0 %, the seed-47 read)
                        facts += self.start_steps([treating], lambda s: s.role, self.indication_of, [])[0]
        facts += measured
        if cond.diagnosis_advice is not None and self.gives(cond.diagnosis_advice, facts):
            facts.append(AdviceFact(advice=self.advice_now(cond.diagnosis_advice, facts)))
        triggers = [self.handle("tests"), self.handle("turning")]
        if self.story.first_line_at_diagnosis:
            self.state.handles["diagnosis"] = self.next_event_id()
            more, triggers = self._first_line_facts(triggers)
            facts += more
        event = self.emit("diagnosis", facts, triggers, "diagnosis")
        if self.story.first_line_at_diagnosis:
            self.state.handles["first_line"] = self.state.handles["last_change"] = event.event_id
        return event

    def _above(self, step: CareStep, lab: str | None, measured: list[Fact]) -> bool:
        """Whether `lab` (a misdiagnosis' `kept_for`) is, on its value today (else its latest), above the threshold of
        the step that treats it."""
        today = [f.value for f in measured if isinstance(f, LabFact) and f.lab == lab]
        seen = self.latest_value(lab) if lab else None
        value = today[0] if today else seen[1] if seen else None
        return value is not None and value > (step.indication.above or 0)

    def _first_line_facts(self, triggers: list[str | None]) -> tuple[list[Fact], list[str | None]]:
        """The first prescription: the first-line step and the steps the diagnosis itself calls for now."""
        steps = [s for s in self.condition.care_path if s.phase <= self.phase and s.role != "step_up"
                 and not s.indication.complication and not s.indication.lab]
        steps.sort(key=lambda s: s.role != "first_line")
        return self.start_steps(steps, lambda s: s.role, self.indication_of, triggers)

    def _start_first_line(self, item: StoryItem) -> Event | None:
        facts, triggers = self._first_line_facts([self.handle("diagnosis")])
        if not facts:
            return None
        event = self.emit("prescription", facts, triggers, "first_line")
        self.state.handles["last_change"] = event.event_id
        return event

    # --- phase 3: complication and adverse effect -----------------------------------------------

    def _complication_choice(self) -> Complication | None:
        """The year's complication: drawn once, among those the patient can be treated for."""
        if self.complication is None:
            options = list(self.condition.complications)
            self.rng.shuffle(options)
            self.complication = next((c for c in options if self._can_treat(c)), None)
        return self.complication

    def _condition_met(self, needed: Indication | None) -> bool:
        """Whether a result the event needs is on record (the latest value of the lab crosses the threshold)."""
        if needed is None or needed.lab is None:
            return True
        seen = self.latest_value(needed.lab)
        if seen is None:
            return False
        value = seen[1]
        return (needed.above is None or value > needed.above) and (needed.below is None or value < needed.below)

    def _can_treat(self, comp: Complication) -> bool:
        """Whether each treatment step has a drug running (not under suspicion of an adverse effect) or one the
        rules allow starting today."""
        patient = self.refresh_patient()
        for key in comp.treatment:
            running = [a.drug for a in self.state.active.values() if a.step == key and not a.suspected]
            if any(self.raise_held(drug) for drug in running):
                return False  # (a running drug a caution holds at its dose treats nothing new: a QTc past 470 ms)
            if not running and (self.base_missing(self.step(key))
                                or choose_for_step(self.kb, self.step(key), patient) is None):
                return False
        return True

    def _ready_complication(self, item: StoryItem) -> bool:
        comp = self._complication_choice()
        if comp is None or not self._can_treat(comp) or not self._condition_met(comp.only_if):
            return False
        if not self.can_state(comp.finding, [], comp.drawn):  # (a lab its finding names is measured there)
            return False
        if not self.ranges_hold(comp.labs):  # (a finding states its labs in the complication's range)
            return False
        if self.nuisance_pending():
            return False
        if comp.lab is None:
            return True
        if not self.labs.can_measure(comp.lab, self.day):
            return False
        if comp.progression is not None:  # (only where its visit shows a KDIGO progression, mostly shown by then)
            if self.in_acute_illness(comp.progression.acute_illness_days):
                return False  # (a fall in an acute illness is an acute kidney injury, never a progression)
            waited = self.day - self.labs.unchanged_since(comp.lab) >= self._response_days(comp.lab)
            return waited and self._progression_push(comp) is not None
        # a slow lab shows part of a change that began since it was last measured (a third of its response time
        # shows about half of it), which is how chronic complications are usually found
        return comp.acute or self.day - self.labs.unchanged_since(comp.lab) >= self._response_days(comp.lab) / 3

    def in_acute_illness(self, after_days: int) -> bool:
        """Whether an acute illness is running (its course or review still to come) or its last visit was at most
        `after_days` ago: a fall of a lab then belongs to the illness (the seed-89 read, P0009 E056: eGFR 73 -> 53 in
        12 days during a sinus infection named "progression of diabetic kidney disease" and losartan doubled)."""
        if any(t.kind in ("illness_treat", "illness_review") for t in self.state.tasks):
            return True
        prefixes = tuple(f"{key}." for key in self.kb.illnesses)
        days = [(date.fromisoformat(e.date) - YEAR_START_DATE).days for e in self.events
                if any(isinstance(f, SymptomFact) and f.symptom.startswith(prefixes)
                       or isinstance(f, TestFact) and f.test.startswith("illness:") for f in e.facts)]
        return bool(days) and self.day - days[-1] <= after_days

    def _complication(self, item: StoryItem) -> Event | None:
        comp = self._complication_choice()
        assert comp is not None
        reason = f"complication:{comp.key}"
        measured: list[Fact] = []
        if comp.lab is not None and comp.lab_delta is not None:
            since = self.labs.unchanged_since(comp.lab)
            delta = comp.lab_delta
            if comp.progression is not None:  # (from the last reading on, as much as shows the progression today)
                onset, delta = max(since, 0), self._progression_push(comp)
                assert delta is not None
            elif comp.acute:  # the patient comes in once it has taken hold: days, as long as the lab needs to show it
                response = self._response_days(comp.lab)
                onset = max(since, self.day - min(7, self.rng.randint((response + 1) // 2, response)))
            else:
                onset = self.rng.randint(max(since, 0), self.day - self._response_days(comp.lab) // 3)
            self.labs.add_offset("complication", comp.lab, onset, delta)
            measured = self.measure([comp.lab])
        told = [SymptomFact(symptom=comp.key, name=comp.name, lay=comp.lay)] if comp.felt else []
        facts: list[Fact] = [*told, DiagnosisFact(name=comp.name, icd11=comp.icd11, status="complication"), *measured]
        finding = None
        if comp.finding is not None:  # (what the examination shows, with the values measured here)
            finding, measured = self.state_finding(comp.finding, f"complication:{comp.key}", comp.drawn,
                                                   facts, comp.labs)
            facts += measured
        facts.insert(len(told) + 1, ComplicationFact(complication=comp.key, finding=finding))
        if comp.setting != "outpatient":
            facts.append(SettingFact(setting=comp.setting, reason=reason))
        facts += self.measure(comp.workup, urgent=True)  # (pre-syncope: an ECG that day, NICE CG109)
        if comp.advice is not None:  # (a professional driver is told more: `Advice.instead`)
            facts.append(AdviceFact(advice=self.advice_now(comp.advice, facts)))
        facts += self.fall_workup(comp.lab, comp.lab_delta)  # (anaemia on an anticoagulant: a bleed until shown not)
        self.patient.complications.add(comp.key)
        for drug in [d for d in self.state.active if not self.allowed_drug(d)]:
            if drug in self.state.active:  # (a partner may have gone with the drug before it)
                facts += self.stop(drug, reason)
        # Treatment starts at the visit that finds it: within every complication's window, and never left to
        # a later visit where an intervening adverse effect could leave nothing to give.
        reviewed = set(comp.after_discharge.dose_review) if comp.after_discharge is not None else set()
        kept = [a.drug for a in self.state.active.values() if a.step in reviewed and not a.suspected]
        # (an admitted patient's diuretic goes into a vein on the ward: the dose by mouth is set at the discharge
        # review, never raised here beside "I'm admitting you")
        facts += [self.continue_fact(drug, reason) for drug in kept]
        facts += self.treat([self.step(k) for k in comp.treatment if not (k in reviewed and kept)], reason,
                            comp.acute)
        if comp.progression is None:  # (a progression is a sustained decline: treatment slows it, never undoes it)
            self.labs.resolve("complication", self.day)
        event = self.emit("complication", facts, [self._complication_cause(comp), *self.trap_triggers(facts)],
                          "complication")
        event_id = event.event_id
        review_after = max(REVIEW_MIN_DAYS, self._response_days(comp.lab)) if comp.lab else REVIEW_MIN_DAYS * 2
        deadline = self.day + review_after + REVIEW_WINDOW_DAYS
        if comp.after_discharge is not None:  # (the first visit once home from the ward)
            review_after = comp.after_discharge.ward_days
            deadline = self.day + review_after
            self.leave_for_ward(deadline)
        self.add_task(Task("review", self.day + review_after, deadline=deadline, lab=comp.lab, trigger=event_id,
                           reason=reason))
        if comp.escalation and comp.escalate_after_days:
            self.add_task(Task("escalate", self.day + comp.escalate_after_days,
                               deadline=self.day + comp.escalate_after_days + 7, trigger=event_id, reason=reason))
        return event

    def _progression_push(self, comp: Complication) -> float | None:
        """The push on a progression's lab, from its last reading on, that puts today's true value past a KDIGO
        progression from the year's first value on record (`Progression.ceiling`), by a measurement's largest noise
        and a rounding step so that this reading and the next still read as one; None where no value is on record, no
        band is worse, or even its largest push (`Complication.lab_delta`) falls short."""
        rule, lab = comp.progression, comp.lab
        assert rule is not None and lab is not None and comp.lab_delta is not None
        spec = self.kb.labs[lab]
        assert spec.grades is not None and spec.kinetics is not None
        baseline = next((f.value for e in self.events for f in e.facts if isinstance(f, LabFact) and f.lab == lab),
                        None)
        ceiling = rule.ceiling(spec.grades, baseline) if baseline is not None else None
        if ceiling is None:
            return None
        bound = (ceiling - 10 ** -spec.decimals) / (1 + spec.kinetics.spread)
        start = max(self.labs.unchanged_since(lab), 0)
        pushes = [comp.lab_delta * i / PUSH_STEPS for i in range(PUSH_STEPS + 1)]
        return next((d for d in pushes if self.labs.pushed(lab, self.day, start, d) <= bound), None)

    def _complication_cause(self, comp: Complication) -> str | None:
        """The visit that showed what led to the complication: the result its physiology needs (free T4 still
        high before thyrotoxic AF), else the latest result of the main marker still short of its goal."""
        lab = comp.only_if.lab if comp.only_if is not None and comp.only_if.lab else None
        mon = self.condition.monitored[0]
        low, high = mon.treated
        for event in reversed(self.events):
            changed = any(isinstance(f, MedicationFact) and f.action in ("start", "increase", "administer")
                          for f in event.facts)
            if changed:
                continue  # a visit that changed treatment is the start of another story
            for fact in event.facts:
                if not isinstance(fact, LabFact):
                    continue
                if lab is not None and fact.lab == lab:
                    return event.event_id
                if lab is None and fact.lab == mon.lab and not low <= fact.value <= high:
                    return event.event_id
        return None

    def _history_drug(self) -> str | None:
        trap = self.traps.get("medication_history")
        return trap.option if trap else None

    def _adverse_options(self) -> list[tuple[str, AdverseEffect]]:
        options = []
        for drug, active in sorted(self.state.active.items()):
            if active.step is None or active.ends is not None or active.suspected:
                continue
            for effect in self.kb.drugs[drug].adverse_effects:
                low, high = effect.onset_days
                onset = self._harm_onset(effect)
                if not low <= (self.day if onset is None else onset) - active.started <= high:
                    continue
                if onset is not None and onset < self.labs.unchanged_since(effect.lab):
                    continue  # (its lab, measured since, would have shown nothing: told once it can show it)
                if effect.lab is not None and not self.labs.can_measure(effect.lab, self.day):
                    continue
                if not self._can_carry_on(drug, effect) or not self.keeps_a_restart(drug, effect):
                    continue
                options.append((drug, effect))
        return options

    def _harm_onset(self, effect: AdverseEffect) -> int | None:
        """The day a serious harm with a lab test to show it began, for one told today: as long ago as the lab takes to
        show it, so that its lab, taken today, does (a liver injury told with an ALT still normal, or one told before
        any ALT could show it, is neither acted on nor left unmeasured: the seed-61 read stopped paracetamol for
        "high liver enzymes" with none taken). None: any other harm, which begins the day it is told."""
        if not effect.is_serious or effect.lab is None or effect.lab_delta is None \
                or self.kb.labs[effect.lab].kind == "score":
            return None
        return self.day - HARM_SHOWN_RESPONSES * self._response_days(effect.lab)

    def _can_carry_on(self, drug: str, effect: AdverseEffect) -> bool:
        """Whether a physician would act on the harm: it is serious (the drug goes whatever follows), or a
        lower dose or a safe drug of another class answers it. Nobody stops the only safe drug left for a
        nuisance (leg cramps on raloxifene when every antiresorptive is barred), so a year is not given that."""
        if effect.is_serious or effect.keeps_drug:
            return True
        active = self.state.active[drug]
        if effect.is_dose_related and any(d < active.dose - 1e-9 for d in
                                          ladder_of(self.kb, drug, active.release, active.frequency).doses()):
            return True
        assert active.step is not None
        after = replace(self.refresh_patient(), taking=self.patient.taking - {drug},
                        intolerant=self.patient.intolerant | {drug},
                        toxicities=self.patient.toxicities | ({effect.bars_kind} if effect.bars_kind else set()))
        return choose_for_step(self.kb, self.step(active.step), after, exclude=self.look_alikes(drug)) is not None

    def nuisance_pending(self) -> bool:
        """A nuisance effect is being dealt with (suspected, or its switch not yet made): its replacement was judged
        safe and affordable when it began (`_can_carry_on`), so nothing new (a complication's drugs, taking the
        budget) comes before the switch that relies on it."""
        if self.adverse is None or self.adverse[1].is_serious:
            return False
        drug = self.adverse[0]
        active = self.state.active.get(drug)
        return (active is not None and active.suspected) or any(
            t.kind == "switch" and t.drug == drug for t in self.state.tasks)

    def _ready_adverse_onset(self, item: StoryItem) -> bool:
        return bool(self._adverse_options())

    def _adverse_onset(self, item: StoryItem) -> Event | None:
        options = self._adverse_options()
        if not options:
            return None
        drug, effect = self.rng.choice(options)
        active = self.state.active[drug]
        active.suspected = True
        self.adverse = (drug, effect)
        if effect.lab is not None and effect.lab_delta is not None:
            # (a serious harm is told once it has shown itself: a bleed once the haemoglobin has fallen)
            earliest = self._harm_onset(effect)
            if earliest is None:
                earliest = self.day - (self._response_days(effect.lab) if effect.is_serious else self.rng.randint(1, 5))
            onset = max(self.labs.unchanged_since(effect.lab), earliest)
            delta = self.labs.harm_delta(effect.lab, onset, effect.lab_delta)
            self.labs.add_offset("adverse", effect.lab, onset, delta)
        facts: list[Fact] = [SymptomFact(symptom=effect.key, name=effect.name, lay=effect.lay),
                             AdverseFact(drug=drug, effect=effect.key),
                             *self.measure(self.harm_workup_labs(effect.key), urgent=True),
                             *self.fall_workup(effect.lab, effect.lab_delta)]
        if effect.is_serious:  # acted on at this visit, not the next one (held until shown otherwise)
            if self._lab_shows_it(effect):
                facts += self.measure([effect.lab])  # (the count that shows it, taken the same day)
            facts += self.measure(effect.workup)  # (and what else it asks for: the INR with a liver injury)
            event = self._act_on_adverse(drug, effect, facts, "adverse_event", [self.handle(f"started:{drug}")],
                                         "adverse")
            self.state.handles["adverse_confirm"] = event.event_id
            self.state.done.add("adverse_confirm")
            return event
        return self.emit("adverse_event", facts, [self.handle(f"started:{drug}")], "adverse")

    def harm_workup_labs(self, effect: str) -> list[str]:
        """The labs a history of the patient's asks for the day this harm is told (`HistoryCondition.harm_workup`):
        a fit in long QT syndrome, or on a drug a long-QT rule names, may be torsades de pointes: an ECG and the
        electrolytes that day (the seed-37 read: a "fit" on bupropion put down to the drug with none)."""
        labs: list[str] = []
        for history in self.kb.history_conditions.values():
            named = {d for r in self.kb.contraindications if r.history == history.key
                     for d in self.kb.expand(r.drugs + r.classes)}
            for workup in history.harm_workup:
                taking_named = workup.named_drugs and any(self.doctor_knows(d) for d in named & set(self.state.active))
                if effect in workup.effects and (history.key in self.patient.conditions or taking_named):
                    labs += workup.labs
        return list(dict.fromkeys(labs))

    def fall_workup(self, lab: str | None, delta: float | None) -> list[Fact]:
        """What a fall of `lab` found today calls for beside its own care, for each drug the doctor knows is taken
        that declares it (`Drug.fall_workup`): anaemia or a bleed on an anticoagulant gets the INR (warfarin), the
        pulse and the blood pressure that day and the bleeding asked about (the seed-89 read: iron deficiency anaemia
        named on warfarin after haemoglobin 130 -> 113 g/L in 17 days, with oral iron alone)."""
        if lab is None or delta is None or delta >= 0:
            return []
        workups = [w for drug in sorted(self.state.active) if self.doctor_knows(drug)
                   for w in self.kb.drugs[drug].fall_workup if w.lab == lab]
        facts: list[Fact] = self.measure([lab for w in workups for lab in w.labs], urgent=True)
        return facts + [AdviceFact(advice=self.advice_now(advice, facts))
                        for advice in dict.fromkeys(w.advice for w in workups)]

    def _lab_shows_it(self, effect: AdverseEffect) -> bool:
        """Whether a lab test (not a questionnaire) that shows a serious harm can be taken the day it is told and is
        past its level (black stools on warfarin and a haemoglobin that has fallen). A serious harm is acted on
        that day either way (sleep attacks, angioedema, a bleed: the drug is not given another day on trust); a
        nuisance waits for its confirmation (`_adverse_confirm`)."""
        if effect.lab is None or self.kb.labs[effect.lab].kind == "score":
            return False
        offset = self.labs.offsets["adverse"]
        bound = self.labs.harm_bound(effect.lab, offset.delta)
        return self.labs.can_measure(effect.lab, self.day) and (
            bound is None or self.labs.is_past(effect.lab, self.day, bound, offset.delta))

    def _ready_adverse_confirm(self, item: StoryItem) -> bool:
        _, effect = self.adverse
        if effect.lab is None:
            return True
        offset = self.labs.offsets["adverse"]
        if not self.labs.can_measure(effect.lab, self.day) or self.day - offset.start < self._response_days(effect.lab):
            return False
        bound = self.labs.harm_bound(effect.lab, offset.delta)
        return bound is None or self.labs.is_past(effect.lab, self.day, bound, offset.delta)

    def _adverse_confirm(self, item: StoryItem) -> Event:
        drug, effect = self.adverse
        facts: list[Fact] = [AdverseFact(drug=drug, effect=effect.key)]
        if effect.lab is not None:
            facts += self.measure([effect.lab])
        else:
            facts.append(SymptomFact(symptom=effect.key, name=effect.name, lay=effect.lay))
        facts += self.measure(effect.workup, urgent=True)  # (judged with what it asks for: pre-syncope, an ECG)
        return self._act_on_adverse(drug, effect, facts, "lab_check" if effect.lab else "follow_up",
                                    [self.handle("adverse")], "adverse_confirm")

    def _act_on_adverse(self, drug: str, effect: AdverseEffect, facts: list[Fact], kind: str,
                        triggers: list[str | None], handle: str) -> Event:
        """Lower the dose of a dose-related harm, else stop the drug (its step's next drug at the next visit), with
        the advice the harm calls for; a harm managed by `measures` keeps the drug at its lowest dose instead."""
        facts = facts + ([AdviceFact(advice=self.advice_now(effect.advice, facts))] if effect.advice else [])
        active = self.state.active.get(drug)  # a complication may have stopped it already
        step = active.step if active else None
        reason = f"adverse_effect:{effect.key}"
        reduced = self.reduce(drug, reason) if active is not None and effect.is_dose_related else None
        self.labs.resolve("adverse", self.day)
        if reduced is not None:  # a dose-related harm: a lower dose, never raised past it again
            facts.append(reduced)
            return self.emit(kind if kind == "adverse_event" else "dose_change", facts, triggers, handle)
        if active is not None and effect.keeps_drug:
            # (levodopa's orthostatic hypotension at its lowest dose: the measures, not a stop; NICE NG71, and
            # stopping levodopa abruptly is itself a harm)
            active.suspected, active.ceiling = False, active.dose
            facts.append(self.continue_fact(drug, reason))
            return self.emit(kind, facts, triggers, handle)
        if active is not None:
            facts += self.stop(drug, reason)
        self.patient.intolerant.add(drug)
        if effect.bars_kind is not None:
            # From now on no drug that can do the same harm is started or raised; drugs of that kind already
            # running stay, under their monitoring (stopping an ACE inhibitor for an MRA's hyperkalaemia is not care).
            # An idiosyncratic reaction bars its own drug only (`AdverseEffect.idiosyncratic`).
            self.patient.toxicities.add(effect.bars_kind)
        event = self.emit(kind, facts, triggers, handle)
        if step is not None:  # at the next visit, before anything else (a deadline already passed makes it urgent)
            self.add_task(Task("switch", self.day + 1, deadline=self.day + 1, step=step, drug=drug,
                               trigger=event.event_id, reason=f"adverse_effect:{effect.key}"))
        return event

    # --- phase 4: strain and adherence ----------------------------------------------------------

    def _true_stressors(self) -> list[Stressor]:
        """The condition's strains that can be true of this patient: the job's traits, family they have ("my
        partner has dementia" only with a spouse) and have not ("my marriage ended" only without one, living alone),
        and a hospital stay on record ("after the last admission ...": `Stressor.after_admission`), and their age ("I
        had to retire early" before the pension age), and insurance where the text speaks of co-pays
        (`Stressor.insured`)."""
        admitted = any(isinstance(f, SettingFact) and f.setting == "admission" for e in self.events for f in e.facts)
        economic = self.traps.get("lifestyle_economic")
        insured = economic is None or self.kb.economic_profiles[economic.option].insured
        return [s for s in self.condition.stressors if set(s.requires) <= self.traits and (insured or not s.insured)
                and not set(s.excludes) & self.traits and (not s.family or self.relations & set(s.family))
                and not self.relations & set(s.without_family) and (self.lives_alone or not s.lives_alone)
                and (admitted or not s.after_admission) and s.age[0] <= self.patient.age <= s.age[1]]

    def _stressor(self, item: StoryItem) -> Event:
        # (with no strain true of the patient, any but one that speaks of an admission not yet had)
        stressor = self.rng.choice(self._true_stressors()
                                   or [s for s in self.condition.stressors if not s.after_admission])
        facts: list[Fact] = [StressorFact(stressor=stressor.key), *self.measure(self.vitals())]
        return self.emit("psychological", facts, [], "stressor")

    def _drug_effects(self, drug: str) -> list[StepEffect]:
        """What taking `drug` does to the labs: its care step's pull, and a range it holds a lab in (warfarin's
        INR, `hold_on_treatment`)."""
        return [e for e in (self.state.active[drug].effect, self.state.held.get(drug)) if e is not None]

    def _lapse_room(self, drug: str) -> int:
        """Days back a lapse of `drug` may reach: not before a lab it moves or holds was last measured (a value on
        record is never rewritten, and a reading taken inside the lapse would have shown it)."""
        labs = [lab for e in self._drug_effects(drug) for lab in (*e.moves, *e.targets)]
        return self.day - max((self.labs.unchanged_since(lab) for lab in labs), default=-1)

    def _lapse_options(self) -> list[tuple[str, str | None, int]]:
        """(drug, lab that can show the lapse or None, fewest days missed for it to show).

        A lab shows a lapse only if the drug's effect wanes and the lab responds within the days missed;
        when no drug and lab allow that, the patient still admits a short lapse that moves nothing measured.
        A lapse never reaches back past a reading of a lab the drug drives (`_lapse_room`).
        """
        with_lab, without = [], []
        for drug, active in sorted(self.state.active.items()):
            spec = self.kb.drugs[drug]
            if active.ends is not None or active.suspected or not is_daily(active.frequency) or spec.wanes_days is None:
                continue
            room = self._lapse_room(drug)
            if room >= MIN_MISSED_DAYS:
                without.append((drug, None, MIN_MISSED_DAYS))
            for lab in dict.fromkeys(lab for e in self._drug_effects(drug) for lab in (*e.moves, *e.targets)):
                needed = spec.wanes_days + self._response_days(lab)
                if needed <= MAX_MISSED_DAYS and room >= needed and self.labs.can_measure(lab, self.day) \
                        and self.allowed_now(lab):
                    with_lab.append((drug, lab, max(needed, 5)))
        return with_lab or without

    def _lapse(self, item: StoryItem) -> Event | None:
        options = self._lapse_options()
        if not options:
            return None
        drug, lab, needed = self.rng.choice(options)
        missed = self.rng.randint(needed, max(needed, min(MAX_MISSED_DAYS if lab else 10, self._lapse_room(drug))))
        wanes = self.kb.drugs[drug].wanes_days or 0
        if missed > wanes:
            for effect in self._drug_effects(drug):
                self.labs.lapse(effect, self.day - missed + wanes, self.day)
        self.lapse_lab = lab
        facts: list[Fact] = [AdherenceFact(drug=drug, missed_days=missed), *self.measure([lab] if lab else [])]
        facts += self.missed_dose_care(drug, facts)
        # (missed doses come up at a follow-up or as the medicines are gone through: one kind alone put the lapse's
        # "follow_up" at one session index in 30 % of patients, the skeleton measure)
        kind = "follow_up" if self.rng.random() < 0.5 else "medication_review"
        return self.emit(kind, facts, [self.handle("stressor")], "lapse")

    def missed_dose_care(self, drug: str, facts: list[Fact]) -> list[Fact]:
        """What missed doses of `drug` call for at the visit they are told, beyond getting back on track
        (`MissedDoseCare`): a history on record the drug treats (a beta-blocker in long QT syndrome: an ECG and the
        adherence talk), a complication found before (suicidal ideation: mood and safety asked again, the tablets
        accounted for, someone trusted holding the medicines; the seed-47 read: "restart as usual"), lithium in bipolar
        disorder (relapse asked about, restarted, a level booked inside its window: `MissedDoseCare.recheck`)."""
        on_record = self.conditions_on_record(facts)
        cares = [c for h in self.kb.history_conditions.values() if h.key in on_record for c in h.missed_doses]
        cares += [c for comp in self.condition.complications if comp.key in self.patient.complications
                  for c in comp.missed_doses]
        cares = [c for c in cares if not c.drugs or drug in self.kb.expand(c.drugs)]
        cares += self.kb.drugs[drug].missed_doses  # (the drug's own: levodopa, warfarin)
        measured = {f.lab for f in facts if isinstance(f, LabFact)}
        # (not a lab the missed drug itself moves before the lapse can show on it: a PHQ-9 after three days without
        # the antidepressant would read as their effect; the questions are asked all the same)
        labs = [lab for c in cares for lab in c.labs if lab not in measured and self.allowed_now(lab)
                and not self.reads_as_effect(lab, facts, [])]
        restart = [self.continue_fact(drug, "repeat")] if any(c.restart for c in cares) else []
        if any(c.recheck for c in cares):
            for monitored in (m for m in self.kb.drugs[drug].monitoring if m.recheck_days):
                # (inside the window whatever visits fall there: the seed-89 lithium level came 22 days on)
                due = self.day + max(1, min(self._response_days(monitored.lab), monitored.recheck_days - 1))
                self.add_task(Task("monitor", due, deadline=self.day + monitored.recheck_days, lab=monitored.lab,
                                   drug=drug, reason="recheck", books_visit=True))
        return [*self.measure(list(dict.fromkeys(labs))), *(AdviceFact(advice=c.advice) for c in cares), *restart]

    def _counselling(self, item: StoryItem) -> Event:
        event = self.events[[e.event_id for e in self.events].index(self.handle("lapse"))]
        drug = next(f.drug for f in event.facts if isinstance(f, AdherenceFact))
        # (advice this patient is given: the condition's counselling advice, else the last of its advice that fits)
        measured = self._body_on_record()
        options = [self.condition.counselling_advice] if self.condition.counselling_advice else []
        options += self.condition.lifestyle_advice[::-1]
        advice = next((self.advice_now(a, measured) for a in options if self.gives(a, measured)), None)
        facts: list[Fact] = [AdviceFact(advice=advice)] if advice else []
        facts += measured
        if drug in self.state.active and not self.state.active[drug].suspected:
            facts.append(self.continue_fact(drug, "adherence"))
        kind = "psychological" if self.rng.random() < 0.6 else "follow_up"
        counselled = self.emit(kind, facts or self.symptoms(1), [self.handle("lapse")], "counselling")
        if self.lapse_lab is not None:
            self.add_task(Task("recovery_check", self.day + self._response_days(self.lapse_lab), lab=self.lapse_lab,
                               trigger=counselled.event_id))
        return counselled

    def _ready_lapse(self, item: StoryItem) -> bool:
        return bool(self._lapse_options())

    # --- intercurrent illnesses --------------------------------------------------------------------

    def _ready_intercurrent(self, item: StoryItem) -> bool:
        """An illness is caught when a course could be given for it and every trap fact that rules out a preferred
        drug has been told (the doctor can only avoid what they know of)."""
        if any(t.kind in ("illness_treat", "illness_review") for t in self.state.tasks):
            return False  # (one acute illness at a time)
        alarm = self.kb.illnesses[item.arg].alarm
        if alarm is not None and self.alarm_on_record(alarm):
            return False  # (its "no alarm features" would be untrue: the guideline's path is an endoscopy)
        rx = choose_for_step(self.kb, self.kb.illnesses[item.arg].step, self.refresh_patient())
        return rx is not None and self.traps_told(rx.avoided)

    def alarm_on_record(self, alarm: AlarmFeatures) -> bool:
        """Whether an alarm feature is on record: a symptom of it told, the weight fallen by its share from the year's
        highest, or a lab's latest value below its reference range."""
        told = {f.symptom.rpartition(".")[2] for e in self.events for f in e.facts if isinstance(f, SymptomFact)}
        if told & set(alarm.symptoms):
            return True
        weights = [f.value for e in self.events for f in e.facts if isinstance(f, LabFact) and f.lab == "weight"]
        if alarm.weight_fall is not None and weights and weights[-1] <= max(weights) * (1 - alarm.weight_fall):
            return True
        return any((seen := self.latest_value(lab)) is not None and seen[1] < self.kb.labs[lab].reference[0]
                   for lab in alarm.labs_low)

    def _intercurrent(self, item: StoryItem) -> Event:
        """An acute illness begins: its symptoms, and the self-care to try first (the course comes at the next
        visit if it has not settled: `_task_illness_treat`)."""
        illness = self.kb.illnesses[item.arg]
        first = [s for s in illness.symptoms if not s.at_examination]  # (a red flag is examined, not self-cared)
        told = first[:self.rng.randint(1, len(first))]  # (the presenting one always)
        symptoms = [SymptomFact(symptom=f"{illness.key}.{s.key}", name=s.name, lay=s.lay) for s in told]
        # (brought in for it, or raised at a check-up: new symptoms come up both ways)
        kind = "symptom_report" if self.rng.random() < 0.6 else "follow_up"
        if self.is_red_flag_for(illness):
            # (examined and referred that day; no diary, no diagnosis of the illness, no course: NICE CG150 1.1.1)
            flag = illness.red_flag
            assert flag is not None
            facts: list[Fact] = [*symptoms, *self.measure(self.vitals()), AdviceFact(advice=flag.advice)]
            return self.emit(kind, facts, [], f"illness:{illness.key}")
        looked = self._first_look(illness)
        taken = {f.lab for f in looked if isinstance(f, LabFact)}
        facts = [*symptoms, *self.drug_red_flag_checks(told), *looked, AdviceFact(advice=illness.self_care),
                 *self.sick_day_advice(told), *self.measure([lab for lab in self.vitals() if lab not in taken])]
        event = self.emit(kind, facts, [], f"illness:{illness.key}")
        low, high = illness.self_care_days or SELF_CARE_DAYS
        self.add_task(Task("illness_treat", self.day + low, deadline=self.day + self.rng.randint(low, high),
                           reason=illness.key, trigger=event.event_id, yields=True))
        return event

    def _first_look(self, illness: Illness) -> list[Fact]:
        """The examination and observations the illness's first visit records before advising self-care
        (`Illness.first_look`: a productive cough's chest, temperature, pulse, breathing rate and SpO2; NICE NG138)."""
        look = illness.first_look
        if look is None:
            return []
        reason = f"illness:{illness.key}:first"
        finding, measured = self.state_finding(look.finding, reason, illness.drawn, [])
        return [TestFact(test=reason, name=look.test, finding=finding), *measured]

    def is_red_flag_for(self, illness: Illness) -> bool:
        """Whether the illness's first symptoms are a red flag in this patient today (`Illness.red_flag`): at or past
        its age, or with enough of its risk factors (the patient's conditions and the drugs they take, told or not: the
        simulator never lets a doctor harm a patient)."""
        flag = illness.red_flag
        return flag is not None and flag.holds(self.kb, self.patient.age, set(self.refresh_patient().conditions),
                                               set(self.state.active))

    # --- corrections and the year's review ------------------------------------------------------

    def _correction(self, item: StoryItem) -> Event | None:
        if item.arg == "medication":
            drug = self._history_drug()
            active = self.state.active.get(drug) if drug else None
            if active is None:
                return None
            # (the dose on the box is one the rules allow, as the first account was: a cap at a low eGFR binds the
            # dose the year then continues at, which is the doctor's)
            cap = verdict(self.kb, drug, self.refresh_patient()).max_daily_dose
            per_day = DOSES_PER_DAY.get(active.frequency, 1)
            doses = [d for d in ladder_of(self.kb, drug, active.release, active.frequency).doses()
                     if d != active.dose and (cap is None or d * per_day <= cap + 1e-9)]
            if not doses:
                return None
            dose = min(doses, key=lambda d: abs(d - active.dose))
            fact: Fact = MedicationFact(drug=drug, action="correct", dose=dose, unit=active.unit,
                                        frequency=active.frequency, previous_dose=active.dose,
                                        reason="patient_correction", indication=active.indication,
                                        release=active.release)  # type: ignore[arg-type]
            active.dose = dose
        else:
            trap = self.traps["allergy"]
            told = trap.fact
            assert isinstance(told, AllergyFact)
            # (by its words: the knowledge base's reactions are `ToldText`s, never equal to the `Text` told, and the
            # seed-61 read heard "it wasn't a blotchy rash ...; it was a blotchy rash ...")
            others = [r for r in self.kb.allergy_groups[told.group].reactions if r.en != told.reaction.en]
            if not others:
                return None
            fact = AllergyFact(group=told.group, agent=told.agent, reaction=self.rng.choice(others),
                               corrected_from=told.reaction)
        return self.emit("correction", [fact], [], f"correction:{item.arg}")

    def _final_review(self, item: StoryItem) -> Event:
        """The year's review: every long-term drug confirmed, the key labs that are due."""
        facts = self._regimen_facts() + self.measure(self.monitored_now()[:3]) + self.measure(self.vitals())
        return self.emit("medication_review", facts or self.symptoms(1), [self.handle("last_lab")])

    def _regimen_facts(self) -> list[Fact]:
        return [self.continue_fact(d, "stable") for d in self.known_drugs()]

    def known_drugs(self) -> list[str]:
        """Long-term drugs the doctor knows about: the patient's own one only once they have mentioned it."""
        return [d for d, a in sorted(self.state.active.items())
                if a.ends is None and not a.suspected and self.doctor_knows(d)]

    def doctor_knows(self, drug: str) -> bool:
        """Whether `drug` is being taken and the doctor knows it (a course, or one suspected of a side effect,
        included: its safety checks go on; the patient's own long-term drug only once they have mentioned it)."""
        told = drug != self._history_drug() or self.handle("trap:medication_history") is not None
        return drug in self.state.active and told

    # --- routine visits -------------------------------------------------------------------------

    def routine_visit(self) -> Event:
        """A visit between the year's events, of a kind drawn by weight (no lab check when no lab is due)."""
        diagnosed = self.handle("diagnosis") is not None
        weights = dict(ROUTINE_WEIGHTS_AFTER_DIAGNOSIS if diagnosed else ROUTINE_WEIGHTS_BEFORE_DIAGNOSIS)
        if not diagnosed and self.handle("symptoms") is None:
            weights.pop("symptom_report")
        if self.phase < 3:
            weights.pop("psychological", None)
        if not self._due_routine_labs():
            weights.pop("lab_check")
        if not self._regimen_facts():
            weights.pop("medication_review")
        if diagnosed and not self._still_unwell():
            weights.pop("symptom_report", None)  # symptoms settle once the disease is controlled
        kinds = sorted(weights)
        kind = self.rng.choices(kinds, [weights[k] * self.routine_bias[k] for k in kinds])[0]
        return ROUTINE_VISITS[kind](self)

    def _due_routine_labs(self) -> list[str]:
        labs = [lab for lab in self.monitored_now() if self.labs.can_measure(lab, self.day)
                and self.kb.labs[lab].kind != "vital"]
        return sorted(labs, key=lambda lab: self.labs.last_measured.get(lab, -1))[:3]

    def _routine_labs(self) -> Event:
        """A routine check of the monitored labs that are due (the longest unmeasured first)."""
        return self.emit("lab_check", self.measure(self._due_routine_labs()), [], "last_lab")

    def _routine_follow_up(self) -> Event:
        """A check-up on one long-term drug: continued, or, where the patient has nearly run out of it, a repeat
        prescription for what they asked for (the seed-53 and seed-61 reads: "I've nearly run out of the
        carbidopa/levodopa" said three times and never answered)."""
        chronic = self.known_drugs()
        facts: list[Fact] = []
        if chronic:
            drug = self.rng.choice(chronic)
            if self.rng.random() < REFILL_PROBABILITY:
                facts += [RefillFact(drug=drug), self.continue_fact(drug, "repeat")]
            else:
                facts.append(self.continue_fact(drug, "stable"))
        facts += self.measure(self.vitals())
        return self.emit("follow_up", facts or self.symptoms(1), [])

    def _routine_medication_review(self) -> Event:
        """The patient's list of medicines gone through (what they take now, dose by dose)."""
        facts = self._regimen_facts()
        if not facts:
            return self._routine_follow_up()
        return self.emit("medication_review", [*facts, *self.measure(self.vitals())], [])

    def _routine_advice(self) -> Event:
        """A piece of the condition's advice that fits the patient (each before any comes back): no stopping
        smoking for a non-smoker, no weight loss below the BMI it is for (`persona.advice_applies`)."""
        measured = self.measure(self.vitals())
        measured += self._body_on_record(measured)
        for _ in range(2):  # the rest of this cycle, then a fresh one
            if not self.advice_cycle:
                self.advice_cycle = list(self.condition.lifestyle_advice)
                self.rng.shuffle(self.advice_cycle)
            while self.advice_cycle:
                advice = self.advice_cycle.pop()
                if self.gives(advice, measured):
                    return self.emit("lifestyle", [AdviceFact(advice=self.advice_now(advice, measured)), *measured],
                                     [])
        return self.emit("follow_up", measured or self.symptoms(1), [])

    def known_bmi(self, facts: list[Fact] = ()) -> float | None:  # type: ignore[assignment]
        """The BMI on record: the latest BMI or weight measured (over the height squared), this visit's `facts`
        last; None before either is."""
        if self.body is None:
            return None
        value = None
        for fact in [f for event in self.events for f in event.facts] + list(facts):
            if isinstance(fact, LabFact) and fact.lab == "bmi":
                value = fact.value
            elif isinstance(fact, LabFact) and fact.lab == "weight":
                value = fact.value / self.body.height_m2
        return value

    def _body_on_record(self, facts: list[Fact] = ()) -> list[Fact]:  # type: ignore[assignment]
        """The patient weighed at this visit where advice that depends on their BMI may be given and none is on
        record yet."""
        needs = any(self.kb.advice[a].min_bmi is not None for a in self.condition.lifestyle_advice)
        if self.body is None or not needs or self.known_bmi(facts) is not None:
            return []
        return self.measure(["weight"])

    def gives(self, advice: str, facts: list[Fact] = ()) -> bool:  # type: ignore[assignment]
        """Whether the doctor gives this advice to this patient today (`persona.advice_applies`)."""
        if self.body is None:
            return True
        return advice_applies(self.kb, advice, self.body.smoker, self.known_bmi(facts))

    def _routine_symptoms(self) -> Event:
        specific = None if self.handle("turning") else False
        told = self.symptoms(1, specific)
        acted = self._act_on_red_flags(told)
        if acted is None:  # (a congestion sign nothing more can be done for today is not drawn: another is)
            told = [s for s in self.symptoms(len(self.condition.symptoms), specific)
                    if not self._red_flag_step(s)][:1]
            acted = []
        return self.emit("symptom_report", [*told, *acted, *self.measure(self.vitals())], [])

    def _red_flag_step(self, fact: Fact, turning: bool = False) -> str | None:
        """The care step a red-flag symptom calls for, once the misdiagnosis has given way (from the turning point
        on: congestion is treated whatever the work-up later names)."""
        symptom = next((s for s in self.condition.symptoms if isinstance(fact, SymptomFact) and s.key == fact.symptom),
                       None)
        known = turning or self.handle("turning") is not None or self.handle("diagnosis") is not None
        return symptom.red_flag_step if symptom is not None and known else None

    def _act_on_red_flags(self, told: list[Fact], turning: bool = False) -> list[Fact] | None:
        """What a red-flag symptom told from the turning point on calls for at this visit: its step's drug raised
        (at once, not waiting for its titration interval) or started. None: a red flag nothing can answer today."""
        facts: list[Fact] = []
        answered: set[str] = set()
        for fact in told:
            step = self._red_flag_step(fact, turning)
            if step is None or step in answered:  # (orthopnoea and 2 kg in a week: one start, not a start and a rise)
                continue
            answered.add(step)
            assert isinstance(fact, SymptomFact)
            # (before the diagnosis the drug is for what was told: the condition is not on record yet)
            indication = self.indication_of(self.step(step)) if self.handle("diagnosis") else f"symptom:{fact.symptom}"
            answer = self.treat([self.step(step)], f"symptom:{fact.symptom}", acute=True, indication=indication)
            if not any(isinstance(f, MedicationFact) and f.action in ("start", "increase") for f in answer):
                return None
            # (before the diagnosis the work-up is the follow-up: no review visit is booked, which would push the
            # diagnosis past its phase)
            facts += answer + self.congestion_examined(fact.symptom, [*told, *facts, *answer],
                                                       review=self.handle("diagnosis") is not None)
        return facts

    def congestion_examined(self, sign: str, facts: list[Fact], review: bool = True) -> list[Fact]:
        """The examination, weight and kidney labs that go with a congestion sign answered, and (`review`) the early
        review that weighs again (`WeightAlarm.examination`: NICE NG106 1.6, 1.10; ESC 2021 5.3). None where the
        condition has no weight alarm."""
        alarm = self.condition.weight_alarm
        if alarm is None:
            return []
        look = alarm.examination
        finding, measured = self.state_finding(look.finding, f"congestion:{sign}", {}, facts)
        done = {f.lab for f in [*facts, *measured] if isinstance(f, LabFact)}
        labs = self.measure([lab for lab in alarm.labs if lab not in done])
        # (the review weighs whatever the diuretic has had time to do: it is no reading of its effect, so unlinked)
        if review:
            self.add_task(Task("review", self.day + 1, deadline=self.day + alarm.review_days, lab=WEIGHT,
                               reason=f"symptom:{sign}", books_visit=True))
        return [TestFact(test=f"congestion:{sign}", name=look.test, finding=finding), *measured, *labs]

    def weight_alarm_answer(self, facts: list[Fact]) -> list[Fact]:
        """A visit's facts with a weight past the condition's alarm answered (`Condition.weight_alarm`: in heart failure
        more than 2 kg above a weight of the last week, once congestion is looked for): remarked as the congestion sign,
        answered as that sign told (the loop diuretic started or raised at once, in place of a "continue"), renal
        function and potassium measured, and a review booked within days (ESC 2021; NICE NG106). An admission is itself
        the answer, and a visit already changing the diuretic keeps its change."""
        alarm = self.condition.weight_alarm
        weight = next((f.value for f in facts if isinstance(f, LabFact) and f.lab == WEIGHT), None)
        if alarm is None or weight is None or any(isinstance(f, SettingFact) for f in facts) or any(
                isinstance(f, SymptomFact) and f.symptom == alarm.sign for f in facts):
            return facts  # (a sign told at this visit is answered by the visit that hears it)
        recent = [f.value for e in self.events if self.day - (date.fromisoformat(e.date) - YEAR_START_DATE).days
                  <= alarm.within_days for f in e.facts if isinstance(f, LabFact) and f.lab == WEIGHT]
        sign = next(s for s in self.condition.symptoms if s.key == alarm.sign)
        told = SymptomFact(symptom=sign.key, name=sign.name, lay=sign.lay)
        step = self._red_flag_step(told)
        if not recent or weight - min(recent) <= alarm.gain or step is None:
            return facts
        drugs = {c.drug for c in self.step(step).candidates}
        answer: list[Fact] = []
        if not any(isinstance(f, MedicationFact) and f.drug in drugs and f.action != "continue" for f in facts):
            indication = self.indication_of(self.step(step)) if self.handle("diagnosis") else f"symptom:{sign.key}"
            answer = self.treat([self.step(step)], f"symptom:{sign.key}", acute=True, indication=indication)
        answered = {f.drug for f in answer if isinstance(f, MedicationFact)}
        kept = [f for f in facts if not (isinstance(f, MedicationFact) and f.drug in answered)]
        return [told, *kept, *answer, *self.congestion_examined(sign.key, [*kept, *answer])]

    def _still_unwell(self) -> bool:
        """Whether the disease's main marker is still short of its treated range (symptoms then persist)."""
        mon = self.condition.monitored[0]
        seen = self.latest_value(mon.lab)
        if seen is None:
            return True
        low, high = mon.treated
        return not low <= seen[1] <= high

    def _routine_stressor(self) -> Event:
        """A strain the patient brings up: each of the condition's stressors before any comes back."""
        if not self.stressor_cycle:
            self.stressor_cycle = [s.key for s in self._true_stressors()]
            self.rng.shuffle(self.stressor_cycle)
        if not self.stressor_cycle:  # (no strain of the condition is true of this patient)
            return self._routine_follow_up()
        facts: list[Fact] = [StressorFact(stressor=self.stressor_cycle.pop()), *self.measure(self.vitals())]
        return self.emit("psychological", facts, [])


STORY_ACTIONS = {
    "first_symptoms": StoryActions._first_symptoms,
    "baseline_labs": StoryActions._baseline_labs,
    "misdiagnosis": StoryActions._misdiagnosis,
    "symptoms_persist": StoryActions._symptoms_persist,
    "disclose": StoryActions._disclose,
    "turning_point": StoryActions._turning_point,
    "diagnostic_test": StoryActions._diagnostic_test,
    "diagnosis": StoryActions._diagnosis,
    "start_first_line": StoryActions._start_first_line,
    "complication": StoryActions._complication,
    "adverse_onset": StoryActions._adverse_onset,
    "adverse_confirm": StoryActions._adverse_confirm,
    "stressor": StoryActions._stressor,
    "lapse": StoryActions._lapse,
    "counselling": StoryActions._counselling,
    "correction": StoryActions._correction,
    "final_review": StoryActions._final_review,
    "intercurrent": StoryActions._intercurrent,
}
"""Story action -> what the visit does (every action `story.plan_story` plans must be here)."""

READINESS = {
    "complication": StoryActions._ready_complication,
    "adverse_onset": StoryActions._ready_adverse_onset,
    "adverse_confirm": StoryActions._ready_adverse_confirm,
    "lapse": StoryActions._ready_lapse,
    "intercurrent": StoryActions._ready_intercurrent,
    "baseline_labs": StoryActions._ready_baseline_labs,
    "misdiagnosis": StoryActions._ready_misdiagnosis,
    "turning_point": StoryActions._ready_turning_point,
}
"""Story actions that can only happen once the year allows (a lab that can show it, an effect that has had time)."""

ROUTINE_VISITS = {
    "lab_check": StoryActions._routine_labs,
    "follow_up": StoryActions._routine_follow_up,
    "medication_review": StoryActions._routine_medication_review,
    "lifestyle": StoryActions._routine_advice,
    "symptom_report": StoryActions._routine_symptoms,
    "psychological": StoryActions._routine_stressor,
}
