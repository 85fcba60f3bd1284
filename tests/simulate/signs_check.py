"""Independent readings of three signs a physician acts on (the seed-61 read, issue 27, "a year a physician would
sign"): a heart-failure patient's rapid weight gain, a kidney disease called "progression" while its stage has not
moved, and an acute productive cough sent home with self-care and no chest examined.

Each function returns violation messages (empty: the year passes) and reads only the record, never the engine's state
or the knowledge base's own rule (the thresholds below are the guidelines', restated here). The rules (names as
`docs/simulation.md` lists them):

- `hf_weight_gain_acted_on`: in heart failure, once it is diagnosed, a weight more than 2 kg above one measured in
  the week before is remarked (a weight-gain sign recorded) and acted on that visit (a loop diuretic started or
  raised, or reviewed for the sign where it can go no higher, or an admission), with renal function and potassium
  on record from that week and a review (a weighing) within 7 days (ESC 2021 HF guideline 5.3, 14; NICE NG106 1.6).
- `ckd_progression_by_kdigo`: a complication named a progression of kidney disease ("progression of ...", "...进展"
  not negated), as its diagnosis or as what its finding is said to mean, has an eGFR at its visit in a worse KDIGO
  GFR category than the year's first eGFR on record and at least 25 % below it (KDIGO 2024 CKD 2.1). A complication
  read on the eGFR that the condition declares a progression is one only as such a progression, whatever it
  is named: a smaller fall, or one within the same category, is never its diagnosis, its complication or a symptom
  the patient tells (the seed-79 read, P0009 E045: "a fall in eGFR that is not a progression" as a complication and
  a symptom). And a progression lasts: the next eGFR on record after its visit is still one (KDIGO: a sustained
  decline; there eGFR 61 came back to 72, then 79).
- `ckd_progression_not_in_acute_illness`: no complication read on the eGFR that the condition declares a progression
  is recorded while an acute illness runs (from its first visit to its last) or in the 7 days after it: a fall then is
  an acute kidney injury, answered with sick-day care (the RAS blocker held, not raised), never a progression
  (KDIGO 2012 AKI 2.1.1: within 7 days; NICE NG148; the seed-89 read, P0009 E056: eGFR 73 -> 53 in 12 days during a
  sinus infection called "progression of diabetic kidney disease" and losartan doubled).
- `cough_examined`: the visit that advises self-care for an acute productive cough records a chest examination (a
  test fact with its finding) and temperature, pulse, respiratory rate and oxygen saturation taken that day (NICE
  NG138 and CKS chest infections, NG191: the observations that decide self-care from pneumonia).
"""

from __future__ import annotations

from medmemorybench.knowledge.base import KnowledgeBase
from medmemorybench.knowledge.models import Text
from medmemorybench.simulate.models import (
    AdviceFact,
    CareYear,
    ComplicationFact,
    DiagnosisFact,
    Event,
    LabFact,
    MedicationFact,
    SettingFact,
    SymptomFact,
    TestFact,
)
from tests.simulate.clinical import days_between, fail

HEART_FAILURE = ("hfpef",)
"""Conditions that are heart failure (their weight is fluid)."""
WEIGHT_GAIN_KG, WEIGHT_GAIN_DAYS = 2.0, 7
"""More than 2 kg in a week (ESC 2021 self-care: 2 kg in 3 days; AHA/HFSA: 5 lb in a week; clinic weights are days
apart)."""
AFTER_DIURETIC_LABS = ("egfr", "potassium")
"""Checked when the diuretic is changed for congestion (NICE NG106 1.6; ESC 2021)."""
REVIEW_DAYS = 7
"""The early review of worsening heart failure."""
GFR_CATEGORIES = (90, 60, 45, 30, 15)
"""KDIGO 2024 GFR category lower bounds: G1 >= 90, G2 60-89, G3a 45-59, G3b 30-44, G4 15-29, G5 < 15."""
PROGRESSION_FALL = 0.25
"""KDIGO 2024: a change of category is a progression only with a fall of at least 25 % from the baseline."""
AKI_DAYS = 7
"""KDIGO 2012 AKI: the creatinine rise of an acute kidney injury comes within 7 days."""
PROGRESSION_WORDS = {"en": ("progression of",), "zh": ("进展",)}
"""What names a progression of a kidney disease already there ("progression to chronic kidney disease", its onset,
is another claim)."""
NEGATIONS = {"en": ("not a progression",), "zh": ("不属于",)}
"""What says a fall is not one."""
COUGH_OBSERVATIONS = ("body_temperature", "heart_rate", "respiratory_rate", "spo2")
"""What an acute cough's assessment measures before self-care (NICE NG138 1.1, CKS chest infections, NG191)."""


