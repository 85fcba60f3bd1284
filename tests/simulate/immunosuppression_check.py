"""Independent reading of the screen before immunosuppression (the seed-73 read, P0014 E042: azathioprine started with
no hepatitis B, hepatitis C or chickenpox serology; the seed-61 read: colitis and other patients started on a
biologic or a long steroid course unscreened).

Each function returns violation messages (empty: the year passes) and reads only the record and the knowledge base,
never the engine's state. The rule (its name as `docs/simulation.md` lists it):

- `immunosuppression_screened`: before the start of a thiopurine, methotrexate, a biologic or a JAK inhibitor, or of a
  systemic steroid long-term or as a course of more than two weeks, hepatitis B (HBsAg and anti-HBc), hepatitis C
  antibody and VZV IgG are on record at or before that visit (BSG 2019 IBD guideline 5.4; ECCO 2021 infections
  guideline; BNF), each read negative (immune for VZV): no positive-screen pathway is simulated, so a positive result
  would be a finding left unacted on. A hepatitis B carrier on record is not screened for hepatitis B (known).
"""

from __future__ import annotations

from medmemorybench.knowledge.base import KnowledgeBase
from medmemorybench.simulate.models import CareYear, Event, LabFact, MedicationFact
from tests.simulate.clinical import fail, histories

SCREENED_ATC = (
    "L04AX01", "L01BB02", "L01BB03",  # thiopurines
    "L04AX03", "L01BA01",  # methotrexate
    "L04AB",  # TNF inhibitors
    "L04AC",  # interleukin inhibitors (tocilizumab, ustekinumab)
    "L04AA33", "L04AA26",  # vedolizumab, belimumab
    "L04AA29", "L04AA44", "L04AF",  # tofacitinib, upadacitinib (JAK inhibitors)
)
"""ATC codes (or their prefixes) of the drugs screened before their first dose (BSG 2019; ECCO 2021)."""
STEROID_ATC = "H02AB"
"""Systemic glucocorticoids: screened before a long-term start or a course of more than `STEROID_COURSE_DAYS`."""
STEROID_COURSE_DAYS = 14
"""ECCO 2021; UKHSA Green Book ch. 6: prednisolone 20 mg or more a day for more than 14 days is immunosuppressive."""
HEPATITIS_B = ("hbsag", "anti_hbc")
SCREEN = (*HEPATITIS_B, "hcv_antibody")
"""Read negative below their reference ceiling."""
VZV = "vzv_igg"
"""Read immune at or above its reference floor."""
HBV_CARRIER = "hepatitis_b_carrier"


def is_screened_start(kb: KnowledgeBase, fact: MedicationFact) -> bool:
    """Whether this fact starts a drug that waits for the screen."""
    if fact.action != "start":
        return False
    atc = kb.drugs[fact.drug].atc or ""
    if atc.startswith(SCREENED_ATC):
        return True
    return atc.startswith(STEROID_ATC) and (fact.course_days is None or fact.course_days > STEROID_COURSE_DAYS)


def _on_record(year: CareYear, event: Event) -> dict[str, float]:
    """The latest value of each screening lab up to and including `event`."""
    return {f.lab: f.value for e in year.events[: event.index + 1] for f in e.facts
            if isinstance(f, LabFact) and f.lab in (*SCREEN, VZV)}


def screen_violations(kb: KnowledgeBase, year: CareYear) -> list[str]:
    """`immunosuppression_screened`."""
    out = []
    carrier = HBV_CARRIER in histories(year)
    for event in year.events:
        for fact in event.facts:
            if not (isinstance(fact, MedicationFact) and is_screened_start(kb, fact)):
                continue
            found = _on_record(year, event)
            wanted = [lab for lab in (*SCREEN, VZV) if not (carrier and lab in HEPATITIS_B)]
            if missing := [lab for lab in wanted if lab not in found]:
                out.append(fail("immunosuppression_screened", year, event,
                                f"{fact.drug} started with no {', '.join(missing)} on record"))
            positive = [f"{lab} {found[lab]:g}" for lab in SCREEN
                        if lab in found and found[lab] > kb.labs[lab].reference[1]]
            if VZV in found and found[VZV] < kb.labs[VZV].reference[0]:
                positive.append(f"{VZV} {found[VZV]:g} (not immune)")
            if positive:
                out.append(fail("immunosuppression_screened", year, event,
                                f"{fact.drug} started on a positive screen: {', '.join(positive)}"))
    return out
