"""gists.yaml: every disclosed fact has a gist that its own words state and no other fact of its kind does."""

from __future__ import annotations

import json
import re
import unicodedata
from pathlib import Path

import pytest

from medmemorybench.knowledge import default_knowledge
from medmemorybench.knowledge.models import GIST_KINDS
from tests.helpers import knowledge_problems

LANGUAGES = ("en", "zh")


def _fold(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).lower().replace("\u2019", "'")
    return re.sub(r"\s+", " ", text).strip()


def _has(text: str, word: str, language: str) -> bool:
    if language == "zh":
        return word in text
    # at the start of a word, running on as far as it likes: "swallow" matches "swallowing"
    return re.search(r"(?<![^\W_])" + re.escape(word), text) is not None


def states(answer: str, groups: list[list[str]], language: str) -> bool:
    """The matching rule gists.yaml is written for: every concept group has one of its words in the answer."""
    text = _fold(answer)
    return all(any(_has(text, _fold(word), language) for word in group) for group in groups)


@pytest.fixture(scope="module")
def kb():
    return default_knowledge()


def _symptoms(kb, key: str) -> list:  # noqa: ANN001
    """Every symptom with this key (conditions and illnesses word one symptom their own way)."""
    return [s for owner in [*kb.conditions.values(), *kb.illnesses.values()] for s in owner.symptoms if s.key == key]


def disclosed(kb, kind: str, key: str, language: str) -> list[str]:  # noqa: ANN001
    """The patient's own words for a fact: an allergy group's name and each agent, a symptom's clinical and lay names
    wherever it is told, else the record's text."""
    if kind == "symptoms":
        return list(dict.fromkeys(getattr(text, language) for s in _symptoms(kb, key) for text in (s.name, s.lay)))
    if kind == "allergy_groups":
        group = kb.allergy_groups[key]
        return [getattr(group.name, language), *(getattr(agent, language) for agent in group.agents)]
    records = {"medication_preferences": kb.preferences, "habits": kb.habits,
               "economic_profiles": kb.economic_profiles}[kind]
    return [getattr(records[key].text, language).replace("{budget}", "40")]


def _facts(kb):  # noqa: ANN001
    return [(kind, key) for kind in GIST_KINDS for key in getattr(kb.gists, kind)]


def test_every_disclosed_text_states_its_own_gist(kb):
    # every agent, not just one: the simulator discloses an allergy through one agent drawn at random
    missing = [(kind, key, language, text) for kind, key in _facts(kb) for language in LANGUAGES
               for text in disclosed(kb, kind, key, language)
               if not states(text, kb.gists.of(kind, key, language), language)]
    assert missing == []


def rivals(kb, kind: str, key: str) -> list[str]:  # noqa: ANN001
    """The facts a gist must not be stated by: every other of its kind; for a symptom, the other symptoms of the
    conditions and illnesses that have it (what an answer about this patient could tell instead)."""
    if kind != "symptoms":
        return [other for other in getattr(kb.gists, kind) if other != key]
    owners = kb.symptom_keys()
    return sorted(other for other, theirs in owners.items() if other != key and set(theirs) & set(owners[key]))


SUBSUMED = {("symptoms", "loose_stools", "bloody_diarrhoea")}
"""A fact the other's words do tell ("loose stools with blood and mucus" are loose stools)."""


def test_no_other_fact_of_the_same_kind_states_a_gist(kb):
    clashes = [(kind, key, other, text) for kind, key in _facts(kb) for language in LANGUAGES
               for other in rivals(kb, kind, key) if (kind, key, other) not in SUBSUMED
               for text in disclosed(kb, kind, other, language)
               if states(text, kb.gists.of(kind, key, language), language)]
    assert clashes == []


