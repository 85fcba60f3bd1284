"""MQ, multiple choice: four options, one to three correct. Which are safe for this patient (against a
disclosed trap), or which the patient takes now. Options are guideline drugs of the `shared` pool
(see `FactFinder._drug_pools`): never a drug an abstention question asks about."""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterator
from itertools import combinations
from math import comb

from medmemorybench.questions.facts import Draft, FactFinder
from medmemorybench.questions.spec import QuestionType, register
from medmemorybench.render.fields import trap_detail
from medmemorybench.simulate.models import Event, MedicationFact
from medmemorybench.simulate.rng import rng_for
from medmemorybench.simulate.timeline import state_on

LETTERS = "ABCD"
CHEAP_USD = 10
"""A monthly cost no reader would doubt fits a told budget (a generic at a few dollars a month)."""
SLOT_CYCLE = 12
"""A multiple of the number of letter sets of each size (4, 6, 4): where a patient's rotation starts."""


def _labelled(finder: FactFinder, picks: list[tuple[str, bool]]) -> tuple[list[str], list[str]]:
    options = [f"{LETTERS[i]}. {finder.drug(d)}" for i, (d, _) in enumerate(picks)]
    return options, [LETTERS[i] for i, (_, ok) in enumerate(picks) if ok]


def _draw(finder: FactFinder | None, rng: random.Random, right: list[str], wrong: list[str], slot: int = 0
          ) -> list[tuple[str, bool]] | None:
    """1-3 right of 4, the count drawn uniformly among those the pools allow; None when 4 cannot be made. With a
    `finder`, options are drawn only among those its cohort prior keeps (for the large pools of hypothetical
    questions; the own condition's pools are too small to thin)."""
    counts = [n for n in (1, 2, 3) if n <= len(right) and 4 - n <= len(wrong)]
    if not counts:
        return None
    # weighted by how many letter sets have that many letters (4, 6, 4): every admissible answer equally likely,
    # so no constant answer beats chance
    n_right = rng.choices(counts, [comb(4, n) for n in counts])[0]
    right_picks = _fewest(finder, rng, right, n_right, True)
    wrong_picks = _fewest(finder, rng, wrong, 4 - n_right, False)
    if right_picks is None or wrong_picks is None:
        return None
    # the right options' letters: the patient's sets of that size in turn, from a seeded start (`slot`), so that no
    # letter set comes up more often than its share by chance (a constant answer must not beat 1 in 14)
    sets = list(combinations(range(4), n_right))
    letters = sets[slot % len(sets)]
    rng.shuffle(right_picks)
    rng.shuffle(wrong_picks)
    rights, wrongs = iter(right_picks), iter(wrong_picks)
    return [(next(rights), True) if i in letters else (next(wrongs), False) for i in range(4)]


def _fewest(finder: FactFinder | None, rng: random.Random, drugs: list[str], n: int, right: bool
            ) -> list[str] | None:
    """`n` of the drugs, at random, among those the cohort prior keeps on this side (`questions.cohort`: no drug
    may be mostly a right option, or mostly a wrong one); None when fewer than `n` are left."""
    if finder is not None and finder.prior is not None:
        drugs = [d for d in drugs if finder.prior.keeps(finder.year.persona.persona_id, d, right)]
    return rng.sample(drugs, n) if len(drugs) >= n else None


