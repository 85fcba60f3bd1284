"""What a physician found unsigned in the seed-61 read (issue 27, "a year a physician would sign"):

- `antidepressant_indicated`: a drug of a step started only while the disease is short of goal
  (`CareStep.while_short_of_goal`: depression's augmentation) is started, a switch after a harm included, only where the
  latest value of the step's `titrate_on` lab on record is short of goal, or for a complication whose own treatment
  names the step. Suicidal thoughts name none: aripiprazole "to treat the complication" (P0015 E047) and bupropion
  "to replace aripiprazole" the day after a PHQ-9 of 4 (E053) both fail.
- `cognitive_decline_acted_on`: a score with a `decline` (labs.yaml: the MoCA, 3 points) that falls that far below the
  highest value on record has the decline's advice said at that visit or since that peak (P0007: MoCA 29 -> 24 in
  Parkinson's disease, "Happy with that?"), where the condition's care path does not treat the score (Alzheimer
  disease's own decline is answered by its titration and step-ups).

Akathisia acted on at once is `serious_harm_at_once` (`monitoring_check.serious_harm_violations`): akathisia is one of
`SERIOUS_EFFECTS`.

Read from the events and the knowledge base alone, never from the engine's state."""

from __future__ import annotations

from medmemorybench.knowledge.base import KnowledgeBase
from medmemorybench.simulate.models import AdviceFact, CareYear, LabFact, MedicationFact
from tests.simulate.clinical import fail, latest_value


def antidepressant_indicated_violations(kb: KnowledgeBase, year: CareYear) -> list[str]:
    """`antidepressant_indicated`."""
    condition = kb.conditions[year.persona.condition]
    steps = {s.key: s for s in condition.care_path if s.while_short_of_goal}
    complications = {c.key: {*c.treatment, *c.escalation} for c in condition.complications}
    out = []
    for event in year.events:
        for fact in event.facts:
            step = steps.get(fact.step or "") if isinstance(fact, MedicationFact) and fact.action == "start" else None
            if step is None:
                continue
            cause, _, key = fact.reason.partition(":")
            if cause == "complication":
                if step.key not in complications.get(key, set()):
                    out.append(
                        fail(
                            "antidepressant_indicated",
                            year,
                            event,
                            f"{fact.drug} ({step.key}) started for {key}, which no treatment of it names",
                        )
                    )
                continue
            lab = step.marker
            value = latest_value(year, event, lab)
            if value is None or not condition.is_short_of_goal(lab, value, step):
                out.append(
                    fail(
                        "antidepressant_indicated",
                        year,
                        event,
                        f"{fact.drug} ({step.key}) started "
                        f"({fact.reason}) with {lab} {value} on record: not short of goal",
                    )
                )
    return out


def cognitive_decline_violations(kb: KnowledgeBase, year: CareYear) -> list[str]:
    """`cognitive_decline_acted_on`."""
    out = []
    seen: dict[str, list[tuple[int, float]]] = {}  # lab -> (event index, value), in order
    for event in year.events:
        for fact in event.facts:
            decline = kb.labs[fact.lab].decline if isinstance(fact, LabFact) else None
            if decline is None or kb.conditions[year.persona.condition].treats(fact.lab):
                continue
            earlier = seen.setdefault(fact.lab, [])
            if earlier:
                peak_at, peak = max(earlier, key=lambda s: (s[1], s[0]))
                said = any(
                    isinstance(f, AdviceFact) and f.advice == decline.advice
                    for e in year.events[peak_at : event.index]
                    for f in e.facts
                )
                if fact.value <= peak - decline.points and not said:
                    out.append(
                        fail(
                            "cognitive_decline_acted_on",
                            year,
                            event,
                            f"{fact.lab} {fact.value:g} from {peak:g}: {decline.advice} not said",
                        )
                    )
            earlier.append((event.index, fact.value))
    return out
