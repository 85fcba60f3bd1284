"""What a visit's words take for granted is true of the record, over 1,000 seeded patients (issue 27, the seed-61
read), one test per rule, each with a crafted violation its check must catch.

The acts that can say what a rule listens for are said once per visit in English and Chinese (`said_check.said_acts`);
the visits whose advice says the self-harm question was asked are rendered whole, in both languages.
"""

from __future__ import annotations

from datetime import date

import pytest

from medmemorybench.knowledge.models import Text
from medmemorybench.render.acts import Act
from medmemorybench.render.conversation import SessionRenderer
from medmemorybench.render.templates import load_templates
from medmemorybench.simulate.models import AdviceFact, AllergyFact, CareYear, DiagnosisFact, StressorFact
from tests.simulate.clinical import check
from tests.simulate.presupposed_check import (
    copay_violations,
    correction_violations,
    said_keys,
    self_harm_violations,
    talk_violations,
)
from tests.simulate.said_check import Said, said_acts

LANGUAGES = ("en", "zh")
TOPICS = ("last_visit", "a_while", "kids", "copays", "medicines", "short_lived")


@pytest.fixture(scope="module")
def said(kb, years):
    """Per year: every act that can say what a rule listens for, said in each language."""
    templates = {lang: load_templates(lang) for lang in LANGUAGES}
    keys = said_keys(templates, TOPICS)
    return [said_acts(kb, year, templates, lambda key: key in keys, lambda lang, key, literals: True)
            for year in years]


def _rule(failures: list[str], rule: str) -> list[str]:
    return [f for f in failures if f.startswith(f"[{rule}]")]


def _talk(kb, years, said, rule: str) -> list[str]:  # noqa: ANN001
    return _rule([f for year, acts in zip(years, said, strict=True) for f in talk_violations(kb, year, acts)], rule)


def _said(event, text: str, lang: str = "en") -> Said:  # noqa: ANN001
    return Said(event, Act("doctor", "greet.doctor"), {lang: [text]})


# --- correction_differs ---------------------------------------------------------------------------------------------


def test_correction_differs(years):
    check([f for year in years for f in correction_violations(year)])


def test_correction_differs_catches_the_seed_61_sertraline_rash(years):
    """P0007: "It wasn't a blotchy rash on my chest and arms about ten days in; it was a blotchy rash ..."."""
    year = years[0]
    rash = Text(en="a blotchy rash on my chest and arms about ten days in", zh="吃了十来天胸口和胳膊上起了一片片的疹子")
    fact = AllergyFact(group="sertraline_hypersensitivity", agent=Text(en="sertraline", zh="舍曲林"), reaction=rash,
                       corrected_from=rash)
    last = year.events[-1]
    crafted = year.model_copy(update={"events": [*year.events[:-1], last.model_copy(update={"facts": [fact]})]})
    failures = correction_violations(crafted)
    assert failures and failures[-1].startswith("[correction_differs]") and "en, zh" in failures[-1]


# --- last_visit_true --------------------------------------------------------------------------------------------------


def test_last_visit_true(kb, years, said):
    check(_talk(kb, years, said, "last_visit_true"))


def test_last_visit_true_catches_the_seed_61_greetings(kb, years):
    """P0004 S001: "Last time was 3 January" at the first visit, on 3 January; P0007 S051: "It's been a while, so I'm
    checking in as we agreed" two days after S050. Chinese too."""
    year = years[0]
    first = year.events[0]
    close = next(e for e in year.events[1:] if _gap(year, e) < 28)
    failures = talk_violations(kb, year, [_said(first, "Hello. Last time was 3 January, so let's see where we are."),
                                          _said(first, "您好。上次是1月3日，咱们接着说。", "zh"),
                                          _said(close, "Hello. It's been a while, so I'm checking in as we agreed."),
                                          _said(close, "您好。有段时间没来了，按说好的来复查。", "zh")])
    assert len(_rule(failures, "last_visit_true")) == 4
    far = next((e for e in year.events[1:] if _gap(year, e) >= 28), None)
    if far is not None:  # (after four weeks it is true)
        assert not talk_violations(kb, year, [_said(far, "Hello. It's been a while, so I'm checking in as we agreed.")])


def _gap(year: CareYear, event) -> int:  # noqa: ANN001
    return (date.fromisoformat(event.date) - date.fromisoformat(year.events[event.index - 2].date)).days


# --- children_plural_true --------------------------------------------------------------------------------------------


def test_children_plural_true(kb, years, said):
    check(_talk(kb, years, said, "children_plural_true"))


def test_children_plural_true_catches_the_kids_of_one_son(kb, years):
    """P0009 S036, S074: "I'll tell the kids what you said" with one son, Mark, 27, in the family table."""
    year = years[0]
    son = year.persona.family[0].model_copy(update={"relation": "son", "name": Text(en="Mark", zh="马克"), "age": 27})
    one = year.model_copy(update={"persona": year.persona.model_copy(update={"family": [son]})})
    event = one.events[-1]
    said = [_said(event, "I'll tell the kids what you said about my blood sugar; they always ask."),
            _said(event, "回去跟孩子们说您讲的血糖的事。", "zh")]
    assert len(_rule(talk_violations(kb, one, said), "children_plural_true")) == 2
    two = one.model_copy(update={"persona": one.persona.model_copy(update={"family": [son, son]})})
    assert not _rule(talk_violations(kb, two, said), "children_plural_true")


