"""Independent readings of drug choice and dosing against the patient's kidneys, record and indication (the seed-37
read, issue 27).

Each function returns violation messages (empty: the year passes) and reads only the record and the knowledge
base, never the engine's state (`course_fits_doses_a_day` asks the knowledge base's rules, `safety.verdict`, which
candidates a patient may have). The rules (names as `docs/simulation.md` lists them):

- `moiety_rule_binds_prodrug`: a drug that releases an active moiety (sulfasalazine: 5-ASA, mesalamine) is never
  given where a kidney or disease rule bars that moiety (sulfasalazine 1 g twice a day at eGFR 21 where mesalazine
  had been avoided for its kidneys; BNF sulfasalazine: avoid in severe renal impairment).
- `renal_frequency`: a drug is taken no more often than a kidney rule allows (pramipexole twice a day below an eGFR of
  50, once a day below 30, Mirapex label 2.3; 0.125 mg three times a day at eGFR 22-26).
- `indication_dose`: a use with a dose of its own is started at it or above (amoxicillin 500 mg a dose for pneumonia,
  every 12 hours below an eGFR of 30, Amoxil label, NICE NG138; 250 mg twice a day for pneumonia).
- `test_dose_allowed`: a diagnostic test that gives a drug is not done where a rule bars the drug (a levodopa challenge
  in narrow-angle glaucoma, Sinemet label).
- `kept_while_above_target`: a misdiagnosis' antihypertensive is not stopped at the revision while the pressure is above
  the threshold of the step that treats it (hydrochlorothiazide stopped at a systolic of 142; NICE NG136).
- `course_fits_doses_a_day`: a course for a once-a-day patient is the candidate taken least often (penicillin V four
  times a day to a patient who "can only take things once a day"), among those no more cautioned than it;
- `course_caution_before_fit`: that fit never buys a caution: a course the rules caution for the patient is not chosen
  while a candidate they do not caution is allowed (the seed-47 read: clarithromycin's once-daily tablet, twice, to
  an 80-year-old with heart failure on amlodipine and lithium, where amoxicillin was allowed).
"""

from __future__ import annotations

from medmemorybench.knowledge.base import KnowledgeBase
from medmemorybench.knowledge.models import DOSES_PER_DAY
from medmemorybench.simulate.models import CareYear, Event, LabFact, MedicationFact
from medmemorybench.simulate.safety import Patient, constraints_of, verdict
from tests.simulate.clinical import fail, given, latest_egfr, latest_value, patient_rule_applies
from tests.simulate.monitoring_check import _taken_on, taking_spans


def moiety_violations(kb: KnowledgeBase, year: CareYear) -> list[str]:
    """[moiety_rule_binds_prodrug] no prodrug given where a patient rule or a history bars its moiety."""
    conditions = [year.persona.condition, *year.persona.histories]
    failures = []
    for event, fact in given(year):
        if fact.reason == "long_term":  # (the drug the patient came with is theirs, as `renal_rule` reads it)
            continue
        for moiety in kb.drugs[fact.drug].releases:
            egfr = latest_egfr(year, event)
            rules = [r.key for r in kb.patient_rules if r.level == "avoid" and r.release is None
                     and moiety in kb.expand(r.drugs) and patient_rule_applies(r, year, egfr, conditions, event=event)]
            rules += [f"{r.history}" for r in kb.contraindications if r.level == "contraindicated"
                      and r.history in conditions and moiety in kb.expand([*r.classes, *r.drugs])]
            if rules:
                failures.append(fail("moiety_rule_binds_prodrug", year, event,
                                     f"{fact.drug} {fact.action} ({fact.dose:g} {fact.unit} {fact.frequency}), which "
                                     f"releases {moiety}, barred by {', '.join(rules)} (eGFR {egfr})"))
    return failures


def spacing_violations(kb: KnowledgeBase, year: CareYear) -> list[str]:
    """[renal_frequency] no drug taken more often than a kidney rule that binds on the latest eGFR lets it be."""
    conditions = [year.persona.condition, *year.persona.histories]
    failures = []
    for event, fact in given(year):
        if fact.reason == "long_term" or fact.frequency == "once":
            continue
        egfr = latest_egfr(year, event)
        binding = [r for r in kb.patient_rules if r.frequency is not None and fact.drug in kb.expand(r.drugs)
                   and patient_rule_applies(r, year, egfr, conditions, event=event)]
        strictest = min(binding, key=lambda r: DOSES_PER_DAY[r.frequency or ""], default=None)
        if strictest is not None and DOSES_PER_DAY[fact.frequency] > DOSES_PER_DAY[strictest.frequency or ""]:
            failures.append(fail("renal_frequency", year, event,
                                 f"{fact.drug} {fact.action} {fact.dose:g} {fact.unit} {fact.frequency}, more often "
                                 f"than rule:{strictest.key} ({strictest.frequency}, eGFR {egfr})"))
    return failures


