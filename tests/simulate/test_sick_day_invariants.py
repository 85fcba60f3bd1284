"""Sick-day advice over 1,000 seeded patients (issue 27, the seed-79 read): an acute illness with a fever, vomiting or
diarrhoea in a patient on metformin, a RAS blocker, a diuretic, an SGLT2 inhibitor or an NSAID is answered that visit
with which drugs to pause and when to restart them, and on lithium with what toxicity to watch for; said in English
and Chinese. The rule also has a crafted violation its check must catch.

Failure messages start with the rule's name in brackets (the names `docs/simulation.md` lists).
"""

from __future__ import annotations

from medmemorybench.simulate.models import AdviceFact
from tests.simulate.clinical import check, first_event, with_event_facts
from tests.simulate.sick_day_check import PAUSE_ADVICE, WATCH_ADVICE, sick_day_violations


def _advised(key: str):  # noqa: ANN202
    return lambda e: any(isinstance(f, AdviceFact) and f.advice == key for f in e.facts)


def test_sick_day_advice_a_dehydrating_illness_on_a_drug_it_turns_harmful_is_answered_that_visit(kb, years):
    check([v for year in years for v in sick_day_violations(kb, year)])
    first_event(years, _advised(PAUSE_ADVICE))  # (it is given: pneumonia and strep throat on these drugs)
    first_event(years, _advised(WATCH_ADVICE))


def test_an_illness_with_a_fever_and_no_sick_day_advice_is_caught(kb, years):
    """The visit as s13-clinical wrote it (P0009 E046: pneumonia on metformin, losartan and lithium, no advice): each
    advice taken away must fail."""
    for key, drug in ((PAUSE_ADVICE, ""), (WATCH_ADVICE, "lithium")):
        year, event = first_event(years, _advised(key))
        assert not sick_day_violations(kb, year)
        bare = [f for f in event.facts if not (isinstance(f, AdviceFact) and f.advice == key)]
        found = sick_day_violations(kb, with_event_facts(year, event, bare))
        assert any(v.startswith("[sick_day_advice]") and key in v and drug in v for v in found), found


def test_sick_day_advice_is_said_in_both_languages(kb):
    """Each advice says when to pause and when to restart (for lithium, what to watch for) in both languages."""
    for key, words in ((PAUSE_ADVICE, {"en": ("metformin", "24 to 48 hours"), "zh": ("二甲双胍", "24到48小时")}),
                       (WATCH_ADVICE, {"en": ("lithium", "tremor"), "zh": ("锂", "手抖")})):
        for lang in ("en", "zh"):
            text = getattr(kb.advice[key].text, lang)
            assert all(w in text for w in words[lang]), (key, lang, text)
