"""IG, inference generation: may this patient be given a drug that the condition's guidelines offer? About
half the drugs asked about are barred by a disclosed fact (gold "No, because …", every barring fact named)
and half are safe although a drug of the same step is barred (gold "Yes …" with the fact that does not
apply), so neither answer wins by default. Plus: does a disclosed habit work against the advice; is the dose
the pharmacy dispensed the patient's dose."""

from __future__ import annotations

import random
from datetime import date

from medmemorybench.normalize import normalize_text
from medmemorybench.questions.facts import REMEDY_REGIMEN, Draft, FactFinder
from medmemorybench.questions.models import GoldFact
from medmemorybench.questions.spec import QuestionType, register
from medmemorybench.render.models import regular_session_id
from medmemorybench.simulate.models import Event, MedicationFact, Trap
from medmemorybench.simulate.rng import rng_for
from medmemorybench.simulate.timeline import state_on


def make(finder: FactFinder, checkpoint: int, rng: random.Random) -> list[Draft]:
    drafts: list[Draft] = []
    ever = finder.ever_given()
    joiner = finder.say("joiner", "and")
    steps = {s.key: s for s in finder.condition.care_path}
    for trap, event in finder.disclosed(checkpoint):
        detail = finder.trap_detail(trap)
        # (a drug "to lower my blood pressure" is asked about once that is what is being treated: the diagnosis made,
        # and the step's own complication or lab, where it has one)
        for forbidden in trap.forbidden:
            drug = forbidden.drug
            if forbidden.step not in steps or not finder.in_pool(drug, "shared") or drug in ever \
                    or not finder.step_applies(steps[forbidden.step], checkpoint):
                continue
            purpose = finder.step_purpose(forbidden.step)
            fields = {"drug": finder.drug(drug), "purpose": purpose}
            barring = finder.forbidding(drug, checkpoint)
            if trap in barring:  # one fact per drug, naming every disclosed fact that bars it (and every drug taken
                # and stated rule that does, `Ruling`); a draft per barring trap's category (the schedule takes one,
                # preferring a category not yet tested)
                ruling = finder.ruling(drug, checkpoint)._replace(traps=[])
                reasons = joiner.join(r.rstrip(".。") for r in [*(finder.trap_reason(t) for t in barring), *(
                    [finder.barred_reasons(ruling, checkpoint)] if ruling.taken or ruling.rules else [])])
                answer = finder.say("ig", "barred", drug=finder.drug(drug), reasons=reasons)
                decided = finder.barred_evidence(ruling, checkpoint)[0] if ruling.taken or ruling.rules else []
                evidence = [event, *(finder.disclosure(t) for t in barring if t is not trap), *decided]
                facts = [finder.polarity_fact("no"), *(finder.trap_fact(t, group="reason") for t in barring),
                         *finder.reason_facts(ruling)]
                drafts.append(Draft("IG", "ig.drug_suggestion", fields, answer, [e for e in evidence if e], [detail],
                                    f"ig:{drug}", kind="suggest:no", trap_category=trap.category,
                                    common_wrong_answer=finder.say("ig", "wrong_yes", **fields), facts=facts))
            for safe in steps[forbidden.step].drug_keys:
                # (yes only when nothing bars or qualifies it on the day: a drug taken since may combine with it
                # only with care, as escitalopram with rasagiline; no when one of its kind is taken already)
                if safe == drug or safe in ever or not finder.in_pool(safe, "shared"):
                    continue
                fields = {"drug": finder.drug(safe), "purpose": finder.step_purpose(forbidden.step)}
                if (taken := finder.same_kind_taken(safe, checkpoint)) is not None:
                    drafts += _same_kind(finder, safe, taken, checkpoint, "ig.drug_suggestion", fields, "suggest")
                elif finder.ruling(safe, checkpoint).allowed:
                    drafts.append(_suitable(finder, safe, forbidden.step, trap, event, detail))
        if trap.category == "medication_preference":
            drafts.append(Draft("IG", "ig.preference", {"condition_lay": finder.condition_lay()},
                                finder.say("ig", "preference", preference=detail), [event], [detail],
                                "ig:preference", kind="preference", trap_category=trap.category,
                                common_wrong_answer=finder.say("ig", "preference_wrong"),
                                facts=[finder.trap_fact(trap)]))
        if trap.category == "diet_preference" and trap.undermined_advice:
            advice = finder.t(finder.kb.advice[trap.undermined_advice[0]].text)
            answer = finder.say("ig", "habit", habit=detail, advice=advice)
            drafts.append(Draft("IG", "ig.habit", {"condition_lay": finder.condition_lay()}, answer, [event],
                                [detail], f"ig:habit:{trap.option}", kind="habit", trap_category=trap.category,
                                common_wrong_answer=finder.say("ig", "habit_wrong"), facts=[finder.trap_fact(trap)]))
    drafts += _take_now(finder, checkpoint)
    drafts += _dispensed(finder, checkpoint)
    drafts += _remedies(finder, checkpoint)
    return drafts


