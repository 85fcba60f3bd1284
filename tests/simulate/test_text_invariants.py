"""Text invariants over 1,000 seeded patients (issue 27: items 3 and 5, and the seed-53 read), one test per rule, each
with a crafted violation showing its check catches it.

Each failure message starts with the rule's name in brackets (the names `docs/simulation.md` lists).
"""

from __future__ import annotations

import pytest

from medmemorybench.knowledge.models import Text
from medmemorybench.render.acts import Act, Day, DrugName
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
    StressorFact,
    SymptomFact,
    TestFact,
)
from tests.simulate.clinical import check, days_between, with_facts
from tests.simulate.said_check import (
    Said,
    admission_talk_violations,
    backref_of_current_run,
    credit_violations,
    draw_violations,
    onset_violations,
    repeat_violations,
    said_acts,
    stable_violations,
)
from tests.simulate.text_check import (
    acute_violations,
    caution_text_violations,
    cooking_claims,
    household_talk_violations,
    interaction_text_violations,
    kdigo_stage,
    reason_violations,
    severity_violations,
    stage_violations,
    stages_named,
)

LANGUAGES = ("en", "zh")




def _year_of(years, condition: str):  # noqa: ANN001
    return next(y for y in years if y.persona.condition == condition)


# --- caution_text_matches_pair ------------------------------------------------------------------------------------


def test_caution_text_matches_pair(kb, years, slots):
    check([f for lang in LANGUAGES for year, s in zip(years, slots[lang], strict=True)
            for f in caution_text_violations(kb, year, s)])


