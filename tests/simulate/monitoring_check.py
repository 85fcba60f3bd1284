"""Independent readings of a year's monitoring and red flags: what a physician checks when a drug needs its level or
an ECG, and what a symptom or harm that cannot wait gets.

Each function returns violation messages (empty: the year passes) and reads only the record and the knowledge
base, never the engine's state. The rules (names as `docs/simulation.md` lists them):

- `monitoring_recheck`: a drug whose monitoring has `recheck_days` (warfarin's INR, lithium's level) has its
  lab measured within that many days (or at the first visit after them, plus the lab's shortest measuring
  interval when a result was just taken) after anything that moves it: its start or a dose change, an
  interacting drug started beside it, or a result outside its target range.
- `monitoring_due`: while such a drug is taken and known, its lab is never left unmeasured for longer than the
  label's interval (spread to at most three months) plus a booking margin.
- `therapeutic_range_used`: a result of a lab a drug holds in a range of its own (INR 2-3 on warfarin) is judged
  against that range whenever the drug is taken and known.
- `start_dose_rule`: a new start of a drug a start-dose rule binds on the latest eGFR on record (warfarin at 80 or
  over; venlafaxine below an eGFR of 30, the seed-53 read: 75 mg at eGFR 19) is at or below it.
- `qt_rule`: a drug started under a caution that asks for checks (an ECG for a QT-prolonging drug in long QT
  syndrome, or clarithromycin in heart failure) has them on the day it starts, and again within `recheck_days`
  (or at the first visit after them) where a visit falls while it is still taken (a 5-day course may end first),
  and again after each dose increase;
  and no QTc on record passes 500 ms (the level such a drug is stopped at, which the year never needs). A patient
  rule's caution that asks for checks is held to the same (sodium with a diuretic, an SSRI or tramadol at 65 or over,
  Beers 2023: the seed-19, -23 and -29 reads found none measured all year on lithium with furosemide).
- `red_flag_acted_on`: a congestion sign told from the turning point on (orthopnoea, 2 kg in a week in heart
  failure), before the diagnosis too, has its step's drug raised or started at that visit.
- `workup_promptly`: once the turning point is told, the work-up, the diagnosis on its results and the first
  treatment each come within `WORKUP_ENCOUNTERS` encounters of what they wait for (the seed-19 read: orthopnoea on
  29 Feb, the echo on 27 Apr, furosemide on 9 Jun).
- `rechecked_after_stop`: a disease-control drug (a first-line or step-up drug of the condition) stopped for a harm
  with nothing of its step to replace it has the disease's marker checked within `RECHECK_AFTER_STOP_DAYS` (or
  two weeks after the lab can be repeated), so
  that a disease still active is taken to the next step (colitis left untreated for months after sulfasalazine
  stopped, the seed-17 and seed-19 reads).
- `red_flag_examined`: an acute illness's sign marked `at_examination` (fever with pain on breathing in) is never told
  at a visit that sends the patient home with self-care: it is told at the visit that examines and treats (the
  seed-19 and seed-23 reads: pneumonia's fever and pleuritic pain got cough advice).
- `advice_given`: a complication and a diagnosis that call for advice get it at their visit (suicidal thoughts: a
  safety plan and the crisis team that day; Parkinson's: driving and the licensing authority).
- `steroid_taper`: a systemic steroid course longer than three weeks is stepped down, never stopped from its full
  dose: the dose on record falls at least once a fortnight after the first week, and reaches its last step before
  the course ends, where a visit falls then (BNF; BSG 2019: prednisolone 40 mg tapered over 8 weeks).
- `renal_dose_not_bar`: a dose cap (amoxicillin at most 1 g a day below an eGFR of 30) is never the reason a drug is
  passed over while one of its formulations the patient can take fits under it (250 mg every 12 hours).
- `serious_harm_at_once`: a serious harm (sleep attacks, angioedema, a seizure, a bleed on warfarin, a low white
  count) is acted on at the visit it is told (the dose lowered or the drug stopped), with the advice it calls for
  (no driving with sleep attacks). Extended after the seed-61 read: a harm with a lab test that shows it (a liver
  injury, ALT) is told only once that lab can show it, and has it in that visit, with each lab of its `workup` (the
  INR) that day or still fresh.
- `raise_held_past_limit`: a drug a caution of the patient's histories names with `no_increase_above` is never raised
  while the latest result of its lab on record, that visit's included, is past it (the seed-37 read: aripiprazole
  doubled in congenital long QT a fortnight after a QTc of 486 ms).
- `history_baseline`: a history that asks for a baseline (`HistoryCondition.baseline`: an ECG, the PR interval, in
  symptomatic bradycardia or AV block; the QTc in long QT syndrome) has it at the first visit it is on record, told
  or as what a long-term drug is for, or earlier that year (ESC 2021 pacing; ESC 2022 ventricular arrhythmias; the
  seed-53 read: AV block told in January and no ECG all year, P0004; long QT told in January, no ECG before July,
  P0007).
- `qt_start_electrolytes`: a QT-prolonging drug (the knowledge base's `qt_prolonging` harm, or a drug a rule of long
  QT syndrome names) started in a patient with congenital long QT syndrome has serum potassium and magnesium
  measured that day or within their shortest measuring interval before it, neither below its reference range
  (AHA/ACCF 2010 torsade de pointes statement: hypokalaemia and hypomagnesaemia add to the risk and are corrected
  first; CredibleMeds; the seed-61 read, fluoxetine started in long QT with CKD 4 and no electrolyte all year,
  P0015 E027).
- `augments_a_base`: a drug of an augmenting step (`CareStep.adds_to`) is taken only while a drug of the step it adds
  to is, or at the visit that stops that drug for a harm and the next one (its switch); with none left it is stopped
  (the seed-37 read: aripiprazole "augmentation" with no antidepressant left).
"""

