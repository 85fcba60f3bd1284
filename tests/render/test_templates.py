"""Template files: every intent and act present with enough variants; typos, bad slots, required facts inside a
choice and missing or unused sub-phrases are named with the file and key."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from medmemorybench.errors import InputError
from medmemorybench.knowledge import default_knowledge
from medmemorybench.render.acts import ACTS, NOISE_ACTS
from medmemorybench.render.fact_acts import fact_acts
from medmemorybench.render.templates import (
    MIN_ACT_VARIANTS,
    MIN_VARIANTS,
    PLACEHOLDERS,
    TEMPLATE_DIR,
    load_templates,
    parse_templates,
)
from medmemorybench.simulate.models import AdviceFact


def test_english_templates_cover_every_intent_and_act():
    templates = load_templates("en")
    for intent in PLACEHOLDERS:
        assert len(templates.variants(intent)) >= MIN_VARIANTS, intent
    for act in [*ACTS, *NOISE_ACTS]:
        assert len(templates.variants(act)) >= MIN_ACT_VARIANTS, act


def _raw() -> dict:
    return yaml.safe_load((TEMPLATE_DIR / "en.yaml").read_text(encoding="utf-8"))


def test_unknown_placeholder_is_named_with_file_and_intent():
    raw = _raw()
    raw["intents"]["fact.lab"][0] = "Your {lab} is {value} {unit} ({labname})"
    with pytest.raises(InputError, match=r"en.yaml: intents.fact.lab\[0\]: unknown slot\(s\) \['labname'\]"):
        parse_templates(Path("en.yaml"), raw)


def test_variant_that_drops_the_unit_is_rejected():
    # "{value}" without " {unit}" right after it would make lab answers unanswerable.
    raw = _raw()
    raw["intents"]["fact.lab"][1] = "Your {lab} is {value}."
    with pytest.raises(InputError, match=r"intents.fact.lab\[1\]: must contain \['\{value\} \{unit\}'\]"):
        parse_templates(Path("en.yaml"), raw)


def test_units_are_said_as_the_knowledge_base_says_them_and_a_unit_table_here_is_rejected():
    # one table (knowledge/data/units.yaml) for the sessions and the findings the simulator fills; a unit the knowledge
    # base does not have is rejected there (tests/knowledge/test_findings.py)
    assert load_templates("zh").unit("events/h") == "次/小时"
    assert load_templates("en").unit("events/h") == "events/h"
    assert load_templates("en").unit("ratio") == load_templates("zh").unit("ratio") == ""
    raw = _raw()
    raw["words"]["unit"] = {"bpm": "beats a minute"}
    with pytest.raises(InputError, match=r"en.yaml: words.unit: unknown word table"):
        parse_templates(Path("en.yaml"), raw)


def test_required_fact_inside_a_choice_is_rejected():
    # "[{value} {unit}|about that]" would let an expansion drop the value a question rests on
    raw = _raw()
    raw["intents"]["fact.lab"][2] = "Your {lab} is [{value} {unit}|about that], {status}."
    with pytest.raises(InputError, match=r"intents.fact.lab\[2\]: must contain \['\{value\} \{unit\}'\] outside"):
        parse_templates(Path("en.yaml"), raw)


def test_missing_entries_short_lists_and_grammar_problems_are_all_reported():
    raw = _raw()
    del raw["intents"]["fact.test"]
    del raw["acts"]["bye.doctor"]
    raw["intents"]["fact.adverse"] = raw["intents"]["fact.adverse"][:2]
    raw["acts"]["hx.onset"] = ["When did it <no_such_phrase>?", "[unclosed", "fine", "also fine"]
    raw["grammar"]["lonely"] = ["never referred to"]
    with pytest.raises(InputError) as info:
        parse_templates(Path("en.yaml"), raw)
    message = str(info.value)
    assert "intents.fact.test: missing" in message
    assert "acts.bye.doctor: missing" in message
    assert "intents.fact.adverse: 2 variants, need at least 5" in message
    assert "acts.hx.onset[0]: no grammar entry ['no_such_phrase']" in message
    assert "acts.hx.onset[1]: unclosed '['" in message
    assert "grammar.lonely: never used" in message


def test_act_slot_outside_its_declaration_is_rejected():
    raw = _raw()
    raw["acts"]["hx.onset"][0] = "When did the {drug} start?"  # hx.onset is told no drug
    with pytest.raises(InputError, match=r"acts.hx.onset\[0\]: unknown slot\(s\) \['drug'\]"):
        parse_templates(Path("en.yaml"), raw)


def test_unknown_language_lists_available():
    with pytest.raises(InputError, match=r"no templates for 'xx'; available: en"):
        load_templates("xx")


def test_chinese_templates_cover_every_intent_and_act():
    templates = load_templates("zh")
    for key in [*PLACEHOLDERS, *ACTS, *NOISE_ACTS]:
        assert templates.variants(key), key


@pytest.mark.parametrize("language", ["en", "zh"])
def test_safety_net_never_tells_a_patient_to_stop_a_drug_on_their_own(language):
    # [safety_net_no_stop] "If you get dyskinesia on the carbidopa/levodopa, stop it and call us" (seed-13 review):
    # stopping levodopa, a beta-blocker, a steroid or an antidepressant abruptly is itself a harm; the safety net
    # for any new drug is to ring the same day, and the doctor decides
    stop = {"en": ("stop it", "stop taking", "stop the"), "zh": ("停药", "别吃了", "停了")}[language]
    templates = load_templates(language)
    for variant in templates.variants("safety.new_drug"):
        assert not any(word in variant for word in stop), variant


@pytest.mark.parametrize("language", ["en", "zh"])
def test_a_result_explained_promises_no_treatment(language):
    # [explain_no_promise] "167 mmHg … so we'll act on it", and nothing was done all year (seed-13 review): the
    # words that explain a result cannot know whether the record acts on it, so they promise only to follow it
    promise = {"en": ("act on it", "we need to act", "treatment needs", "we're treating", "work on"),
               "zh": ("得处理", "治疗得调整", "在治的", "降下来")}[language]
    templates = load_templates(language)
    for act in ("explain.high", "explain.low"):
        for variant in templates.variants(act):
            assert not any(word in variant for word in promise), variant


@pytest.mark.parametrize("language", ["en", "zh"])
def test_safety_advice_is_never_wrapped_as_lifestyle_encouragement(language):
    # [safety advice said plainly] "After a seizure you mustn't drive ... Small steps count, so start where you can"
    # and "这比吃药还管用" after the no-driving advice: what a harm calls for is an instruction, not a habit to work on
    coaxing = {"en": ("small steps", "start where you can", "work on", "better than", "give it a go", "keep at it",
                      "little and often", "try"),
               "zh": ("一点一点", "能做多少算多少", "比吃药还管用", "试试", "坚持")}[language]
    templates = load_templates(language)
    for act in ("fact.advice_safety", "advice.again_safety", "teachback.advice_safety"):
        for variant in templates.variants(act):
            assert not any(word in variant.lower() for word in coaxing), (act, variant)
    # (and the lifestyle wrappers do coax: the check is not vacuous)
    assert any(word in v.lower() for v in templates.variants("fact.advice") for word in coaxing)


def test_safety_advice_is_said_with_the_safety_wording():
    kb = default_knowledge()
    safety = {key for key, advice in kb.advice.items() if advice.safety}
    assert {"no_driving_sleep_attacks", "no_driving_after_seizure", "stop_potassium_salt_substitute"} <= safety
    for key in kb.advice:
        [act] = fact_acts(kb, None, AdviceFact(advice=key))  # type: ignore[arg-type]
        assert act.key == ("fact.advice_safety" if key in safety else "fact.advice"), key


@pytest.mark.parametrize("language", ["en", "zh"])
def test_a_co_prescription_stopped_with_its_drug_says_why(language):
    # a stop's reason `with:<drug>` (`co_prescription_ends_with_drug`) has words of its own: the word table's
    # fallback, the bare key, read "You can come off colecalciferol now, with." (the seed-61 read, P0014 E072)
    templates = load_templates(language)
    said = templates.word("reason", "with")
    assert said != "with" and len(said) > 6
