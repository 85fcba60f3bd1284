"""Independent readings of what a physician weighs beside a prescription: a history that qualifies a drug, a habit
that turns dangerous, a harm that stops the patient driving (the seed-29 read, issue 27).

Each function returns violation messages (empty: the year passes) and reads only the record and the knowledge
base, never the engine's state. The rules (names as `docs/simulation.md` lists them):

- `arb_after_ace_angioedema`: an ARB started in a patient with ACE-inhibitor angioedema on record (told as an
  allergy or as a past illness) is started with that history's caution, the swelling's safety net (2022
  AHA/ACC/HFSA: an ARB with caution; losartan after ramipril angioedema with no word of it, the seed-19 and -29 reads).
- `arb_after_year_angioedema`: angioedema had during the year on an ACE inhibitor or sacubitril/valsartan (an
  adverse effect of the `angioedema` kind) is the same history as one told: every ARB started after it carries the
  angioedema caution, and no ACE inhibitor or ARNI is started after it (2022 AHA/ACC/HFSA; Entresto label; lisinopril
  angioedema in June and only the told history's caution in the engine, the seed-61 read, P0009 E043).
- `habit_stop_advised`: a habit with a `stop` rule (a potassium salt substitute) is advised against at the first
  visit where the habit and a risk it meets are both on record (a drug that keeps potassium in taken, an eGFR under
  60, a kidney or potassium history told), again the day a further drug of that risk starts, and never before any
  risk (Lo-Salt used all year beside losartan at eGFR 55-59, the seed-19 and -29 reads).
- `sleep_onset_no_driving`: daytime sleepiness on a dopamine agonist (the labels' warning of falling asleep during
  daily activities) is acted on the visit it is told: the dose lowered or the drug stopped, and no driving or
  machinery while it lasts (ropinirole sleepiness left 33 days with no driving advice, the seed-29 read).

The seed-31 read:

- `drug_red_flag_same_day`: a symptom that can be the first sign of a drug's harm (a fever or a sore throat on a
  drug that can take the white cells away: sulfasalazine, a thionamide, mirtazapine) gets, the visit it is told, the
  blood count measured and the drug held until it is known: given back with the count's reason, or stopped when a
  count is below its harm threshold (sulfasalazine SmPC; ATA 2016; Remeron label; gargles and no white count for a
  month, the seed-31 read). A drug whose reported side effect still awaits action (an `AdverseFact` not yet
  followed by a stop, a lower dose or a keep with its measures) is held for the count but not given back by a normal
  one: the next word on it is the side effect's action (`adverse_stop`; mycophenolate given back at a fever while its
  diarrhoea awaited a lower dose, P0012 seed 11).
- `class_harm_not_repeated`: a drug stopped for a harm of a kind (`toxicity`: hallucinations on a dopamine agonist)
  is never followed by the start of another drug that can do the same harm (pramipexole 13 days after ropinirole
  was stopped for hallucinations, the seed-31 read; NICE NG71).
- `advice_safe_for_condition`: advice unsafe with a condition on record is never said to that patient, what takes
  its place instead (`Advice.instead`: "one drink a day" three times in cirrhosis, the seed-31 read; EASL 2018).
- `blood_tests_within_reach`: a patient who can give blood only every so often (a remote site: every three months)
  is started on no drug whose checks come sooner, the recheck after a start or a dose change included (lithium: a
  level after one week, NICE CG185; started on a remote worker, the seed-31 read).
- `caution_when_told`: an allergy or past illness told (or an allergy's account corrected) while the patient takes a
  drug it cautions is weighed that visit: the caution is said (ACE-inhibitor angioedema corrected to airway
  swelling on losartan with no word of it, the seed-31 read).

The seed-53 read:

- `drug_red_flag_same_day` (extended): the same symptom told with no such drug taken, but a low count not yet seen
  back in range (a drug stopped for it, no count since), gets the count that day and `recovering_advice` (four weeks
  after sulfasalazine stopped at a white count of 2.4, on prednisolone, gargles for a febrile sore throat).
- `low_count_rechecked`: a low count (below its harm level, or a drug stopped for the harm) is repeated, every lab of
  the flag, at the first visit `recheck_days` or more on, and after each full count still below the reference range,
  until one is back in range (BSR 2017; the same white count of 2.4, never repeated).
- `sedation_warned`: the visit that starts a drug that can sedate (the knowledge base's `sedating` harm: an opioid, a
  gabapentinoid, a benzodiazepine, mirtazapine, trazodone, quetiapine, hydroxyzine) says the drowsiness and driving
  warning, or the drug's own label warning where it has one (a dopamine agonist's); to a patient whose job is driving
  or machinery, the job's warning every time (MHRA 2014 drug driving; BNF label 2; codeine for a crane operator with
  no word of it, P0014 E007).
"""

