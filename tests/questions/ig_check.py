"""Invariants of the built IG golds ("is this drug OK for me?") that a physician would reject, each re-derived from the
record and the knowledge base, not from the generator's own ruling (the seed-73 oracle read, issue 26):

- `ig_second_of_a_class_taken`: "yes, suitable" for a drug of a class (therapy group, drug_classes.yaml) the patient
  already takes (nifedipine added to amlodipine, P0004-C050-IG2);
- `ig_yes_beside_a_qt_drug`: "yes, nothing rules it out" for a drug that prolongs the QT interval while the patient
  takes another, one of the two a known risk (clarithromycin beside lithium, P0003-C020-IG1);
- `ig_once_daily_bar_on_a_once_daily_drug`: "no" for a drug barred by a once-a-day routine although the drug's
  course is once a day (doxycycline 100 mg once daily after the first day, P0001-C060-IG1).
"""

from __future__ import annotations

from collections.abc import Iterator

from medmemorybench.dataset.build import PatientBuild
from medmemorybench.knowledge.base import KnowledgeBase
from medmemorybench.simulate import state_on
from medmemorybench.simulate.models import PreferenceFact

ASKED_DRUG = ("ig.drug_suggestion", "ig.over_the_counter", "ig.illness_drug")
"""The IG templates that ask whether a drug the patient does not take may be given."""

ONCE_DAILY_COURSES = {
    "doxycycline": "BNF doxycycline; NICE NG79 sinusitis, NG120 cough, NG138 pneumonia, NG114 COPD exacerbation: "
    "200 mg on the first day, then 100 mg once a day (5 days in all)",
    "azithromycin": "BNF azithromycin; Zithromax label: 500 mg once a day for 3 days",
    "clarithromycin": "Biaxin XL label: 1000 mg (two 500 mg modified-release tablets) once a day",
}
"""Drugs whose course for the illnesses asked about is taken once a day (the physician's table, independent of the
knowledge base's dose entries): a once-a-day routine never bars them."""


def drug_key(kb: KnowledgeBase, name: str) -> str:
    """The drug a question's subject names (in either language)."""
    return next(k for k, d in kb.drugs.items() if name in (d.name.en, d.name.zh))


def qt_drugs(kb: KnowledgeBase) -> tuple[frozenset[str], frozenset[str]]:
    """The knowledge base's QT-prolonging drugs, as congenital long QT decides them: (known risk: barred; possible
    risk: given with ECGs). A drug with a QT toxicity counts as a known risk."""
    known = {d.key for d in kb.drugs.values() if "qt_prolonging" in d.toxicities}
    possible: set[str] = set()
    for rule in kb.contraindications:
        if rule.history == "long_qt_syndrome":
            (known if rule.level == "contraindicated" else possible).update(kb.expand([*rule.classes, *rule.drugs]))
    return frozenset(known), frozenset(possible - known)


def _yes(answer: str) -> bool:
    return answer.startswith(("Yes", "可以"))


def _taking(patient: PatientBuild, checkpoint: int) -> set[str]:
    return set(state_on(patient.year, patient.year.events[checkpoint - 1].date).medications)


def asked(kb: KnowledgeBase, patient: PatientBuild) -> Iterator[tuple[object, str, set[str]]]:
    """Each IG question on a drug not taken: (question, the drug, the drugs taken at its checkpoint)."""
    for q in patient.questions:
        if q.template in ASKED_DRUG and q.subject:
            yield q, drug_key(kb, q.subject), _taking(patient, q.checkpoint)


def second_of_a_class_taken(kb: KnowledgeBase, patients: list[PatientBuild]) -> list[str]:
    out = []
    for patient in patients:
        for q, drug, taking in asked(kb, patient):
            same = [t for t in taking if t != drug and kb.therapy_group(t) == kb.therapy_group(drug)]
            if _yes(q.answer) and same:  # type: ignore[attr-defined]
                out.append(f"[ig_second_of_a_class_taken] {q.query_id}: {drug} beside {same}")  # type: ignore[attr-defined]
    return out


def yes_beside_a_qt_drug(kb: KnowledgeBase, patients: list[PatientBuild]) -> list[str]:
    known, possible = qt_drugs(kb)
    out = []
    for patient in patients:
        for q, drug, taking in asked(kb, patient):
            if not _yes(q.answer) or drug not in known | possible:  # type: ignore[attr-defined]
                continue
            others = sorted(t for t in taking - {drug} if t in known or (t in possible and drug in known))
            if others:
                out.append(f"[ig_yes_beside_a_qt_drug] {q.query_id}: {drug} beside {others}")  # type: ignore[attr-defined]
    return out


def once_daily_bar_on_a_once_daily_drug(kb: KnowledgeBase, patients: list[PatientBuild]) -> list[str]:
    out = []
    for patient in patients:
        routines = [
            kb.preferences[t.option].text
            for t in patient.year.persona.traps
            if isinstance(t.fact, PreferenceFact) and kb.preferences[t.option].max_doses_per_day == 1
        ]
        told = [getattr(text, patient.language) for text in routines]
        for q, drug, _ in asked(kb, patient):
            if (
                drug in ONCE_DAILY_COURSES
                and not _yes(q.answer)
                and any(  # type: ignore[attr-defined]
                    said.rstrip(".。") in q.answer for said in told
                )
            ):  # type: ignore[attr-defined]
                out.append(f"[ig_once_daily_bar_on_a_once_daily_drug] {q.query_id}: {drug}")  # type: ignore[attr-defined]
    return out


CHECKS = (second_of_a_class_taken, yes_beside_a_qt_drug, once_daily_bar_on_a_once_daily_drug)