def test_caution_text_matches_pair_catches_another_rule_of_the_history(kb, years):
    """Ibuprofen after a stroke said with the triptan rule's words ("... triptans increase cerebrovascular events")."""
    year = with_facts(years[0], CautionFact(drug="ibuprofen", rule="contraindication:stroke_history"))
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
    year = with_facts(years[0], AdverseFact(drug="enalapril", effect=effect), start)

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
    year = with_facts(year, LabFact(lab="egfr", value=68.0, unit=kb.labs["egfr"].unit),
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
    year = with_facts(year, LabFact(lab="hba1c", value=8.0, unit=kb.labs["hba1c"].unit))

    class Mild(FactSlots):
        def status_key(self, fact):  # noqa: ANN001, ANN201, ARG002
            return "high_slight"

    failures = severity_violations(kb, year, Mild(kb, load_templates("en"), year))
    assert failures and failures[-1].startswith("[severity_from_value]") and "hba1c 8.0" in failures[-1]
    assert not [f for f in severity_violations(kb, year, FactSlots(kb, load_templates("en"), year))
                if "hba1c 8.0" in f]


def test_severity_from_value_catches_a_little_low_for_a_harmful_sodium(kb, years):
    """A sodium of 125 mmol/L (harm level 130) called "slightly lower than normal": the seed-73 read, P0015 E038."""
    year = with_facts(years[0], LabFact(lab="sodium", value=125.0, unit=kb.labs["sodium"].unit))

    class Mild(FactSlots):
        def status_key(self, fact):  # noqa: ANN001, ANN201, ARG002
            return "low_slight"

    for lang in LANGUAGES:
        failures = severity_violations(kb, year, Mild(kb, load_templates(lang), year))
        assert failures and "sodium 125.0" in failures[-1] and "past its harm level" in failures[-1]
        assert not [f for f in severity_violations(kb, year, FactSlots(kb, load_templates(lang), year))
                    if "sodium 125.0" in f]


# --- acute_first_line ---------------------------------------------------------------------------------------------


def test_acute_first_line(kb, years):
    check([f for year in years for f in acute_violations(kb, year)])


def test_acute_first_line_catches_co_amoxiclav_for_cystitis_and_nitrofurantoin_at_low_egfr(kb, years):
    year = with_facts(years[0], MedicationFact(drug="amoxicillin_clavulanate", action="start", dose=625, unit="mg",
                                                frequency="three_times_daily", reason="illness:cystitis",
                                                indication="illness:cystitis", course_days=7))
    failures = acute_violations(kb, year)
    assert failures and failures[-1].startswith("[acute_first_line]") and "amoxicillin_clavulanate" in failures[-1]
    low = with_facts(years[0], LabFact(lab="egfr", value=38.0, unit=kb.labs["egfr"].unit),
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


# --- reason_names_its_cause: bars and cautions through the long-term drug -------------------------------------------


def _history_drug_year(kb, years):  # noqa: ANN001, ANN202
    """A year whose long-term drug is taken for a disease that bars drugs of its own (metoprolol for heart failure),
    and a drug that disease bars."""
    for year in years:
        trap = next((t for t in year.persona.traps if t.category == "medication_history" and t.indication), None)
        rule = trap and next((r for r in kb.contraindications if r.history == trap.indication.removeprefix("history:")
                              and r.level == "contraindicated"), None)
        if rule is not None:
            return year, trap, sorted(kb.expand([*rule.classes, *rule.drugs]) - {trap.option})[0]
    raise AssertionError("no year takes a long-term drug for a disease that bars a drug")


def test_reason_names_its_cause_catches_a_bar_pinned_on_the_drug(kb, years):
    """The seed-53 read: "With your current metoprolol prescription in mind, I won't use ibuprofen or naproxen" where
    the timeline's reason is contraindication:heart_failure_history."""
    from medmemorybench.render.fields import trap_detail
    from medmemorybench.simulate.models import AvoidedFact

    year, trap, barred = _history_drug_year(kb, years)
    history = trap.indication.removeprefix("history:")
    year = with_facts(year, AvoidedFact(drug=barred, traps=["medication_history"],
                                         rules=[f"contraindication:{history}"], instead="paracetamol"),
                       CautionFact(drug=barred, rule=f"contraindication:{history}", trap="medication_history"))

    class OnTheDrug(FactSlots):  # (the old wording: the trap fact itself, whatever the rule binds through)
        def trap_reason(self, category, rng, rules):  # noqa: ANN001, ANN201, ARG002
            detail = trap_detail(self.kb, self.traps[category], self.lang)
            return self.templates.realize(f"trap_reason.{category}", rng, {"detail": detail})

    for lang in LANGUAGES:
        failures = [f for f in reason_violations(kb, year, OnTheDrug(kb, load_templates(lang), year))
                    if f"{barred} (contraindication:{history})" in f]
        assert len(failures) >= 2 and all(f.startswith("[reason_names_its_cause]") for f in failures), lang
        assert not [f for f in reason_violations(kb, year, FactSlots(kb, load_templates(lang), year))
                    if f"{barred} (contraindication:{history})" in f]


# --- interaction_text_names_its_pair ------------------------------------------------------------------------------


def test_interaction_text_names_its_pair(kb, years, slots):
    check([f for lang in LANGUAGES for year, s in zip(years, slots[lang], strict=True)
           for f in interaction_text_violations(kb, year, s)])


def test_interaction_text_names_its_pair_catches_the_loop_and_sglt2_words_for_spironolactone(kb, years):
    """The seed-53 read: spironolactone with lithium cautioned "loops raise them; SGLT2 inhibitors may lower them"."""
    year = with_facts(years[0], CautionFact(drug="spironolactone", rule="interaction:lithium+spironolactone"))
    rule = next(r for p, r in kb.interaction_partners["lithium"] if p == "spironolactone")

    class General(FactSlots):  # (the rule's general effect, said for every member)
        def rule_phrase(self, rule_id, drug=None, bars=None):  # noqa: ANN001, ANN201, ARG002
            return self.sentence(self.t(rule.effect))

    for lang in LANGUAGES:
        failures = interaction_text_violations(kb, year, General(kb, load_templates(lang), year))
        assert failures and failures[-1].startswith("[interaction_text_names_its_pair]") \
            and "lithium+spironolactone" in failures[-1], lang
        right = interaction_text_violations(kb, year, FactSlots(kb, load_templates(lang), year))
        assert not [f for f in right if "lithium+spironolactone" in f], (lang, right)


# --- the seed-53 read: credit, blood draws, onsets ------------------------------------------------------------------


@pytest.fixture(scope="module")
def said(kb, years):
    """What each year's visits say, act by act, in both languages (`said_check.said_acts`)."""
    templates = {lang: load_templates(lang) for lang in LANGUAGES}
    return [said_acts(kb, year, templates) for year in years]


def _said(event, key: str, text: str, **slots) -> Said:  # noqa: ANN001
    """A crafted act of `event` said as `text` in English."""
    return Said(event, Act("doctor", key, slots), {"en": [text]})


def test_credit_only_where_due(kb, years, said, slots):
    check([f for year, acts in zip(years, said, strict=True) for f in credit_violations(kb, year, acts)]
          + [f for lang in LANGUAGES for year, s in zip(years, slots[lang], strict=True)
             for f in stable_violations(kb, year, s)])


def test_a_marker_bears_out_progress_only_in_range_and_not_worse(kb):
    """MDS-UPDRS 20 after 15 is inside the treated range but worse by more than a reading's variation; a PHQ-9 of 11
    after 15 is out of range but nearer it."""
    updrs = next(m for m in kb.conditions["parkinsons_tremor_dominant"].monitored if m.lab == "updrs_motor")
    phq9 = next(m for m in kb.conditions["major_depressive_disorder"].monitored if m.lab == "phq9")
    assert not updrs.is_on_track(20, 15, 0.12) and updrs.is_on_track(16, 15, 0.12) and updrs.is_on_track(15, None, 0.12)
    assert not updrs.is_on_track(25, 23, 0.12) and updrs.is_on_track(22, 25, 0.12)
    assert phq9.is_on_track(11, 15, 0.15) and not phq9.is_on_track(17, 15, 0.15)
    assert not phq9.is_on_track(15, None, 0.15)


def test_credit_only_where_due_catches_the_seed_53_credits(kb, years):
    """Codeine "still the backbone of this" at a colitis visit, pramipexole "stable" as the motor score climbs, and
    "you've coped well" on a day a new symptom is told."""
    year = _year_of(years, "parkinsons_tremor_dominant")
    step = next(s for s in kb.conditions[year.persona.condition].care_path if s.key == "first_line")
    unit = kb.labs["updrs_motor"].unit
    start = MedicationFact(drug="pramipexole", action="start", dose=0.125, unit="mg", frequency="once_daily",
                           reason="first_line", step=step.key)
    year = with_facts(year, start, LabFact(lab="updrs_motor", value=15.0, unit=unit))
    later = year.events[-1].model_copy(update={"event_id": year.events[-1].event_id + "Y", "date": "2025-02-28",
                                               "index": year.events[-1].index + 1,
                                               "facts": [LabFact(lab="updrs_motor", value=25.0, unit=unit),
                                                         start.model_copy(update={"action": "continue",
                                                                                  "reason": "stable"})]})
    year = year.model_copy(update={"events": [*year.events, later]})
    event = year.events[-1]
    credit = _said(event, "backref.start", "Starting pramipexole on 1 January seems to be paying off.",
                   drug=DrugName("pramipexole"), since=Day("2024-01-01"))
    failures = credit_violations(kb, year, [credit])
    assert failures and failures[0].startswith("[credit_only_where_due]") and "pramipexole credited" in failures[0]
    stable = stable_violations(kb, year, FactSlots(kb, load_templates("en"), year))
    assert any("pramipexole continued as stable at updrs_motor [15.0, 25.0]" in f for f in stable)
    troubled = event.model_copy(update={"facts": [*event.facts, SymptomFact(symptom="x", name=Text(en="x", zh="x"),
                                                                          lay=Text(en="x", zh="x"))]})
    praise = _said(troubled, "backref.diagnosis", "Ever since 4 March, when we found the PD, you've coped well.",
                   diagnosis=Text(en="PD", zh="PD"), since=Day("2024-03-04"))
    assert "a new problem today" in credit_violations(kb, year, [praise])[0]


def test_backref_of_current_run(years, said):
    check([f for year, acts in zip(years, said, strict=True) for f in backref_of_current_run(year, acts)])


def test_backref_of_current_run_catches_a_finished_course(years):
    """The seed-73 read (P0007 S028): a course looked back on from its first start after it ended, and from before
    the start of a second run of the same drug; from the second run's own start it is not a violation."""
    year, event, course, ended = next(
        (y, e, f, after) for y in years for e in y.events for f in e.facts
        if isinstance(f, MedicationFact) and f.action == "start" and f.course_days
        and (after := next((x for x in y.events if days_between(e.date, x.date) > f.course_days), None)) is not None)
    back = _said(ended, "backref.start", "Since then it has had time to settle in.", drug=DrugName(course.drug),
                 since=Day(event.date))
    failures = backref_of_current_run(year, [back])
    assert failures and failures[0].startswith("[backref_of_current_run]") and ended.event_id in failures[0]
    again = with_facts(year, course)  # (the same course started again at a last visit, then looked back on)
    later = again.events[-1].model_copy(update={"event_id": again.events[-1].event_id + "Y", "facts": [],
                                                 "index": again.events[-1].index + 1})
    again = again.model_copy(update={"events": [*again.events, later]})
    old = _said(later, "backref.start", "x", drug=DrugName(course.drug), since=Day(event.date))
    new = _said(later, "backref.start", "x", drug=DrugName(course.drug), since=Day(again.events[-2].date))
    assert backref_of_current_run(again, [old]) and not backref_of_current_run(again, [new])


def test_blood_draw_said_on_its_day(kb, years, said):
    check([f for year, acts in zip(years, said, strict=True) for f in draw_violations(kb, year, acts)])


def test_blood_draw_said_on_its_day_catches_last_week(kb, years):
    """The seed-53 read: "The nurse will take a serum lithium level on 4 March", then on 4 March "I had my blood taken
    last week" and "The lab sent the bloods over late last week"."""
    year = years[0]
    visit = next(e for e in year.events if e.kind == "lab_check")
    crafted = [_said(visit, "open.lab_check.blood", "Hello. I had my blood taken last week; are the results in yet?"),
               _said(visit, "results.blood", "The lab sent the bloods over late last week.")]
    failures = draw_violations(kb, year, crafted)
    assert len(failures) == 2 and all(f.startswith("[draw_said_on_its_day]") for f in failures)
    booked = _said(year.events[0], "next.tests", "", next_day=Day(year.events[1].date), lab=Text(en="x", zh="x"))
    lab = next(k for k, spec in kb.labs.items() if not any(isinstance(f, LabFact) and f.lab == k
                                                            for f in year.events[1].facts))
    booked = Said(booked.event, Act("doctor", "next.tests", {"next_day": Day(year.events[1].date),
                                                            "lab": kb.labs[lab].name}), {})
    assert "not measured then" in draw_violations(kb, year, [booked])[0]


def test_repeat_after_a_first(kb, years, said):
    check([f for year, acts in zip(years, said, strict=True) for f in repeat_violations(kb, year, acts)])


def test_repeat_after_a_first_catches_a_first_egfr_repeated_and_a_first_uacr_named_repeated(kb, years):
    """The seed-53 read: "Let's repeat the eGFR in a few days" with none on record (P0007 S013); a first UACR
    "repeated on 2 of 3 samples over 3-6 months" (P0009 S025)."""
    year = years[0]
    first = next(e for e in year.events if any(isinstance(f, LabFact) and f.lab == "egfr" for f in e.facts))
    before = next(e for e in year.events if e.index == first.index - 1)
    crafted = Said(before, Act("doctor", "next.tests", {"next_day": Day(first.date), "lab": kb.labs["egfr"].name}),
                   {"en": ["Let's repeat the eGFR in a few days."]})
    named = TestFact(test="uacr_repeat", finding=Text(en="UACR 52 mg/g", zh="x"), name=Text(
        en="urine albumin-to-creatinine ratio, repeated on 2 of 3 samples over 3-6 months", zh="x"))
    failures = repeat_violations(kb, with_facts(year, named), [crafted])
    assert len(failures) == 2 and all(f.startswith("[repeat_after_a_first]") for f in failures), failures
    said_right = Said(before, crafted.act, {"en": ["We'll check your eGFR in a few days."]})
    assert not repeat_violations(kb, year, [said_right])


def test_onset_before_its_visit(kb, years, said):
    check([f for year, acts in zip(years, said, strict=True) for f in onset_violations(kb, year, acts)]
          + [f for year in years for f in admission_talk_violations(kb, year)])


def test_onset_before_its_visit_catches_the_seed_53_onsets(kb, years):
    """"It began on Tuesday" on a Tuesday, "Do you remember what I said in March?" on 3 March, "the week before
    last weekend, so four weeks", "we started bupropion on 5 April, so it's had time to settle" on 6 April, and
    "after the last admission" before any admission."""
    year = years[0]
    tuesday = next(e for e in year.events if e.date == "2024-03-05") if any(
        e.date == "2024-03-05" for e in year.events) else year.events[0].model_copy(update={"date": "2024-03-05"})
    crafted = [
        _said(tuesday, "ans.onset.acute", "It began on Tuesday; I hoped it would go by itself."),
        _said(tuesday, "open.symptom_report.again", "Hi. Do you remember what I said in March? It's started up again.",
              since=Day("2024-03-02", "month")),
        _said(tuesday, "ans.onset.corrected", "Since last weekend… no, actually, it was the week before. So four "
              "weeks, give or take."),
        _said(tuesday, "backref.start.settled", "We started the bupropion on 4 March, so it's had time to settle.",
              drug=DrugName("bupropion"), since=Day("2024-03-04")),
    ]
    failures = onset_violations(kb, year, crafted)
    assert len(failures) == 4 and all(f.startswith("[onset_before_its_visit]") for f in failures), failures
    assert "names today" in failures[0] and "names this month" in failures[1] and "[7, 28]" in failures[2]
    hfpef = _year_of(years, "hfpef")
    told = hfpef.events[0].model_copy(update={"facts": [StressorFact(stressor="fear_of_hospital")]})
    early = hfpef.model_copy(update={"events": [told, *hfpef.events[1:]]})
    assert admission_talk_violations(kb, early)[0].startswith("[onset_before_its_visit]")
