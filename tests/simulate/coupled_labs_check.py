"""Independent reading of labs that are parts of another lab's total, sample by sample (the seed-61 read, P0007 E054:
"white blood cell count 4.6 x10^9/L; absolute neutrophil count 6.4 x10^9/L" called normal).

- `coupled_labs`: in one visit's results a part never reaches its total, and the parts of one total together stay
  below it: a differential count is a share of the white cells (neutrophils 40-75 %, eosinophils 1-6 %: Bain, Blood
  Cells 2015), LDL and HDL cholesterol are shares of total cholesterol with VLDL the rest (Friedewald 1972).

Reads only the record, never the engine's state or the knowledge base's `part_of` (the pairs are the check's own).
"""

from __future__ import annotations

from medmemorybench.simulate.models import CareYear, LabFact
from tests.simulate.clinical import fail

TOTALS = {"wbc": ("neutrophils", "blood_eosinophils"), "total_cholesterol": ("ldl_c", "hdl_c")}
"""Total -> the labs that are parts of it (same unit)."""


def coupled_lab_violations(year: CareYear) -> list[str]:
    """`coupled_labs`."""
    out = []
    for event in year.events:
        values = {f.lab: f.value for f in event.facts if isinstance(f, LabFact)}
        for total, parts in TOTALS.items():
            found = {p: values[p] for p in parts if p in values}
            if total not in values or not found:
                continue
            out += [fail("coupled_labs", year, event, f"{part} {value} not below {total} {values[total]}")
                    for part, value in found.items() if value >= values[total]]
            if len(found) > 1 and sum(found.values()) >= values[total]:
                out.append(fail("coupled_labs", year, event, f"{' + '.join(found)} = {sum(found.values()):g} not "
                                f"below {total} {values[total]}"))
    return out
