"""Blood pressure treated to its target, and revisions that keep hypertension, over 1,000 seeded patients (the seed-61
read: amlodipine 5 mg kept "since it's doing its job" at 154, 165, 176 mmHg in HFpEF and never raised; "essential
hypertension ruled out" at the visit that kept its drug because "the reading it controls is still too high"): a drug
judged by blood pressure is stepped up within four weeks of two readings above the goal on its present dose, is never
continued as "stable" above it, and a misdiagnosis whose finding the true condition has too is revised, not ruled
out. Each rule also has crafted violations that its check must catch.

Failure messages start with the rule's name in brackets (the names `docs/simulation.md` lists).
"""

from __future__ import annotations

from medmemorybench.render.fact_acts import FactSlots
from medmemorybench.render.templates import load_templates
from medmemorybench.simulate.models import DiagnosisFact, LabFact, MedicationFact
from tests.simulate.clinical import check
from tests.simulate.said_check import stable_violations
from tests.simulate.target_check import _short, _targets, higher_dose_allowed, revision_violations, stepped_violations

LAB = "systolic_bp"


def _edit(year, edits):  # noqa: ANN001, ANN202
    """The year with some visits' facts replaced (event id -> facts)."""
    return year.model_copy(update={"events": [e.model_copy(update={"facts": edits[e.event_id]})
                                              if e.event_id in edits else e for e in year.events]})


def _appended(year, *visits):  # noqa: ANN001, ANN202
    """The year with visits added after its last one ((date, facts) each)."""
    last = year.events[-1]
    added = [last.model_copy(update={"event_id": f"{last.event_id}X{i}", "index": last.index + i, "date": day,
                                     "facts": list(facts)}) for i, (day, facts) in enumerate(visits, start=1)]
    return year.model_copy(update={"events": [*year.events, *added]})


def _kept_at_year_end(kb, years):  # noqa: ANN001, ANN202
    """A year whose last record of a drug judged by blood pressure (its care step moves it) keeps it, with a higher
    dose allowed and not lowered for a harm since its last start or raise (`stepped_to_target` rightly leaves such a
    drug where it is: telmisartan lowered for hyperkalaemia is not raised past it again, a second agent is due), and
    the year's last reading inside the goal (readings appended after it are the whole run above it): the drug's last
    fact."""
    for year in years:
        steps = {s.key for s in kb.conditions[year.persona.condition].care_path if LAB in s.moves}
        last: dict[str, MedicationFact] = {}
        lowered: set[str] = set()
        readings = [f.value for e in year.events for f in e.facts if isinstance(f, LabFact) and f.lab == LAB]
        for event in year.events:
            for fact in event.facts:
                if isinstance(fact, MedicationFact):
                    last[fact.drug] = fact
                    if fact.action in ("start", "increase"):
                        lowered.discard(fact.drug)
                    if fact.action == "decrease" or fact.reason.startswith("adverse_effect:"):
                        lowered.add(fact.drug)
        for fact in last.values():
            if fact.step in steps and fact.action == "continue" and fact.reason in ("stable", "unchanged") \
                    and fact.drug not in lowered and higher_dose_allowed(kb, year, year.events[-1], fact) \
                    and not any(_short(kb, year, LAB, v, _targets(kb, year, fact).get(LAB)) for v in readings[-1:]):
                return year, fact
    raise AssertionError("no blood-pressure drug kept at the year's end among the 1,000 patients")


def test_stepped_to_target_no_blood_pressure_drug_left_above_goal(kb, years):
    check([v for year in years for v in stepped_violations(kb, year)])
    raised = [f for y in years for e in y.events for f in e.facts if isinstance(f, MedicationFact)
              and f.action == "increase" and f.indication == f"lab:{LAB}"]
    assert raised, "no antihypertensive kept for blood pressure was raised in 1,000 patients"


