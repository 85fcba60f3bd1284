"""Three findings of the seed-73 physician read checked over the 1,000-patient cohort: a sodium of 125 on fluoxetine
never repeated and its symptoms never asked (`low_sodium_followed`), diltiazem started beside amlodipine
(`one_drug_per_class`), and a PHQ-9 item 9 read out with no risk assessment (`item9_risk_assessed`)."""

from __future__ import annotations

import re

from medmemorybench.knowledge.base import KnowledgeBase
from medmemorybench.simulate.models import AdviceFact, CareYear, Event, LabFact, MedicationFact, TestFact
from medmemorybench.simulate.timeline import state_on
from tests.simulate.clinical import days_between, fail

# --- low_sodium_followed ------------------------------------------------------------------------------------------


def _said(event: Event, advice: str) -> bool:
    return any(isinstance(f, AdviceFact) and f.advice == advice for f in event.facts)


def low_sodium_violations(kb: KnowledgeBase, year: CareYear) -> list[str]:
    """[low_sodium_followed] a result past its lab's harm level (a sodium below 130 mmol/L, `Lab.harm_care`) has its
    symptoms asked that visit (the care's advice, once an episode), and the lab is measured again at the first visit
    `recheck_days` or more after it, and after every result still outside the reference range, until one is back in
    it (European hyponatraemia guideline 2014; NICE CKS Hyponatraemia)."""
    failures: list[str] = []
    for lab in (spec for spec in kb.labs.values() if spec.harm_care is not None):
        care = lab.harm_care
        assert care is not None
        waiting: tuple[Event, float] | None = None  # the result a repeat is owed for
        for event in year.events:
            value = next((f.value for f in event.facts if isinstance(f, LabFact) and f.lab == lab.key), None)
            if waiting is not None and value is None and days_between(waiting[0].date, event.date) >= care.recheck_days:
                failures.append(
                    fail(
                        "low_sodium_followed",
                        year,
                        event,
                        f"{lab.key} {waiting[1]} on "
                        f"{waiting[0].date} not repeated at the first visit {care.recheck_days} days on",
                    )
                )
                waiting = None  # (one failure an episode)
            if value is None:
                continue
            if lab.is_past_harm(value) and waiting is None and not _said(event, care.advice):
                failures.append(
                    fail(
                        "low_sodium_followed",
                        year,
                        event,
                        f"{lab.key} {value} with no '{care.advice}' (symptoms not asked)",
                    )
                )
            low, high = lab.reference
            past = lab.is_past_harm(value) or (waiting is not None and not low <= value <= high)
            waiting = (event, value) if past else None
    return failures


# --- one_drug_per_class ---------------------------------------------------------------------------------------------


def duplicate_class_violations(kb: KnowledgeBase, year: CareYear) -> list[str]:
    """[one_drug_per_class] no two drugs of one therapy group are taken at once (`drug_classes.yaml` `group`: two
    calcium-channel blockers, diltiazem beside amlodipine; two beta-blockers; an ACE inhibitor with an ARB)."""
    failures = []
    for event in year.events:
        if not any(isinstance(f, MedicationFact) and f.action != "stop" for f in event.facts):
            continue  # (a group is doubled only by a drug given: a visit that gives none keeps the one before)
        groups: dict[str, list[str]] = {}
        for drug in state_on(year, event.date).medications:
            groups.setdefault(kb.therapy_group(drug), []).append(drug)
        failures += [
            fail("one_drug_per_class", year, event, f"{group}: {sorted(drugs)} taken together")
            for group, drugs in sorted(groups.items())
            if len(drugs) > 1
        ]
    return failures


# --- item9_risk_assessed ------------------------------------------------------------------------------------------

ITEM9 = re.compile(r"item 9 \([^)]*\) scored ([0-3])")
"""A PHQ-9 finding's item 9 score, as the English finding states it."""
RISK_ASSESSED = ("suicide_risk_assessment", "safety_plan_crisis")
"""Advice that assesses the risk and makes a safety plan that visit (NICE NG222 1.3, NG225 1.5-1.9)."""


def item9_violations(year: CareYear) -> list[str]:
    """[item9_risk_assessed] a finding that scores the PHQ-9's item 9 (thoughts of death or self-harm) above 0 gets a
    suicide-risk assessment and a safety plan at the same visit, in whichever language it is said."""
    failures = []
    for event in year.events:
        for fact in event.facts:
            if not isinstance(fact, TestFact):
                continue
            match = ITEM9.search(fact.finding.en)
            if match and int(match.group(1)) > 0 and not any(_said(event, a) for a in RISK_ASSESSED):
                failures.append(
                    fail(
                        "item9_risk_assessed", year, event, f"{fact.test}: {fact.finding.en!r} with no risk assessment"
                    )
                )
    return failures
