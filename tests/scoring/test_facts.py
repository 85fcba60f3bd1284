"""Gold facts compared as values, names, gists and sides: the answers a capable model writes pass, near misses fail."""

from __future__ import annotations

import pytest

from medmemorybench.scoring._reading import read_answer
from medmemorybench.scoring.facts import (
    RIVAL_GROUP,
    TAKEN_GROUP,
    WHY_GROUP,
    Fact,
    check_chain,
    check_facts,
    finding_elements,
)

FINDING = ("continuous inflammation from the rectum to the splenic flexure, Mayo endoscopic subscore 2; "
           "crypt abscesses and crypt architectural distortion on histology")
NEEDLES = Fact("I'm terrified of needles; I faint at the sight of one", "gist", ("needle|injection|jab|shot",))


def passes(fact: Fact, answer: str, question: str = "") -> bool:
    return check_facts(read_answer(answer), [fact], question).passed


@pytest.mark.parametrize(("fact", "answer"), [
    # the verbatim correct answers that the old scorer rejected
    (Fact("80 mg", "quantity"), "You're on telmisartan 80 mg once a day now; I increased it from 40 mg on 19 August."),
    (Fact("97 %", "quantity"), "…your oxygen saturation was 97 percent, which is normal."),
    (Fact("85 bpm", "quantity"), "…your resting heart rate was 85 beats per minute"),
    (Fact("$60", "quantity"), "You said you could spare about sixty dollars a month for medicines"),
    (Fact("10 points", "quantity"), "On 9 September 2024 your PHQ-9 … came out at a score of 10."),
    (Fact(FINDING, "finding"), "Endoscopy showed continuous inflammation from the rectum up to the splenic flexure, "
                               "Mayo subscore 2, and the biopsies showed crypt abscesses with distorted crypt "
                               "architecture."),
    # more of the same: units and numbers spelled out, context values, Chinese forms
    (Fact("0.19 ×10⁹/L", "quantity"), "Your eosinophils were 0.19 x 10^9 per litre."),
    (Fact("1582 pg/mL", "quantity"), "Your NT-proBNP came back at 1,582 pg/mL."),
    (Fact("60 mL/min/1.73m²", "quantity"), "Your eGFR was 60."),
    (Fact("69 mmHg", "quantity"), "Your blood pressure was 128/69 mmHg."),
    (Fact("48 U/L", "quantity"), "It went from 52 to 48 U/L."),
    (Fact("7.2 %", "quantity"), "Your HbA1c was 7.2%, above the target of 7%."),
    (Fact("500 mg", "quantity"), "0.5 g twice a day."),
    (Fact("80 mg", "quantity"), "您现在每天八十毫克，之前是四十毫克。"),
    (Fact("74.5 kg", "quantity"), "二月份您的体重是七十四点五公斤。"),
    (Fact("97 %", "quantity"), "血氧饱和度是百分之九十七。"),
    (Fact("2024-04-08", "date"), "You began co-trimoxazole on April 8th, 2024."),
    (Fact("2024-09-09", "date"), "It was on the ninth of September."),
    (Fact("2024-03-12", "date"), "是三月十二日开始的。"),
    (Fact("generalised anxiety disorder", "name"), "It was first put down to generalized anxiety disorder (GAD)."),
    (Fact("salbutamol (albuterol)", "name", ("salbutamol", "albuterol")), "You were given an albuterol inhaler."),
    (NEEDLES, "You told me you're scared of injections, so nothing by needle."),
    (Fact("no", "polarity"), "No — given your sulfa allergy, Bactrim is out."),
    (Fact("no", "polarity"), "I'd avoid it: it interacts with your warfarin."),
    (Fact("yes", "polarity"), "Yes. Pravastatin is taken once a day, which fits your shifts."),
    (Fact("yes", "polarity"), "That should be fine — nothing in your records rules it out."),
    (Fact("no", "polarity"), "不建议，您对磺胺类药物过敏。"),
])
def test_a_correct_answer_in_other_words_passes(fact: Fact, answer: str) -> None:
    assert passes(fact, answer)