def _candidate_dose(kb: KnowledgeBase, year: CareYear, reason: str, step: str | None, drug: str) -> float | None:
    """The dose per administration the knowledge base gives this use of the drug (None: the drug's own)."""
    if reason.startswith("illness:"):
        candidates = kb.illnesses[reason.partition(":")[2]].candidates
    else:
        steps = [s for s in kb.conditions[year.persona.condition].care_path if s.key == step]
        candidates = steps[0].candidates if steps else []
    return next((c.dose for c in candidates if c.drug == drug), None)


def indication_dose_violations(kb: KnowledgeBase, year: CareYear) -> list[str]:
    """[indication_dose] a drug started for a use that has a dose of its own (amoxicillin for pneumonia: 500 mg a
    dose) is started at it or above it (875 mg every 12 hours is the label's other pneumonia regimen), unless a rule
    lowers it: a dose cap that binds on the latest eGFR with no room for it at the frequency given, or a start-dose
    rule."""
    conditions = [year.persona.condition, *year.persona.histories]
    failures = []
    for event, fact in given(year):
        if fact.action not in ("start", "administer"):
            continue
        wanted = _candidate_dose(kb, year, fact.reason, fact.step, fact.drug)
        if wanted is None or fact.dose >= wanted - 1e-9:
            continue
        egfr = latest_egfr(year, event)
        caps = [r.max_daily_dose for r in kb.patient_rules if r.level == "max_dose" and r.max_daily_dose is not None
                and fact.drug in kb.expand(r.drugs) and patient_rule_applies(r, year, egfr, conditions, event=event)]
        starts = [r.start_dose for r in kb.patient_rules if r.level == "start_dose" and r.start_dose is not None
                  and fact.drug in kb.expand(r.drugs) and patient_rule_applies(r, year, egfr, conditions, event=event)]
        per_day = DOSES_PER_DAY[fact.frequency] if fact.frequency != "once" else 1
        if (caps and wanted * per_day > min(caps) + 1e-9) or (starts and min(starts) < wanted):
            continue  # (a rule lowers it: `renal_rule` and `age_rule` read those)
        failures.append(fail("indication_dose", year, event, f"{fact.drug} started at {fact.dose:g} {fact.unit} "
                             f"{fact.frequency} for {fact.reason}; this use is {wanted:g} {fact.unit} a dose "
                             f"(eGFR {egfr})"))
    return failures


def challenge_dose_violations(kb: KnowledgeBase, year: CareYear) -> list[str]:
    """[test_dose_allowed] a diagnostic test that gives a drug (a levodopa challenge) is not done on a patient whose
    history, allergy or kidney rule bars that drug (narrow-angle glaucoma, the seed-37 read)."""
    tests = {t.key: t.gives for t in kb.conditions[year.persona.condition].diagnostic_tests if t.gives}
    conditions = [year.persona.condition, *year.persona.histories]
    allergies = [t.option for t in year.persona.traps if t.category == "allergy"]
    failures = []
    for event in year.events:
        for fact in event.facts:
            drug = tests.get(getattr(fact, "test", ""))
            if drug is None:
                continue
            egfr = latest_egfr(year, event)
            bars = [f"contraindication:{r.history}" for r in kb.contraindications if r.level == "contraindicated"
                    and r.history in conditions and drug in kb.expand([*r.classes, *r.drugs])]
            bars += [f"allergy:{a}" for a in allergies
                     if drug in kb.expand([*kb.allergy_groups[a].classes, *kb.allergy_groups[a].drugs])]
            bars += [f"rule:{r.key}" for r in kb.patient_rules if r.level == "avoid" and r.release is None
                     and drug in kb.expand(r.drugs) and patient_rule_applies(r, year, egfr, conditions, event=event)]
            if bars:
                failures.append(fail("test_dose_allowed", year, event,
                                     f"{fact.test} gives {drug}, barred by {', '.join(bars)}"))
    return failures