# --- copays_insured ---------------------------------------------------------------------------------------------------


def test_copays_insured(kb, years, said):
    check([f for year in years for f in copay_violations(kb, year)] + _talk(kb, years, said, "copays_insured"))


def test_copays_insured_catches_the_uninsured_part_timer(kb, years):
    """P0009: "I work part-time with no health insurance" beside "the co-pays are eating my savings"."""
    year = next(y for y in years if any(t.category == "lifestyle_economic" and t.option == "uninsured_part_time"
                                        for t in y.persona.traps) and y.persona.condition
                == "diabetic_nephropathy_microalbuminuria")
    last = year.events[-1]
    crafted = year.model_copy(update={"events": [*year.events[:-1], last.model_copy(
        update={"facts": [StressorFact(stressor="pill_burden")]})]})
    failures = copay_violations(kb, crafted)
    assert failures and failures[-1].startswith("[copays_insured]") and "co-pays" in failures[-1]
    said = [_said(last, "每次复诊都多一种药，医保报销后自付的钱把积蓄都快花光了", "zh")]
    assert _rule(talk_violations(kb, year, said), "copays_insured")


# --- medicines_on_record ----------------------------------------------------------------------------------------------


def test_medicines_on_record(kb, years, said):
    check(_talk(kb, years, said, "medicines_on_record"))


def test_medicines_on_record_catches_advice_alongside_no_medicine(kb, years):
    """P0009 S003 and S014: "Alongside the medicines, there's something else" months before the first medicine."""
    year = years[0]
    first = year.events[0]
    bare = year.model_copy(update={"events": [first.model_copy(update={"facts": []}), *year.events[1:]]})
    said = [_said(first, "Alongside the medicines, there's something else. Cut down on salt."),
            _said(first, "除了吃药，还有一件事。少吃盐。", "zh")]
    assert len(_rule(talk_violations(kb, bare, said), "medicines_on_record")) == 2


# --- recurrent_not_short_lived ----------------------------------------------------------------------------------------


def test_recurrent_not_short_lived(kb, years, said):
    check(_talk(kb, years, said, "recurrent_not_short_lived"))


def test_recurrent_not_short_lived_catches_perennial_rhinitis(kb, years):
    """P0007 S089: "What you have is perennial allergic rhinitis (house dust mite), a short-lived illness we can
    treat"."""
    illness = kb.illnesses["allergic_rhinitis"]
    assert illness.recurrent
    year = years[0]
    last = year.events[-1]
    fact = DiagnosisFact(name=illness.name, icd11=illness.icd11, status="acute")
    crafted = year.model_copy(update={"events": [*year.events[:-1], last.model_copy(update={"facts": [fact]})]})
    event = crafted.events[-1]
    said = [_said(event, "What you have is perennial allergic rhinitis (house dust mite), a short-lived illness we "
                         "can treat."), _said(event, "您这是常年性变应性鼻炎（尘螨），是个短期的病，可以治。", "zh")]
    assert len(_rule(talk_violations(kb, crafted, said), "recurrent_not_short_lived")) == 2


# --- self_harm_asked --------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def mood_sessions(kb, years):
    """Per year with a positive mood screen's safety net: those visits' sessions, whole, per language."""
    rule = kb.mood_screen
    advice = {rule.safety_net_advice, rule.crisis_advice}
    out = []
    for year in years:
        wanted = {e.event_id for e in year.events if any(isinstance(f, AdviceFact) and f.advice in advice
                                                         for f in e.facts)}
        if not wanted:
            continue
        sessions = []
        for lang in LANGUAGES:
            renderer = SessionRenderer(kb, load_templates(lang), year)
            for event in year.events:
                if event.event_id in wanted:
                    session = renderer.render(event)
                    sessions.append((event, lang, [(t.role, t.text) for t in session.turns]))
                else:
                    renderer.ctx.advance(event)
        out.append((year, sessions))
    return out


def test_self_harm_asked(mood_sessions):
    assert mood_sessions, "no positive mood screen in the cohort"
    check([f for year, sessions in mood_sessions for f in self_harm_violations(year, sessions)])


def test_self_harm_asked_catches_a_claim_with_no_question(mood_sessions):
    """P0015/P0007 S050: "With a score like this I also asked you about thoughts of harming yourself" with no such
    question or answer in the session; the claim with its question but no answer is caught too."""
    year, sessions = mood_sessions[0]
    event = sessions[0][0]
    claim = {"en": "With a score like this I also asked you about thoughts of harming yourself or that you'd be better "
                   "off dead.", "zh": "分数到了这个程度，我也问了您有没有伤害自己或者觉得不如死了的念头。"}
    question = {"en": "Have you had any thoughts of harming yourself, or that you'd be better off dead?",
                "zh": "您有没有过伤害自己的念头，或者觉得不如死了算了？"}
    crafted = [(event, lang, [("patient", "Hello."), ("doctor", "Your PHQ-9 is 14."), ("patient", "Oh."),
                              ("doctor", claim[lang])]) for lang in LANGUAGES]
    crafted += [(event, lang, [("patient", "Hello."), ("doctor", question[lang] + " " + claim[lang])])
                for lang in LANGUAGES]
    assert len(self_harm_violations(year, crafted)) == 4
    answered = [(event, "en", [("doctor", question["en"]), ("patient", "No, nothing like that."),
                               ("doctor", claim["en"])])]
    assert not self_harm_violations(year, answered)