from __future__ import annotations

from datetime import date, timedelta

from medmemorybench.knowledge.base import KnowledgeBase
from medmemorybench.knowledge.models import DOSES_PER_DAY
from medmemorybench.knowledge.validate import TAPER_AFTER_DAYS
from medmemorybench.simulate.models import (
    AdverseFact,
    AdviceFact,
    AvoidedFact,
    CareYear,
    CautionFact,
    ComplicationFact,
    Event,
    HistoryFact,
    LabFact,
    MedicationFact,
    SymptomFact,
)
from tests.simulate.clinical import days_between, fail, latest_egfr, patient_rule_applies

WORKUP_ENCOUNTERS = 4
"""A prompt story item runs at the first encounter it can; an acute illness's visit or a due lab may take one or two
first."""
RECHECK_AFTER_STOP_DAYS = 30
"""A response check is booked for the next visit; the marker may not be measurable again for a couple of weeks."""
MONITORING_CEILING_DAYS = 90
"""Routine monitoring settles at about every three months (the engine's own ceiling, restated as the rule)."""
BOOKING_MARGIN_DAYS = 45
"""A routine check is booked within two weeks of falling due and waits for a visit that has room for it."""
CHANGES = ("start", "increase", "decrease")
QTC_START_ELECTROLYTES = ("potassium", "magnesium")
"""Measured, and not low, before a QT-prolonging drug starts in long QT (AHA/ACCF 2010; CredibleMeds)."""
LONG_QT = "long_qt_syndrome"
QTC_STOP_MS = 500
"""The QTc a QT-prolonging drug is stopped at (2017 AHA/ACC/HRS); the simulator has no such action, so none may
be reached."""


def _history_drug(year: CareYear) -> str | None:
    return next((t.option for t in year.persona.traps if t.category == "medication_history"), None)


def _disclosed_on(year: CareYear) -> str | None:
    """The date the patient told the doctor about their own long-term drug."""
    drug = _history_drug(year)
    for event in year.events:
        if any(isinstance(f, MedicationFact) and f.drug == drug for f in event.facts):
            return event.date
    return None


def _day_after(day: str, n: int) -> str:
    return (date.fromisoformat(day) + timedelta(days=n)).isoformat()


def taking_spans(year: CareYear) -> dict[str, list[tuple[str, str | None]]]:
    """drug -> [(first day the doctor knows it is taken, last day or None: still taken at the year's end)]."""
    spans: dict[str, list[tuple[str, str | None]]] = {}
    history, disclosed = _history_drug(year), _disclosed_on(year)
    if history is not None and disclosed is not None:
        spans[history] = [(disclosed, None)]
    for event in year.events:
        for fact in event.facts:
            if not isinstance(fact, MedicationFact) or fact.drug == history and fact.reason == "long_term":
                continue
            open_spans = spans.setdefault(fact.drug, [])
            running = bool(open_spans) and open_spans[-1][1] is None
            if fact.action == "start" and not running:
                open_spans.append((event.date, _day_after(event.date, fact.course_days) if fact.course_days else None))
            elif fact.action == "stop" and running:
                open_spans[-1] = (open_spans[-1][0], event.date)
    return spans