def _suitable(finder: FactFinder, drug: str, step: str, trap: Trap, event: Event, detail: str) -> Draft:
    """Yes for a guideline drug nothing on record bars, with the disclosed fact that does not rule it out."""
    fields = {"drug": finder.drug(drug), "purpose": finder.step_purpose(step)}
    fact = finder.say("ig", "yes_fact", detail=finder.trap_reason(trap))
    answer = finder.say("ig", "suitable", drug=fields["drug"], fact=fact)
    return Draft("IG", "ig.drug_suggestion", fields, answer, [event], [detail], f"ig:{drug}", kind="suggest:yes",
                 trap_category=trap.category, common_wrong_answer=finder.say("ig", "wrong_no", **fields),
                 facts=[finder.polarity_fact("yes")])


def _same_kind(finder: FactFinder, drug: str, taken: str, checkpoint: int, template: str, fields: dict[str, str],
               kind: str) -> list[Draft]:
    """No for a drug that does the job of one the patient takes (`FactFinder.same_kind_taken`): "you already take
    amlodipine, which does what nifedipine would", with the visit that started it (none where the record never
    told it)."""
    told = [e for e, f in finder.facts(checkpoint, MedicationFact) if f.drug == taken][:1]  # type: ignore[union-attr]
    told = told or [e for t, e in finder.disclosed(checkpoint) if t.option == taken][:1]
    if not told:
        return []
    name, other = finder.drug(drug), finder.drug(taken)
    group = finder.t(finder.kb.classes[finder.kb.drugs[taken].drug_class].name)
    answer = finder.say("ig", "same_kind", drug=name, taken=other, kind=group)
    return [Draft("IG", template, fields, answer, told, [other], f"ig:{drug}", kind=f"{kind}:no",
                  common_wrong_answer=finder.say("ig", "wrong_yes_plain", drug=name),
                  facts=[finder.polarity_fact("no"), finder.drug_fact(taken, group="reason")])]


def _remedies(finder: FactFinder, checkpoint: int) -> list[Draft]:
    """May the patient take a drug for a passing complaint: a common remedy they might reach for (`answers.otc_use`)
    or a course for an acute illness they could catch (`intercurrent.yaml`, the illnesses their sex and age allow)?
    (Not the drugs of diseases the patient does not have: "say I one day had polycystic kidneys ..." is no question a
    patient asks.)
    No when a disclosed fact or a drug they take now bars it (each named once), or when they take one of its kind
    (`_same_kind`), yes when no rule bars or qualifies it (no caution, no dose cap). A drug barred only by other rules
    (age, kidney function) is left out: the year's records do not always state what decides them. The fact key is the
    drug's, as in `make`: a drug is asked about once, whatever for."""
    upto = finder.upto(checkpoint)
    if not upto:
        return []
    asks: list[tuple[str, str | None, str, dict[str, str], str]] = []  # (drug, regimen, template, fields, yes answer)
    uses = finder.phrasing.common("answers")["otc_use"]
    for drug in finder.remedies():
        name = finder.drug(drug)
        asks.append((drug, REMEDY_REGIMEN, "ig.over_the_counter", {"drug": name, "purpose": uses[drug]},
                     finder.say("ig", "otc_fine", drug=name, purpose=uses[drug])))
    for illness in finder.possible_illnesses():
        for candidate in illness.candidates:
            name, caught = finder.drug(candidate.drug), finder.t(illness.lay)
            asks.append((candidate.drug, candidate.regimen, "ig.illness_drug", {"drug": name, "illness": caught},
                         finder.say("ig", "illness_fine", drug=name, illness=caught)))
    drafts: list[Draft] = []
    for drug, regimen, template, fields, yes in asks:
        if drug in finder.ever_given() or finder.in_pool(drug, "abs"):
            continue
        kind = template.removeprefix("ig.")
        ruling = finder.ruling(drug, checkpoint, regimen)
        if (taken := finder.same_kind_taken(drug, checkpoint)) is not None:
            drafts += _same_kind(finder, drug, taken, checkpoint, template, fields, kind)
        elif ruling.allowed is False:
            evidence, key = finder.barred_evidence(ruling, checkpoint)
            answer = finder.say("ig", "barred", drug=fields["drug"], reasons=finder.barred_reasons(ruling, checkpoint))
            drafts.append(Draft("IG", template, fields, answer, evidence, [key], f"ig:{drug}", kind=f"{kind}:no",
                                trap_category=ruling.traps[0].category if ruling.traps else None,
                                common_wrong_answer=finder.say("ig", "wrong_yes_plain", drug=fields["drug"]),
                                facts=[finder.polarity_fact("no"), *finder.reason_facts(ruling)]))
        elif ruling.allowed:
            drafts.append(Draft("IG", template, fields, yes, [upto[-1]], [], f"ig:{drug}", kind=f"{kind}:yes",
                                common_wrong_answer=finder.say("ig", "wrong_no", drug=fields["drug"]),
                                facts=[finder.polarity_fact("yes")]))
    return drafts


