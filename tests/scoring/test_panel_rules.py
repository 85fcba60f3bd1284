"""The rules the seed-21 panel asked for (docs/benchmarks.md): each with the answer that showed it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from medmemorybench.scoring import score_answer
from medmemorybench.scoring._endorse import declines
from medmemorybench.scoring._reading import read_answer
from medmemorybench.scoring._stance import polarity
from medmemorybench.scoring.abstention import is_abstention
from medmemorybench.scoring.facts import RECORD_GROUP, RIVAL_GROUP, Fact, check_chain, states
from medmemorybench.scoring.multiple_choice import parse_choices


@pytest.mark.parametrize(("answer", "side"), [
    ("要接着吃。12月30日那次诊断是非糜烂性胃食管反流病", "yes"),
    ("需要，请继续用。您现在每晚都要戴CPAP", "yes"),
    ("I'd steer clear of ibuprofen, I'm afraid. You're on warfarin", "no"),
    ("不需要了。", "no"),
    ("继续吃，但是要注意", None),
])
def test_a_side_taken_in_these_words_is_read(answer: str, side: str | None) -> None:
    assert polarity(answer) == side


@pytest.mark.parametrize(("answer", "letters"), [
    ("Of those four, only B, buspirone. Hydroxyzine (A) is out because you reacted to Atarax; quetiapine (C) and "
     "escitalopram (D) both prolong the QT.", {"B"}),
    ("在这四个里，只有B氯沙坦适合您。A依普利酮、C非奈利酮、D螺内酯都会让血钾升高。", {"B"}),
])
def test_the_only_option_named_first_is_the_choice(answer: str, letters: set[str]) -> None:
    options = ["A. hydroxyzine", "B. buspirone", "C. quetiapine", "D. escitalopram"] if "only" in answer else \
        ["A. 依普利酮", "B. 氯沙坦", "C. 非奈利酮", "D. 螺内酯"]
    assert parse_choices(answer, options) == frozenset(letters)


def test_a_chinese_refusal_in_other_words_abstains_and_a_dated_answer_does_not() -> None:
    assert is_abstention("我翻了您的就诊记录，没有看到阿莫西林克拉维酸钾的处方，所以也说不出是哪天开始用的。")
    assert not is_abstention("您是3月5日开始吃的阿莫西林，没有看到别的问题。", question="我哪天开始吃阿莫西林？",
                             asks_date=True)


def test_a_negated_harm_declines_nothing() -> None:
    assert not declines("Yes. Doxycycline would be a reasonable option, and doxycycline doesn't need a kidney dose "
                        "adjustment.", "doxycycline")
    assert declines("No, doxycycline isn't safe for you.", "doxycycline")
    assert declines("You shouldn't take doxycycline.", "doxycycline")


@pytest.mark.parametrize(("answer", "told"), [
    ("When I checked your sinuses after the clarithromycin, there was still some tenderness over both cheekbones, "
     "though your nose had cleared.", False),
    ("Your face was no longer tender and the nose was clear.", True),
    ("On 4 August both sinuses were tender; at the check after the course your cheeks were no longer tender and your "
     "nose was clear.", True),
    ("The facial tenderness had gone and your nose was clear.", True),
])
def test_a_finding_said_the_other_way_round_is_not_told(answer: str, told: bool) -> None:
    assert states(read_answer(answer), Fact("no facial tenderness and a clear nose", "finding")) is told


HFPEF = [[Fact("obesity with deconditioning", "name")],
         [Fact("exertional dyspnoea", "name", ("breathless on the stairs",))],
         [Fact("911 pg/mL, above the 125 pg/mL rule-out threshold", "finding"), Fact("911 pg/mL", "quantity")],
         [Fact("heart failure with preserved ejection fraction", "name"),
          Fact("640 pg/mL", "quantity", group=RECORD_GROUP)]]


@pytest.mark.parametrize(("answer", "passed"), [
    # the panel's near miss: every step told, one value the record never had
    ("It was first put down to obesity with deconditioning. You were breathless on the stairs, and the tests on 20 "
     "March showed an NT-proBNP of 436 pg/mL, so it was diagnosed as heart failure with preserved ejection "
     "fraction.", False),
    ("It was first put down to obesity with deconditioning. You were breathless on the stairs, and on 20 March "
     "your NT-proBNP was 911 pg/mL, so it was diagnosed as heart failure with preserved ejection fraction.", True),
    # a value the record has at another visit is context, not a rival
    ("It was first put down to obesity with deconditioning. You were breathless on the stairs; your NT-proBNP was "
     "911 pg/mL in March and 640 pg/mL in June: heart failure with preserved ejection fraction.", True),
])
def test_a_chain_step_told_with_a_value_the_record_never_had_is_wrong(answer: str, passed: bool) -> None:
    check = check_chain(read_answer(answer), HFPEF, "Walk me through how we got to the diagnosis of my heart.")
    assert check.passed is passed and bool(check.conflicting) is not passed


@pytest.mark.parametrize(("answer", "passed"), [
    # (seed 67's ceiling: "粪钙卫蛋白522 µg/g（>50 µg/g，提示结肠活动性炎症）": the threshold is a reference, no value)
    ("It was first put down to obesity with deconditioning. You were breathless on the stairs; on 20 March your "
     "NT-proBNP was 911 pg/mL (>125 pg/mL points to heart strain): heart failure with preserved ejection fraction.",
     True),
    ("It was first put down to obesity with deconditioning. You were breathless on the stairs; on 20 March your "
     "NT-proBNP was 911 pg/mL (≥ 125 pg/mL points to heart strain): heart failure with preserved ejection fraction.",
     True),
    # near misses: the threshold's number as the patient's own value
    ("It was first put down to obesity with deconditioning. You were breathless on the stairs; on 20 March your "
     "NT-proBNP was 125 pg/mL: heart failure with preserved ejection fraction.", False),
    ("It was first put down to obesity with deconditioning. You were breathless on the stairs; on 20 March your "
     "NT-proBNP was 1250 pg/mL (>125 pg/mL points to heart strain): heart failure with preserved ejection fraction.",
     False),
])
def test_a_threshold_beside_the_value_is_a_reference(answer: str, passed: bool) -> None:
    check = check_chain(read_answer(answer), HFPEF, "Walk me through how we got to the diagnosis of my heart.")
    assert check.passed is passed, check


def test_the_drug_asked_about_states_no_reason_by_its_own_name() -> None:
    # "雷米普利" (ramipril) ends in the ACE-inhibitor suffix of the reason's gist; it is the drug asked about
    row = {"query_type": "IG", "subject": "雷米普利", "question": "能不能加上雷米普利来减少肾脏漏蛋白？",
           "answer": "不可以，雷米普利不适合您，因为您对以前吃的降压药赖诺普利有过不良反应。",
           "facts": [{"text": "no", "kind": "polarity"},
                     {"text": "以前吃的降压药赖诺普利", "kind": "gist",
                      "aliases": ["普利|ace抑制剂|血管紧张素转换酶抑制剂"], "group": "reason"}]}
    wrong = "不建议加雷米普利。您在长期吃非布司他，合用会让尿酸波动。"
    right = "不行，雷米普利不能用：您以前吃赖诺普利出过不良反应，它们是同一类药。"
    assert score_answer(row, wrong)["correct"].value == 0.0
    assert score_answer(row, right)["correct"].value == 1.0
    assert score_answer({**row, "subject": "ramipril", "question": "Can I add ramipril?",
                         "facts": [row["facts"][0], {"text": "lisinopril", "kind": "gist",
                                                     "aliases": ["pril|ace inhibitor"], "group": "reason"}]},
                        "No, I wouldn't add ramipril: it would clash with your febuxostat.")["correct"].value == 0.0


def test_a_rival_inside_the_name_of_the_drug_given_is_no_rival() -> None:
    # prednisone (泼尼松) is a rival of prednisolone (泼尼松龙) for a COPD flare: the gold names the one given
    steps = [[Fact("慢阻肺急性加重", "name"), Fact("泼尼松龙", "name"), Fact("泼尼松", "name", group=RIVAL_GROUP)]]
    assert check_chain(read_answer("发现了慢阻肺急性加重，开始用泼尼松龙 40 mg。"), steps, "").rivals == ()
    assert check_chain(read_answer("发现了慢阻肺急性加重，开始用泼尼松 40 mg。"), steps, "").rivals == ("泼尼松",)


def test_the_drug_asked_about_is_a_reason_where_the_reaction_was_to_it() -> None:
    row = {"query_type": "IG", "subject": "doxycycline", "question": "Could I be given doxycycline for it?",
           "facts": [{"text": "no", "kind": "polarity"},
                     {"text": "doxycycline for acne", "kind": "gist",
                      "aliases": ["tetracycline|doxycycline|vibramycin|minocycline"], "group": "reason"}]}
    assert score_answer(row, "No, doxycycline is not suitable because of the reaction you had to doxycycline for "
                             "acne.")["correct"].value == 1.0


def test_a_rival_the_gold_itself_names_is_no_rival() -> None:
    # "the levodopa challenge test" names levodopa, a rival of ropinirole: the gold's own words cannot fail it
    steps = [[Fact("MDS-UPDRS part III 25 before the test dose, improving by 34% after it", "finding")],
             [Fact("ropinirole", "name"), Fact("carbidopa/levodopa", "name", ("levodopa",), group=RIVAL_GROUP)]]
    told = ["the levodopa challenge test showed MDS-UPDRS part III 25 before the test dose, improving by 34% after it",
            "ropinirole 2 mg once a day was started"]
    answer = "The levodopa challenge test improved your score by 34%, and ropinirole was started."
    assert check_chain(read_answer(answer), steps, "", told).rivals == ()


PNEUMONIA = Fact("crackles at the right lung base and a right lower lobe consolidation on the X-ray, with a CRB-65 "
                 "score of 1", "finding")


@pytest.mark.parametrize(("answer", "told"), [
    # the capable-reader sample's near miss (P0018-C080-EEM2): every word but the side and the score
    ("The chest examination found crackles at the base of your left lung, and the X-ray showed consolidation in the "
     "left lower lobe, with a CRB-65 score of 0.", False),
    ("Crackles at the left lung base and left lower lobe consolidation; CRB-65 score of 1.", False),
    ("Crackles at the base of your right lung and right lower lobe consolidation, with a CRB-65 score of 0.", False),
    ("The doctor heard crackles at the base of your right lung and the X-ray showed right lower lobe consolidation; "
     "your CRB-65 score was 1.", True),
    ("Crackles at the right base, consolidation in the right lower lobe, CRB-65 1.", True),
    ("Right lower lobe consolidation with crackles at the right lung base; the left lung was clear.", True),
    ("左下肺有湿啰音，胸片显示左下叶实变，CRB-65评分1分。", False),
])
def test_a_finding_on_the_other_side_or_with_another_score_is_not_told(answer: str, told: bool) -> None:
    fact = PNEUMONIA if answer.isascii() else Fact("右下肺可闻及湿啰音，胸片示右下叶实变，CRB-65评分1分", "finding")
    assert states(read_answer(answer), fact) is told


KNEE = "左膝内侧关节间隙变窄、边缘骨赘形成，Kellgren-Lawrence 3级"
GENE = "BRCA2截短型致病变异"
EFFUSION = "上肺静脉纹理增多，双侧少量胸腔积液"


@pytest.mark.parametrize(("finding", "answer", "told"), [
    # one structured element changed, everything else said: the side, the site, the grade, the gene, the variant type
    (KNEE, "X线片上右膝内侧关节间隙变窄，边缘有骨赘，Kellgren-Lawrence 3级。", False),
    (KNEE, "左膝外侧关节间隙变窄，边缘长了骨赘，K-L分级是3级。", False),
    (KNEE, "左膝内侧关节间隙变窄、边缘骨赘形成，Kellgren-Lawrence 2级。", False),
    (GENE, "基因检测发现BRCA1截短型致病变异。", False),
    (GENE, "基因检测发现BRCA2错义致病变异。", False),
    ("pathogenic truncating BRCA2 variant", "The test found a pathogenic truncating BRCA1 variant.", False),
    (EFFUSION, "胸片上肺静脉纹理增多，右侧有少量胸腔积液。", False),
    # the same elements in other words: a grade in Chinese numerals, a rival of another finding, both sides named
    (KNEE, "拍片看到您左膝关节内侧的间隙变窄了，关节边缘有骨赘形成，Kellgren-Lawrence分级为三级。", True),
    (KNEE, "左膝内侧关节间隙变窄，边缘骨赘形成，K-L 3级；您的高血压是2级，这和膝盖无关。", True),
    (GENE, "基因检测结果是BRCA2截短型的致病变异。", True),
    (GENE, "BRCA1/BRCA2基因检测查到BRCA2截短型致病变异。", True),
    (EFFUSION, "胸片显示上肺静脉纹理增多，两侧都有少量胸腔积液。", True),
    (EFFUSION, "胸片显示上肺静脉纹理增多，左边和右边都有少量胸腔积液。", True),
])
def test_a_finding_with_one_structured_element_changed_is_not_told(finding: str, answer: str, told: bool) -> None:
    assert states(read_answer(answer), Fact(finding, "finding")) is told


def test_a_class_or_above_is_told_by_a_higher_class_and_contradicted_by_a_lower() -> None:
    fact = Fact("总肾体积1450 mL，属快速进展的Mayo影像分级（1C级及以上）", "finding")
    assert states(read_answer("磁共振总肾体积1450 mL，Mayo影像分级1D级，进展快。"), fact)
    assert not states(read_answer("磁共振总肾体积1450 mL，Mayo影像分级1B级。"), fact)
    english = Fact("total kidney volume 1450 mL, in a rapidly progressive Mayo imaging class (1C or above)", "finding")
    assert states(read_answer("Your total kidney volume was 1450 mL, a rapidly progressive Mayo imaging class, 1D."),
                  english)
    assert not states(read_answer("Your total kidney volume was 1450 mL, a rapidly progressive Mayo imaging class, "
                                  "1B."), english)


TOLD = "您先说夜尿增多，3月eGFR 58，慢性肾脏病3a期，6月降到41，3b期；超声见双肾多发囊肿，"
KIDNEY_CHAIN = [[Fact("夜尿增多", "name")],
                [Fact("eGFR 58 mL/min/1.73m²，慢性肾脏病3a期", "finding")],
                [Fact("eGFR降至41 mL/min/1.73m²，慢性肾脏病3b期", "finding")],
                [Fact("双肾多发囊肿", "finding"), Fact("HNF1B截短型致病变异", "finding")]]


@pytest.mark.parametrize(("answer", "passed"), [
    # every step told by one of its facts, but the gene test told with another gene: the chain's finding contradicted
    (TOLD + "基因检测是HNF1A截短型变异。", False),
    (TOLD + "基因检测是HNF1B错义变异。", False),
    # stage 3a and 3b are both true findings of the story: neither is the other's rival
    (TOLD + "基因检测是HNF1B截短型变异。", True),
    ("您先说夜尿增多；后来eGFR降到41，慢性肾脏病3b期；超声见双肾多发囊肿，基因检测发现HNF1B截短型致病变异。", True),
])
def test_a_chain_told_with_a_contradicted_finding_is_wrong(answer: str, passed: bool) -> None:
    check = check_chain(read_answer(answer), KIDNEY_CHAIN, "是什么让您查出了这个肾病？")
    assert check.passed is passed and bool(check.contradicted) is not passed


FINDING_ELEMENTS_ZH = Path(__file__).with_name("finding_elements_zh.jsonl")
"""Twenty Chinese answers to findings of a default build of seed 21 (2026-12-07), written as a capable model writes
them after the structured-element rule: ten near misses with one element changed (side, lobe, class, grade, gene,
stage) and ten paraphrases with the same elements, each labelled by a physician's reading. First reading: no false
reject, one false accept (a bilateral effusion told on the right), which made "bilateral" a side."""


def test_chinese_findings_with_one_element_changed_are_not_told_and_paraphrases_are() -> None:
    rows = [json.loads(line) for line in FINDING_ELEMENTS_ZH.read_text(encoding="utf-8").splitlines()]
    assert len(rows) == 20 and sum(r["label"] == "correct" for r in rows) == 10
    wrong = [r["answer"] for r in rows
             if states(read_answer(r["answer"]), Fact(r["finding"], "finding")) is not (r["label"] == "correct")]
    assert wrong == []


# --- the rules the seed-59 oracle ceiling asked for (docs/benchmarks.md, "Oracle ceiling") --------------------------

COLITIS = [[Fact("6.0 mg/L", "quantity")], [Fact("感染性结肠炎", "name", ("infective colitis",))],
           [Fact("便鲜血", "name", ("fresh rectal bleeding",))], [Fact("黏液脓血便", "name", ("bloody mucus",))],
           [Fact("自直肠至脾曲连续性黏膜炎症，Mayo内镜评分2分", "finding"),
            Fact("283 µg/g，明显升高，提示结肠活动性炎症", "finding"),
            *(Fact(value, "quantity", days, group=RECORD_GROUP) for value, days in (
                ("6.0 mg/L", ("2024-01-20",)), ("3.4 mg/L", ("2024-01-28",)), ("7 分", ("2024-03-18",))))]]
COLITIS_REST = ("后来出现便鲜血和黏液脓血便。3月18日粪便钙卫蛋白283 µg/g，"
                "肠镜见自直肠至脾曲连续性黏膜炎症，Mayo内镜评分2分。")


@pytest.mark.parametrize(("answer", "passed"), [
    # the capable reader's telling (P0014-C040-MCD1): the CRP of the visit that suspected infective colitis, on its day
    ("1. 1月28日：当时C反应蛋白3.4 mg/L，考虑感染性结肠炎。" + COLITIS_REST, True),
    ("On 28 January your CRP was 3.4 mg/L and I thought it was infective colitis. " + COLITIS_REST, True),
    # near misses: the same true value put on another day, or on no day, in the place of the chain's 6.0
    ("1. 1月20日：当时C反应蛋白3.4 mg/L，考虑感染性结肠炎。" + COLITIS_REST, False),
    ("Your CRP was 3.4 mg/L when I suspected infective colitis on 20 January. " + COLITIS_REST, False),
    ("当时C反应蛋白3.4 mg/L，考虑感染性结肠炎。" + COLITIS_REST, False),
    # a value the record never had, on any day
    ("1. 1月28日：当时C反应蛋白4.3 mg/L，考虑感染性结肠炎。" + COLITIS_REST, False),
])
def test_a_record_value_told_on_the_day_it_was_measured_is_that_visit(answer: str, passed: bool) -> None:
    check = check_chain(read_answer(answer), COLITIS, "查出溃疡性结肠炎的那些检查为什么要做？")
    assert check.passed is passed and bool(check.conflicting) is not passed


@pytest.mark.parametrize(("answer", "passed"), [
    # the patient's own rating of a symptom ("我给4分吧") is in the sessions, not in the structured record: beside
    # the chain's own score it is no rival
    ("1月20日C反应蛋白6.0 mg/L，考虑感染性结肠炎。3月10日便鲜血，难受程度4分。" + COLITIS_REST, True),
    # near miss: another score in the place of the chain's Mayo subscore of 2, which is not told
    ("1月20日C反应蛋白6.0 mg/L，考虑感染性结肠炎。后来出现便鲜血和黏液脓血便。3月18日粪便钙卫蛋白283 µg/g，"
     "肠镜见自直肠至脾曲连续性黏膜炎症，Mayo内镜评分3分。", False),
])
def test_a_score_the_record_lacks_is_a_rival_only_in_the_place_of_the_chains_own(answer: str, passed: bool) -> None:
    check = check_chain(read_answer(answer), COLITIS, "查出溃疡性结肠炎的那些检查为什么要做？")
    assert check.passed is passed


@pytest.mark.parametrize(("finding", "answer", "told"), [
    # an element said the other way round in Chinese: the finding is not told, however much else is
    ("面部无压痛，鼻腔通畅", "复查时面部仍有压痛，但鼻腔通畅。", False),
    ("面部无压痛，鼻腔通畅", "面部还有压痛，鼻腔通畅。", False),
    ("扁桃体肿大有脓点，颈部淋巴结压痛，无咳嗽（FeverPAIN评分4分），链球菌快速检测阳性",
     "扁桃体肿大有脓点，颈部淋巴结压痛，有咳嗽，FeverPAIN 4分，链球菌快速检测阳性。", False),
    ("扁桃体肿大有脓点，颈部淋巴结压痛，无咳嗽（FeverPAIN评分4分），链球菌快速检测阳性",
     "扁桃体肿大有脓点，颈部淋巴结压痛，无咳嗽，FeverPAIN评分4分，链球菌快速检测阴性。", False),
    ("腰部肌肉压痛，直腿抬高试验阴性，无危险征象（无麻木、无大小便改变）",
     "腰部肌肉压痛，直腿抬高试验阳性，无危险征象。", False),
    ("双肺呼吸音清，体温正常（37.1 °C），咳嗽基本消失", "双肺呼吸音不清，体温37.1 °C，咳嗽基本消失。", False),
    # the same sense in other words: "gone" said as 消失, 全消了, 好了, 没了
    ("面部无压痛，鼻腔通畅", "面部没有压痛了，鼻腔也通畅。", True),
    ("面部无压痛，鼻腔通畅", "面部压痛全消了，鼻子也通了，鼻腔通畅。", True),
    ("面部无压痛，鼻腔通畅", "脸上的压痛好了，鼻腔通畅。", True),
    ("扁桃体肿大有脓点，颈部淋巴结压痛，无咳嗽（FeverPAIN评分4分），链球菌快速检测阳性",
     "扁桃体肿大、有脓点，颈部淋巴结有压痛，没有咳嗽，FeverPAIN评分4分，链球菌快速检测阳性。", True),
    ("双肺呼吸音清，体温正常（37.1 °C），咳嗽基本消失", "双肺呼吸音清，体温37.1 °C正常，咳嗽基本没了。", True),
])
def test_a_chinese_finding_said_the_other_way_round_is_not_told(finding: str, answer: str, told: bool) -> None:
    assert states(read_answer(answer), Fact(finding, "finding")) is told


@pytest.mark.parametrize(("answer", "told"), [
    # (seed 67's ceiling: "felt back to normal: your nose was clear most days (restart treatment in bad spells)" —
    # the "normal" of another clause read as the finding said the other way round)
    ("At the check you felt back to normal: your nose was clear most days (restart treatment in bad spells).", True),
    ("Your nose was clear most days, not blocked, and treatment restarts in bad spells.", True),
    # near misses: a word of the finding left out and its opposite said in its place
    ("You felt back to normal: your nose was still blocked most days, so treatment had to restart.", False),
    ("Your nose was still blocked most days, so treatment had to restart.", False),
    ("Your nose was not clear most days: treatment had to restart.", False),
])
def test_a_finding_told_beside_another_clause_or_with_its_opposite(answer: str, told: bool) -> None:
    fact = Fact("a clear nose most days, with treatment to restart in bad spells", "finding")
    assert states(read_answer(answer), fact) is told