def _taken_on(spans: dict[str, list[tuple[str, str | None]]], drug: str, day: str) -> bool:
    return any(start <= day and (end is None or day < end) for start, end in spans.get(drug, []))


def _measured(year: CareYear, lab: str) -> list[tuple[Event, LabFact]]:
    return [(e, f) for e in year.events for f in e.facts if isinstance(f, LabFact) and f.lab == lab]


def _rechecked(kb: KnowledgeBase) -> dict[str, list[tuple[str, int, tuple[float, float] | None]]]:
    return {key: [(m.lab, m.recheck_days, m.on_treatment) for m in drug.monitoring if m.recheck_days]
            for key, drug in kb.drugs.items() if any(m.recheck_days for m in drug.monitoring)}


def _check_by(year: CareYear, day: str, within: int, interval: int) -> str | None:
    """The last day a check due within `within` days of `day` can fall on: the first visit on or after the
    window's end (no blood is taken between visits), plus the lab's shortest measuring interval (a result just
    taken stands until then). None: the year ends first."""
    end = _day_after(day, within)
    visit = next((e.date for e in year.events if e.date >= end), None)
    return None if visit is None else _day_after(visit, interval)


def _interval(kb: KnowledgeBase, lab: str) -> int:
    kinetics = kb.labs[lab].kinetics
    return kinetics.min_interval_days if kinetics else 0


def _year_end(year: CareYear) -> str:
    return year.events[-1].date


def partners_of(kb: KnowledgeBase, drug: str) -> set[str]:
    """The drugs the knowledge base says interact with `drug`."""
    return {other for other, _ in kb.interaction_partners.get(drug, [])}


def level_changes(event: Event, drug: str, partners: set[str]) -> list[MedicationFact]:
    """A visit's starts and dose changes that move `drug`'s level: its own, or an interacting drug's (`partners`)."""
    return [f for f in event.facts if isinstance(f, MedicationFact) and f.action in CHANGES
            and (f.drug == drug or f.drug in partners)]


def recheck_violations(kb: KnowledgeBase, year: CareYear) -> list[str]:
    """`monitoring_recheck`."""
    out = []
    spans = taking_spans(year)
    for drug, checks in _rechecked(kb).items():
        partners = partners_of(kb, drug)
        for event in year.events:
            if not _taken_on(spans, drug, event.date):
                continue
            moved: list[MedicationFact | LabFact] = [*level_changes(event, drug, partners)]
            moved += [f for f in event.facts if isinstance(f, LabFact) and f.target is not None
                      and any(f.lab == lab for lab, _, _ in checks) and not f.target[0] <= f.value <= f.target[1]]
            if not moved:
                continue
            for lab, within, _ in checks:
                last_day = _check_by(year, event.date, within, _interval(kb, lab))
                if last_day is None:
                    continue  # (the year ends before the check falls due)
                window = days_between(event.date, last_day)
                if any(not _taken_on(spans, drug, _day_after(event.date, d)) for d in range(1, window + 1)):
                    continue  # (stopped before its check was due)
                later = [e for e, _ in _measured(year, lab) if 0 <= days_between(event.date, e.date) <= window
                         and (e is not event or not any(isinstance(f, LabFact) for f in moved))]
                if not later:
                    what = ", ".join(f"{f.action} {f.drug}" if isinstance(f, MedicationFact)
                                     else f"{f.lab} {f.value:g} outside {f.target}" for f in moved)
                    out.append(fail("monitoring_recheck", year, event, f"{what}: no {lab} by {last_day} "
                                    f"({window} days) while {drug} is taken"))
    return out


def due_violations(kb: KnowledgeBase, year: CareYear) -> list[str]:
    """`monitoring_due`."""
    out = []
    spans = taking_spans(year)
    for drug, checks in _rechecked(kb).items():
        for start, end in spans.get(drug, []):
            stop = end or _year_end(year)
            for lab, _, _ in checks:
                every = next(m.every_days for m in kb.drugs[drug].monitoring if m.lab == lab)
                allowed = max(every, MONITORING_CEILING_DAYS) + BOOKING_MARGIN_DAYS
                days = [start] + [e.date for e, _ in _measured(year, lab) if start <= e.date <= stop] + [stop]
                for a, b in zip(days, days[1:], strict=False):
                    if days_between(a, b) > allowed:
                        out.append(fail("monitoring_due", year, None, f"{drug}: no {lab} from {a} to {b} "
                                        f"({days_between(a, b)} days; at most {allowed})"))
    return out


