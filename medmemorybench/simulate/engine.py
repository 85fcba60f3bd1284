"""The care-year engine: plays one patient's year, encounter by encounter, as a clinician would.

Encounter dates are drawn per phase; at each encounter the engine does one thing: a story item that is
due (`story.py`: the misdiagnosis, the diagnosis, the complication, the lapse...), a clinical task the
year has made due (`tasks.py`: a response check once a lab can show a change, a dose increase, a step-up,
monitoring, rescue therapy), or a routine visit (`visits.py`). Every prescription is checked that day
against every rule that binds the patient (`safety.py`), every lab follows its own kinetics
(`labs.py`), and causal links point only to earlier events whose effect the linked labs could show by
then. The engine never names a disease: everything specific comes from the knowledge base.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import date, timedelta
from functools import partial

from medmemorybench.errors import InputError
from medmemorybench.knowledge.base import KnowledgeBase
from medmemorybench.knowledge.models import (
    DOSES_PER_DAY,
    AdverseEffect,
    BriefIntervention,
    Complication,
    Condition,
    Lab,
    LabRange,
)
from medmemorybench.simulate.body import BodyLabModel
from medmemorybench.simulate.findings import DrawnValues, StatedFindings
from medmemorybench.simulate.formulas import RELATED, convert
from medmemorybench.simulate.labs import LabModel, StepEffect
from medmemorybench.simulate.models import (
    AdviceFact,
    AllergyFact,
    CautionFact,
    DiagnosisFact,
    Event,
    Fact,
    LabFact,
    MedicationFact,
    Trap,
)
from medmemorybench.simulate.mood import MoodCare
from medmemorybench.simulate.persona import Body
from medmemorybench.simulate.prescribing import ladder_of
from medmemorybench.simulate.safety import Patient, applicable_rules, is_long_term, verdict
from medmemorybench.simulate.story import ILLNESSES_PER_PHASE, Story, StoryItem, place_items, plan_story
from medmemorybench.simulate.tasks import ClinicalTasks, Task
from medmemorybench.simulate.visits import ROUTINE_BIAS, ROUTINE_VISITS, StoryActions

YEAR_START = date(2024, 1, 1)
DAYS_IN_YEAR = 366  # 2024 is a leap year
N_PHASES = 5
MIN_ENCOUNTERS, MAX_ENCOUNTERS = 10, 365
TASK_PROBABILITY = 0.4
"""Chance that a due clinical task, rather than a routine visit, fills an encounter with no story item due."""
CAUTION_TRAPS = ("allergy", "disease_history")
"""Trap categories whose telling puts a caution on a drug already taken (an ARB after ACE-inhibitor angioedema)."""


PHASE_SIZE_JITTER = 0.2
"""How far each boundary between two phases may move from an even split, as a share of a phase's size."""


def phase_sizes(n_encounters: int, rng: random.Random | None = None) -> list[int]:
    """Encounters per phase: an even split (the remainder to the earliest phases), each boundary moved by up
    to `PHASE_SIZE_JITTER` of a phase when `rng` is given, so the phase boundaries fall at different session
    indices for different patients (the first visits of a phase are alike across years)."""
    base, extra = divmod(n_encounters, N_PHASES)
    sizes = [base + (1 if phase < extra else 0) for phase in range(N_PHASES)]
    if rng is None or base < N_PHASES:
        return sizes
    spread = int(base * PHASE_SIZE_JITTER)
    for phase in range(N_PHASES - 1):  # each shift moves encounters between neighbours, keeping the total
        shift = rng.randint(-spread, spread)
        shift = max(-(sizes[phase] - 1), min(shift, sizes[phase + 1] - 1))
        sizes[phase] += shift
        sizes[phase + 1] -= shift
    return sizes


def phase_bounds(phase: int) -> tuple[int, int]:
    """First and last-plus-one day of a phase."""
    return DAYS_IN_YEAR * (phase - 1) // N_PHASES, DAYS_IN_YEAR * phase // N_PHASES


def choose_illnesses(kb: KnowledgeBase, patient: Patient, rng: random.Random) -> tuple[str, ...]:
    """The intercurrent illnesses this patient will catch, in the order of the phases they fall in: distinct, each
    one the guideline followed covers for the patient's sex and age."""
    eligible = [key for key, illness in sorted(kb.illnesses.items())
                if illness.sex in ("any", patient.sex) and illness.age[0] <= patient.age <= illness.age[1]]
    rng.shuffle(eligible)
    chosen = eligible[:sum(ILLNESSES_PER_PHASE)]
    # the short courses first: phase 1's episodes are then over within it (an infection's week, not a month's course)
    return tuple(sorted(chosen, key=lambda key: max(c.course_days or 0 for c in kb.illnesses[key].candidates) > 10))