def hf_weight_violations(kb: KnowledgeBase, year: CareYear) -> list[str]:
    """`hf_weight_gain_acted_on`."""
    if year.persona.condition not in HEART_FAILURE:
        return []
    code = kb.conditions[year.persona.condition].icd11.code
    loops = kb.expand(["loop_diuretic"])
    out = []
    known = False
    for i, event in enumerate(year.events):
        known = known or any(
            isinstance(f, DiagnosisFact) and f.status == "confirmed" and f.icd11 == code for f in event.facts
        )
        weight = next((f.value for f in event.facts if isinstance(f, LabFact) and f.lab == "weight"), None)
        if not known or weight is None:
            continue
        week = [e for e in year.events[:i] if days_between(e.date, event.date) <= WEIGHT_GAIN_DAYS]
        recent = [f.value for e in week for f in e.facts if isinstance(f, LabFact) and f.lab == "weight"]
        if not recent or weight - min(recent) <= WEIGHT_GAIN_KG:
            continue
        missing = []
        if not any(isinstance(f, SymptomFact) and "weight" in f.name.en for f in event.facts):
            missing.append("the gain remarked")
        admitted = any(isinstance(f, SettingFact) and f.setting == "admission" for f in event.facts)
        acted = any(
            isinstance(f, MedicationFact)
            and f.drug in loops
            and (f.action in ("start", "increase") or (f.reason or "").startswith("symptom:"))
            for f in event.facts
        )
        if not (acted or admitted):
            missing.append("a loop diuretic started or raised")
        on_record = {f.lab for e in [*week, event] for f in e.facts if isinstance(f, LabFact)}
        missing += [lab for lab in AFTER_DIURETIC_LABS if lab not in on_record and not admitted]
        later = year.events[i + 1 :]
        reviewed = any(
            days_between(event.date, e.date) <= REVIEW_DAYS
            and any(isinstance(f, LabFact) and f.lab == "weight" for f in e.facts)
            for e in later
        )
        if later and days_between(event.date, year.events[-1].date) > REVIEW_DAYS and not reviewed and not admitted:
            missing.append(f"a weighing within {REVIEW_DAYS} days")
        if missing:
            gain = f"{weight:g} kg from {min(recent):g} kg within {WEIGHT_GAIN_DAYS} days"
            out.append(fail("hf_weight_gain_acted_on", year, event, f"{gain} without {', '.join(missing)}"))
    return out


def _gfr_category(egfr: float) -> int:
    """0 for G1, 1 for G2, ... 5 for G5."""
    return sum(egfr < bound for bound in GFR_CATEGORIES)


def _claims_progression(name: Text, lang: str) -> bool:
    text = getattr(name, lang)
    return any(w in text for w in PROGRESSION_WORDS[lang]) and not any(w in text for w in NEGATIONS[lang])


def _said_complications(kb: KnowledgeBase, year: CareYear, event: Event) -> list[Text]:
    """The names a visit gives its complication: its diagnosis, and what the finding is said to mean (the knowledge
    base's name)."""
    comps = {c.key: c for c in kb.conditions[year.persona.condition].complications}
    said = [f.name for f in event.facts if isinstance(f, DiagnosisFact) and f.status == "complication"]
    said += [comps[f.complication].name for f in event.facts if isinstance(f, ComplicationFact)]
    return said


def _kdigo_progression(egfr: float, baseline: float) -> tuple[bool, bool]:
    """Whether `egfr` is in a worse G category than `baseline`, and at least 25 % below it."""
    return _gfr_category(egfr) > _gfr_category(baseline), egfr <= baseline * (1 - PROGRESSION_FALL)


def _egfr_complication(kb: KnowledgeBase, year: CareYear, event: Event) -> str | None:
    """How the visit records a complication of the condition read on the eGFR (its diagnosis, its complication fact
    or a symptom told of it), if it does."""
    # (the complications that claim a progression: ADPKD's accelerated loss and lupus's progression to CKD, its onset,
    # are other claims)
    comps = [c for c in kb.conditions[year.persona.condition].complications
             if c.lab == "egfr" and c.progression is not None]
    keys, codes = {c.key for c in comps}, {c.icd11 for c in comps}
    ways = {
        "complication": any(isinstance(f, ComplicationFact) and f.complication in keys for f in event.facts),
        "diagnosis": any(isinstance(f, DiagnosisFact) and f.status == "complication" and f.icd11 in codes
                         for f in event.facts),
        "symptom": any(isinstance(f, SymptomFact) and f.symptom in keys for f in event.facts),
    }
    return next((way for way, recorded in ways.items() if recorded), None)