def range_violations(kb: KnowledgeBase, year: CareYear) -> list[str]:
    """`therapeutic_range_used`."""
    out = []
    spans = taking_spans(year)
    held = {(key, m.lab): m.on_treatment for key, drug in kb.drugs.items() for m in drug.monitoring
            if m.on_treatment}
    for event in year.events:
        for fact in event.facts:
            if not isinstance(fact, LabFact):
                continue
            targets = [target for (drug, lab), target in held.items()
                       if lab == fact.lab and _taken_on(spans, drug, event.date)
                       and not any(isinstance(f, MedicationFact) and f.drug == drug and f.action == "start"
                                   for f in event.facts)]
            expected = targets[0] if targets else None
            if expected is not None and fact.target != expected:
                out.append(fail("therapeutic_range_used", year, event, f"{fact.lab} {fact.value} judged against "
                                f"{fact.target or 'the reference range'}, not the target {expected}"))
    return out


def start_dose_violations(kb: KnowledgeBase, year: CareYear) -> list[str]:
    """`start_dose_rule`."""
    out = []
    rules = [r for r in kb.patient_rules if r.level == "start_dose"]
    conditions = [year.persona.condition, *year.persona.histories]
    for event in year.events:
        for fact in event.facts:
            if not isinstance(fact, MedicationFact) or fact.action != "start" or fact.reason == "long_term":
                continue
            egfr = latest_egfr(year, event)
            for rule in rules:
                if patient_rule_applies(rule, year, egfr, conditions, event=event) \
                        and fact.drug in kb.expand(rule.drugs) and fact.dose > rule.start_dose + 1e-9:  # type: ignore[operator]
                    out.append(fail("start_dose_rule", year, event, f"{fact.drug} started at {fact.dose} {fact.unit} "
                                    f"at age {year.persona.age}, eGFR {egfr} (rule:{rule.key}: {rule.start_dose})"))
    return out


def qt_violations(kb: KnowledgeBase, year: CareYear) -> list[str]:
    """`qt_rule`."""
    out = [fail("qt_rule", year, event, f"QTc {fact.value:g} ms, past the 500 ms a QT caution stops the drug at, "
                "and nothing done") for event in year.events for fact in event.facts
           if isinstance(fact, LabFact) and fact.lab == "qtc" and fact.value > QTC_STOP_MS]
    # a history's caution (long QT: the QTc) or a patient rule's (a diuretic at 65 or over: the sodium)
    checked = {**{f"contraindication:{r.history}": r for r in kb.contraindications if r.monitoring},
               **{f"rule:{r.key}": r for r in kb.patient_rules if r.monitoring}}
    spans = taking_spans(year)
    cautioned = {}
    for event in year.events:
        for fact in event.facts:
            if not isinstance(fact, CautionFact):
                continue
            rule = checked.get(fact.rule)
            started = any(isinstance(f, MedicationFact) and f.drug == fact.drug and f.action == "start"
                          for f in event.facts)
            if rule is None or not started or fact.drug not in kb.expand(rule.drugs + getattr(rule, "classes", [])):
                continue
            assert rule.recheck_days is not None
            for lab in rule.monitoring:
                # (a baseline taken within the lab's shortest interval stands: sodium is not repeated within a week)
                recent = any(0 <= days_between(e.date, event.date) < _interval(kb, lab)
                             for e, _ in _measured(year, lab))
                if not recent and not any(isinstance(f, LabFact) and f.lab == lab for f in event.facts):
                    out.append(fail("qt_rule", year, event, f"{fact.drug} started under {fact.rule} with no {lab} "
                                    "that day"))
                last_day = _check_by(year, event.date, rule.recheck_days, _interval(kb, lab))
                response = kb.labs[lab].kinetics.response_days if kb.labs[lab].kinetics else 1
                due = _day_after(event.date, max(1, min(int(response), rule.recheck_days - 1)))
                first_visit = next((e.date for e in year.events if e.date >= due), None)
                still_taken = first_visit is not None and _taken_on(spans, fact.drug, first_visit)
                if still_taken and last_day is not None and not any(
                        event.date < e.date <= last_day for e, _ in _measured(year, lab)):
                    out.append(fail("qt_rule", year, event, f"{fact.drug} started under {fact.rule}: no {lab} "
                                    f"again by {last_day}"))
            cautioned[fact.drug] = rule
    for event in year.events:  # (and after every dose increase)
        for fact in event.facts:
            rule = cautioned.get(getattr(fact, "drug", None))
            if not (isinstance(fact, MedicationFact) and fact.action == "increase" and rule is not None):
                continue
            assert rule.recheck_days is not None
            for lab in rule.monitoring:
                last_day = _check_by(year, event.date, rule.recheck_days, _interval(kb, lab))
                if last_day is not None and _taken_on(spans, fact.drug, last_day) and not any(
                        event.date <= e.date <= last_day for e, _ in _measured(year, lab)):
                    out.append(fail("qt_rule", year, event, f"{fact.drug} raised to {fact.dose:g} {fact.unit} "
                                    f"under a caution: no {lab} by {last_day}"))
    return out