from __future__ import annotations

from medmemorybench.knowledge.base import KnowledgeBase
from medmemorybench.knowledge.models import DrugRedFlag
from medmemorybench.simulate.models import (
    AdverseFact,
    AdviceFact,
    AllergyFact,
    CareYear,
    CautionFact,
    DiagnosisFact,
    DietFact,
    Event,
    HistoryFact,
    LabFact,
    MedicationFact,
    SymptomFact,
)
from tests.simulate.clinical import days_between, fail, latest_egfr
from tests.simulate.monitoring_check import taking_spans

ANGIOEDEMA = ("ace_inhibitor_reaction", "ace_inhibitor_angioedema")
"""The allergy group and the history condition that record ACE-inhibitor angioedema."""
BRADYKININ_CLASSES = ("ace_inhibitor", "arni")
"""Classes whose angioedema is bradykinin-mediated: after it, none of them again and an ARB only with caution."""
SLEEP_ONSET_CLASS = "dopamine_agonist"
"""Every dopamine agonist's label warns of falling asleep during daily activities (Mirapex, Requip, Neupro 5.1)."""
NO_DRIVING_SLEEP = "no_driving_sleep_attacks"


def arb_caution_violations(kb: KnowledgeBase, year: CareYear) -> list[str]:
    """`arb_after_ace_angioedema`."""
    recorded = {t.option for t in year.persona.traps} & set(ANGIOEDEMA)
    if not recorded:
        return []
    arbs = kb.expand(["arb"])
    out = []
    for event in year.events:
        for fact in event.facts:
            if not (isinstance(fact, MedicationFact) and fact.action == "start" and fact.drug in arbs):
                continue
            if not any(isinstance(f, CautionFact) and f.drug == fact.drug and f.rule.partition(":")[2] in recorded
                       for f in event.facts):
                out.append(fail("arb_after_ace_angioedema", year, event, f"{fact.drug} started with "
                                f"{sorted(recorded)} on record and no word of the angioedema"))
    return out


def year_angioedema_violations(kb: KnowledgeBase, year: CareYear) -> list[str]:
    """`arb_after_year_angioedema`."""
    barred, arbs = kb.expand(list(BRADYKININ_CLASSES)), kb.expand(["arb"])
    had = None
    out = []
    for event in year.events:
        for fact in event.facts:
            if had is not None and isinstance(fact, MedicationFact) and fact.action == "start":
                if fact.drug in barred:
                    out.append(fail("arb_after_year_angioedema", year, event, f"{fact.drug} started after "
                                    f"angioedema on {had}"))
                elif fact.drug in arbs and not any(
                        isinstance(f, CautionFact) and f.drug == fact.drug and f.rule.partition(":")[2] in ANGIOEDEMA
                        for f in event.facts):
                    out.append(fail("arb_after_year_angioedema", year, event, f"{fact.drug} started after "
                                    f"angioedema on {had} with no word of it"))
        had = had or next((f.drug for f in event.facts if isinstance(f, AdverseFact) and f.drug in barred
                           and any(e.key == f.effect and e.toxicity == "angioedema"
                                   for e in kb.drugs[f.drug].adverse_effects)), None)
    return out