@pytest.mark.parametrize(("fact", "answer"), [
    (Fact("80 mg", "quantity"), "You take 40 mg."),                               # the previous dose
    (Fact("80 mg", "quantity"), "It's 80 mg or maybe 40 mg."),                    # hedged between two
    (Fact("61.1 kg", "quantity"), "You weighed 61.4 kg."),                        # a neighbouring value
    (Fact("7.2 %", "quantity"), "Your HbA1c was 17.2%."),
    (Fact("25 mg", "quantity"), "125 mg daily."),
    (Fact("48 U/L", "quantity"), "It went from 48 to 52 U/L."),                   # the earlier value as the latest
    (Fact("2024-04-08", "date"), "You began on 9 April."),                        # a neighbouring date
    (Fact("2024-04-08", "date"), "Either 8 April or 18 April."),
    (Fact("mild non-proliferative diabetic retinopathy", "name"), "You had proliferative diabetic retinopathy."),
    (Fact("amlodipine", "name"), "You take amlodopine."),                         # one letter off
    (Fact("metformin", "name"), "Not metformin; it was sitagliptin."),
    (NEEDLES, "You told me you can't swallow large tablets."),                    # another preference
    (Fact("no", "polarity"), "Yes, go ahead."),
    (Fact("yes", "polarity"), "Yes, but I'd avoid it given your kidneys."),
    (Fact("no", "polarity"), "No problem, you can take it."),
])
def test_a_near_miss_fails(fact: Fact, answer: str) -> None:
    assert not passes(fact, answer)


def test_a_value_the_question_names_is_no_rival() -> None:
    question = "The pharmacy gave me amlodipine 5 mg once a day. Is that my dose?"
    assert passes(Fact("10 mg", "quantity"), "No, 5 mg was your old dose: you take 10 mg now.", question)


def test_a_value_tied_to_another_time_is_context() -> None:
    assert passes(Fact("74.5 kg", "quantity"), "In February you weighed 74.5 kg; in March it was 73 kg.")


def test_a_finding_is_read_as_its_elements() -> None:
    assert finding_elements(FINDING) == ["continuous inflammation from the rectum to the splenic flexure",
                                         "Mayo endoscopic subscore 2", "crypt abscesses",
                                         "crypt architectural distortion on histology"]
    assert not passes(Fact(FINDING, "finding"), "It showed inflammation, Mayo subscore 3.")


REVIEW = Fact("no heartburn left, so the course can stop and be used again if it comes back", "finding")


@pytest.mark.parametrize(("answer", "stated"), [
    # seed 73's ceiling: "left" says the absence, and the review's sentence says it, not the first visit's
    ("On 1 November you came in with heartburn after meals. At the 21 December review you had taken the full course "
     "with no side effects, the heartburn had gone and your diastolic BP was 72 mmHg, so the omeprazole stopped, to "
     "be used again if the symptoms come back.", True),
    ("At the review there was no heartburn left, so we stopped, to be used again if it comes back.", True),
    # near misses: the heartburn still there, however the words of absence stand
    ("On 1 November you came in with heartburn after meals. At the 21 December review the heartburn had not gone, so "
     "the omeprazole went on, to be used again if it comes back.", False),
    ("At the review the heartburn hadn't gone away; the omeprazole went on.", False),
    ("At the review you still had heartburn, so the omeprazole went on.", False),
])
def test_no_symptom_left_is_said_by_its_sense(answer: str, stated: bool) -> None:
    assert passes(REVIEW, answer) is stated


def test_facts_of_a_group_are_alternatives_and_a_fact_not_required_only_guards() -> None:
    allergy = Fact("sulfa", "gist", ("sulfa|bactrim",), group="reason")
    warfarin = Fact("warfarin", "name", group="reason")
    both = [Fact("no", "polarity"), allergy, warfarin]
    assert check_facts(read_answer("No: it interacts with your warfarin."), both).passed
    assert not check_facts(read_answer("No, it isn't suitable."), both).passed
    dose = [Fact("yes", "polarity"), Fact("10 mg", "quantity", required=False)]
    assert check_facts(read_answer("Yes, carry on with it."), dose).passed
    assert not check_facts(read_answer("Yes, carry on with your 5 mg."), dose).passed