def serious_harm_violations(kb: KnowledgeBase, year: CareYear) -> list[str]:
    """`serious_harm_at_once`."""
    out = []
    for event in year.events:
        for fact in event.facts:
            if not isinstance(fact, AdverseFact):
                continue
            effect = next(e for e in kb.drugs[fact.drug].adverse_effects if e.key == fact.effect)
            told = any(isinstance(f, SymptomFact) and f.symptom == effect.key for f in event.facts)
            if not (told and effect.is_serious):
                continue
            if not any(isinstance(f, MedicationFact) and f.drug == fact.drug and f.action in ("stop", "decrease")
                       for f in event.facts):
                out.append(fail("serious_harm_at_once", year, event, f"{effect.key} of {fact.drug} told, and "
                                f"{fact.drug} neither lowered nor stopped at that visit"))
            if effect.advice and not any(isinstance(f, AdviceFact) and f.advice == effect.advice
                                         for f in event.facts):
                out.append(fail("serious_harm_at_once", year, event, f"{effect.key} of {fact.drug} acted on "
                                f"without the advice {effect.advice}"))
            # (the harm's lab that day: a liver injury with its ALT, and what else it asks for, the INR; a result
            # still fresh stands for the last, the seed-61 read: paracetamol stopped for "high liver enzymes", none)
            shows = [effect.lab] if effect.lab is not None and effect.lab_delta is not None \
                and kb.labs[effect.lab].kind == "lab" else []
            for lab in shows:
                if not any(isinstance(f, LabFact) and f.lab == lab for f in event.facts):
                    out.append(fail("serious_harm_at_once", year, event, f"{effect.key} of {fact.drug} told with no "
                                    f"{lab} that day"))
            for lab in effect.workup:
                fresh = kb.labs[lab].kinetics.min_interval_days  # type: ignore[union-attr]
                if not any(isinstance(f, LabFact) and f.lab == lab and days_between(e.date, event.date) < fresh
                           for e in year.events[:event.index] for f in e.facts):
                    out.append(fail("serious_harm_at_once", year, event, f"{effect.key} of {fact.drug} told with no "
                                    f"{lab} that day or in the {fresh} days before"))
    return out


def red_flag_violations(kb: KnowledgeBase, year: CareYear) -> list[str]:
    """`red_flag_acted_on`."""
    out = []
    condition = kb.conditions[year.persona.condition]
    flags = {s.key: s.red_flag_step for s in condition.symptoms if s.red_flag_step}
    specific = {s.key for s in condition.symptoms if s.specific}
    # from the turning point on (the first specific symptom past the misdiagnosis) congestion is treated at the
    # visit it is told, before the work-up names its cause
    turning = next((e for e in year.events if e.phase >= 2 and any(isinstance(f, SymptomFact) and f.symptom in specific
                                                                   for f in e.facts)), None)
    for event in year.events:
        if turning is None or event.date < turning.date or (event.kind != "symptom_report" and event is not turning):
            continue
        for fact in event.facts:
            if not isinstance(fact, SymptomFact) or fact.symptom not in flags:
                continue
            step = next(st for st in condition.care_path if st.key == flags[fact.symptom])
            if not any(isinstance(f, MedicationFact) and f.action in ("start", "increase") and f.drug in step.drug_keys
                       for f in event.facts):
                out.append(fail("red_flag_acted_on", year, event, f"{fact.symptom} told from the turning point on "
                                f"and no {step.key} drug raised or started"))
    return out