def _on_record(year: CareYear, event: Event, spans: dict[str, list[tuple[str, str | None]]]
               ) -> tuple[set[str], set[str]]:
    """(drugs the doctor knows are taken after this visit, conditions told or diagnosed by it)."""
    taking = {drug for drug, runs in spans.items()
              if any(start <= event.date and (end is None or event.date < end) for start, end in runs)}
    conditions: set[str] = set()
    for earlier in year.events[:event.index]:
        for fact in earlier.facts:
            if isinstance(fact, HistoryFact):
                conditions.add(fact.history)
            elif isinstance(fact, MedicationFact) and fact.indication and fact.indication.startswith("history:"):
                conditions.add(fact.indication.partition(":")[2])
            elif isinstance(fact, DiagnosisFact) and fact.status == "confirmed":
                conditions.add(year.persona.condition)
    return taking, conditions


def habit_stop_violations(kb: KnowledgeBase, year: CareYear) -> list[str]:
    """`habit_stop_advised`."""
    habit = next((kb.habits[t.option] for t in year.persona.traps if t.category == "diet_preference"), None)
    if habit is None or habit.stop is None:
        return []
    stop, told, seen = habit.stop, False, None
    # (advice said for its own sake too, in place of the alcohol limit in cirrhosis before the drinking is told, is no
    # sign of a stop said too early)
    own = stop.advice in kb.conditions[year.persona.condition].lifestyle_advice or any(
        a.instead is not None and a.instead.advice == stop.advice for a in kb.advice.values())
    spans = taking_spans(year)
    out = []
    for event in year.events:
        told = told or any(isinstance(f, DietFact) and f.habit == habit.key for f in event.facts)
        advised = any(isinstance(f, AdviceFact) and f.advice == stop.advice for f in event.facts)
        taking, conditions = _on_record(year, event, spans)
        drugs = taking & kb.expand(stop.taking)
        egfr = latest_egfr(year, event)
        risk = sorted(drugs) + sorted(conditions & set(stop.conditions)) + (
            [f"eGFR {egfr:g}"] if stop.egfr_below is not None and egfr is not None and egfr < stop.egfr_below else [])
        if advised and not (told and risk) and not own:
            out.append(fail("habit_stop_advised", year, event, f"{stop.advice} given before the habit and a risk "
                            "were both on record"))
        if not (told and risk):
            continue
        if seen is None and not advised:  # (the first visit both are on record)
            out.append(fail("habit_stop_advised", year, event, f"{habit.key} on record with {risk}, and "
                            f"{stop.advice} not given"))
        elif seen is not None and drugs - seen and not advised:  # (a further drug of that risk starts)
            out.append(fail("habit_stop_advised", year, event, f"{sorted(drugs - seen)} started with {habit.key} "
                            f"on record, and {stop.advice} not said again"))
        seen = (seen or set()) | drugs
    return out


def sleep_onset_violations(kb: KnowledgeBase, year: CareYear) -> list[str]:
    """`sleep_onset_no_driving`."""
    out = []
    for event in year.events:
        for fact in event.facts:
            if not isinstance(fact, AdverseFact) or kb.drugs[fact.drug].drug_class != SLEEP_ONSET_CLASS:
                continue
            effect = next(e for e in kb.drugs[fact.drug].adverse_effects if e.key == fact.effect)
            told = any(isinstance(f, SymptomFact) and f.symptom == effect.key for f in event.facts)
            if effect.toxicity != "sedating" or not told:
                continue
            if not any(isinstance(f, MedicationFact) and f.drug == fact.drug and f.action in ("stop", "decrease")
                       for f in event.facts):
                out.append(fail("sleep_onset_no_driving", year, event, f"daytime sleepiness on {fact.drug} told, "
                                "and the dose neither lowered nor the drug stopped that visit"))
            if not any(isinstance(f, AdviceFact) and f.advice == NO_DRIVING_SLEEP for f in event.facts):
                out.append(fail("sleep_onset_no_driving", year, event, f"daytime sleepiness on {fact.drug} told "
                                "with no driving advice"))
    return out



def red_flag_symptoms(kb: KnowledgeBase) -> dict[str, DrugRedFlag]:
    """Symptom id as recorded (`<illness>.<symptom>`) -> the drug harm it warns of."""
    return {f"{i.key}.{s.key}": s.drug_red_flag for i in kb.illnesses.values() for s in i.symptoms
            if s.drug_red_flag is not None}


