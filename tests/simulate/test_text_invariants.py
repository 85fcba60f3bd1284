"""Text invariants over 1,000 seeded patients (issue 27, items 3 and 5), one test per rule, each with a crafted
violation showing its check catches it.

Each failure message starts with the rule's name in brackets (the names `docs/simulation.md` lists).
"""

from __future__ import annotations

import pytest

from medmemorybench.knowledge.models import Text
from medmemorybench.render.conversation import SessionRenderer
from medmemorybench.render.fact_acts import FactSlots
from medmemorybench.render.templates import load_templates
from medmemorybench.simulate.models import (
    AdverseFact,
    CautionFact,
    ComplicationFact,
    Household,
    LabFact,
    MedicationFact,
)
from tests.simulate.clinical import check
from tests.simulate.text_check import (
    acute_violations,
    caution_text_violations,
    cooking_claims,
    household_talk_violations,
    kdigo_stage,
    reason_violations,
    severity_violations,
    stage_violations,
    stages_named,
)

LANGUAGES = ("en", "zh")


@pytest.fixture(scope="module")
def slots(kb, years):
    """Each year's slot filler per language (what the renderer says a fact with)."""
    return {lang: [FactSlots(kb, load_templates(lang), year) for year in years] for lang in LANGUAGES}


def _with_facts(year, *facts):  # noqa: ANN001
    """A copy of a year with one more visit at its end holding `facts`."""
    last = year.events[-1]
    event = last.model_copy(update={"event_id": last.event_id + "X", "index": last.index + 1, "facts": list(facts)})
    return year.model_copy(update={"events": [*year.events, event]})


def _year_of(years, condition: str):  # noqa: ANN001
    return next(y for y in years if y.persona.condition == condition)


# --- caution_text_matches_pair ------------------------------------------------------------------------------------


def test_caution_text_matches_pair(kb, years, slots):
    check([f for lang in LANGUAGES for year, s in zip(years, slots[lang], strict=True)
            for f in caution_text_violations(kb, year, s)])


def test_caution_text_matches_pair_catches_another_rule_of_the_history(kb, years):
    """Ibuprofen after a stroke said with the triptan rule's words ("... triptans increase cerebrovascular events")."""
    year = _with_facts(years[0], CautionFact(drug="ibuprofen", rule="contraindication:stroke_history"))
    triptans = next(r for r in kb.contraindications if r.history == "stroke_history" and "triptan" in r.classes)

    class Wrong(FactSlots):
        def rule_phrase(self, rule_id, drug=None, bars=None):  # noqa: ANN001, ANN201, ARG002
            return self.sentence(self.t(triptans.reason))

    failures = caution_text_violations(kb, year, Wrong(kb, load_templates("en"), year))
    assert failures and failures[-1].startswith("[caution_text_matches_pair]")
    right = caution_text_violations(kb, year, FactSlots(kb, load_templates("en"), year))
    assert not [f for f in right if "ibuprofen (contraindication:stroke_history)" in f]


# --- reason_names_its_cause ---------------------------------------------------------------------------------------


def test_reason_names_its_cause(kb, years, slots):
    check([f for lang in LANGUAGES for year, s in zip(years, slots[lang], strict=True)
            for f in reason_violations(kb, year, s)])


def test_reason_names_its_cause_catches_it_for_another_drug(kb, years):
    """Amlodipine begun "because of the reaction you've had to it" where the reaction was to enalapril."""
    effect = kb.drugs["enalapril"].adverse_effects[0].key
    start = MedicationFact(drug="amlodipine", action="start", dose=5, unit="mg", frequency="once_daily",
                           reason=f"adverse_effect:{effect}")
    year = _with_facts(years[0], AdverseFact(drug="enalapril", effect=effect), start)

    class Vague(FactSlots):
        def reason(self, fact, rng):  # noqa: ANN001, ANN201
            return self.templates.word("reason", "adverse_effect", rng)

    failures = reason_violations(kb, year, Vague(kb, load_templates("en"), year))
    assert failures and all(f.startswith("[reason_names_its_cause]") for f in failures)
    assert not [f for f in reason_violations(kb, year, FactSlots(kb, load_templates("en"), year)) if "amlodipine" in f]


# --- stage_from_value ---------------------------------------------------------------------------------------------


def test_stage_from_value(kb, years):
    check([f for year in years for f in stage_violations(kb, year)])


def test_stage_from_value_reads_kdigo_bands():
    assert [kdigo_stage(v) for v in (95, 68, 59.9, 45, 30, 29, 14)] == ["1", "2", "3a", "3a", "3b", "4", "5"]
    assert stages_named("progression to CKD stage G3a") == ["3a"]
    assert stages_named("chronic kidney disease stage 4 (eGFR 15-29)") == ["4"]
    assert stages_named("diabetic kidney disease (CKD G2 A2, type 2 diabetes)") == ["2"]


def test_stage_from_value_catches_a_fixed_stage(kb, years):
    """The old "progression to CKD stage G3a" finding stated at an eGFR of 68."""
    year = _year_of(years, "diabetic_nephropathy_microalbuminuria")
    finding = Text(en="eGFR 68 mL/min/1.73m², progression to CKD stage G3a", zh="eGFR 68，进展至G3a期")
    year = _with_facts(year, LabFact(lab="egfr", value=68.0, unit=kb.labs["egfr"].unit),
                       ComplicationFact(complication="ckd_progression", finding=finding))
    failures = stage_violations(kb, year)
    assert failures and failures[-1].startswith("[stage_from_value]") and "G3a at eGFR 68.0 (G2)" in failures[-1]