def out_of_range_share(kb: KnowledgeBase, years: list[CareYear]) -> dict[str, float]:
    """Per held lab (INR, lithium level): the share of results judged against a target that fall outside it."""
    counts: dict[str, list[int]] = {}
    for year in years:
        for event in year.events:
            for fact in event.facts:
                if isinstance(fact, LabFact) and fact.target is not None:
                    outside = not fact.target[0] <= fact.value <= fact.target[1]
                    counts.setdefault(fact.lab, [0, 0])[outside] += 1
    return {lab: out / (inside + out) for lab, (inside, out) in counts.items()}


def taper_violations(kb: KnowledgeBase, year: CareYear) -> list[str]:
    """`steroid_taper`."""
    out = []
    for event in year.events:
        for fact in event.facts:
            if not (isinstance(fact, MedicationFact) and fact.action == "start" and fact.course_days
                    and fact.course_days > TAPER_AFTER_DAYS
                    and kb.drugs[fact.drug].drug_class == "systemic_corticosteroid"):
                continue
            end = _day_after(event.date, fact.course_days)
            doses = [(e.date, f.dose) for e in year.events if event.date <= e.date < end for f in e.facts
                     if isinstance(f, MedicationFact) and f.drug == fact.drug and f.action in ("start", "decrease")]
            visits = [e.date for e in year.events if event.date < e.date < end]
            steps = [day for day, _ in doses[1:]]
            if any(b > a for (_, a), (_, b) in zip(doses, doses[1:], strict=False)):
                out.append(fail("steroid_taper", year, event, f"{fact.drug} raised during its taper"))
            late = [v for v in visits if days_between(event.date, v) > 21
                    and not any(0 <= days_between(d, v) <= 14 for d in [event.date, *steps])]
            if late:
                out.append(fail("steroid_taper", year, event, f"{fact.drug} {fact.dose:g} {fact.unit} for "
                                f"{fact.course_days} days: no step down in the fortnight before {late[0]}"))
    return out


def _takes(kb: KnowledgeBase, year: CareYear, form, spec) -> bool:  # noqa: ANN001
    """Whether the patient's medication preference allows this formulation (no gelatin capsules for a vegan)."""
    option = next((t.option for t in year.persona.traps if t.category == "medication_preference"), None)
    if option is None:
        return True
    pref = kb.preferences[option]
    return form.form not in pref.excludes_forms and (form.size is None or form.size not in pref.excludes_sizes) and (
        pref.max_doses_per_day is None or DOSES_PER_DAY[spec.frequency] <= pref.max_doses_per_day
        or pref.long_term_only)


def renal_cap_violations(kb: KnowledgeBase, year: CareYear) -> list[str]:
    """`renal_dose_not_bar`."""
    caps = {f"rule:{r.key}": r.max_daily_dose for r in kb.patient_rules if r.level == "max_dose"}
    out = []
    for event in year.events:
        for fact in event.facts:
            if not isinstance(fact, AvoidedFact) or not fact.rules or not all(r in caps for r in fact.rules):
                continue
            cap = min(caps[r] for r in fact.rules)
            fits = [spec for form, spec in kb.drugs[fact.drug].formulations() if _takes(kb, year, form, spec)
                    and any(d * DOSES_PER_DAY[spec.frequency] <= cap + 1e-9 for d in spec.doses())]
            if fits:
                out.append(fail("renal_dose_not_bar", year, event, f"{fact.drug} passed over for {fact.rules} though "
                                f"{fits[0].frequency} {fits[0].doses()[0]:g} {fits[0].unit} fits the cap {cap:g}"))
    return out


def _turning_point(kb: KnowledgeBase, year: CareYear) -> Event | None:
    """The first visit past the misdiagnosis that tells a symptom specific to the true condition."""
    specific = {s.key for s in kb.conditions[year.persona.condition].symptoms if s.specific}
    return next((e for e in year.events if e.phase >= 2 and any(isinstance(f, SymptomFact) and f.symptom in specific
                                                               for f in e.facts)), None)


