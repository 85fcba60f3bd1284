"""What an MCD chain's link rests on: whether a fact told at one step is what the next step's decision was taken on,
read from the structured truth (the diagnosis a drug treats, the lab a step is raised on, the effect a drug is blamed
for, the results a wrong diagnosis was made on), not from `Event.triggered_by` (what prompted the visit)."""

from __future__ import annotations

from weakref import WeakKeyDictionary

from medmemorybench.questions.facts import FactFinder
from medmemorybench.simulate.models import (
    WITHDRAWN,
    AdherenceFact,
    AdverseFact,
    DiagnosisFact,
    Event,
    HistoryFact,
    LabFact,
    MedicationFact,
    SymptomFact,
    TestFact,
)

CHANGES = ("start", "administer", "increase", "decrease", "stop")
"""Medication actions that are a decision (a drug carried on is none)."""


def rests_on(finder: FactFinder, fact: object, earlier: Event, later: Event) -> bool:
    """Whether a decision told at `later` (a diagnosis, a test, a drug change, a blamed effect, a return after a
    wrong diagnosis, a lab that moved) was taken on `fact`, told at `earlier`."""
    return any(_grounds(finder, fact, decision, earlier, later) for decision in later.facts)


def is_causal_link(finder: FactFinder, earlier: Event, later: Event) -> bool:
    """Whether some fact told at `earlier` is what a decision told at `later` rests on."""
    return any(rests_on(finder, fact, earlier, later) for fact in earlier.facts)


def _grounds(finder: FactFinder, fact: object, decision: object, earlier: Event, later: Event) -> bool:
    condition = finder.condition
    if isinstance(decision, DiagnosisFact) and decision.status in ("suspected", "confirmed", "acute"):
        wrong = next((m for m in condition.misdiagnoses if m.icd11 == decision.icd11), None)
        if wrong is not None:  # (the results it was made on; what the patient felt where it rests on none)
            if isinstance(fact, LabFact):
                return any(r.lab == fact.lab and r.range[0] <= fact.value <= r.range[1] for r in wrong.findings) \
                    or fact.lab in wrong.screened_with
            return isinstance(fact, SymptomFact) and not wrong.findings
        diagnostic = {m.lab for m in condition.monitored if m.diagnostic}
        return isinstance(fact, (SymptomFact, TestFact)) or (isinstance(fact, LabFact) and fact.lab in diagnostic) \
            or _failed_first_thought(finder, fact, later)
    if isinstance(decision, DiagnosisFact) and decision.status == "complication":
        # (a complication follows from the disease found, or doses of its treatment missed; not from the tests that
        # found the disease)
        return (isinstance(fact, DiagnosisFact) and fact.status in ("confirmed", "complication")) \
            or isinstance(fact, AdherenceFact)
    if isinstance(decision, TestFact):  # (what was felt or found, what had not helped, the course it checks)
        return isinstance(fact, (SymptomFact, TestFact, LabFact)) or _failed_first_thought(finder, fact, later) \
            or (isinstance(fact, DiagnosisFact) and fact.status == "acute") \
            or (isinstance(fact, MedicationFact) and fact.reason.startswith("illness:"))
    if isinstance(decision, SymptomFact):  # (still unwell after what was first thought and given: the return)
        return _failed_first_thought(finder, fact, later)
    if isinstance(decision, AdverseFact):
        return isinstance(fact, MedicationFact) and fact.drug == decision.drug and fact.action != "stop"
    if isinstance(decision, MedicationFact) and decision.action in CHANGES and decision.reason != "long_term":
        return _drug_grounds(finder, fact, decision)
    if isinstance(decision, LabFact):  # (a lab that moved: the last change before it to a drug that moves it)
        return _moved_by(finder, fact, decision, earlier, later)
    return False


def _failed_first_thought(finder: FactFinder, fact: object, later: Event) -> bool:
    """A wrong first diagnosis, or the drug given for it, while it still stood at `later`: what the patient came back
    from. Once the results ruled it out (or revised it), what followed rests on its own findings: the diabetic kidney
    disease found in June is not a step on from the fatty liver suspected in February and ruled out in April (a drug
    given for it is: `_drug_grounds` reads its indication)."""
    if isinstance(fact, DiagnosisFact) and fact.status == "suspected":
        wrong = fact.icd11
    elif isinstance(fact, MedicationFact) and fact.reason == "misdiagnosis":
        wrong = (fact.indication or "").partition(":")[2]
    else:
        return False
    return not any(isinstance(f, DiagnosisFact) and f.icd11 == wrong and f.status in WITHDRAWN
                   for e in finder.events if e.index <= later.index for f in e.facts)