@dataclass
class Active:
    """A drug being taken."""

    drug: str
    dose: float
    unit: str
    frequency: str
    step: str | None
    started: int
    last_change: int
    indication: str | None
    release: str = "immediate"
    ends: int | None = None
    """Last day of a course (the drug is gone after it)."""
    effect: StepEffect | None = None
    suspected: bool = False
    """An adverse effect is suspected: not continued or titrated until it is settled."""
    partner_of: str | None = None
    """Given alongside this drug (co-prescription)."""
    ceiling: float | None = None
    """Highest dose allowed after a dose-related adverse effect (it is not raised past it again)."""


@dataclass
class YearState:
    """What the year has established so far."""

    events: list[Event] = field(default_factory=list)
    handles: dict[str, str] = field(default_factory=dict)
    """Named events (for causal links): symptoms, misdiagnosis, diagnosis, complication, trap:<category>..."""
    active: dict[str, Active] = field(default_factory=dict)
    started_steps: dict[str, str] = field(default_factory=dict)
    weight_lost_days: int = 0
    """Days over which the weight a symptom tells of was lost (`Symptom.weight_lost`): regained over as many."""
    """Care-step key -> drug first given for it."""
    done: set[str] = field(default_factory=set)
    tasks: list[Task] = field(default_factory=list)
    held: dict[str, StepEffect] = field(default_factory=dict)
    """Drug -> its hold on a lab's range (warfarin on INR), ended when the drug stops."""
    control_ended: tuple[int, str | None] | None = None
    """(day, the event that ended it) when the last control drug left and no restart is booked yet
    (`Condition.restart`)."""
    mood_review_on: int | None = None
    """Day from which the review a positive mood screen booked takes a new score (at whatever visit comes then)."""
    mood_referred: set[str] = field(default_factory=set)
    """Referrals said in this episode of low mood (since the last negative screen)."""
    counts_low_since: dict[str, int] = field(default_factory=dict)
    """Harm of a drug red flag (`myelotoxic`) -> the day its low count waits for a repeat from (`follow_counts`)."""
    harm_since: dict[str, int] = field(default_factory=dict)
    """Lab with a `harm_care` -> the day a value past its harm level (or one still out of range after it) waits for a
    repeat from (`follow_harms`)."""
    targets_referred: set[str] = field(default_factory=set)
    """History targets (`<history>:<lab>`) the rules left no drug for: referred, said once."""
    brief_said: dict[str, int] = field(default_factory=dict)
    """Habit or lifestyle key -> the day its brief intervention was last said (`BriefIntervention`)."""
    partner_stops: list[Fact] = field(default_factory=list)
    """Stops of what was given alongside a course that has finished (`co_prescription_ends_with_drug`), said at the
    next visit."""