def workup_violations(kb: KnowledgeBase, year: CareYear) -> list[str]:
    """`workup_promptly`."""
    turning = _turning_point(kb, year)
    tests = next((e for e in year.events if e.kind == "diagnostic_test"), None)
    diagnosis = next((e for e in year.events if e.kind == "diagnosis"), None)
    if turning is None or tests is None or diagnosis is None:
        return [fail("workup_promptly", year, None, "no turning point, work-up or diagnosis")]
    first = next((e for e in year.events if e.index >= diagnosis.index and any(
        isinstance(f, MedicationFact) and f.reason == "first_line" for f in e.facts)), None)
    out = []
    for before, after, what in ((turning, tests, "work-up"), (tests, diagnosis, "diagnosis"),
                                (diagnosis, first, "first treatment")):
        if after is not None and after.index - before.index > WORKUP_ENCOUNTERS:
            out.append(fail("workup_promptly", year, after, f"the {what} {after.index - before.index} encounters "
                            f"({days_between(before.date, after.date)} days) after {before.event_id}"))
    return out


def advice_violations(kb: KnowledgeBase, year: CareYear) -> list[str]:
    """`advice_given`."""
    condition = kb.conditions[year.persona.condition]
    wanted = {c.key: c.advice for c in condition.complications if c.advice}
    out = []
    for event in year.events:
        advice = {f.advice for f in event.facts if isinstance(f, AdviceFact)}
        # (what is said in the advice's place for this patient counts: a professional driver's, `Advice.instead`)
        advice |= {a.key for a in kb.advice.values() if a.instead is not None and a.instead.advice in advice}
        for fact in event.facts:
            if isinstance(fact, ComplicationFact) and wanted.get(fact.complication) not in (None, *advice):
                out.append(fail("advice_given", year, event, f"{fact.complication} found without the advice "
                                f"{wanted[fact.complication]}"))
        if event.kind == "diagnosis" and condition.diagnosis_advice and condition.diagnosis_advice not in advice:
            out.append(fail("advice_given", year, event, f"diagnosed without the advice {condition.diagnosis_advice}"))
    return out


def stop_recheck_violations(kb: KnowledgeBase, year: CareYear) -> list[str]:
    """`rechecked_after_stop`."""
    condition = kb.conditions[year.persona.condition]
    control = {s.key: s for s in condition.care_path if s.role in ("first_line", "step_up")}
    out = []
    for event in year.events:
        for fact in event.facts:
            if not (isinstance(fact, MedicationFact) and fact.action == "stop" and fact.step in control
                    and fact.reason.startswith("adverse_effect:")):
                continue
            step = control[fact.step]
            lab = step.marker
            later = [e for e in year.events if e.index > event.index]
            replaced = any(isinstance(f, MedicationFact) and f.action == "start" and f.step == step.key
                           for e in later[:3] for f in e.facts)
            if lab is None:
                continue
            within = max(RECHECK_AFTER_STOP_DAYS, _interval(kb, lab) + 14)  # (not before it can be measured again)
            checked = any(isinstance(f, LabFact) and f.lab == lab for e in later
                          if days_between(event.date, e.date) <= within for f in e.facts)
            if not replaced and not checked and later and days_between(event.date, later[-1].date) > within:
                out.append(fail("rechecked_after_stop", year, event, f"{fact.drug} stopped, nothing of {step.key} "
                                f"in its place and no {lab} within {within} days"))
    return out


def red_flag_examined_violations(kb: KnowledgeBase, year: CareYear) -> list[str]:
    """`red_flag_examined`."""
    flagged = {f"{i.key}.{s.key}": i for i in kb.illnesses.values() for s in i.symptoms if s.at_examination}
    out = []
    for event in year.events:
        advice = {f.advice for f in event.facts if isinstance(f, AdviceFact)}
        for fact in event.facts:
            illness = flagged.get(fact.symptom) if isinstance(fact, SymptomFact) else None
            if illness is not None and illness.self_care in advice:
                out.append(fail("red_flag_examined", year, event, f"{fact.symptom} told and sent home with "
                                f"{illness.self_care}"))
    return out