def _count_harm(kb: KnowledgeBase, flag: DrugRedFlag, event: Event) -> bool:
    """Whether a visit shows the flag's harm: a count below its harm level, or a drug stopped for the harm (a low count
    at a red flag, or the drug's adverse effect of that kind)."""
    if any(isinstance(f, LabFact) and f.lab in flag.labs and f.value < (kb.labs[f.lab].harm_below or 0)
           for f in event.facts):
        return True
    for fact in event.facts:
        if isinstance(fact, MedicationFact) and fact.action == "stop":
            kind, _, effect = fact.reason.partition(":")
            if fact.reason == "blood_count_low" or kind == "adverse_effect" and (effect in flag.effects or any(
                    e.key == effect and e.toxicity == flag.toxicity for e in kb.drugs[fact.drug].adverse_effects)):
                return True
    return False


def count_open_from(kb: KnowledgeBase, flag: DrugRedFlag, year: CareYear, event: Event) -> Event | None:
    """The visit a low count still waits from when `event` begins (None: no low count, or it has been seen back in
    range): the latest showing the harm (`_count_harm`) or a full count still below the reference range, with no full
    count back in range since."""
    since = None
    for earlier in year.events[:event.index - 1]:
        counts = {f.lab: f.value for f in earlier.facts if isinstance(f, LabFact) and f.lab in flag.labs}
        if _count_harm(kb, flag, earlier):
            since = earlier
        elif since is not None and set(counts) == set(flag.labs):
            since = None if all(v >= kb.labs[lab].reference[0] for lab, v in counts.items()) else earlier
    return since


def _adverse_pending(year: CareYear, event: Event) -> dict[str, str]:
    """drug -> the side effect reported of it (an `AdverseFact`) still awaiting action when `event` begins: not yet
    stopped, lowered, or kept for it with its measures (`adverse_stop`'s reading)."""
    pending: dict[str, str] = {}
    for earlier in year.events[:event.index - 1]:
        for fact in earlier.facts:
            if isinstance(fact, AdverseFact):
                pending[fact.drug] = fact.effect
            elif isinstance(fact, MedicationFact) and (fact.action in ("stop", "decrease") or fact.action == "continue"
                                                       and fact.reason.startswith("adverse_effect:")):
                pending.pop(fact.drug, None)
    return pending


def _next_is_adverse_action(year: CareYear, event: Event, drug: str) -> bool:
    """Whether the next word on `drug` after `event` (that visit's other facts included) is its side effect's action:
    a stop (for any reason: a complication may replace it first), a lower dose, or a keep for the effect with its
    measures; none before the year ends passes (the record ends with the drug still held)."""
    for later in year.events[event.index - 1:]:
        for fact in later.facts:
            if isinstance(fact, MedicationFact) and fact.drug == drug:
                return fact.action in ("stop", "decrease") or fact.reason.startswith("adverse_effect:")
    return True


