"""Independent reading of what is given alongside a drug (`Drug.co_prescribe`: calcium and vitamin D with a steroid
course) ending with it.

Each function returns violation messages (empty: the year passes) and reads only the record, never the engine's state.
The rule (its name as `docs/simulation.md` lists it):

- `co_prescription_ends_with_drug`: a drug started as a co-prescription (indication `with:<drug>`) is not given again
  (continued, raised or lowered) once the drug it was started for has ended, stopped or its course run out (ACR 2022
  glucocorticoid-induced osteoporosis guideline: calcium and vitamin D while the glucocorticoid is taken). The seed-61
  read: calcium carbonate and colecalciferol "(stable)" for three months after a prednisolone course ended.
"""

from __future__ import annotations

from medmemorybench.simulate.models import CareYear, MedicationFact
from tests.simulate.clinical import fail
from tests.simulate.monitoring_check import taking_spans


def _ended_by(spans: list[tuple[str, str | None]], day: str) -> str | None:
    """The last day of the span of a drug taken at its latest start on or before `day` (a stop's day, or a course's
    last), if it ended before `day`."""
    latest = [end for start, end in spans if start <= day]
    return latest[-1] if latest and latest[-1] is not None and latest[-1] < day else None


def partner_violations(year: CareYear) -> list[str]:
    """`co_prescription_ends_with_drug`."""
    out = []
    spans = taking_spans(year)
    partner_of: dict[str, str] = {}  # partner -> the drug its running start was for
    for event in year.events:
        for fact in event.facts:
            if not isinstance(fact, MedicationFact):
                continue
            if fact.action == "start":
                if (fact.indication or "").startswith("with:"):
                    partner_of[fact.drug] = fact.indication.removeprefix("with:")
                else:
                    partner_of.pop(fact.drug, None)
            elif fact.action == "stop":
                partner_of.pop(fact.drug, None)
            elif fact.drug in partner_of:
                for_drug = partner_of[fact.drug]
                ended = _ended_by(spans.get(for_drug, []), event.date)
                if ended is not None:
                    out.append(fail("co_prescription_ends_with_drug", year, event,
                                    f"{fact.action} {fact.drug} ({fact.reason}), started with {for_drug}, "
                                    f"which ended {ended}"))
    return out