PARAPHRASES = [
    # how a capable assistant recalls each fact in its own words, lay and clinical
    ("medication_preferences", "cannot_swallow_large_tablets", "en", "You told me you can't swallow large tablets."),
    ("medication_preferences", "cannot_swallow_large_tablets", "en", "Big pills make you gag, so you need small ones."),
    ("medication_preferences", "cannot_swallow_large_tablets", "en", "You have trouble swallowing bigger capsules."),
    ("medication_preferences", "cannot_swallow_large_tablets", "zh", "你说过大药片咽不下去。"),
    ("medication_preferences", "cannot_swallow_large_tablets", "zh", "药片太大你就吞不下去，要选小片的。"),
    ("medication_preferences", "needle_phobia", "en", "You're terrified of needles, so no injections or drips."),
    ("medication_preferences", "needle_phobia", "en", "You asked for no jabs or IV infusions."),
    ("medication_preferences", "needle_phobia", "zh", "你晕针，不要给你打针或输液。"),
    ("medication_preferences", "adhesive_allergy", "en", "You can't use skin patches: the adhesive blisters you."),
    ("medication_preferences", "adhesive_allergy", "zh", "你不能用贴在皮肤上的药，胶布会让你起水疱。"),
    ("medication_preferences", "once_daily_only", "en", "Because of your shift work you can only manage once a day."),
    ("medication_preferences", "once_daily_only", "zh", "你上班倒班，药多了会忘，只能每天一次。"),
    ("medication_preferences", "once_daily_blister_pack", "en", "Your pharmacy packs your tablets in a once-a-day "
                                                                "morning blister pack."),
    ("medication_preferences", "once_daily_blister_pack", "en", "You live alone, so once-daily medicines only."),
    ("medication_preferences", "once_daily_blister_pack", "zh", "你一个人住，记性不好，只能吃一天一次的药。"),
    ("medication_preferences", "no_inhaler_coordination", "en", "You can't coordinate an aerosol puffer; a dry powder "
                                                                "inhaler is fine."),
    ("medication_preferences", "no_inhaler_coordination", "zh", "你手抖，用不了气雾剂，干粉吸入器可以。"),
    ("medication_preferences", "avoids_liquid_medicines", "en", "You can't stand syrups; the taste makes you vomit."),
    ("medication_preferences", "avoids_liquid_medicines", "en", "Liquid medicines make you sick."),
    ("medication_preferences", "avoids_liquid_medicines", "zh", "你不能吃液体的药，一喝就恶心。"),
    ("medication_preferences", "vegan_no_gelatin_capsules", "en", "You're vegan, so no gelatine capsules."),
    ("medication_preferences", "vegan_no_gelatin_capsules", "zh", "你吃纯素，胶囊不行，片剂可以。"),
    ("medication_preferences", "no_water_tablets", "en", "You drive a bus all day, so no water tablets."),
    ("medication_preferences", "no_water_tablets", "en", "You can't take diuretics: you can't get to a toilet."),
    ("medication_preferences", "no_water_tablets", "zh", "你开公交车没法上厕所，不能吃利尿药。"),
    ("medication_preferences", "nothing_sedating", "en", "You operate a crane, so nothing that makes you drowsy."),
    ("medication_preferences", "nothing_sedating", "en", "No sedating medicines, not even at night."),
    ("medication_preferences", "nothing_sedating", "zh", "你开塔吊，任何让人犯困的药都不能吃。"),
    ("medication_preferences", "cannot_stay_upright_after_tablets", "en", "You can't sit up for 30 minutes after "
                                                                          "swallowing a pill."),
    ("medication_preferences", "cannot_stay_upright_after_tablets", "en", "Your back means you can't stay upright for "
                                                                          "half an hour after a tablet."),
    ("medication_preferences", "cannot_stay_upright_after_tablets", "zh", "你早上大多要躺着，吞药后没法坐直三十分钟。"),
    ("habits", "grapefruit_juice_daily", "en", "You have a big glass of grapefruit juice with breakfast."),
    ("habits", "grapefruit_juice_daily", "zh", "你每天早饭喝一大杯葡萄柚汁。"),
    ("habits", "salty_pickles_and_soups", "en", "You have pickles with every meal and instant noodles most days."),
    ("habits", "salty_pickles_and_soups", "en", "Your diet is high in salt."),
    ("habits", "salty_pickles_and_soups", "zh", "你口味很重，每顿都吃咸菜。"),
    ("habits", "sugary_drinks", "en", "You drink two or three cans of regular Coke or sweet tea a day."),
    ("habits", "sugary_drinks", "zh", "你爱喝含糖饮料，每天两三罐可乐。"),
    ("habits", "nightly_alcohol", "en", "You drink three or four beers every evening."),
    ("habits", "nightly_alcohol", "zh", "你每天晚上都喝酒。"),
    ("habits", "leafy_greens_vitamin_k", "en", "You blend a green smoothie with kale and spinach every morning."),
    ("habits", "leafy_greens_vitamin_k", "zh", "你吃很多绿叶菜。"),
    ("habits", "potassium_salt_substitute", "en", "You use a potassium salt substitute liberally."),
    ("habits", "potassium_salt_substitute", "zh", "你做菜放很多低钠盐。"),
    ("habits", "aged_cheese_and_cured_meats", "en", "You snack on aged cheddar and salami most nights."),
    ("habits", "aged_cheese_and_cured_meats", "zh", "你几乎每晚吃陈年奶酪和腊肠。"),
    ("habits", "st_johns_wort_tea", "en", "You take St. John\u2019s Wort for your nerves."),
    ("habits", "st_johns_wort_tea", "zh", "你喝圣约翰草茶安神。"),
    ("habits", "high_protein_meals_with_pills", "en", "You take your pills with steak, eggs and protein shakes."),
    ("habits", "high_protein_meals_with_pills", "zh", "你吃药时配高蛋白大餐。"),
    ("habits", "coffee_with_morning_pills", "en", "You swallow your morning pills with strong coffee."),
    ("habits", "coffee_with_morning_pills", "zh", "你早上用咖啡送药。"),
    ("habits", "dairy_with_morning_pills", "en", "You take your morning tablets with milk or a yogurt."),
    ("habits", "dairy_with_morning_pills", "zh", "你早上吃药配一大杯牛奶。"),
    ("habits", "licorice_candy", "en", "You eat liquorice almost every day."),
    ("habits", "licorice_candy", "zh", "你几乎每天都吃甘草糖。"),
    ("habits", "energy_drinks", "en", "You rely on energy drinks like Red Bull every afternoon."),
    ("habits", "energy_drinks", "zh", "你每天下午喝两大罐功能饮料。"),
    ("habits", "late_night_heavy_meals", "en", "You eat your biggest meal around 10 pm and go straight to bed."),
    ("habits", "late_night_heavy_meals", "en", "You have a heavy dinner late at night."),
    ("habits", "late_night_heavy_meals", "zh", "你晚饭吃得很晚，吃完就睡觉。"),
    ("habits", "seaweed_and_kelp", "en", "You eat seaweed soup or kelp salad almost daily."),
    ("habits", "seaweed_and_kelp", "zh", "你几乎每天喝紫菜汤、吃凉拌海带。"),
    ("habits", "fried_fatty_food", "en", "You eat fried chicken and chips or other fast food most days."),
    ("habits", "fried_fatty_food", "zh", "你常吃油炸食品和快餐。"),
    ("habits", "low_fluid_intake", "en", "You barely drink anything so you don't need the toilet."),
    ("habits", "low_fluid_intake", "en", "You don't drink much water."),
    ("habits", "low_fluid_intake", "zh", "你喝水很少，怕老上厕所。"),
    ("habits", "skips_meals_intermittent_fasting", "en", "You do intermittent fasting and skip breakfast and lunch."),
    ("habits", "skips_meals_intermittent_fasting", "zh", "你不吃早饭和午饭，一天只吃一顿。"),
    ("habits", "cranberry_juice_daily", "en", "You drink a pint of cranberry juice every day."),
    ("habits", "cranberry_juice_daily", "zh", "你每天喝蔓越莓汁。"),
    ("habits", "ginkgo_supplement", "en", "You take ginkgo biloba twice a day for your memory."),
    ("habits", "ginkgo_supplement", "zh", "你每天吃两次银杏叶胶囊。"),
    ("habits", "bingeing_sweets_when_stressed", "en", "You binge on biscuits or chocolate when you're stressed."),
    ("habits", "bingeing_sweets_when_stressed", "zh", "你压力大时会一口气吃掉一整包饼干。"),
    ("economic_profiles", "uninsured_part_time", "en", "You work part-time and have no health insurance."),
    ("economic_profiles", "uninsured_part_time", "zh", "你没有医保，每月最多花30美元买药。"),
    ("economic_profiles", "high_deductible_plan", "en", "You pay full price until you meet your high deductible."),
    ("economic_profiles", "high_deductible_plan", "zh", "你买的是高免赔额保险。"),
    ("economic_profiles", "fixed_pension", "en", "You're retired on a fixed income."),
    ("economic_profiles", "fixed_pension", "zh", "你靠养老金过日子。"),
    ("economic_profiles", "limited_formulary_plan", "en", "Your insurance only covers generic drugs."),
    ("economic_profiles", "limited_formulary_plan", "zh", "品牌药要你自己掏钱，保险只报仿制药。"),
    ("economic_profiles", "remote_worker_rare_blood_tests", "en", "You work at a remote site: blood tests quarterly."),
    ("economic_profiles", "remote_worker_rare_blood_tests", "zh", "你在偏远工地，大概三个月才能抽一次血。"),
    ("economic_profiles", "lab_limited_plan", "en", "Your insurance covers a blood test only every three months."),
    ("economic_profiles", "lab_limited_plan", "zh", "你的保险三个月才报销一次抽血。"),
    ("economic_profiles", "gig_worker_no_sick_pay", "en", "You're a gig worker with no sick pay."),
    ("economic_profiles", "gig_worker_no_sick_pay", "zh", "你送外卖，收入不稳定。"),
    ("allergy_groups", "sulfonamide_allergy", "en", "You said you're allergic to sulfa drugs."),
    ("allergy_groups", "sulfonamide_allergy", "en", "You have a sulphonamide allergy: co-trimoxazole gave you a rash."),
    ("allergy_groups", "sulfonamide_allergy", "zh", "你对磺胺类药过敏。"),
    ("allergy_groups", "penicillin_allergy", "en", "Amoxicillin gave you hives."),
    ("allergy_groups", "penicillin_allergy", "zh", "你对青霉素过敏。"),
    ("allergy_groups", "cephalosporin_allergy", "en", "You reacted to cefalexin."),
    ("allergy_groups", "nsaid_exacerbated_respiratory_disease", "en", "NSAIDs like ibuprofen set off your asthma."),
    ("allergy_groups", "ace_inhibitor_reaction", "en", "ACE inhibitors made your lips swell."),
    ("allergy_groups", "ace_inhibitor_reaction", "zh", "你吃依那普利出现过血管性水肿。"),
    ("allergy_groups", "statin_myopathy", "en", "Statins gave you muscle pain."),
    ("allergy_groups", "mesalamine_hypersensitivity", "en", "You reacted to sulfasalazine for your colitis."),
    ("allergy_groups", "mesalamine_hypersensitivity", "zh", "你对柳氮磺吡啶过敏。"),
    ("allergy_groups", "tocilizumab_hypersensitivity", "en", "You reacted to your IL-6 infusion."),
    ("allergy_groups", "iodinated_contrast_allergy", "zh", "你对CT造影剂过敏。"),
]