def make(finder: FactFinder, checkpoint: int, rng: random.Random) -> list[Draft]:
    drafts: list[Draft] = []
    # (each draft of each checkpoint its own turn in the patient's rotation of letter sets)
    start = rng_for(finder.year.seed, finder.year.persona.persona_id, "questions/mq/letters").randrange(SLOT_CYCLE)
    slots = itertools.count(start + checkpoint // 10 * 7)
    ever = finder.ever_given()
    guideline = {d for s in finder.condition.care_path for d in s.drug_keys}  # options are for the condition
    pool = sorted(d for d in finder.pools if finder.in_pool(d, "shared") and d not in ever and d in guideline)
    # right: indicated for this patient now, of no kind they already take (a second beta-blocker is no option,
    # `FactFinder.same_kind_taken`), and no rule bars it on the day (a drug the persona allows may have been barred
    # since by a fall in kidney function or a drug started); the cohort prior thins the options where the pools allow
    budget = next((t.fact.monthly_budget_usd for t, _ in finder.disclosed(checkpoint)
                   if t.category == "lifestyle_economic"), None)
    # (under a budget the patient told, a right option is plainly cheap: the records never say what a drug costs)
    safe = [d for d in pool if finder.indicated(d, checkpoint) and finder.same_kind_taken(d, checkpoint) is None
            and finder.ruling(d, checkpoint).permitted
            and (budget is None or finder.kb.drugs[d].monthly_cost_usd <= CHEAP_USD)]
    for trap, event in finder.disclosed(checkpoint):
        if trap.category == "lifestyle_economic" or not finder.diagnosed(checkpoint):
            continue  # (a drug out of budget is dear, not unsafe; "safe for my <condition>" needs the diagnosis)
        wrong = [d for d in pool if d in trap.forbidden_drugs]
        slot = next(slots)
        picks = (_draw(finder, rng, safe, wrong, slot) or _draw(None, rng, safe, wrong, slot)) if wrong else None
        if picks is None:
            continue
        options, correct = _labelled(finder, picks)
        # (the diagnosis is why the options are for this patient; the trap is why some are not)
        evidence = sorted({e.event_id: e for e in (event, *finder.diagnosis_events(checkpoint))}.values(),
                          key=lambda e: e.index)
        drafts.append(Draft("MQ", "mq.safe_options", {"condition_lay": finder.condition_lay()}, ", ".join(correct),
                            evidence, [finder.trap_detail(trap)], f"mq_safe:{trap.category}:{checkpoint}",
                            kind="safe", trap_category=trap.category, options=options, correct_options=correct))
    upto = finder.upto(checkpoint)
    if upto:
        courses = {f.drug for _, f in finder.facts(checkpoint, MedicationFact) if f.course_days}  # type: ignore[union-attr]
        # (a course, even one still running, is no "current treatment": whether its last days count is a quibble)
        current = sorted(set(state_on(finder.year, upto[-1].date).medications) - courses)
        # (a finished course is no distractor: a prior of "antibiotics are never current" would see through it)
        taken_before = sorted({f.drug for _, f in finder.facts(checkpoint, MedicationFact)}  # type: ignore[union-attr]
                              - set(current) - courses)
        # a stopped drug (like the current ones, other questions name it, so being named tells nothing) and drugs
        # other patients take (`FactFinder.distractors`)
        wrong = taken_before[:1] + finder.distractors()
        picks = _draw(None, rng, current, wrong, next(slots))
        if picks is not None:
            options, correct = _labelled(finder, picks)
            mentions = finder.facts(checkpoint, MedicationFact)
            starts = {f.drug: e for e, f in mentions if f.action != "stop"}  # type: ignore[union-attr]
            stops = {f.drug: e for e, f in mentions if f.action == "stop"}  # type: ignore[union-attr]
            right = [d for d, ok in picks if ok]
            # (a stopped drug among the options is wrong only by its stop: that visit is evidence too)
            evidence = sorted({e.event_id: e for e in [starts[d] for d in right if d in starts]
                               + [stops[d] for d, ok in picks if not ok and d in stops]}.values(),
                              key=lambda e: e.index)
            drafts.append(Draft("MQ", "mq.current_drugs", {}, ", ".join(correct), evidence,
                                [finder.drug(d) for d in right], f"mq_current:{checkpoint}", kind="current",
                                options=options, correct_options=correct))
        drafts += _ever_taken(finder, checkpoint, rng, pool, next(slots))
    drafts += _hypothetical(finder, checkpoint, rng, slots)
    return drafts


def _ever_taken(finder: FactFinder, checkpoint: int, rng: random.Random, pool: list[str], slot: int) -> list[Draft]:
    """Which of these have I been given at some point (a course long finished, a drug stopped, one taken now)? The
    year's memory, not today's list. Wrong: a guideline drug of the condition never given (other questions name
    those too, so being named tells nothing) and drugs other patients were given (`FactFinder.distractors`)."""
    starts: dict[str, Event] = {}
    for event, fact in finder.facts(checkpoint, MedicationFact):
        if fact.action in ("start", "administer") and fact.reason != "long_term":  # type: ignore[union-attr]
            starts.setdefault(fact.drug, event)  # type: ignore[union-attr]
    # (not a drug the patient's own words say they once took: "rosuvastatin after atorvastatin had failed")
    told = " ".join(trap_detail(finder.kb, t, "en") for t in finder.traps).lower()  # (English: one choice for all)
    wrong = [d for d in pool[:1] + finder.distractors(given=True)
             if not any(n.lower() in told for n in (finder.kb.drugs[d].name.en, *finder.kb.aliases.drug(d, "en")))]
    picks = _draw(None, rng, sorted(starts), [d for d in dict.fromkeys(wrong) if d not in starts], slot)
    if picks is None:
        return []
    options, correct = _labelled(finder, picks)
    right = [d for d, ok in picks if ok]
    return [Draft("MQ", "mq.ever_taken", {}, ", ".join(correct), [starts[d] for d in right],
                  [finder.drug(d) for d in right], f"mq_ever:{sorted(right)}", kind="ever", options=options,
                  correct_options=correct)]


ANTIBACTERIAL_ATC = "J01"
"""ATC group of the antibacterials for systemic use (the acute illnesses' antibiotics)."""


def _hypothetical(finder: FactFinder, checkpoint: int, rng: random.Random, slots: Iterator[int]) -> list[Draft]:
    """Which of these could I be given if I needed an antibiotic for an acute illness? Right: nothing on record bars
    or qualifies it; wrong: a disclosed fact or a drug taken bars it (`FactFinder.ruling`). Asked again only once its
    answer set has changed."""
    classes = finder.kb.classes
    antibiotics = {c.drug: c.regimen for i in finder.possible_illnesses() for c in i.candidates
                   if (classes[finder.kb.drugs[c.drug].drug_class].atc_prefix or "").startswith(ANTIBACTERIAL_ATC)}
    sets: list[tuple[str, str, dict[str, str], dict[str, str | None]]] = [
        ("antibiotic", "mq.antibiotic_options", {}, dict(sorted(antibiotics.items())))]
    ever = finder.ever_given()
    drafts: list[Draft] = []
    for entity, template, fields, drugs in sets:
        usable = [d for d in drugs if d not in ever and finder.foreign(d) and not finder.in_pool(d, "abs")]
        rulings = {d: finder.ruling(d, checkpoint, drugs[d]) for d in usable}
        right = [d for d in usable if rulings[d].allowed]
        wrong = [d for d in usable if rulings[d].allowed is False]
        picks = _draw(finder, rng, right, wrong, next(slots))
        if picks is None:
            continue
        options, correct = _labelled(finder, picks)
        barred = [rulings[d] for d, ok in picks if not ok]
        evidence = {e.event_id: e for r in barred for e in finder.barred_evidence(r, checkpoint)[0]}
        keys = list(dict.fromkeys(finder.barred_evidence(r, checkpoint)[1] for r in barred))
        trap = next((r.traps[0] for r in barred if r.traps), None)
        ordered = sorted(evidence.values(), key=lambda e: e.index)
        key = f"mq_hypothetical:{entity}:{sorted(right)}:{sorted(wrong)}"
        drafts.append(Draft("MQ", template, fields, ", ".join(correct), ordered, keys, key, kind="hypothetical",
                            trap_category=trap.category if trap else None, options=options, correct_options=correct))
    return drafts


register(QuestionType(
    code="MQ", name="multiple choice (1-3 correct of 4)", order=4, make=make, quota=2,
    scorers=("mq_exact", "mq_partial"),
))