def test_a_chain_is_told_by_its_steps_and_conclusion() -> None:
    steps = [[Fact("polydipsia", "name", ("very thirsty",))], [Fact("9.4 mmol/L", "quantity")],
             [Fact("metformin", "name")], [Fact("blurred vision", "name")]]
    question = "Why did I have to come back when my symptoms hadn't settled?"
    told = read_answer("You came back because your vision was still blurred. It began when you were very thirsty; "
                       "your fasting sugar was 9.4 mmol/L, so we suspected type 2 diabetes and started metformin.")
    check = check_chain(told, steps, question)
    assert check.passed and check.ncr == 1.0 and check.crc < 1.0  # conclusion first: order measured, not required
    assert not check_chain(read_answer("You were very thirsty and we started metformin."), steps, question).passed


def test_a_step_that_tells_why_a_drug_was_passed_over_must_be_told() -> None:
    # the lithium step is why ibuprofen was not given: three of four steps told is enough coverage, not enough reason
    steps = [[Fact("lithium carbonate", "name", group=WHY_GROUP)], [Fact("acute low back pain", "name")],
             [Fact("codeine phosphate", "name")], [Fact("full movement of the back", "name")]]
    question = "When I had my bad back, what happened from start to finish, and why was I given what I got?"
    without = read_answer("You had acute low back pain, I gave you codeine phosphate and you got full movement of "
                          "the back again.")
    check = check_chain(without, steps, question)
    assert check.ncr == 0.75 and check.conclusion and check.cause and not check.reasons and not check.passed
    told = read_answer("You take lithium carbonate, so when you had acute low back pain I gave you codeine phosphate "
                       "instead of ibuprofen; you got full movement of the back again.")
    assert check_chain(told, steps, question).passed


BACK_PAIN = [[Fact("acute low back pain", "name")],
             [Fact("codeine phosphate", "name"), Fact("ibuprofen", "name", ("Advil", "布洛芬"), group=RIVAL_GROUP),
              Fact("naproxen", "name", ("萘普生",), group=RIVAL_GROUP)],
             [Fact("full movement of the back", "name")]]


@pytest.mark.parametrize("answer", [
    # the panel's near misses: every step's data, and another drug given in the chain's place
    "You hurt your back lifting: acute low back pain. I prescribed ibuprofen 400 mg three times a day because an "
    "anti-inflammatory works best for a muscle strain; codeine phosphate was too sedating. You got full movement of "
    "the back again.",
    "你腰扭伤了，急性腰痛，因为对可待因过敏没用它，改开了布洛芬，后来腰部活动完全恢复（full movement of the back）。",
    "For your acute low back pain I gave you naproxen, chosen over codeine phosphate for your stomach, and you got "
    "full movement of the back again.",
    "You are allergic to codeine phosphate, so for the acute low back pain I gave you ibuprofen; you got full movement "
    "of the back again.",
])
def test_a_chain_told_with_another_drug_given_is_wrong(answer: str) -> None:
    check = check_chain(read_answer(answer), BACK_PAIN, "Why was I given what I got for my back?")
    assert check.rivals and not check.passed


@pytest.mark.parametrize("answer", [
    "For your acute low back pain I gave you codeine phosphate rather than ibuprofen or naproxen, and you got full "
    "movement of the back again.",
    "You couldn't take ibuprofen, so for the acute low back pain I gave you codeine phosphate; you got full movement "
    "of the back again.",
    "急性腰痛（acute low back pain）时没有给你用布洛芬和萘普生，开的是 codeine phosphate，"
    "后来 full movement of the back。",
    # (seed 67's ceiling: "not methimazole/PTU because of your PTU allergy", "chosen over propranolol")
    "For your acute low back pain I gave you codeine phosphate (chosen over ibuprofen because of your stomach), and "
    "you got full movement of the back again.",
    "For your acute low back pain, not naproxen because of your naproxen allergy: I gave you codeine phosphate, and "
    "you got full movement of the back again.",
    "因为你对布洛芬过敏，急性腰痛（acute low back pain）开的是 codeine phosphate，后来 full movement of the back。",
])
def test_a_rival_named_as_passed_over_is_no_rival(answer: str) -> None:
    check = check_chain(read_answer(answer), BACK_PAIN, "Why was I given what I got for my back?")
    assert check.rivals == () and check.passed


