"""Answers that the other patients cannot give away: each drug is a "yes" as often as a "no" across the cohort.

A reader of the published questions without any memory could learn from the other patients, or from medicine
in general, that a drug is mostly barred (an NSAID for a patient with a chronic disease) or mostly allowed, and
answer by that prior. `CohortPrior` counts, for every drug a question could ask about, how many of the cohort's
patients may have it and how many may not at the end of their year (`FactFinder.ruling`); a question whose answer
is the drug's commoner one is kept only with the probability that evens the two out, drawn independently per
patient and drug. Kept answers then look like fair coins per drug: neither the prior nor its opposite beats
chance (forcing the counts equal would make the opposite win: the other patients' answers would always be the
other side). The audit's `cohort_prior` probe measures what is left (`dataset/audit.py`).

The rulings count what a patient *could* be asked; the questions asked lean by other means (a drug one is on is asked
"may I carry on?", a short course "should I still take it?", a remedy once a bar is disclosed). In a cohort of a
few dozen that leaning is noise; in 1,000 patients it is a prior (fluticasone nasal spray "no" 401 times in 401,
ezetimibe "yes" 109 in 109). `CohortPrior.lopsided` then evens, by the same coins, the drugs whose asked answers
lean further than a fair coin would, and `CohortPrior.leaning` the yes and no answers of all drugs together.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable

from medmemorybench.normalize import normalize_text
from medmemorybench.questions.facts import FactFinder
from medmemorybench.questions.models import Question
from medmemorybench.simulate.rng import rng_for

SLACK = 1.0
"""How far the commoner answer of a drug may stay ahead, in expectation, of its rarer one (1: even). A little slack
keeps more questions; the audit's `cohort_prior` probe checks that neither the prior nor its opposite then beats
chance by more than noise."""


LOPSIDED_SIGMAS = 3.0
"""A drug's asked yes/no answers over the cohort lean too far when the gap between them passes this many standard
deviations of a fair coin's (|yes - no| > 3 * sqrt(yes + no), counted in patients): 10 patients all "no" is too
far, 5 is not. Evening drugs with a smaller lean makes the opposite rule win instead (2 patients, one each side:
"the other patient's opposite" is always right); 2 sigmas did that on 1,000 patients (docs/benchmarks.md)."""


MIN_MINORITY = 0.15
"""A drug whose rarer answer is below this share of the cohort's patients is not asked about: thinning its commoner
answer would leave almost nothing, and what is left would lean on the few patients who do get the rare one (0.25
was tried: the audit's cohort-prior probe is no lower, and it kept 5-15 fewer IG per 20 patients)."""


COHORT_LEAD = 0.1
"""How far the cohort's commoner IG answer (yes or no, all drugs together) may lead the other, as a share of both
(`CohortPrior.leaning`). Each patient's strata may lead by `generate.TRIM_LEAD` either way, and a patient's only
question on a trap category (a "no") is asked first and never trimmed: no patient's schedule sees that twenty others
lead the same way, and over the cohort the leads add up (seed 3: 49 yes against 79 no). Half the balance test's bar
(0.2), so that a draw of the coins is not what keeps it."""


class CohortPrior:
    """Per drug (by its key: the same in every language), how many patients of the cohort may be given it and how
    many may not."""

    def __init__(self, seed: int, counts: dict[str, Counter[bool]] | None = None) -> None:
        self.seed = seed
        self.counts: dict[str, Counter[bool]] = counts or {}
        self.taken: Counter[str] = Counter()
        """Drug key -> how many patients take it at some checkpoint (for "which of these do I take?", whose
        wrong options are drugs other patients take: an option's being taken elsewhere then tells nothing)."""
        self.draw = 0
        """Which draw of the coins (`dataset.build.cohort_questions` draws again when one happens to leave a prior
        that predicts the answers); draw 0 is the first."""
        self.given: Counter[str] = Counter()
        """Drug key -> how many patients are given it during the year, courses included (for "which of these was I
        ever given?")."""

    @classmethod
    def of(cls, seed: int, finders: Iterable[FactFinder], checkpoints: list[int]) -> CohortPrior:
        """The prior of a cohort, from each patient's rulings at the checkpoints on every drug a question could ask
        whether they may be given (a drug no rule decides either way is not counted)."""
        prior = cls(seed)
        for finder in finders:
            prior.taken.update({d for checkpoint in checkpoints for d in finder.patient_at(checkpoint).taking})
            ever = finder.ever_given()
            prior.given.update(ever)
            for drug in finder.askable():
                if drug in ever or finder.in_pool(drug, "abs"):
                    continue  # (never asked whether it may be given: the patient has had it, or it is asked as absent)
                # (a drug of a kind the patient takes is a "no" whatever its ruling: IG's gold and MQ's options)
                sides = {False if finder.same_kind_taken(drug, checkpoint) else
                         finder.ruling(drug, checkpoint, finder.asked_regimen(drug)).allowed
                         for checkpoint in checkpoints} - {None}
                for allowed in sides:  # (each answer the patient would get at some checkpoint, once)
                    prior.counts.setdefault(drug, Counter())[allowed] += 1
        return prior

    def keeps(self, persona_id: str, drug: str, allowed: bool, slack: float = SLACK) -> bool:
        """Whether a question whose answer about this drug (a key) is `allowed` (yes, or a right option) may be asked
        of this patient: always for the drug's rarer answer, with the probability that evens the two for the
        commoner (times `slack`)."""
        counts = self.counts.get(drug)
        if not counts or not counts[allowed]:
            return True
        if min(counts[True], counts[False]) < MIN_MINORITY * (counts[True] + counts[False]):
            return False  # (a drug nearly always allowed, or nearly always barred, is not asked about at all)
        rate = slack * min(counts[True], counts[False]) / counts[allowed]
        if rate >= 1:
            return True
        salt = f"questions/cohort/{drug}/{allowed}" + (f"/draw{self.draw}" if self.draw else "")
        return rng_for(self.seed, persona_id, salt).random() < rate

    def lopsided(self, questions: list[Question], key_of: Callable[[str], str] = str.casefold) -> set[str]:
        """The query ids to leave out so that no drug's yes/no answers lean over the cohort beyond a fair coin's
        (`LOPSIDED_SIGMAS`): a drug whose rarer answer is below `MIN_MINORITY` loses all its questions, both answers;
        otherwise each patient's questions on its commoner answer are kept with the probability that evens the two (a
        coin per patient, drug and answer). A patient's only question on a trap category stays (every trap is
        tested). `key_of`: a question's subject -> the drug's key (the same in every language, so a build of one
        language draws the coins of a build of both)."""
        sides: dict[str, dict[str, set[str]]] = {}
        for q in questions:
            side = _polarity(q)
            if q.query_type == "IG" and q.subject and side:
                sides.setdefault(key_of(q.subject), {"yes": set(), "no": set()})[side].add(q.persona_id)
        leaving: set[tuple[str, str, str]] = set()  # (drug, patient, answer)
        for drug, patients in sides.items():
            yes, no = len(patients["yes"]), len(patients["no"])
            if abs(yes - no) <= LOPSIDED_SIGMAS * (yes + no) ** 0.5:
                continue
            if min(yes, no) < MIN_MINORITY * (yes + no):
                leaving |= {(drug, p, side) for side in ("yes", "no") for p in patients[side]}
                continue
            commoner = "yes" if yes > no else "no"
            salt = f"questions/cohort/lopsided/{drug}/{commoner}" + (f"/draw{self.draw}" if self.draw else "")
            leaving |= {(drug, p, commoner) for p in sorted(patients[commoner])
                        if rng_for(self.seed, p, salt).random() >= min(yes, no) / max(yes, no)}
        traps = Counter((q.persona_id, q.trap_category) for q in questions if q.trap_category)
        dropped = set()
        for q in questions:
            if q.subject and (key_of(q.subject), q.persona_id, _polarity(q)) in leaving:
                if q.trap_category and traps[(q.persona_id, q.trap_category)] == 1:
                    continue
                traps[(q.persona_id, q.trap_category)] -= 1
                dropped.add(q.query_id)
        return dropped

    def leaning(self, questions: list[Question]) -> set[str]:
        """The query ids to leave out so that the cohort's yes and no IG answers lean no further than `COHORT_LEAD`:
        questions on the commoner answer where that answer leads its stratum of one patient (what the patient's other
        questions name of the drug, as `generate._trim_unpaired` counts it), by a coin per question, at most the
        stratum's lead from each; a patient's only question on a trap category stays."""
        from medmemorybench.questions.generate import _named_text, _seen_in  # (generate imports this module)

        counts = Counter(_polarity(q) for q in questions if q.query_type == "IG")
        gap = counts["no"] - counts["yes"]
        if abs(gap) <= COHORT_LEAD * (counts["yes"] + counts["no"]):
            return set()
        commoner, other = ("no", "yes") if gap > 0 else ("yes", "no")
        # (per stratum of a patient where the commoner answer leads: its questions, and how many it leads by)
        leads: list[tuple[list[Question], int]] = []
        by_patient: dict[str, list[Question]] = {}
        for q in questions:
            by_patient.setdefault(q.persona_id, []).append(q)
        for patient in by_patient.values():
            items = [(q, _named_text(q, q.question)) for q in patient]  # type: ignore[arg-type]
            strata: dict[tuple[str, ...], dict[str, list[Question]]] = {}
            for position, (q, _) in enumerate(items):
                if q.query_type == "IG" and (side := _polarity(q)):
                    seen_in = _seen_in(normalize_text(q.subject or ""), items, skip=position)  # type: ignore[arg-type]
                    strata.setdefault(seen_in, {"yes": [], "no": []})[side].append(q)
            leads += [(sides[commoner], len(sides[commoner]) - len(sides[other])) for sides in strata.values()
                      if len(sides[commoner]) > len(sides[other])]
        salt = "questions/cohort/leaning" + (f"/draw{self.draw}" if self.draw else "")
        order = sorted(((q, n) for n, (stratum, _) in enumerate(leads) for q in stratum),
                       key=lambda pair: rng_for(self.seed, pair[0].persona_id, f"{salt}/{pair[0].query_id}").random())
        room = [lead for _, lead in leads]
        traps = Counter((q.persona_id, q.trap_category) for q in questions if q.trap_category)
        left, rarer = counts[commoner], counts[other]
        dropped: set[str] = set()
        for q, stratum in order:
            if left - rarer <= COHORT_LEAD * (left + rarer):
                break
            if not room[stratum] or (q.trap_category and traps[(q.persona_id, q.trap_category)] == 1):
                continue  # (a stratum evened; the only question testing a trap category stays)
            dropped.add(q.query_id)
            room[stratum] -= 1
            traps[(q.persona_id, q.trap_category)] -= 1
            left -= 1
        return dropped


def _polarity(question: Question) -> str | None:
    """A yes/no question's answer, from its structured polarity fact ("yes" or "no"; None for other questions)."""
    return next((f.text for f in question.facts if f.kind == "polarity"), None)