def _take_now(finder: FactFinder, checkpoint: int) -> list[Draft]:
    """May I take this drug now? Yes for one the patient is on (with its dose), no for one stopped for a reason
    (with the reason). Both polarities have the same wording, so being asked tells nothing. The fact key holds
    the drug's state: a drug is asked again only once its state has changed (a new dose, stopped since)."""
    upto = finder.upto(checkpoint)
    if not upto:
        return []
    drafts: list[Draft] = []
    state = state_on(finder.year, upto[-1].date)
    for drug, dose in state.medications.items():
        if dose.until is not None and (date.fromisoformat(dose.until) - date.fromisoformat(upto[-1].date)).days \
                <= COURSE_ENDING_DAYS:
            continue  # (a course in its last days: whether it is still to be taken "now" is a quibble)
        value = finder.dose_text(dose.dose, dose.unit)
        answer = finder.say("ig", "carry_on", drug=finder.drug(drug), dose=value,
                            frequency=finder.words.word("frequency", dose.frequency))
        drafts.append(Draft("IG", "ig.take_now", {"drug": finder.drug(drug)}, answer,
                            [e for e in upto if e.date == dose.since][:1], [value], f"ig:{drug}:on:{dose.since}",
                            kind="take:yes",
                            common_wrong_answer=finder.say("ig", "wrong_no", drug=finder.drug(drug)),
                            facts=[finder.polarity_fact("yes"), finder.quantity_fact(value, required=False)]))
    for event, fact in finder.facts(checkpoint, MedicationFact):
        if fact.action != "stop" or fact.drug in state.medications:  # type: ignore[union-attr]
            continue
        reason = _stop_reason(finder, fact, event)  # type: ignore[arg-type]
        if reason is None:
            continue
        why, key, reason_fact = reason
        name = finder.drug(fact.drug)  # type: ignore[union-attr]
        drafts.append(Draft("IG", "ig.take_now", {"drug": name}, finder.say("ig", "stopped", drug=name, why=why),
                            [event], [key], f"ig:{fact.drug}:off", kind="take:no",  # type: ignore[union-attr]
                            common_wrong_answer=finder.say("ig", "wrong_restart", drug=name),
                            facts=[finder.polarity_fact("no"), reason_fact]))
    drafts += _finished_courses(finder, checkpoint, set(state.medications))
    return drafts


def _finished_courses(finder: FactFinder, checkpoint: int, taking: set[str]) -> list[Draft]:
    """Should I still be taking the antibiotic (a course for an acute illness, long over)? No: it was a course, and it
    has run its days. The right answer says so (`course_over`: the words that tell a course is done); another reason
    ("it upset your stomach") is wrong."""
    drafts = []
    for event, fact in finder.facts(checkpoint, MedicationFact):
        if fact.action != "start" or not fact.course_days or fact.drug in taking \
                or not fact.reason.startswith("illness:"):  # type: ignore[union-attr]
            continue
        illness = finder.kb.illnesses[fact.reason.partition(":")[2]]  # type: ignore[union-attr]
        name = finder.drug(fact.drug)  # type: ignore[union-attr]
        answer = finder.say("ig", "course_done", drug=name, days=str(fact.course_days),  # type: ignore[union-attr]
                            illness=finder.illness_lay(illness))
        over = GoldFact(text=finder.say("ig", "course_over_text"), kind="gist",
                        aliases=list(finder.phrasing.common("course_over")))
        drafts.append(Draft("IG", "ig.take_now", {"drug": name}, answer, [event], [str(fact.course_days)],
                            f"ig:{fact.drug}:off", kind="take:no",  # type: ignore[union-attr]
                            common_wrong_answer=finder.say("ig", "wrong_restart", drug=name),
                            facts=[finder.polarity_fact("no"), over]))
    return drafts