# seed 73's ceiling: rivals passed over after their names or as the usual choice a contrast follows
PILLS = [[Fact("polycystic ovary syndrome", "name")],
         [Fact("spironolactone", "name"),
          Fact("ethinylestradiol/levonorgestrel", "name", group=RIVAL_GROUP),
          Fact("ethinylestradiol/drospirenone", "name", group=RIVAL_GROUP)]]
COLITIS = [[Fact("溃疡性结肠炎", "name")], [Fact("柳氮磺吡啶", "name"), Fact("美沙拉秦", "name", group=RIVAL_GROUP)]]


@pytest.mark.parametrize(("steps", "answer", "given"), [
    (PILLS, "For your polycystic ovary syndrome I started spironolactone; the usual combined pills "
            "(ethinylestradiol/levonorgestrel or ethinylestradiol/drospirenone) were avoided because of your migraine "
            "with aura.", False),
    (PILLS, "Polycystic ovary syndrome: spironolactone. Ethinylestradiol/drospirenone was not used because of your "
            "migraine, and ethinylestradiol/levonorgestrel was ruled out too.", False),
    (PILLS, "Polycystic ovary syndrome: I ruled out ethinylestradiol/drospirenone because of your migraine and gave "
            "spironolactone.", False),
    (PILLS, "For polycystic ovary syndrome the usual choice would be ethinylestradiol/drospirenone, but your migraine "
            "with aura rules it out, so you got spironolactone.", False),
    (COLITIS, "确诊溃疡性结肠炎后开始柳氮磺吡啶1000 mg、每日两次；本来一般用美沙拉秦，但因您每月只有60美元药费预算而"
              "选了柳氮磺吡啶。", False),
    (COLITIS, "溃疡性结肠炎：因为预算没有选美沙拉秦，开了柳氮磺吡啶。", False),
    (COLITIS, "溃疡性结肠炎：美沙拉秦因为预算没有用，开了柳氮磺吡啶。", False),
    # the near misses: the passed-over drug told as the one given
    (PILLS, "For your polycystic ovary syndrome you started ethinylestradiol/drospirenone; spironolactone was avoided "
            "because of your migraine with aura.", True),
    (PILLS, "For polycystic ovary syndrome I gave you ethinylestradiol/drospirenone as spironolactone was not used.",
     True),
    (PILLS, "For polycystic ovary syndrome you started ethinylestradiol/drospirenone, but it gave you headaches, so "
            "spironolactone followed.", True),
    (COLITIS, "溃疡性结肠炎：本来一般用柳氮磺吡啶，但因您每月只有60美元药费预算而选了美沙拉秦。", True),
    (COLITIS, "溃疡性结肠炎：一般用美沙拉秦1000 mg，每日两次，后来加了柳氮磺吡啶。", True),
])
def test_a_rival_passed_over_after_its_name_or_as_the_usual_choice(steps: list[list[Fact]], answer: str,
                                                                    given: bool) -> None:
    check = check_chain(read_answer(answer), steps, "Why was I given what I got?")
    assert bool(check.rivals) is given and check.passed is not given


PNEUMONIA = [[Fact("咳嗽咳痰", "gist", ("咳|嗽", "痰|湿咳"))],
             [Fact("发热伴吸气时胸痛", "gist", ("痛|疼", "吸气|呼吸|深吸|喘气|胸膜|吸一口")),
              Fact("社区获得性肺炎", "name", ("CAP", "肺炎")), Fact("阿莫西林", "name", group="key")],
             [Fact("双肺呼吸音清，体温正常（36.8 °C），咳嗽基本消失", "finding")]]
PNEUMONIA_TOLD = ("4月7日您说一阵阵发冷发热、一吸气右边就刺痛，胸片示右下叶实变，诊断为社区获得性肺炎，"
                  "开了阿莫西林500 mg、每日三次；4月21日复查双肺呼吸音清，体温36.8 °C，咳嗽基本消失。")