# --- severity_from_value ------------------------------------------------------------------------------------------


def test_severity_from_value(kb, years, slots):
    check([f for lang in LANGUAGES for year, s in zip(years, slots[lang], strict=True)
            for f in severity_violations(kb, year, s)])


def test_severity_from_value_catches_a_little_above_for_far_values(kb, years):
    """HbA1c 8.0 % (reference up to 5.6) called "a little above the normal range"."""
    year = _year_of(years, "lada_diabetes")
    year = _with_facts(year, LabFact(lab="hba1c", value=8.0, unit=kb.labs["hba1c"].unit))

    class Mild(FactSlots):
        def status_key(self, fact):  # noqa: ANN001, ANN201, ARG002
            return "high_slight"

    failures = severity_violations(kb, year, Mild(kb, load_templates("en"), year))
    assert failures and failures[-1].startswith("[severity_from_value]") and "hba1c 8.0" in failures[-1]
    assert not [f for f in severity_violations(kb, year, FactSlots(kb, load_templates("en"), year))
                if "hba1c 8.0" in f]


# --- acute_first_line ---------------------------------------------------------------------------------------------


def test_acute_first_line(kb, years):
    check([f for year in years for f in acute_violations(kb, year)])


def test_acute_first_line_catches_co_amoxiclav_for_cystitis_and_nitrofurantoin_at_low_egfr(kb, years):
    year = _with_facts(years[0], MedicationFact(drug="amoxicillin_clavulanate", action="start", dose=625, unit="mg",
                                                frequency="three_times_daily", reason="illness:cystitis",
                                                indication="illness:cystitis", course_days=7))
    failures = acute_violations(kb, year)
    assert failures and failures[-1].startswith("[acute_first_line]") and "amoxicillin_clavulanate" in failures[-1]
    low = _with_facts(years[0], LabFact(lab="egfr", value=38.0, unit=kb.labs["egfr"].unit),
                      MedicationFact(drug="nitrofurantoin", action="start", dose=100, unit="mg",
                                     frequency="twice_daily", reason="illness:cystitis",
                                     indication="illness:cystitis", course_days=3))
    assert any("nitrofurantoin at eGFR 38.0" in f for f in acute_violations(kb, low))


def test_cystitis_is_treated_with_nitrofurantoin_first(kb, years):
    """NICE NG109: most women with simple cystitis get nitrofurantoin for 3 days (the rest: a rule barred it)."""
    courses = [f for y in years for e in y.events for f in e.facts if isinstance(f, MedicationFact)
               and f.indication == "illness:cystitis" and f.action == "start"]
    assert courses
    assert sum(f.drug == "nitrofurantoin" for f in courses) > len(courses) / 2


def test_two_rules_of_one_history_for_one_drug_are_reported(tmp_path):
    """A data error behind caution_text_matches_pair: a second stroke-history caution naming ibuprofen would leave
    the words said for that pair undecided."""
    from tests.helpers import knowledge_problems

    def change(doc: dict) -> None:
        doc["contraindications"].append({"history": "stroke_history", "drugs": ["ibuprofen"], "level": "caution",
                                         "reason": {"en": "x", "zh": "x"}, "source": "test"})

    assert "'ibuprofen' already has a caution rule for stroke_history" in knowledge_problems(tmp_path, "history.yaml",
                                                                                             change)


# --- household_talk_true ------------------------------------------------------------------------------------------

HOME_TALK_KINDS = ("lifestyle", "trap_disclosure")
"""The visits whose sessions say who cooks (a routine) or that the patient lives alone (a trap told)."""


def home_talk(kb, templates, year):  # noqa: ANN001, ANN201
    """(visit, English session text) of the visits that speak of home; the others only move the renderer on."""
    renderer, out = SessionRenderer(kb, templates, year), []
    for event in year.events:
        if event.kind in HOME_TALK_KINDS:
            out.append((event, " ".join(turn.text for turn in renderer.render(event).turns)))
        else:
            renderer.ctx.advance(event)
    return out


def test_household_talk_true(kb, years):
    templates = load_templates("en")
    check([f for year in years for f in household_talk_violations(kb, year, home_talk(kb, templates, year))])


def test_household_talk_true_catches_a_crafted_violation(kb, years):
    """The seed-37 Parkinson's patient: "I cook for my father and me", then "my younger sister does most of the
    cooking"."""
    templates = load_templates("en")
    year = next(y for y in years if y.persona.household and y.persona.household.members
                and any(cooking_claims(t) for _, t in home_talk(kb, templates, y)))
    talk = [(e, t) for e, t in home_talk(kb, templates, year) if cooking_claims(t)]
    event = talk[-1][0]
    crafted = [*talk, (event, "My younger sister does most of the cooking, to be honest.")]
    failures = household_talk_violations(kb, year, crafted)
    assert failures and failures[0].startswith("[household_talk_true]") and "younger sister" in failures[0]
    # the same sessions read against another household (someone else cooks) disagree too
    other = year.model_copy(update={"persona": year.persona.model_copy(update={"household": Household()})})
    assert household_talk_violations(kb, other, talk)