@pytest.mark.parametrize(("kind", "key", "language", "answer"), PARAPHRASES,
                         ids=[f"{key}-{language}-{n}" for n, (_, key, language, _) in enumerate(PARAPHRASES)])
def test_a_paraphrase_states_its_fact_and_no_other(kb, kind, key, language, answer):
    assert states(answer, kb.gists.of(kind, key, language), language)
    others = [other for other in rivals(kb, kind, key) if states(answer, kb.gists.of(kind, other, language), language)]
    assert others == []


NEAR_MISSES = [
    # another fact of the same kind, close in words
    ("medication_preferences", "needle_phobia", "en", "You can't swallow tablets."),
    ("medication_preferences", "needle_phobia", "zh", "你吞不下药片。"),
    ("medication_preferences", "cannot_swallow_large_tablets", "en", "You can't take water tablets."),
    ("medication_preferences", "once_daily_only", "en", "Your pharmacy packs your pills in a once-a-day blister pack."),
    ("medication_preferences", "avoids_liquid_medicines", "en", "You're vegan; tablets or liquids are fine."),
    ("medication_preferences", "nothing_sedating", "zh", "你吞大药片有困难。"),  # 困难 is not 犯困
    ("habits", "licorice_candy", "en", "You drink a lot of coffee."),
    ("habits", "licorice_candy", "zh", "你喝很多咖啡。"),
    ("habits", "nightly_alcohol", "en", "You eat liquorice every day."),  # "liquor" would have matched it
    ("habits", "salty_pickles_and_soups", "en", "You use a potassium salt substitute."),
    ("habits", "salty_pickles_and_soups", "zh", "你用很多低钠盐。"),
    ("habits", "late_night_heavy_meals", "en", "You only eat one meal, in the evening."),
    ("habits", "skips_meals_intermittent_fasting", "en", "You eat fast food every day."),
    ("habits", "bingeing_sweets_when_stressed", "en", "You eat liquorice candy daily."),
    ("allergy_groups", "sulfonamide_allergy", "en", "You're allergic to penicillin."),
    ("allergy_groups", "penicillin_allergy", "en", "You said you're allergic to sulfa drugs."),
    ("allergy_groups", "sulfonamide_allergy", "en", "You're allergic to sulfasalazine."),  # "sulfa" is its prefix
    ("allergy_groups", "citalopram_escitalopram_hypersensitivity", "en", "You're allergic to sertraline."),
    ("economic_profiles", "gig_worker_no_sick_pay", "en", "You have a doctor's appointment."),  # not "app"
]