def raise_held_violations(kb: KnowledgeBase, year: CareYear) -> list[str]:
    """`raise_held_past_limit`."""
    rules = [r for r in kb.contraindications if r.no_increase_above is not None and r.history in year.persona.histories]
    out = []
    for rule in rules:
        assert rule.no_increase_above is not None
        lab, drugs = rule.monitoring[0], kb.expand(rule.drugs + rule.classes)
        latest: float | None = None
        for event in year.events:
            latest = next((f.value for f in reversed(event.facts) if isinstance(f, LabFact) and f.lab == lab), latest)
            for fact in event.facts:
                if isinstance(fact, MedicationFact) and fact.action == "increase" and fact.drug in drugs \
                        and latest is not None and latest > rule.no_increase_above:
                    out.append(fail("raise_held_past_limit", year, event, f"{fact.drug} raised to {fact.dose:g} "
                                    f"{fact.unit} with the latest {lab} {latest:g}, past "
                                    f"{rule.no_increase_above:g} (contraindication:{rule.history})"))
    return out


def augment_violations(kb: KnowledgeBase, year: CareYear) -> list[str]:
    """`augments_a_base`."""
    bases = {s.key: s.adds_to for s in kb.conditions[year.persona.condition].care_path if s.adds_to}
    if not bases:
        return []
    out = []
    spans = taking_spans(year)
    steps: dict[str, str | None] = {}  # drug -> the care step its last start was for
    for index, event in enumerate(year.events):
        steps |= {f.drug: f.step for f in event.facts if isinstance(f, MedicationFact) and f.action == "start"}
        taken = {d: step for d, step in steps.items() if _taken_on(spans, d, event.date)}
        recent = year.events[max(0, index - 1):index + 1]
        for drug, step in taken.items():
            base = bases.get(step or "")
            if base is None or base in taken.values():
                continue
            switching = any(isinstance(f, MedicationFact) and f.action == "stop" and f.step == base
                            and f.reason.startswith("adverse_effect:") for e in recent for f in e.facts)
            if not switching:
                out.append(fail("augments_a_base", year, event, f"{drug} ({step}) taken with nothing of {base} "
                                "to add to"))
    return out


def _history_told(fact: object, key: str) -> bool:
    """Whether a fact puts a history on record: told as a past illness, or as what the long-term drug is for."""
    return (isinstance(fact, HistoryFact) and fact.history == key) or (
        isinstance(fact, MedicationFact) and fact.reason == "long_term" and fact.indication == f"history:{key}")


def baseline_violations(kb: KnowledgeBase, year: CareYear) -> list[str]:
    """`history_baseline`."""
    out = []
    for key in year.persona.histories:
        baseline = kb.history_conditions[key].baseline if key in kb.history_conditions else None
        told = next((e for e in year.events if any(_history_told(f, key) for f in e.facts)), None)
        if baseline is None or told is None:
            continue
        for lab in baseline.labs:
            if not any(isinstance(f, LabFact) and f.lab == lab for e in year.events[:told.index] for f in e.facts):
                out.append(fail("history_baseline", year, told, f"{key} on record with no {lab} that visit or before"))
    return out


def _qt_prolonging(kb: KnowledgeBase, drug: str) -> bool:
    """A drug of the `qt_prolonging` harm, or one a rule of long QT syndrome names (CredibleMeds' possible and
    conditional risk: fluoxetine, aripiprazole, lithium...)."""
    spec = kb.drugs[drug]
    named = kb.expand([key for rule in kb.contraindications if rule.history == LONG_QT
                       for key in (*rule.drugs, *rule.classes)])
    return drug in named or "qt_prolonging" in spec.toxicities or any(
        e.toxicity == "qt_prolonging" for e in spec.adverse_effects)


def qt_electrolyte_violations(kb: KnowledgeBase, year: CareYear) -> list[str]:
    """`qt_start_electrolytes`."""
    if LONG_QT not in year.persona.histories:
        return []
    out = []
    for event in year.events:
        for fact in event.facts:
            if not (isinstance(fact, MedicationFact) and fact.action == "start" and _qt_prolonging(kb, fact.drug)):
                continue
            for lab in QTC_START_ELECTROLYTES:
                seen = [(e, f) for e, f in _measured(year, lab)
                        if e.index <= event.index and days_between(e.date, event.date) < _interval(kb, lab)]
                if not seen:
                    out.append(fail("qt_start_electrolytes", year, event, f"{fact.drug} started in long QT with no "
                                    f"{lab} that day or fresh"))
                    continue
                low = kb.labs[lab].reference[0]
                value = seen[-1][1].value
                if value < low:
                    out.append(fail("qt_start_electrolytes", year, event, f"{fact.drug} started in long QT at a "
                                    f"{lab} of {value:g}, below {low:g}"))
    return out