def _illness_spans(kb: KnowledgeBase, year: CareYear) -> list[tuple[str, str]]:
    """Each acute illness's first and last visit on record (a symptom of it told, its examination, its review)."""
    spans: dict[str, list[str]] = {}
    for event in year.events:
        for fact in event.facts:
            key = (fact.symptom.partition(".")[0] if isinstance(fact, SymptomFact)
                   else fact.test.split(":")[1] if isinstance(fact, TestFact) and fact.test.startswith("illness:")
                   else None)
            if key in kb.illnesses:
                spans.setdefault(key, []).append(event.date)
    return [(min(days), max(days)) for days in spans.values()]


def progression_in_illness_violations(kb: KnowledgeBase, year: CareYear) -> list[str]:
    """`ckd_progression_not_in_acute_illness`."""
    spans = _illness_spans(kb, year)
    out = []
    for event in year.events:
        recorded = _egfr_complication(kb, year, event)
        during = next(((a, b) for a, b in spans if a <= event.date and days_between(b, event.date) <= AKI_DAYS), None)
        if recorded is not None and during is not None:
            out.append(fail("ckd_progression_not_in_acute_illness", year, event,
                            f"a progression as its {recorded} in an acute illness ({during[0]} to {during[1]})"))
    return out


def ckd_progression_violations(kb: KnowledgeBase, year: CareYear) -> list[str]:
    """`ckd_progression_by_kdigo`."""
    out = []
    baseline: float | None = None
    progressed: Event | None = None  # (the latest visit that recorded a progression, its next eGFR still to come)
    for event in year.events:
        egfr = next((f.value for f in event.facts if isinstance(f, LabFact) and f.lab == "egfr"), None)
        if progressed is not None and egfr is not None and baseline is not None:
            worse, fallen = _kdigo_progression(egfr, baseline)
            if not (worse and fallen):
                out.append(fail("ckd_progression_by_kdigo", year, event,
                                f"eGFR {egfr:g} from {baseline:g} after the progression of {progressed.event_id}: "
                                "not sustained"))
            progressed = None
        recorded = _egfr_complication(kb, year, event)
        if recorded is not None:
            if egfr is None or baseline is None:
                missing = "at it" if egfr is None else "before"
                out.append(fail("ckd_progression_by_kdigo", year, event,
                                f"a fall in eGFR as its {recorded} with no eGFR {missing}"))
            else:
                worse, fallen = _kdigo_progression(egfr, baseline)
                if worse and fallen:
                    progressed = event
                else:
                    out.append(fail("ckd_progression_by_kdigo", year, event,
                                    f"a fall in eGFR short of a progression as its {recorded}: eGFR {egfr:g} from "
                                    f"{baseline:g} (G category {'worse' if worse else 'unchanged'}, fall "
                                    f"{1 - egfr / baseline:.0%})"))
        for name in _said_complications(kb, year, event) if egfr is not None else []:
            for lang in ("en", "zh") if "kidney" in name.en else ():
                if not _claims_progression(name, lang):
                    continue
                if baseline is None:
                    out.append(
                        fail("ckd_progression_by_kdigo", year, event, f"progression with no eGFR before ({lang})")
                    )
                    continue
                worse, fallen = _kdigo_progression(egfr, baseline)
                if not (worse and fallen):
                    out.append(
                        fail(
                            "ckd_progression_by_kdigo",
                            year,
                            event,
                            f"'{getattr(name, lang)}' at eGFR {egfr:g} from {baseline:g} (G category "
                            f"{'worse' if worse else 'unchanged'}, fall {1 - egfr / baseline:.0%}) ({lang})",
                        )
                    )
        if egfr is not None and baseline is None:
            baseline = egfr
    return out


def cough_violations(kb: KnowledgeBase, year: CareYear) -> list[str]:
    """`cough_examined`: every illness whose symptoms hold a productive cough, at the visit advising its self-care."""
    coughs = {i.key: i for i in kb.illnesses.values() if any("cough" in s.key for s in i.symptoms)}
    out = []
    for event in year.events:
        told = {f.symptom.partition(".")[0] for f in event.facts if isinstance(f, SymptomFact) and "." in f.symptom}
        advised = {f.advice for f in event.facts if isinstance(f, AdviceFact)}
        for key in told & set(coughs):
            if coughs[key].self_care not in advised:
                continue
            examined = any(
                isinstance(f, TestFact) and f.test.startswith(f"illness:{key}") and f.finding.en for f in event.facts
            )
            taken = {f.lab for f in event.facts if isinstance(f, LabFact)}
            missing = [lab for lab in COUGH_OBSERVATIONS if lab not in taken] + (
                [] if examined else ["chest examination"]
            )
            if missing:
                out.append(fail("cough_examined", year, event, f"{key} self-care without {', '.join(missing)}"))
    return out
