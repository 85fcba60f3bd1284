"""Template files: every intent present with enough variants; typos and bad placeholders are named."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from medmemorybench.errors import InputError
from medmemorybench.render.templates import MIN_VARIANTS, PLACEHOLDERS, TEMPLATE_DIR, load_templates, parse_templates


def test_english_templates_cover_every_intent_with_five_variants():
    templates = load_templates("en")
    for intent in PLACEHOLDERS:
        assert len(templates.variants(intent)) >= MIN_VARIANTS, intent


def _raw() -> dict:
    return yaml.safe_load((TEMPLATE_DIR / "en.yaml").read_text(encoding="utf-8"))


def test_unknown_placeholder_is_named_with_file_and_intent():
    raw = _raw()
    raw["intents"]["fact.lab"][0] = "Your {lab} is {value} {unit} ({labname})"
    with pytest.raises(InputError, match=r"en.yaml: intents.fact.lab\[0\]: unknown placeholder\(s\) \['labname'\]"):
        parse_templates(Path("en.yaml"), raw)


def test_variant_that_drops_the_unit_is_rejected():
    # "{value}" without " {unit}" right after it would make lab answers unanswerable.
    raw = _raw()
    raw["intents"]["fact.lab"][1] = "Your {lab} is {value}."
    with pytest.raises(InputError, match=r"intents.fact.lab\[1\]: must contain \['\{value\} \{unit\}'\]"):
        parse_templates(Path("en.yaml"), raw)


def test_missing_intent_and_short_list_are_both_reported():
    raw = _raw()
    del raw["intents"]["close.doctor"]
    raw["intents"]["close.patient"] = raw["intents"]["close.patient"][:2]
    with pytest.raises(InputError) as info:
        parse_templates(Path("en.yaml"), raw)
    assert "intents.close.doctor: missing" in str(info.value)
    assert "intents.close.patient: 2 variants, need at least 5" in str(info.value)


def test_unknown_language_lists_available():
    with pytest.raises(InputError, match=r"no templates for 'xx'; available: en"):
        load_templates("xx")