def _drug_grounds(finder: FactFinder, fact: object, decision: MedicationFact) -> bool:
    """Whether a drug change rests on `fact`: what it treats (`indication`), why it changed (`reason`), or the same
    drug's earlier change (a raise after the start)."""
    kind, _, key = (decision.indication or "").partition(":")
    reason, _, cause = decision.reason.partition(":")
    if isinstance(fact, MedicationFact):
        return fact.drug == decision.drug and fact.action in CHANGES \
            or (kind == "with" and fact.drug == key) or (reason == "replaced_by" and fact.drug == cause)
    if isinstance(fact, AdverseFact):
        return reason == "adverse_effect" or (reason == "toxicity" and fact.drug == decision.drug)
    if isinstance(fact, AdherenceFact):
        return fact.drug == decision.drug and reason in ("adherence", "repeat")
    if isinstance(fact, DiagnosisFact):
        if kind == "misdiagnosis" or reason in ("misdiagnosis", "diagnosis_revised"):
            return fact.icd11 == key or reason == "diagnosis_revised"
        if kind == "complication" or reason == "complication":
            return fact.status == "complication"
        if kind == "illness":
            return fact.status == "acute"
        return kind == "condition" and fact.status == "confirmed"
    if isinstance(fact, LabFact):  # (the lab it treats, or the marker its step is raised on, read off its target)
        step = next((s for s in finder.condition.care_path if s.key == decision.step), None)
        marker = {key} if kind == "lab" else set()
        if step is not None and (decision.action == "increase" or decision.reason in ("step_up", "add_on")):
            marker |= {step.marker} if step.marker else set()
        return fact.lab in marker and (fact.target is None or not fact.target[0] <= fact.value <= fact.target[1])
    if isinstance(fact, (SymptomFact, TestFact)):
        return kind == "illness"
    return isinstance(fact, HistoryFact) and kind == "history"


def drug_moves(finder: FactFinder, fact: MedicationFact, lab: str) -> bool:
    """Whether the drug of a medication fact moves `lab`, from its structured truth: its care step moves or targets
    it, or it was given for that lab (`lab:<key>`) or for the first diagnosis that the lab was kept for (amlodipine
    for a suspected hypertension, kept for the systolic pressure)."""
    step = next((s for s in finder.condition.care_path if s.key == fact.step), None)
    if step is not None:
        return lab in (*step.moves, *step.targets)
    kept_for = {f"misdiagnosis:{m.icd11}": m.kept_for for m in finder.condition.misdiagnoses}
    return fact.indication == f"lab:{lab}" or kept_for.get(fact.indication or "") == lab


_LAB_DRUGS: WeakKeyDictionary[FactFinder, dict[str, frozenset[str]]] = WeakKeyDictionary()
"""`lab_drugs` per patient (finder) and lab: every link of every chain asks it (`_moved_by`), and each answer reads
the whole year, so it is read once (it was over a third of `mcd.make`'s time)."""


def lab_drugs(finder: FactFinder, lab: str) -> frozenset[str]:
    """The drugs that move `lab`, the one answer to "does this drug move this lab" a chain asks: every drug of a care
    step that moves it, and every drug of the patient's year given so that it does (`drug_moves`)."""
    known = _LAB_DRUGS.setdefault(finder, {})
    if lab not in known:
        known[lab] = frozenset({d for s in finder.condition.care_path if lab in s.moves for d in s.drug_keys}
                               | {f.drug for e in finder.events for f in e.facts
                                  if isinstance(f, MedicationFact) and drug_moves(finder, f, lab)})
    return known[lab]


def _moved_by(finder: FactFinder, fact: object, decision: LabFact, earlier: Event, later: Event) -> bool:
    """Whether a change told at `earlier` is why `decision`'s lab moved by `later`: a drug that moves it
    (`lab_drugs`), with no other change to such a drug in between (the June UPCR follows the May switch, not the
    March start), or doses of one missed."""
    movers = lab_drugs(finder, decision.lab)
    if isinstance(fact, AdherenceFact):
        return fact.drug in movers
    if not (isinstance(fact, MedicationFact) and fact.drug in movers and fact.action in CHANGES):
        return False
    return not any(isinstance(f, MedicationFact) and f.drug in movers and f.action in CHANGES
                   for e in finder.events if earlier.index < e.index < later.index for f in e.facts)