@pytest.mark.parametrize(("kind", "key", "language", "answer"), NEAR_MISSES,
                         ids=[f"{key}-{language}-{n}" for n, (_, key, language, _) in enumerate(NEAR_MISSES)])
def test_a_near_miss_does_not_state_the_fact(kb, kind, key, language, answer):
    assert not states(answer, kb.gists.of(kind, key, language), language)


def test_an_unknown_kind_or_key_is_named(kb):
    with pytest.raises(KeyError, match="unknown gist kind 'allergies'"):
        kb.gists.of("allergies", "penicillin_allergy", "en")
    with pytest.raises(KeyError, match="no gist for 'peanut_allergy'"):
        kb.gists.of("allergy_groups", "peanut_allergy", "en")


def _break_gists(tmp_path, change):  # noqa: ANN001
    return knowledge_problems(tmp_path, "gists.yaml", change)


@pytest.mark.parametrize(("change", "expected"), [
    (lambda doc: doc["habits"].update(liquorice_candy=doc["habits"]["licorice_candy"]),
     "gists.yaml: habits.liquorice_candy: unknown key; diet.yaml habits has no 'liquorice_candy'"),
    (lambda doc: doc["medication_preferences"].pop("needle_phobia"),
     "gists.yaml: medication_preferences.needle_phobia: missing; every key of preferences.yaml"),
    (lambda doc: doc["allergy_groups"]["penicillin_allergy"].pop("zh"),
     "gists.yaml: allergy_groups.penicillin_allergy.zh: missing; give at least one concept group"),
    (lambda doc: doc["habits"]["licorice_candy"]["en"].append([]),
     "gists.yaml: habits.licorice_candy.en[1]: empty concept group"),
    (lambda doc: doc["economic_profiles"]["fixed_pension"]["zh"][0].append(" "),
     "gists.yaml: economic_profiles.fixed_pension.zh[0]: empty or space-padded word ' '"),
    (lambda doc: doc["habits"]["licorice_candy"].update(fr=[["réglisse"]]),
     "gists.yaml: habits.licorice_candy.fr: Extra inputs are not permitted"),
], ids=["unknown_key", "missing_entry", "missing_language", "empty_group", "blank_word", "unknown_field"])
def test_a_broken_gist_is_reported_with_file_and_key(tmp_path, change, expected):
    assert expected in _break_gists(tmp_path, change)


SYMPTOM_PANEL = Path(__file__).with_name("symptom_paraphrases.jsonl")
"""How a capable model recalls each symptom (2 English and 2 Chinese per symptom written blind to the gists, 3 and 3
by the gists' writers) and a near miss per symptom and language (another symptom the patient could have told)."""


def test_every_symptom_paraphrase_states_its_gist_and_no_near_miss_does():
    from medmemorybench.scoring._reading import read_answer
    from medmemorybench.scoring.facts import Fact
    from medmemorybench.scoring.facts import states as scorer_states

    kb = default_knowledge()
    rows = [json.loads(line) for line in SYMPTOM_PANEL.read_text(encoding="utf-8").splitlines()]
    assert {r["key"] for r in rows} == set(kb.gists.symptoms)
    wrong = [r for r in rows if scorer_states(read_answer(r["text"]), Fact(
        r["key"], "gist", tuple("|".join(g) for g in kb.gists.of("symptoms", r["key"], r["language"])))) != r["states"]]
    assert wrong == []