def red_flag_violations(kb: KnowledgeBase, year: CareYear) -> list[str]:
    """`drug_red_flag_same_day`."""
    flags, spans, out = red_flag_symptoms(kb), taking_spans(year), []
    for event in year.events:
        for fact in event.facts:
            flag = flags.get(fact.symptom) if isinstance(fact, SymptomFact) else None
            if flag is None:
                continue
            taking, _ = _on_record(year, event, spans)
            stopped = {f.drug for f in event.facts if isinstance(f, MedicationFact) and f.action == "stop"}
            warned = {d for d in taking | stopped if flag.warns_of(kb.drugs[d])}
            waiting = count_open_from(kb, flag, year, event)
            if not warned and waiting is not None:
                # (no such drug taken, a low count not yet seen back in range: the count that day all the same)
                counted = {f.lab for f in event.facts if isinstance(f, LabFact) and f.lab in flag.labs}
                if counted != set(flag.labs):
                    out.append(fail("drug_red_flag_same_day", year, event, f"{fact.symptom} told with the low count of "
                                    f"{waiting.event_id} not seen recovered, and {sorted(set(flag.labs) - counted)} "
                                    "not measured that day"))
                if not any(isinstance(f, AdviceFact) and f.advice == flag.recovering_advice for f in event.facts):
                    out.append(fail("drug_red_flag_same_day", year, event, f"{flag.recovering_advice} not said"))
            for drug in sorted(d for d in taking | stopped if flag.warns_of(kb.drugs[d])):
                counts = {f.lab: f.value for f in event.facts if isinstance(f, LabFact) and f.lab in flag.labs}
                low = [lab for lab, value in counts.items() if (h := kb.labs[lab].harm_below) is not None and value < h]
                given_back = any(isinstance(f, MedicationFact) and f.drug == drug and f.action == "continue"
                                 and f.reason == "blood_count_normal" for f in event.facts)
                if set(counts) != set(flag.labs):
                    out.append(fail("drug_red_flag_same_day", year, event, f"{fact.symptom} told on {drug}, and "
                                    f"{sorted(set(flag.labs) - set(counts))} not measured that day"))
                elif low and drug not in stopped:
                    out.append(fail("drug_red_flag_same_day", year, event, f"{drug} not stopped with {low} below "
                                    "the harm threshold"))
                elif not low and drug in (pending := _adverse_pending(year, event)):
                    # (held for the count; a side effect awaiting action decides what comes of the drug, not the
                    # normal count: never given back, and its next change is the side effect's action)
                    if given_back:
                        out.append(fail("drug_red_flag_same_day", year, event, f"{drug} given back by a normal count "
                                        f"while its {pending[drug]} awaits action"))
                    if not _next_is_adverse_action(year, event, drug):
                        out.append(fail("drug_red_flag_same_day", year, event, f"{drug} held for the count with its "
                                        f"{pending[drug]} awaiting action, and not next acted on for it"))
                elif not low and not given_back:
                    out.append(fail("drug_red_flag_same_day", year, event, f"{fact.symptom} told on {drug}: not "
                                    "held for the count and given back with its result"))
                if not any(isinstance(f, AdviceFact) and f.advice == flag.advice for f in event.facts):
                    out.append(fail("drug_red_flag_same_day", year, event, f"{flag.advice} not said"))
    return out


def low_count_violations(kb: KnowledgeBase, year: CareYear) -> list[str]:
    """`low_count_rechecked`: a low count (below its harm level, or a drug stopped for the harm) is repeated, every lab
    of the flag, at the first visit `recheck_days` or more after it, and again after each full count still below the
    reference range, until one is back in range (or the year ends first)."""
    out = []
    for flag in kb.drug_red_flags.values():
        waiting: Event | None = None
        for event in year.events:
            counts = {f.lab: f.value for f in event.facts if isinstance(f, LabFact) and f.lab in flag.labs}
            if waiting is not None and days_between(waiting.date, event.date) >= flag.recheck_days \
                    and set(counts) != set(flag.labs):
                out.append(fail("low_count_rechecked", year, event, f"the low count of {waiting.event_id} "
                                f"({waiting.date}) not repeated {days_between(waiting.date, event.date)} days on "
                                f"(within {flag.recheck_days}, or at the first visit after)"))
                break  # (one per year: the visits after it wait on the same repeat)
            if _count_harm(kb, flag, event):
                waiting = event
            elif waiting is not None and set(counts) == set(flag.labs):
                waiting = None if all(v >= kb.labs[lab].reference[0] for lab, v in counts.items()) else event
    return out


def class_harm_violations(kb: KnowledgeBase, year: CareYear) -> list[str]:
    """`class_harm_not_repeated`."""
    harmed: dict[str, str] = {}  # toxicity -> the drug stopped for it
    out = []
    for event in year.events:
        for fact in event.facts:
            if not isinstance(fact, MedicationFact):
                continue
            drug = kb.drugs[fact.drug]
            if fact.action == "start":
                out += [fail("class_harm_not_repeated", year, event, f"{fact.drug} started after {harmed[kind]} "
                             f"was stopped for a {kind} harm") for kind in drug.toxicities if kind in harmed]
            elif fact.action == "stop" and fact.reason and fact.reason.startswith("adverse_effect:"):
                key = fact.reason.partition(":")[2]
                effect = next((e for e in drug.adverse_effects if e.key == key), None)
                if effect is not None and effect.bars_kind is not None:
                    harmed.setdefault(effect.bars_kind, fact.drug)
    return out