def test_a_chain_told_from_its_second_visit_misses_the_presentation() -> None:
    # seed 73's ceiling (P0015): the records tell the cough with green phlegm on 24 March, the pleuritic pain on 7
    # April; an answer that starts at 7 April misses the presentation, one that tells 24 March too is whole
    question = "我得肺部感染的时候，从头到尾是怎么回事，为什么给我用那个药？"
    check = check_chain(read_answer(PNEUMONIA_TOLD), PNEUMONIA, question)
    assert check.covered == [1, 2] and not check.passed
    assert check_chain(read_answer("3月24日您说咳嗽有绿痰。" + PNEUMONIA_TOLD), PNEUMONIA, question).passed


def test_a_rival_is_no_step() -> None:
    # naming only the rivals covers nothing: the step is told by the drug given
    check = check_chain(read_answer("Acute low back pain; full movement of the back."), BACK_PAIN, "")
    assert check.covered == [0, 2]


def test_a_step_the_question_names_is_given_not_counted() -> None:
    steps = [[Fact("atorvastatin", "name")], [Fact("statin-associated myopathy", "name", ("muscle pain",))],
             [Fact("ezetimibe", "name")]]
    question = "Why did I have to stop atorvastatin and move to ezetimibe?"
    check = check_chain(read_answer("Because the atorvastatin gave you muscle pain."), steps, question)
    assert check.given == [0, 2] and check.passed
    assert not check_chain(read_answer("We changed to ezetimibe after atorvastatin."), steps, question).passed


def test_every_fact_kind_the_dataset_declares_is_read():
    from medmemorybench.questions.models import FACT_KINDS
    from medmemorybench.scoring.facts import locate

    for kind in FACT_KINDS:
        locate(read_answer("yes"), Fact("yes", kind))  # raises for a kind it cannot read
    with pytest.raises(ValueError, match="unknown fact kind"):
        locate(read_answer("yes"), Fact("yes", "colour"))


def _chain_passes(steps: list[list[Fact]], answer: str) -> bool:
    return check_chain(read_answer(answer), steps, "Why was my dose raised?").passed


LUPUS = Fact("anti-dsDNA 265 IU/mL, positive, with C3 0.42 g/L (low) and C4 0.07 g/L (low)", "finding")
PEPTIDE = Fact("fasting C-peptide 2.19 nmol/L, still preserved, and GAD antibodies 2.8 IU/mL, negative", "finding")
PEPTIDE_ZH = Fact("GAD抗体99.8 IU/mL，阳性；空腹C肽0.51 nmol/L，偏低", "finding")
DATSCAN = Fact("reduced uptake in the putamen, more on the side opposite the tremor", "finding")


@pytest.mark.parametrize(("fact", "answer", "expected"), [
    # a result said to lie the other way contradicts the finding, however much else is told
    (LUPUS, "Anti-dsDNA was 265 IU/mL with low complement (C3 0.42, C4 0.07 g/L).", True),
    (LUPUS, "Anti-dsDNA was 265 IU/mL with raised complement levels (C3 0.42, C4 0.07 g/L).", False),
    (PEPTIDE, "Your fasting C-peptide was 2.19 nmol/L, still preserved, and GAD antibodies were 2.8 IU/mL, "
              "negative.", True),
    (PEPTIDE, "Your C-peptide was low, and GAD antibodies were negative at 2.8.", False),
    (PEPTIDE_ZH, "GAD抗体99.8 IU/mL，阳性；C肽0.51 nmol/L，对糖尿病成人偏低，说明胰岛素分泌在减退。", True),
    (PEPTIDE_ZH, "GAD抗体99.8 IU/mL，阳性；C肽0.51 nmol/L，在正常范围，说明胰岛功能还保留得不错。", False),
    # the side of a scan's finding against the tremor: opposite, not the same side
    (DATSCAN, "The DaTscan showed reduced putamen uptake, more on the side opposite your tremor.", True),
    (DATSCAN, "The DaTscan showed reduced putamen uptake on the same side as your tremor.", False),
])
def test_finding_direction_and_side(fact: Fact, answer: str, expected: bool) -> None:
    assert _chain_passes([[fact]], answer) is expected