def kept_for_violations(kb: KnowledgeBase, year: CareYear) -> list[str]:
    """[kept_while_above_target] a misdiagnosis' drug that treats a lab of the true condition too (an antihypertensive
    given for "essential hypertension") is not stopped at the revision while that lab, on its latest value, is above
    the threshold of the step that treats it (the seed-37 read: hydrochlorothiazide stopped at a systolic of 142),
    unless a drug for that lab starts the same visit (glipizide, which kidney disease's care leaves out, switched to
    metformin at an HbA1c of 8.0 %: the seed-47 read stopped it and left 25 days untreated)."""
    condition = kb.conditions[year.persona.condition]
    failures = []
    for event in year.events:
        for fact in event.facts:
            if not (isinstance(fact, MedicationFact) and fact.action == "stop" and fact.reason == "diagnosis_revised"):
                continue
            mis = next((m for m in condition.misdiagnoses if m.drug == fact.drug and m.kept_for), None)
            steps = [s for s in condition.care_path if mis and s.indication.lab == mis.kept_for
                     and s.indication.above is not None]
            value = latest_value(year, event, mis.kept_for) if mis and mis.kept_for else None
            switched = any(isinstance(f, MedicationFact) and f.action == "start" and mis
                           and f.indication == f"lab:{mis.kept_for}" for f in event.facts)
            if steps and value is not None and not switched and value > (steps[0].indication.above or 0):
                failures.append(fail("kept_while_above_target", year, event,
                                     f"{fact.drug} stopped for the revised diagnosis at {mis.kept_for} "  # type: ignore[union-attr]
                                     f"{value:g} (step {steps[0].key} treats it above {steps[0].indication.above:g})"))
    return failures


def _doses_limit(kb: KnowledgeBase, year: CareYear) -> float | None:
    """The most doses a day the patient manages of anything, from a preference that binds only long-term drugs (a
    once-a-day blister pack: a course is given beside it)."""
    limits = [kb.preferences[t.option].max_doses_per_day for t in year.persona.traps
              if t.category == "medication_preference" and kb.preferences[t.option].long_term_only]
    return min((x for x in limits if x is not None), default=None)


def _first_egfr(year: CareYear) -> float | None:
    return next((f.value for e in year.events for f in e.facts if isinstance(f, LabFact) and f.lab == "egfr"), None)


def course_candidates(kb: KnowledgeBase, year: CareYear, spans: dict, event: Event, fact: MedicationFact
                      ) -> dict[str, tuple[float, bool]]:
    """Each candidate for the course's illness that the rules allow the patient that day and the prescriber could
    take up (no drug of a group already taken): its fewest doses a day, and whether the rules caution it."""
    taking = {d for d in spans if d != fact.drug and _taken_on(spans, d, event.date)}
    # (before any eGFR is on record, the year's first: the prescriber knows the kidneys of a CKD history)
    egfr = latest_egfr(year, event) or _first_egfr(year)
    persona = year.persona
    patient = Patient(persona.age, persona.sex, persona.condition, constraints_of(persona.traps), egfr, taking)
    taken_groups = {kb.therapy_group(d) for d in taking}
    allowed = {}
    for candidate in kb.illnesses[fact.reason.partition(":")[2]].candidates:
        result = verdict(kb, candidate.drug, patient, candidate.regimen)
        least = min((DOSES_PER_DAY[s.frequency] for _, s in result.options), default=None)
        if result.is_allowed and least is not None and kb.therapy_group(candidate.drug) not in taken_groups:
            allowed[candidate.drug] = (least, bool(result.cautions))
    return allowed


def course_frequency_violations(kb: KnowledgeBase, year: CareYear) -> list[str]:
    """[course_fits_doses_a_day] a course for an intercurrent illness given to a patient who can take things only
    once a day (a blister pack) is taken no more often than a candidate for that illness the rules allow would be
    (the same drug included), each at its least frequent formulation (the seed-37 read: penicillin V four times a
    day, amoxicillin three times a day, to a patient who "can only take things once a day")."""
    limit = _doses_limit(kb, year)
    if limit is None:
        return []
    spans = taking_spans(year)
    failures = []
    for event, fact in given(year):
        if fact.action != "start" or not fact.reason.startswith("illness:"):
            continue
        illness = kb.illnesses[fact.reason.partition(":")[2]]
        allowed = course_candidates(kb, year, spans, event, fact)
        cautioned = allowed.get(fact.drug, (0, False))[1]
        clear = [d for d, (_, c) in allowed.items() if not c]
        if cautioned and clear:
            failures.append(fail("course_caution_before_fit", year, event,
                                 f"{fact.drug} {fact.frequency} for {illness.key}, cautioned for this patient, where "
                                 f"{', '.join(clear)} was allowed without a caution"))
        if DOSES_PER_DAY[fact.frequency] <= limit:
            continue
        fewer = [f"{d} ({least:g} a day)" for d, (least, c) in allowed.items()
                 if least < DOSES_PER_DAY[fact.frequency] and (cautioned or not c)]
        if fewer:
            failures.append(fail("course_fits_doses_a_day", year, event,
                                 f"{fact.drug} {fact.frequency} for {illness.key} to a patient who manages {limit:g} "
                                 f"a day; allowed and taken less often: {', '.join(fewer)}"))
    return failures
