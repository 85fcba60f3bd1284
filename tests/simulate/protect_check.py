"""Independent readings of what protects a patient before a risky start or after a told sign (the seed-79 read, issue
27): latent tuberculosis treated before immunosuppression, and a heart-failure congestion symptom weighed, examined and
answered with the diuretic.

Each function returns violation messages (empty: the year passes) and reads only the record, never the engine's state
or the knowledge base's own rule (the thresholds below are the guidelines', restated here). The rules (names as
`docs/simulation.md` lists them):

- `latent_tb_treated_first`: with latent tuberculosis on record, an immunosuppressant start (prednisolone, prednisone
  15 mg a day or more for 28 days or more, methylprednisolone 12 mg; a thiopurine, mycophenolate, methotrexate,
  cyclophosphamide, a calcineurin inhibitor, a biologic or a JAK inhibitor) comes after, or at the same visit after,
  a latent-TB preventive treatment start (NICE NG33 1.2 and 1.4; ATS/CDC/IDSA 2020; BTS 2005).
- `hf_congestion_symptom_reviewed`: in heart failure, once diagnosed, a visit at which the patient tells ankle
  swelling, breathlessness or orthopnoea records a weight, an examination (a test fact with its finding) and the loop
  diuretic reviewed (started, raised, or held with the symptom as its reason), or an admission (NICE NG106 1.6, 1.10;
  ESC 2021 HF guideline 5.3 and 14).
- `qt_drug_ecg_followed`: with long QT syndrome on record, while a QT-prolonging drug is taken (those the guideline
  lets a patient with long QT take under watch), the QTc is never left unmeasured for more than 90 days (the first
  visit after them), and a QTc higher than the one before is repeated within 14 days (ESC 2022 ventricular
  arrhythmias: the QTc at each follow-up; AHA/ACCF 2010: an ECG after each change and periodically, a rising QTc
  watched).
- `long_qt_beta_blocker_kept`: with long QT syndrome on record, a beta-blocker taken is never stopped because a
  diagnosis was revised (HRS/EHRA/APHRS 2013; ESC 2022 ventricular arrhythmias: beta-blockers protect in LQTS).
"""

from __future__ import annotations

from medmemorybench.knowledge.base import KnowledgeBase
from medmemorybench.knowledge.models import DOSES_PER_DAY
from medmemorybench.simulate.models import (
    CareYear,
    DiagnosisFact,
    HistoryFact,
    LabFact,
    MedicationFact,
    SettingFact,
    SymptomFact,
    TestFact,
)
from tests.simulate.clinical import fail
from tests.simulate.monitoring_check import _check_by, taking_spans

IMMUNOSUPPRESSANT_CLASSES = (
    "antimetabolite_immunosuppressant",
    "folate_antagonist_dmard",
    "alkylating_agent",
    "calcineurin_inhibitor",
    "tnf_inhibitor",
    "jak_inhibitor",
    "il6_inhibitor",
    "il12_23_inhibitor",
)
"""Drug classes that reactivate latent TB (NICE NG33 1.2; the biologic and JAK labels' boxed warnings)."""
STEROID_MIN_MG_A_DAY = {"prednisolone": 15.0, "prednisone": 15.0, "methylprednisolone": 12.0}
"""A steroid at or above this daily dose (prednisolone 15 mg) ..."""
STEROID_MIN_DAYS = 28
"""... for a month or more is a reactivation risk (ATS/CDC/IDSA 2020)."""
LATENT_TB_TREATMENTS = ("isoniazid", "rifampicin", "rifapentine")
"""Latent-TB preventive regimens' drugs (NICE NG33: 6H, 3HR; CDC: 3HP, 4R)."""

HEART_FAILURE = ("hfpef",)
"""Conditions that are heart failure."""
CONGESTION_SYMPTOMS = ("ankle_oedema", "exertional_dyspnoea", "orthopnoea")
"""What the patient tells that is congestion until shown otherwise (NICE NG106 1.1; ESC 2021 Table 5)."""


def _is_immunosuppressant_start(kb: KnowledgeBase, fact: MedicationFact) -> bool:
    if fact.action not in ("start", "administer"):
        return False
    if fact.drug in STEROID_MIN_MG_A_DAY:
        per_day = fact.dose * DOSES_PER_DAY.get(fact.frequency, 1)
        long = fact.course_days is None or fact.course_days >= STEROID_MIN_DAYS
        return per_day >= STEROID_MIN_MG_A_DAY[fact.drug] and long
    return kb.drugs[fact.drug].drug_class in IMMUNOSUPPRESSANT_CLASSES


def latent_tb_violations(kb: KnowledgeBase, year: CareYear) -> list[str]:
    """`latent_tb_treated_first`."""
    if "latent_tuberculosis" not in year.persona.histories:
        return []
    out = []
    treated = False
    for event in year.events:
        for fact in event.facts:
            if not isinstance(fact, MedicationFact):
                continue
            if fact.drug in LATENT_TB_TREATMENTS and fact.action == "start":
                treated = True
            elif _is_immunosuppressant_start(kb, fact) and not treated:
                out.append(
                    fail(
                        "latent_tb_treated_first",
                        year,
                        event,
                        f"{fact.drug} {fact.dose:g} {fact.unit} started with latent TB and no preventive treatment",
                    )
                )
    return out


