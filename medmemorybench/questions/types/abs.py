"""ABS, abstention: a question worded exactly like an answerable one (the same phrasings) about a fact that is
plausible for this patient but absent from their records, so only a memory of what *was* said can tell. The
slots: a lab of their own disease group never measured, a drug of a class they take but never prescribed or a
relative's drug (asked as the patient's), a relative's lab, a date with no visit."""

from __future__ import annotations

import random
import re
from datetime import date, timedelta

from medmemorybench.questions.facts import Draft, FactFinder
from medmemorybench.questions.spec import QuestionType, register
from medmemorybench.simulate.models import LabFact

LAB_PHRASINGS = ("eem.lab_first", "sua.latest_lab")
DRUG_PHRASINGS = ("sua.current_dose", "tla.start_date", "eem.start_dose")
HOSPITAL_FORMS = ("infusion",)
"""A form given in hospital (a drip): a drug with no other is not asked about as one the patient takes."""
NO_VISIT_MARGIN_DAYS = 3
"""A date asked about lies at least this many days from any visit."""


def make(finder: FactFinder, checkpoint: int, rng: random.Random) -> list[Draft]:
    drafts: list[Draft] = []
    answer = finder.say("abstain", "text")
    aliases = list(finder.phrasing.common("abstain_aliases"))

    def absent(template: str, fields: dict, term: str, key: str, kind: str, names_date: bool = False) -> None:
        drafts.append(Draft("ABS", template, fields, answer, [], [], key, kind=kind,
                            names_date=names_date, aliases=aliases, abstain=True, absent_fact=term))

    measured = {f.lab for e in finder.events for f in e.facts if isinstance(f, LabFact)}
    group = finder.condition.group.key
    own_group = sorted({m.lab for c in finder.kb.conditions.values() if c.group.key == group for m in c.monitored}
                       | {lab.lab for r in finder.year.persona.family for lab in r.labs})
    other_sex = _labs_of_sex(finder, "male" if finder.year.persona.sex == "female" else "female")
    for lab in own_group:
        lay = finder.lab_lay(lab)
        if lab in measured or lab in other_sex or _sounds_like_measured(finder, lab, measured) \
                or not finder.never_said_anywhere(lambda f, lab=lab: (f.t(f.kb.labs[lab].name), f.lab_lay(lab))):
            continue
        absent(rng.choice(LAB_PHRASINGS), {"lab_lay": lay}, lay, f"abs:lab:{lab}", "lab")
    for drug in sorted(d for d in finder.pools if finder.in_pool(d, "abs")):
        if all(form.form in HOSPITAL_FORMS for form in finder.kb.drugs[drug].forms):
            continue  # (nobody asks what dose of a drip they "take")
        name = finder.drug(drug)
        if finder.never_said_anywhere(lambda f, drug=drug: (f.drug(drug),)):
            absent(rng.choice(DRUG_PHRASINGS), {"drug": name}, name, f"abs:drug:{drug}", "drug")
    upto = finder.upto(checkpoint)
    if len(upto) >= 2:
        visits = [date.fromisoformat(e.date) for e in upto]
        for _ in range(3):
            day = visits[0] + timedelta(days=rng.randint(0, (visits[-1] - visits[0]).days))
            if min(abs((day - v).days) for v in visits) >= NO_VISIT_MARGIN_DAYS:
                iso = day.isoformat()
                absent("tla.event_on_date", {"date": iso}, iso, f"abs:date:{iso}", "date", names_date=True)
    return drafts


def _labs_of_sex(finder: FactFinder, sex: str) -> set[str]:
    """Labs followed only in conditions of one sex (an egg-reserve hormone is no question for a man)."""
    conditions = finder.kb.conditions.values()
    either = {m.lab for c in conditions if c.sex != sex for m in c.monitored}
    return {m.lab for c in conditions if c.sex == sex for m in c.monitored} - either


def _lay_words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z]+", text.lower()) if w not in ("the", "my", "a", "an", "of", "at", "in")}


def _sounds_like_measured(finder: FactFinder, lab: str, measured: set[str]) -> bool:
    """Whether a patient would call a lab they never had by the name of one they had ("the memory test score" when a
    thinking-skills test was done): its lay name shares two words with a measured lab's. Read in English, so every
    language asks the same questions."""
    words = _lay_words(finder.kb.labs[lab].lay.en)
    return any(len(words & _lay_words(finder.kb.labs[m].lay.en)) >= 2 for m in measured)


register(QuestionType(
    code="ABS", name="abstention: the honest answer is 'not in my records'", order=7, make=make, quota=1,
    paper=False, scorers=("abstained",), prompt="qa/abs.jinja",
))