COURSE_ENDING_DAYS = 2
"""A course that ends within this many days of the last visit is not asked about as taken now."""

DISPENSED_FORMS = ("tablet", "capsule")
"""Forms whose box states the strength, so "the pharmacy gave me X 20 mg" makes sense (not an insulin pen dialled
to a dose, an inhaler or a CPAP pressure)."""


def _dispensed(finder: FactFinder, checkpoint: int) -> list[Draft]:
    """The pharmacy handed me this drug at this dose: is that my dose? Yes when it is the dose now; no when it is
    `FactFinder.other_dose` (the dose before the last change, the commonest dispensing slip, or a neighbouring
    strength). The side is a coin per drug and dose (seeded, the same at every checkpoint), so being asked tells
    nothing. The fact key is `_take_now`'s: a drug's state is asked about once, either way."""
    upto = finder.upto(checkpoint)
    if not upto:
        return []
    drafts: list[Draft] = []
    for drug, dose in state_on(finder.year, upto[-1].date).medications.items():
        since = [e for e in upto if e.date == dose.since][:1]
        other = finder.other_dose(drug, dose, checkpoint)
        if other is None or not since or finder.kb.drugs[drug].forms[0].form not in DISPENSED_FORMS:
            continue
        right = rng_for(finder.year.seed, finder.year.persona.persona_id,
                        f"questions/ig/dispensed/{drug}/{dose.since}").random() < 0.5
        current = finder.dose_text(dose.dose, dose.unit)
        asked = current if right else finder.dose_text(other, dose.unit)
        name, frequency = finder.drug(drug), finder.words.word("frequency", dose.frequency)
        fields = {"drug": name, "dose": asked, "frequency": frequency}
        if right:
            answer = finder.say("ig", "dispensed_right", drug=name, dose=current, frequency=frequency)
            wrong = finder.say("ig", "dispensed_wrong_no", drug=name, dose=asked)
            facts = [finder.polarity_fact("yes"), finder.quantity_fact(current, required=False)]
        else:
            answer = finder.say("ig", "dispensed_wrong", drug=name, current=current, asked=asked, frequency=frequency)
            wrong = finder.say("ig", "dispensed_wrong_yes", drug=name, dose=asked)
            facts = [finder.polarity_fact("no"), finder.quantity_fact(current)]
        drafts.append(Draft("IG", "ig.dispensed_dose", fields, answer, since, [current], f"ig:{drug}:on:{dose.since}",
                            kind=f"dispensed:{'yes' if right else 'no'}", common_wrong_answer=wrong, side_by_coin=True,
                            facts=facts))
    return drafts


def _stop_reason(finder: FactFinder, fact: MedicationFact, event: Event) -> tuple[str, str, GoldFact] | None:
    """Why a drug was stopped, as the gold says it, the key fact a right answer names (as the visit said it), and that
    fact as a gold fact."""
    code, _, detail = fact.reason.partition(":")
    if code == "adverse_effect":
        effect = next(e for e in finder.kb.drugs[fact.drug].adverse_effects if e.key == detail)
        name = finder.t(effect.name)
        return finder.say("ig", "stopped_adverse", effect=name), name, finder.name_fact(name, [finder.t(effect.lay)])
    if code == "replaced_by" and detail in finder.kb.drugs:
        new = finder.drug(detail)
        return finder.say("ig", "stopped_replaced", drug=new), new, finder.drug_fact(detail)
    if code == "diagnosis_revised":
        said = finder.session_text.get(regular_session_id(event.event_id), "")
        condition = finder.condition_lay()
        if normalize_text(condition) not in said:  # (the visit named the diagnosis, not the patient's words for it)
            condition = finder.t(finder.condition.name)
        return (finder.say("ig", "stopped_diagnosis", condition=condition), condition,
                finder.diagnosis_fact(finder.condition.name, finder.condition.icd11.code))
    return None


register(QuestionType(
    code="IG", name="inference generation (patient-specific advice)", order=5, make=make, quota=2, judged=True,
    balanced=True,
    rubric="yes or no as the gold says, with the patient's own fact that decides it",
))