class YearBuilder(StoryActions, ClinicalTasks, MoodCare, StatedFindings):
    """Plays one patient's year; `build()` returns the events in date order."""

    def __init__(self, kb: KnowledgeBase, condition: Condition, persona_id: str, traps: list[Trap],
                 patient: Patient, rngs: dict[str, random.Random], n_encounters: int, body: Body | None = None,
                 traits: frozenset[str] = frozenset(), relations: frozenset[str] = frozenset(),
                 lives_alone: bool = False) -> None:
        if not MIN_ENCOUNTERS <= n_encounters <= MAX_ENCOUNTERS:
            raise InputError(
                f"--encounters: {n_encounters} is out of range; a year holds "
                f"{MIN_ENCOUNTERS} to {MAX_ENCOUNTERS} encounters (one per day at most)"
            )
        self.kb, self.condition, self.persona_id = kb, condition, persona_id
        self.traps = {trap.category: trap for trap in traps}
        self.patient = patient
        self.rng = rngs["events"]
        self.mood_rng = rngs["mood"]  # (what voiced strain does to the mood score: its own draws, `mood.py`)
        # (a history's baseline, `history_baselines_due`: its own draws, so every other reading of the year stays)
        self.history_rng = rngs["history_labs"]
        self.encounters = self._lay_out(rngs["dates"], n_encounters)
        self.story: Story = plan_story(condition, traps, rngs["story"], n_encounters,
                                       choose_illnesses(kb, patient, rngs["illnesses"]))
        self.traits = traits  # the occupation's (people.yaml): which strains of work and life are true of them
        self.relations = relations  # the family's (relatives.yaml): whose strains are true of them
        self.lives_alone = lives_alone  # nobody shares the home (`household.py`): "the flat is silent" is true
        self.body = body  # one height: weight and BMI read through it (`body.py`), and the advice it allows
        self.labs = (LabModel if body is None else partial(BodyLabModel, body=body))(
            kb.labs, condition, rngs["labs"], drift_days=rngs["labs"].randint(*phase_bounds(2)),
            baselines=self._baselines(kb, patient, rngs["labs"]), age=patient.age, female=patient.sex == "female")
        self.state = YearState()
        self.placed: list[tuple[int, StoryItem]] = []
        self.placed_phase = 0
        self.day, self.phase = 0, 1
        self.next_day: int | None = None
        fitting = ([m for m in condition.misdiagnoses if self.fits_own_values(m.findings)]
                   or [m for m in condition.misdiagnoses if self.fits_own_values(m.findings, followed=False)])
        self.misdiagnosis = self.rng.choice(fitting or condition.misdiagnoses)
        self.drawn = DrawnValues(rngs["findings"], patient.sex == "female")
        self.complication: Complication | None = None
        self.adverse: tuple[str, AdverseEffect] | None = None
        self.lapse_lab: str | None = None
        self.routine_bias = {kind: self.rng.uniform(*ROUTINE_BIAS) for kind in sorted(ROUTINE_VISITS)}
        self.advice_cycle: list[str] = []
        self.stressor_cycle: list[str] = []
        history = self.traps.get("medication_history")
        if history is not None and isinstance(history.fact, MedicationFact):
            fact = history.fact
            self.state.active[fact.drug] = Active(fact.drug, fact.dose, fact.unit, fact.frequency, None, 0, 0,
                                                  fact.indication, fact.release)
            self.hold_on_treatment(fact.drug, 0)
            for monitored in kb.drugs[fact.drug].monitoring:  # checked once the doctor knows of it
                self.add_task(Task("monitor", monitored.every_days // 2, lab=monitored.lab, drug=fact.drug))

    @staticmethod
    def _baselines(kb: KnowledgeBase, patient: Patient, rng: random.Random) -> dict[str, float]:
        """Values known before the year of labs the condition does not follow: the eGFR from age or a kidney
        history, and what each history condition sets (a QTc of 455-475 ms with long QT syndrome, an LVEF of
        25-40 % after heart failure). Creatinine follows the eGFR (`formulas.py`)."""
        baselines = {} if patient.egfr is None else {"egfr": patient.egfr}
        for key in sorted(set(patient.conditions) & set(kb.history_conditions)):
            for typical in kb.history_conditions[key].labs:
                if typical.lab not in RELATED:
                    baselines.setdefault(typical.lab, rng.uniform(*typical.range))
        return baselines

    # --- layout ---------------------------------------------------------------------------------

    @staticmethod
    def _lay_out(rng: random.Random, n_encounters: int) -> list[tuple[int, int]]:
        """(day of year, phase) of every encounter.

        The days are one sorted sample of the year, cut into phases by count: sampling each phase's days
        within its own bounds would leave a double gap at every boundary (two edge gaps), and the first
        visit of each phase would then find far more results due than any other visit.
        """
        days = sorted(rng.sample(range(DAYS_IN_YEAR), n_encounters))
        phases = [phase for phase, size in enumerate(phase_sizes(n_encounters, rng), start=1) for _ in range(size)]
        return list(zip(days, phases, strict=True))

    def build(self) -> list[Event]:
        """Run every encounter in date order."""
        for index, (day, phase) in enumerate(self.encounters):
            self.day, self.phase = day, phase
            self.next_day = self.encounters[index + 1][0] if index + 1 < len(self.encounters) else None
            self.left_in_year = len(self.encounters) - index
            self.left_in_phase = sum(1 for _, p in self.encounters[index:] if p == phase)
            self.position_in_phase = sum(1 for _, p in self.encounters[:index] if p == phase)
            self._expire_courses()
            self.queue_restart()
            if not self._run_encounter():
                self.routine_visit()
            self.queue_indicated_steps()
            self.queue_restart()
            self.queue_history_targets()
            self._book_deadlines()
        return self.state.events

    def _book_deadlines(self) -> None:
        """A task whose deadline must have a visit (`Task.books_visit`) brings the next encounter forward to that day
        when the next one falls after it (the year keeps its count, order and phases)."""
        deadlines = [t.deadline for t in self.state.tasks if t.books_visit and t.deadline is not None
                     and self.day < t.deadline < DAYS_IN_YEAR]
        index = next(i for i, (day, _) in enumerate(self.encounters) if day == self.day)
        if not deadlines or index + 1 >= len(self.encounters) or self.encounters[index + 1][0] <= min(deadlines):
            return
        self.encounters[index + 1] = (min(deadlines), self.encounters[index + 1][1])

    def leave_for_ward(self, home_on: int) -> None:
        """The patient is admitted until `home_on`: the clinic encounters booked while they are on the ward move to
        the first free days from then (each encounter keeps its phase; the year keeps its count and order)."""
        index = next(i for i, (day, _) in enumerate(self.encounters) if day == self.day)
        later = self.encounters[index + 1:]
        days = [day for day, _ in later]
        moved = [day for day in days if day < home_on]
        if not moved:
            return
        kept = set(days[len(moved):])
        free = (d for d in range(home_on, DAYS_IN_YEAR) if d not in kept)
        new_days = sorted([d for _, d in zip(moved, free, strict=False)] + sorted(kept))
        if len(new_days) < len(days):
            return  # (no room left in the year: the stay is short enough to leave the bookings)
        self.encounters[index + 1:] = [(day, phase) for day, (_, phase) in zip(new_days, later, strict=True)]

    def _run_encounter(self) -> bool:
        """Do the one thing this encounter is for; False when nothing but a routine visit fits."""
        urgent = [t for t in self.due_tasks() if t.deadline is not None and
                  (self.next_day is None or t.deadline < self.next_day)]
        # The phase's story items each own an encounter drawn at random (`story.place_items`); an item whose
        # encounter has come runs as soon as it can (its precedents done, the year ready for it). A required
        # item that could not happen in its phase spills into the next; an optional one lapses.
        if self.phase != self.placed_phase:
            self._place_phase_items()
        position = self.position_in_phase
        story_due = any(item.required and slot <= position and item.key not in self.state.done
                        and self._is_ready(item) for slot, item in self.placed)
        # (a task that booked this visit for its deadline goes first: another overdue task takes the next one)
        for task in sorted(urgent, key=lambda t: (not t.books_visit, t.deadline, t.due)):
            if task.yields and story_due:
                continue  # (an acute illness's next visit waits for the year's own story: a trap told in phase 1)
            if self.run_task(task):
                return True
        # (a required item whose encounter has come goes before an optional one that waited: an illness caught late
        # must not push a trap's disclosure out of its phase)
        for slot, item in sorted(self.placed, key=lambda pair: not pair[1].required):
            if slot > position and not item.promptly:
                continue
            if item.key not in self.state.done and self._is_ready(item) and self._run_story(item):
                return True
        due = self.due_tasks()
        if due and self.rng.random() < TASK_PROBABILITY:
            for task in sorted(due, key=lambda t: t.due):
                if self.run_task(task):
                    return True
        return False

    def _place_phase_items(self) -> None:
        # a required item that did not happen in its phase spills over, and so does a prompt one whose story has
        # begun (a side effect reported late in phase 3 is still dealt with in phase 4)
        carried = [i for i in self.story.items if i.key not in self.state.done and i.phase < self.phase
                   and (i.required or (i.promptly and all(a in self.state.done for a in i.after)))]
        current = [i for i in self.story.items if i.phase == self.phase]
        size = sum(1 for _, p in self.encounters if p == self.phase)
        self.placed = [(0, i) for i in carried] + place_items(current, size, self.rng)
        self.placed_phase = self.phase

    def _is_ready(self, item: StoryItem) -> bool:
        return all(a in self.state.done for a in item.after) and self.story_ready(item)

    def _run_story(self, item: StoryItem) -> bool:
        event = self.run_story_item(item)
        if event is None:
            return False
        self.state.done.add(item.key)
        return True

    # --- shared helpers -------------------------------------------------------------------------

    @property
    def events(self) -> list[Event]:
        return self.state.events

    def handle(self, name: str) -> str | None:
        return self.state.handles.get(name)

    def emit(self, kind: str, facts: list[Fact], triggered_by: list[str | None] = (),  # type: ignore[assignment]
             handle: str | None = None) -> Event:
        """Record an event of today (facts deduplicated, triggers earlier events only).

        A kidney result that changes what is allowed changes the regimen at the same visit: a drug now barred
        below that eGFR is stopped, one above its new dose cap is lowered (KDIGO 2024: review doses when eGFR
        falls); a habit on record that has become a danger is advised against (`habit_stop_due`); a weight past the
        condition's alarm is answered as its congestion sign (`weight_alarm_answer`)."""
        facts, self.state.partner_stops = self.state.partner_stops + facts, []
        facts = self.taper_steps_due(facts) + self.rechecks_due_now(facts, list(triggered_by))
        facts += self.count_rechecks_due(facts)
        facts = self.weight_alarm_answer(facts)
        facts += self.harm_care_due(facts)
        if any(isinstance(f, LabFact) and f.lab == "egfr" for f in facts):
            facts = self.adjust_for_kidneys(facts)
        facts = self.without_lone_augmenters(facts + self.habit_stop_due(facts) + self.brief_interventions_due(facts)
                                             + self.cautions_now_known(facts))
        facts += self.history_baselines_due(facts)
        facts += self.mood_screen_now(kind, facts, list(triggered_by))
        facts += self.declines_acted_on(facts)
        facts = self.stable_only_on_track(facts)  # (after the screen: today's PHQ-9 is a reading of its marker)
        facts = self.escalation_due(facts)
        event = Event(
            event_id=f"{self.persona_id}-E{len(self.events) + 1:03d}",
            index=len(self.events) + 1,
            date=(YEAR_START + timedelta(days=self.day)).isoformat(),
            phase=self.phase,
            kind=kind,  # type: ignore[arg-type]
            facts=[fact for i, fact in enumerate(facts) if fact not in facts[:i]],
            triggered_by=sorted({t for t in triggered_by if t}),
        )
        self.events.append(event)
        if handle:
            self.state.handles[handle] = event.event_id
        self.schedule_rechecks(event)
        self.follow_counts(event)
        self.follow_harms(event)
        self.titrate_to_effect(event)
        self.step_up_to_target(event)
        return event

    def stable_only_on_track(self, facts: list[Fact]) -> list[Fact]:
        """A drug continued "because everything is stable on it" only while every marker it is judged by (`judged_by`:
        those its care step moves, or the lab a drug with no step is kept for) is on track over its last two readings,
        this visit's included (`Monitored.is_on_track`), and the latest is not short of its goal (`stable_at_goal`: a
        reading nearer the goal than the one before is progress, not "working well"); otherwise it is kept
        `unchanged` (the seed-53 read: pramipexole "stable" while the motor score rose 15 -> 20 -> 23 -> 25; seed 61:
        amlodipine "doing its job" at a systolic of 154 mmHg; seed 79: metformin "doing its job" at an HbA1c of 7.5 %,
        bupropion kept at PHQ-9 scores of 8-10)."""
        monitored = {m.lab: m for m in self.condition.monitored}
        out: list[Fact] = []
        for fact in facts:
            if isinstance(fact, MedicationFact) and fact.action == "continue" and fact.reason == "stable" \
                    and self._past_history_target(fact, facts):
                fact = fact.model_copy(update={"reason": "unchanged"})
            if isinstance(fact, MedicationFact) and fact.action == "continue" and fact.reason == "stable":
                for lab, step in self.judged_by(fact.step, fact.indication).items():
                    readings = [f.value for e in self.events for f in e.facts
                                if isinstance(f, LabFact) and f.lab == lab]
                    readings += [f.value for f in facts if isinstance(f, LabFact) and f.lab == lab]
                    kinetics = self.kb.labs[lab].kinetics
                    if readings and (self.condition.is_short_of_goal(lab, readings[-1], step)
                                     or not monitored[lab].is_on_track(
                            readings[-1], readings[-2] if len(readings) > 1 else None,
                            kinetics.cv if kinetics else 0.0, self.condition.goal(lab, step),
                            self.kb.labs[lab].to_target is not None)):
                        fact = fact.model_copy(update={"reason": "unchanged"})
                        break
            out.append(fact)
        return out

    def _past_history_target(self, fact: MedicationFact, facts: list[Fact]) -> bool:
        """Whether a drug taken for a history's target (`HistoryCondition.treat_to`: blood pressure after a stroke)
        has its latest reading, this visit's included, still past the target: never "stable" then."""
        history = self.kb.history_conditions.get((fact.indication or "").removeprefix("history:"))
        for target in history.treat_to if history else []:
            readings = [f.value for f in [*(f for e in self.events for f in e.facts), *facts]
                        if isinstance(f, LabFact) and f.lab == target.lab]
            if readings and readings[-1] > target.above:
                return True
        return False

    def adjust_for_kidneys(self, facts: list[Fact]) -> list[Fact]:
        patient = self.refresh_patient()
        history = self.traps.get("medication_history")
        untold = history.option if history is not None and not self._on_record("medication_history", facts) else None
        for drug in sorted(self.state.active):
            if drug == untold:
                continue  # (a drug the patient has not told of is not the doctor's to lower: reviewed once told)
            result = verdict(self.kb, drug, patient)
            renal = [b.rule for b in result.blocks if b.rule.startswith("rule:")]
            active = self.state.active[drug]
            per_day = DOSES_PER_DAY.get(active.frequency, 1)
            over_cap = result.max_daily_dose is not None and active.dose * per_day > result.max_daily_dose + 1e-9
            if not renal and not over_cap:
                continue
            facts = [f for f in facts if not (isinstance(f, MedicationFact) and f.drug == drug
                                              and f.action == "continue")]
            rule = renal[0] if renal else next(f"rule:{r.key}" for r in applicable_rules(self.kb, patient, drug)
                                               if r.level == "max_dose")
            if renal:
                facts += self.stop(drug, rule)
                continue
            allowed = [d for d in ladder_of(self.kb, drug, active.release, active.frequency).doses()
                       if d * per_day <= result.max_daily_dose + 1e-9]
            if not allowed:
                facts += self.stop(drug, rule)
                continue
            previous, active.dose, active.last_change = active.dose, allowed[-1], self.day
            active.ceiling = allowed[-1]
            if active.effect is not None:
                self.labs.decrease(active.effect, self.day)
            facts.append(MedicationFact(drug=drug, action="decrease", dose=active.dose, unit=active.unit,
                                        frequency=active.frequency, previous_dose=previous, reason=rule,
                                        indication=active.indication, step=active.step,
                                        release=active.release))  # type: ignore[arg-type]
        return facts

    def _on_record(self, category: str, facts: list[Fact]) -> bool:
        """Whether the patient has told this trap fact, before or at this visit."""
        trap = self.traps.get(category)
        return trap is not None and (self.handle(f"trap:{category}") is not None or trap.fact in facts)

    def cautions_now_known(self, facts: list[Fact]) -> list[Fact]:
        """The cautions an allergy or past illness told (or an allergy's account corrected) at this visit puts on a
        drug already taken: said that visit with their safety net, as at a start (the seed-31 read: ACE-inhibitor
        angioedema told, then corrected to airway swelling, while on losartan, and never weighed)."""
        told = {c for c in CAUTION_TRAPS if c in self.traps and self.traps[c].fact in facts}
        told |= {"allergy"} if any(isinstance(f, AllergyFact) and f.corrected_from for f in facts) else set()
        if not told:
            return []
        started = {f.drug for f in facts if isinstance(f, MedicationFact) and f.action == "start"}
        patient = self.refresh_patient()
        return [CautionFact(drug=drug, rule=c.rule, trap=c.trap) for drug in sorted(self.state.active)
                if drug not in started and self.doctor_knows(drug)
                for c in verdict(self.kb, drug, patient).cautions if c.trap in told]

    def conditions_on_record(self, facts: list[Fact]) -> set[str]:
        """Condition and history-condition keys the doctor knows of at this visit: the condition once diagnosed, a
        past illness told, the illness a long-term drug told of is taken for."""
        conditions = {self.condition.key} if self.handle("diagnosis") or any(
            isinstance(f, DiagnosisFact) and f.status == "confirmed" for f in facts) else set()
        for category in ("disease_history", "medication_history"):
            told = self.traps.get(category)
            if told is not None and self._on_record(category, facts):
                conditions |= {told.option if category == "disease_history" else told.indication} - {None}
        return conditions

    def advice_now(self, advice: str, facts: list[Fact] = ()) -> str:  # type: ignore[assignment]
        """The advice said for `advice` at this visit: what is said in its place where a condition on record makes
        it unsafe or the job makes it too little (`Advice.instead`: no alcohol at all in cirrhosis, never the general
        limit; a sedating drug's warning to a driver: not at work either until they know how it affects them)."""
        instead = self.kb.advice[advice].instead
        if instead is not None and (self.conditions_on_record(facts) & set(instead.conditions)
                                    or self.traits & set(instead.traits)):
            return instead.advice
        return advice

    def history_baselines_due(self, facts: list[Fact]) -> list[Fact]:
        """The labs a history asks for the first visit the doctor knows of it (`HistoryCondition.baseline`: an ECG
        when a conduction disorder or long QT syndrome is told; ESC 2021 pacing, ESC 2022 ventricular arrhythmias)."""
        labs: list[str] = []
        for key in sorted(self.conditions_on_record(facts)):
            history = self.kb.history_conditions.get(key)
            if history is not None and history.baseline is not None and f"baseline:{key}" not in self.state.done:
                self.state.done.add(f"baseline:{key}")
                labs += [lab for lab in history.baseline.labs
                         if not any(isinstance(f, LabFact) and f.lab == lab for f in facts)]
        return self.measure(labs, urgent=True, rng=self.history_rng) if labs else []

    def habit_stop_due(self, facts: list[Fact]) -> list[Fact]:
        """The advice to give up a habit on record at the first visit where a risk it meets is on record too (diet.yaml
        `stop`): a drug the doctor knows is taken (started today, or the long-term drug once told), an eGFR under the
        threshold, or a condition told or diagnosed (a potassium salt substitute beside losartan, the seed-29 read);
        said again the day a further drug of that risk starts."""
        trap = self.traps.get("diet_preference")
        stop = self.kb.habits[trap.option].stop if trap is not None else None
        if stop is None or not self._on_record("diet_preference", facts):
            return []
        history = self.traps.get("medication_history")
        known = set(self.state.active) - ({history.option} if history and not self._on_record(
            "medication_history", facts) else set())
        egfr = next((f.value for f in facts if isinstance(f, LabFact) and f.lab == "egfr"), None)
        if egfr is None and (latest := self.latest_value("egfr")) is not None:
            egfr = latest[1]
        conditions = self.conditions_on_record(facts)
        drugs = {f"habit_stop:{drug}" for drug in known & self.kb.expand(stop.taking)}
        at_risk = bool(drugs) or bool(conditions & set(stop.conditions)) or (
            stop.egfr_below is not None and egfr is not None and egfr < stop.egfr_below)
        if not at_risk or ("habit_stop" in self.state.done and drugs <= self.state.done):
            return []
        self.state.done |= {"habit_stop", *drugs}
        return [AdviceFact(advice=stop.advice)]

    def brief_interventions_due(self, facts: list[Fact]) -> list[Fact]:
        """A brief intervention on a habit that harms whatever drugs are taken (`BriefIntervention`): smoking from the
        first visit, drinking above the low-risk limit from the visit it is told; said again at the first visit at
        least `review_after_days` after it was last said, never at every visit (NICE NG209, PH24)."""
        due: list[tuple[str, BriefIntervention]] = []
        if self.body is not None and self.body.smoker:
            due += [(ls.key, ls.brief_intervention) for ls in self.kb.people.lifestyles
                    if ls.smoker and ls.brief_intervention is not None]
        trap = self.traps.get("diet_preference")
        habit = self.kb.habits.get(trap.option) if trap is not None else None
        if habit is not None and habit.brief_intervention is not None and self._on_record("diet_preference", facts):
            due.append((habit.key, habit.brief_intervention))
        out: list[Fact] = []
        for key, brief in due:
            last = self.state.brief_said.get(key)
            if last is None or self.day - last >= brief.review_after_days:
                self.state.brief_said[key] = self.day
                out.append(AdviceFact(advice=self.advice_now(brief.advice, facts)))
        return out

    def fits_own_values(self, ranges: list[LabRange], followed: bool = True) -> bool:
        """Whether the values the patient already has (a BMI from their body, a lab the condition follows) lie in the
        ranges a wrong diagnosis' findings need (an unfollowed one, one measurement's noise inside): no "obesity" at a
        BMI of 28.6 (WHO: obesity from 30; the seed-53 read), nor in polycystic ovary syndrome's course of BMI 26-32.
        `followed`: False
        leaves out the labs the condition follows, which move toward their range over the weeks before the visit (a
        rising blood pressure), for a condition none of whose wrong diagnoses fits at the start. A followed lab is
        read at its true value today, not where it is heading: the reading the wrong diagnosis rests on is taken
        today (the seed-61 note: "essential hypertension" at a systolic of 128)."""
        for lab_range in ranges:
            own = {*(self.labs.courses if followed else ()), *self.labs.baselines, self.labs.derived,
                   getattr(self.labs, "body_derived", "")}
            if lab_range.lab not in own:
                continue  # (no value of its own yet: drawn in the range at the visit)
            followed_lab = lab_range.lab in self.labs.courses
            value = (self.labs.projected if followed_lab else self.labs.target)(lab_range.lab, self.day)
            kinetics = self.kb.labs[lab_range.lab].kinetics
            # (a followed lab's noise is the condition's design, its ranges drawn for it: a blood pressure's spread
            # would close a 142-165 range)
            room = kinetics.spread * abs(value) if kinetics is not None and not followed_lab else 0.0
            low, high = lab_range.range
            if not low + room <= value <= high - room:
                return False
        return True

    def lab_spec(self, key: str) -> Lab:
        return self.kb.labs[key]

    def measure(self, labs: list[str], urgent: bool = False, rng: random.Random | None = None,
                within: dict[str, tuple[float, float]] | None = None) -> list[Fact]:
        """Measure the labs whose measuring interval has passed (a result still fresh stands for itself; `urgent`:
        any not yet measured today, as a red flag asks; `rng`: the noise's draws, when not the labs' own; `within`:
        bands readings are drawn in, a lab's true value inside its band: a wrong diagnosis' findings).

        Creatinine and eGFR drawn together are one sample: the eGFR reported is the equation applied to the
        creatinine measured (or the reverse where the condition follows creatinine)."""
        values: dict[str, float] = {}
        wanted = list(dict.fromkeys(labs))
        # (from the turning point to the diagnosis, a lab whose band the condition's name states is drawn in it:
        # "moderately active" colitis is diagnosed on a Mayo score of 6-10, `Monitored.named`)
        naming = self.handle("turning") is not None and "diagnosis" not in self.state.done
        named = {m.lab: m.named for m in self.condition.monitored if naming and m.named is not None} | (within or {})
        # (a total before its parts: a part squared with its total yields to it, `LabModel._in_sample`)
        for lab in sorted(wanted, key=lambda key: self.kb.labs[key].part_of is not None):
            if self.labs.can_measure(lab, self.day) or (urgent and self.labs.last_measured.get(lab) != self.day):
                values[lab] = self.labs.measure(lab, self.day, rng, named.get(lab))
        values = {lab: values[lab] for lab in wanted if lab in values}
        primary, derived = self.labs.primary, self.labs.derived
        if primary in values and derived in values:
            spec = self.kb.labs[derived]
            value = convert(primary, values[primary], self.patient.age, self.patient.sex == "female")
            values[derived] = round(value, spec.decimals) if spec.decimals else float(round(value))
        if "egfr" in values:
            self.patient.egfr = values["egfr"]
        self.patient.labs |= {lab: value for lab, value in values.items() if lab in self.kb.rule_labs}
        conditions = self.conditions_on_record([])
        return [LabFact(lab=lab, value=value, unit=self.kb.labs[lab].unit, target=(target := self.target_range(lab)),
                        goal=self.kb.labs[lab].goal_for(conditions) if target is None else None)
                for lab, value in values.items()]

    def target_range(self, lab: str) -> tuple[float, float] | None:
        """The range a drug the doctor knows the patient takes holds `lab` in (warfarin: INR 2-3), if any: what a
        result is judged against instead of the reference range."""
        return next((m.on_treatment for drug in sorted(self.state.active) if self.doctor_knows(drug)
                     for m in self.kb.drugs[drug].monitoring if m.lab == lab and m.on_treatment), None)

    def vitals(self, count: int = 1) -> list[str]:
        """Vitals to take at a visit: the condition's own first, then the routine ones."""
        monitored = [m.lab for m in self.condition.monitored if self.kb.labs[m.lab].kind == "vital"]
        routine = [key for key, lab in self.kb.labs.items() if lab.routine]
        pool = [lab for lab in dict.fromkeys(monitored + routine) if self.allowed_now(lab)]
        return self.rng.sample(pool, min(count, len(pool)))

    def allowed_now(self, lab: str) -> bool:
        """A diagnostic lab is not measured before the work-up that looks for the true diagnosis; a screen that emerges
        (`Monitored.emerges`) is measured from the turning point, where the core symptoms are told (its misdiagnosis
        screen, below the threshold, is the misdiagnosis visit's own)."""
        monitored = next((m for m in self.condition.monitored if m.lab == lab), None)
        if monitored is None or not monitored.diagnostic:
            return True
        if "diagnostic_test" in self.state.done or self.handle("tests") is not None:
            return True
        return monitored.emerges and self.handle("turning") is not None

    def taking(self) -> set[str]:
        return set(self.state.active)

    def refresh_patient(self) -> Patient:
        """The patient as the prescriber knows them today (what they take, and what it costs them a month; a
        maintenance drug paused for an induction course keeps its share of the budget for when it resumes)."""
        self.patient.taking = self.taking()
        resuming = [t.drug for t in self.state.tasks if t.kind == "resume" and t.drug]
        long_term = [d for d, a in self.state.active.items() if a.ends is None and is_long_term(self.kb, d)]
        self.patient.spending_usd = sum(self.kb.drugs[d].monthly_cost_usd for d in long_term + resuming)
        return self.patient

    def _expire_courses(self) -> None:
        """A finished course leaves the regimen (its effect on labs was given its end when it started), and what was
        given alongside it stops with it at this visit (`co_prescription_ends_with_drug`: calcium and vitamin D for as
        long as the steroid is taken, ACR 2022; the seed-61 read had them "stable" for months after the course)."""
        for key, active in list(self.state.active.items()):
            if active.ends is not None and self.day > active.ends:
                del self.state.active[key]
                self.note_control_end(active.step, active.ends, self.handle(f"started:{key}"))
                for partner, other in list(self.state.active.items()):
                    if other.partner_of == key and partner in self.state.active:
                        self.state.partner_stops += self.stop(partner, f"with:{key}")