DRUG = Fact("losartan", "name", ("Cozaar",))
RIVAL = Fact("lisinopril", "name", ("Zestril",), group=RIVAL_GROUP)
DRUG_ZH = Fact("柳氮磺吡啶", "name")
RIVAL_ZH = Fact("美沙拉秦", "name", group=RIVAL_GROUP)


@pytest.mark.parametrize(("steps", "answer", "expected"), [
    # the usual choice most people get, then a contrast: passed over, not given
    ([[DRUG, RIVAL]], "Most people get lisinopril, but you'd had angioedema, so I started losartan 50 mg.", True),
    ([[DRUG, RIVAL]], "I started lisinopril 10 mg, then losartan 50 mg.", False),
    ([[DRUG_ZH, RIVAL_ZH]], "美沙拉秦超出您每月80美元的预算，所以用柳氮磺吡啶1000 mg每日两次。", True),
    ([[DRUG_ZH, RIVAL_ZH]], "先用美沙拉秦，后来用柳氮磺吡啶1000 mg每日两次。", False),
    ([[DRUG, RIVAL]], "Lisinopril was over your budget, so losartan was started.", True),
])
def test_passed_over_cues(steps: list[list[Fact]], answer: str, expected: bool) -> None:
    assert _chain_passes(steps, answer) is expected


@pytest.mark.parametrize(("answer", "expected"), [
    ("4月22日起每晚用CPAP，压力8 cmH2O。", True),  # (the bracketed short name, between Chinese characters)
    ("4月22日起每晚用持续气道正压通气。", True),
    ("4月22日起每晚吸氧。", False),
])
def test_bracketed_short_name(answer: str, expected: bool) -> None:
    assert passes(Fact("持续气道正压通气（CPAP）", "name"), answer) is expected


TAKEN = [Fact("losartan", "name", ("Cozaar",), group=TAKEN_GROUP), Fact("amlodipine", "name", group=TAKEN_GROUP)]
TAKEN_ZH = [Fact("氯沙坦", "name", group=TAKEN_GROUP)]


@pytest.mark.parametrize(("taken", "answer", "expected"), [
    # a drug the patient never took, told as given, is another treatment; named as passed over, it is not
    (TAKEN, "Losartan 50 mg was started in May, and finerenone was added to it in July.", False),
    (TAKEN, "Losartan 50 mg was started in May; finerenone was avoided because of your potassium.", True),
    (TAKEN, "Losartan 50 mg was started in May, and amlodipine was added in July.", True),
    (TAKEN, "Your insulin-resistant diabetes damaged the kidneys, so losartan 50 mg was started.", True),
    (TAKEN_ZH, "5月开始用氯沙坦50 mg，7月又加用了非奈利酮。", False),
    (TAKEN_ZH, "5月开始用氯沙坦50 mg；因为血钾偏高，没有用非奈利酮。", True),
])
def test_a_drug_never_taken_told_as_given(taken: list[Fact], answer: str, expected: bool) -> None:
    step = [Fact("losartan", "name", ("Cozaar", "氯沙坦"))]
    assert _chain_passes([[*step, *taken]], answer) is expected


@pytest.mark.parametrize(("told", "answer", "expected"), [
    # the start dose of the chain's drug compared with the chain's own; a later change told as one is no start dose
    ("metformin 500 mg twice a day was started", "On 22 April you were started on metformin 500 mg twice a day.", True),
    ("metformin 500 mg twice a day was started", "On 22 April you were started on metformin 1,000 mg twice a day.",
     False),
    ("metformin 500 mg twice a day was started", "You were started on metformin 500 mg twice a day; in June metformin "
                                                 "was raised to 1000 mg.", True),
    ("开始用二甲双胍 500 mg，每日两次", "4月22日开始用二甲双胍500 mg每日两次，6月加到1000 mg。", True),
    ("开始用二甲双胍 500 mg，每日两次", "4月22日开始用二甲双胍1000 mg每日两次。", False),
])
def test_a_start_dose_of_the_chains_drug(told: str, answer: str, expected: bool) -> None:
    drug = Fact("metformin", "name", ("二甲双胍",))
    assert check_chain(read_answer(answer), [[drug]], "Why was I given what I got?", [told]).passed is expected
