"""Physiological relations between labs, so that two results of one patient never contradict each other.

Serum creatinine and eGFR are one measurement read two ways: the laboratory reports eGFR from creatinine
with the CKD-EPI 2021 equation (race-free; Inker LA et al., N Engl J Med 2021;385:1737, the equation
KDIGO 2024 recommends). The simulator follows one of the two (whichever the condition monitors, eGFR
first) and derives the other from it with the patient's age and sex.
"""

from __future__ import annotations

MG_PER_DL = 88.4
"""µmol/L of creatinine in 1 mg/dL."""
RELATED = ("egfr", "creatinine")
"""The pair of labs kept consistent: eGFR (mL/min/1.73m²) and serum creatinine (µmol/L)."""


def egfr_from_creatinine(creatinine_umol: float, age: int, female: bool) -> float:
    """CKD-EPI 2021: eGFR from serum creatinine."""
    scr = max(creatinine_umol, 1.0) / MG_PER_DL
    kappa, alpha = (0.7, -0.241) if female else (0.9, -0.302)
    ratio = scr / kappa
    value = 142 * min(ratio, 1) ** alpha * max(ratio, 1) ** -1.200 * 0.9938 ** age
    return value * (1.012 if female else 1.0)


def creatinine_from_egfr(egfr: float, age: int, female: bool) -> float:
    """The serum creatinine (µmol/L) that CKD-EPI 2021 turns into `egfr` (the equation falls monotonically)."""
    low, high = 5.0, 3000.0
    for _ in range(60):
        middle = (low + high) / 2
        if egfr_from_creatinine(middle, age, female) > egfr:
            low = middle
        else:
            high = middle
    return (low + high) / 2


def convert(lab: str, value: float, age: int, female: bool) -> float:
    """The other lab of the pair, read from `lab`'s value."""
    if lab == "egfr":
        return creatinine_from_egfr(value, age, female)
    return egfr_from_creatinine(value, age, female)