def test_a_blood_pressure_drug_kept_as_it_is_above_goal_is_caught(kb, years):
    """Two readings of 160 and 165 mmHg on the drug's present dose, then the drug continued "unchanged" five weeks
    after the second: caught; raised in between: not."""
    year, fact = _kept_at_year_end(kb, years)
    unit = kb.labs[LAB].unit
    kept = fact.model_copy(update={"reason": "unchanged"})
    readings = [("2025-02-01", [LabFact(lab=LAB, value=160.0, unit=unit)]),
                ("2025-02-20", [LabFact(lab=LAB, value=165.0, unit=unit)])]
    failures = stepped_violations(kb, _appended(year, *readings, ("2025-03-30", [kept])))
    assert any(f.startswith("[stepped_to_target]") and f"{fact.drug} " in f and "[160.0, 165.0]" in f
               for f in failures), failures
    raised = fact.model_copy(update={"action": "increase", "previous_dose": fact.dose, "reason": "titration"})
    stepped = _appended(year, *readings, ("2025-03-01", [raised]), ("2025-03-30", [kept]))
    assert not any(f"{fact.drug} " in f and "2025-03-30" in f for f in stepped_violations(kb, stepped))


def test_stable_is_never_said_of_a_drug_kept_for_a_pressure_above_goal(kb, years):
    """A misdiagnosis' antihypertensive (no care step: judged by the lab it is kept for) continued "because it's working
    well" at 154 mmHg after 165: nearer the goal, not inside it (the seed-61 P0004 E025)."""
    def for_pressure(year, fact) -> bool:  # noqa: ANN001
        return isinstance(fact, MedicationFact) and fact.action == "start" and any(
            fact.indication == f"misdiagnosis:{m.icd11}" and m.kept_for == LAB
            for m in kb.conditions[year.persona.condition].misdiagnoses)

    year, start = next((y, f) for y in years for e in y.events for f in e.facts if for_pressure(y, f))
    unit = kb.labs[LAB].unit
    crafted = _appended(year, ("2025-01-10", [LabFact(lab=LAB, value=165.0, unit=unit)]),
                        ("2025-01-30", [LabFact(lab=LAB, value=154.0, unit=unit),
                                        start.model_copy(update={"action": "continue", "reason": "stable"})]))
    failures = stable_violations(kb, crafted, FactSlots(kb, load_templates("en"), crafted))
    assert any(f"{start.drug} continued as stable at {LAB} [165.0, 154.0]" in f for f in failures), failures


def test_a_lab_treated_to_a_target_is_on_track_only_inside_it(kb):
    sbp = next(m for m in kb.conditions["hfpef"].monitored if m.lab == LAB)
    cv = kb.labs[LAB].kinetics.cv
    assert sbp.is_on_track(154, 165, cv) and not sbp.is_on_track(154, 165, cv, to_target=True)
    assert sbp.is_on_track(130, 128, cv, to_target=True) and not sbp.is_on_track(130, 150, cv, (120, 129), True)


def test_revision_keeps_finding_hypertension_in_its_true_condition_is_revised_not_ruled_out(kb, years):
    check([v for year in years for v in revision_violations(kb, year)])
    revised = [f for y in years for e in y.events for f in e.facts
               if isinstance(f, DiagnosisFact) and f.status == "revised"]
    assert revised, "no misdiagnosis revised in 1,000 patients"


def test_a_kept_finding_ruled_out_or_a_revision_with_no_finding_is_caught(kb, years):
    """The seed-61 revision (essential hypertension "ruled out" while its drug is kept for the pressure) and its
    opposite (a revision with the reading under its threshold)."""
    year, event = next((y, e) for y in years for e in y.events
                       if any(isinstance(f, MedicationFact) and f.reason == "still_needed" for f in e.facts))
    ruled = [f.model_copy(update={"status": "ruled_out"}) if isinstance(f, DiagnosisFact) and f.status == "revised"
             else f for f in event.facts]
    failures = revision_violations(kb, _edit(year, {event.event_id: ruled}))
    assert any(f.startswith("[revision_keeps_finding]") and "ruled out with its drug kept" in f for f in failures)
    low = [f.model_copy(update={"value": 110.0}) if isinstance(f, LabFact) and f.lab == LAB else f
           for f in event.facts if not (isinstance(f, MedicationFact) and f.reason == "still_needed")]
    if not any(isinstance(f, LabFact) and f.lab == LAB for f in low):
        low.append(LabFact(lab=LAB, value=110.0, unit=kb.labs[LAB].unit))
    failures = revision_violations(kb, _edit(year, {event.event_id: low}))
    assert any("revised with no finding" in f for f in failures), failures