def hf_congestion_violations(kb: KnowledgeBase, year: CareYear) -> list[str]:
    """`hf_congestion_symptom_reviewed`."""
    if year.persona.condition not in HEART_FAILURE:
        return []
    code = kb.conditions[year.persona.condition].icd11.code
    loops = kb.expand(["loop_diuretic"])
    out = []
    known = False
    for event in year.events:
        told = [f.symptom for f in event.facts if isinstance(f, SymptomFact) and f.symptom in CONGESTION_SYMPTOMS]
        if known and told and not any(isinstance(f, SettingFact) and f.setting == "admission" for f in event.facts):
            missing = []
            if not any(isinstance(f, LabFact) and f.lab == "weight" for f in event.facts):
                missing.append("a weight")
            if not any(isinstance(f, TestFact) and f.finding.en for f in event.facts):
                missing.append("an examination")
            reviewed = any(
                isinstance(f, MedicationFact)
                and f.drug in loops
                and (f.action in ("start", "increase") or (f.reason or "").startswith("symptom:"))
                for f in event.facts
            )
            if not reviewed:
                missing.append("the loop diuretic reviewed")
            if missing:
                out.append(
                    fail(
                        "hf_congestion_symptom_reviewed",
                        year,
                        event,
                        f"{', '.join(told)} told without {', '.join(missing)}",
                    )
                )
        known = known or any(
            isinstance(f, DiagnosisFact) and f.status == "confirmed" and f.icd11 == code for f in event.facts
        )
    return out


BETA_BLOCKER_CLASSES = ("beta_blocker_selective", "beta_blocker_nonselective")
"""Beta-blockers (the protective therapy in congenital long QT)."""


def long_qt_beta_blocker_violations(kb: KnowledgeBase, year: CareYear) -> list[str]:
    """`long_qt_beta_blocker_kept`."""
    out = []
    told = False
    for event in year.events:
        told = told or any(isinstance(f, HistoryFact) and f.history == LONG_QT for f in event.facts)
        for fact in event.facts:
            if (
                told
                and isinstance(fact, MedicationFact)
                and fact.action == "stop"
                and fact.reason == "diagnosis_revised"
                and kb.drugs[fact.drug].drug_class in BETA_BLOCKER_CLASSES
            ):
                out.append(fail("long_qt_beta_blocker_kept", year, event, f"{fact.drug} stopped in long QT syndrome"))
    return out


QT_DRUGS = ("fluoxetine", "sertraline", "venlafaxine", "mirtazapine", "aripiprazole", "brexpiprazole", "lithium",
            "tamoxifen")
"""QT-prolonging drugs a patient with long QT may take under watch (CredibleMeds possible or conditional risk)."""
LONG_QT = "long_qt_syndrome"
QTC_EVERY_DAYS = 90
"""The QTc at each three-monthly review while one is taken (ESC 2022)."""
QTC_RISE_DAYS = 14
"""A rising QTc repeated within two weeks (AHA/ACCF 2010)."""


def qt_followed_violations(kb: KnowledgeBase, year: CareYear) -> list[str]:
    """`qt_drug_ecg_followed`."""
    told = next(
        (e.date for e in year.events for f in e.facts if isinstance(f, HistoryFact) and f.history == LONG_QT), None
    )
    if told is None:
        return []
    qtcs = [(e, f.value) for e in year.events for f in e.facts if isinstance(f, LabFact) and f.lab == "qtc"]
    spans = taking_spans(year)
    out = []
    for drug in [d for d in QT_DRUGS if d in spans]:
        for start, end in spans[drug]:
            last = max(start, told)
            stop = end or year.events[-1].date
            for event, value in [(e, v) for e, v in qtcs if last <= e.date < stop]:
                by = _check_by(year, last, QTC_EVERY_DAYS, 1)
                if by is not None and event.date > by:
                    out.append(fail("qt_drug_ecg_followed", year, event, f"{drug}: no QTc from {last} to {event.date}"))
                before = [v for e, v in qtcs if e.date < event.date]
                rise_by = _check_by(year, event.date, QTC_RISE_DAYS, 1)
                if before and value > before[-1] and rise_by is not None and rise_by < stop and not any(
                    event.date < e.date <= rise_by for e, _ in qtcs
                ):
                    out.append(
                        fail("qt_drug_ecg_followed", year, event, f"{drug}: QTc {before[-1]:g} -> {value:g} ms not "
                             f"repeated by {rise_by}")
                    )
                last = event.date
            by = _check_by(year, last, QTC_EVERY_DAYS, 1)
            if by is not None and by < stop:
                out.append(fail("qt_drug_ecg_followed", year, None, f"{drug}: no QTc after {last} (taken to {stop})"))
    return out