def advice_safety_violations(kb: KnowledgeBase, year: CareYear) -> list[str]:
    """`advice_safe_for_condition`."""
    spans, out = taking_spans(year), []
    for event in year.events:
        for fact in event.facts:
            instead = kb.advice[fact.advice].instead if isinstance(fact, AdviceFact) else None
            if instead is None:
                continue
            _, conditions = _on_record(year, event, spans)
            if unsafe := conditions & set(instead.conditions):
                out.append(fail("advice_safe_for_condition", year, event, f"{fact.advice} said with "  # type: ignore[union-attr]
                                f"{sorted(unsafe)} on record ({instead.advice} instead)"))
    return out


def _cautioned_by(kb: KnowledgeBase, fact: AllergyFact | HistoryFact) -> frozenset[str]:
    """Drugs an allergy or a past illness qualifies (given with a caution)."""
    if isinstance(fact, AllergyFact):
        caution = kb.allergy_groups[fact.group].caution
        return kb.expand(caution.drugs) if caution is not None else frozenset()
    return kb.expand([k for r in kb.contraindications if r.history == fact.history and r.level == "caution"
                      for k in [*r.classes, *r.drugs]])


def caution_when_told_violations(kb: KnowledgeBase, year: CareYear) -> list[str]:
    """`caution_when_told`."""
    spans, out = taking_spans(year), []
    for event in year.events:
        taking = {d for d, runs in spans.items() if any(start < event.date and (end is None or event.date < end)
                                                        for start, end in runs)}
        for fact in event.facts:
            if not isinstance(fact, AllergyFact | HistoryFact):
                continue
            for drug in sorted(taking & _cautioned_by(kb, fact)):
                if not any(isinstance(f, CautionFact) and f.drug == drug for f in event.facts):
                    what = fact.group if isinstance(fact, AllergyFact) else fact.history
                    out.append(fail("caution_when_told", year, event, f"{what} told while {drug} is taken, and "
                                    "its caution not said"))
    return out


def blood_test_violations(kb: KnowledgeBase, year: CareYear) -> list[str]:
    """`blood_tests_within_reach`."""
    profile = next((kb.economic_profiles[t.option] for t in year.persona.traps if t.category == "lifestyle_economic"),
                   None)
    interval = profile.min_blood_test_interval_days if profile is not None else None
    if interval is None:
        return []
    out = []
    for event in year.events:
        for fact in event.facts:
            if not (isinstance(fact, MedicationFact) and fact.action == "start"):
                continue
            sooner = [(m.lab, min(m.every_days, m.recheck_days or m.every_days)) for m in kb.drugs[fact.drug].monitoring
                      if kb.labs[m.lab].kind == "lab" and min(m.every_days, m.recheck_days or m.every_days) < interval]
            if sooner:
                out.append(fail("blood_tests_within_reach", year, event, f"{fact.drug} started needing {sooner} "
                                f"(days) with blood tests only every {interval} days"))
    return out


SEDATING = "sedating"
"""The harm whose start calls for the drowsiness and driving warning."""


def sedation_violations(kb: KnowledgeBase, year: CareYear) -> list[str]:
    """`sedation_warned`."""
    warning = next(a for a in kb.advice.values() if a.on_start == SEDATING)
    job = next((o for o in kb.people.occupations if o.key == year.persona.occupation_key), None)
    at_work = warning.instead is not None and job is not None and bool(set(job.traits) & set(warning.instead.traits))
    wanted = warning.instead.advice if at_work and warning.instead is not None else warning.key
    out = []
    for event in year.events:
        said = {f.advice for f in event.facts if isinstance(f, AdviceFact)}
        for fact in event.facts:
            if not (isinstance(fact, MedicationFact) and fact.action == "start"
                    and SEDATING in kb.drugs[fact.drug].toxicities):
                continue
            own = kb.drugs[fact.drug].start_advice
            if wanted not in said and not (not at_work and own is not None and own in said):
                out.append(fail("sedation_warned", year, event, f"{fact.drug} started without the warning "
                                f"{wanted} (job: {year.persona.occupation_key})"))
    return out
