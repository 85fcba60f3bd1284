"""The question schedule: every registered type's quota at every checkpoint where it is asked (`spec.py`).

What a draft is chosen by: only a share of a type's questions may name a session's date (`date_cap`); at
checkpoints >= `OLD_FROM_CHECKPOINT` at least `OLD_SHARE` of the questions need a session `OLD_AGE` or more
sessions back, and over the year at most `NEW_ONLY_SHARE` need only the newest `WINDOW` sessions (a year of
memory, not the last ten visits); IG and MQ go through the trap categories so all six are tested; no sub-kind
takes more than `kind_cap` of a type. Each fact is asked once per patient and no two questions of a patient
have the same text.
"""

from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Callable
from functools import lru_cache
from math import comb
from typing import NamedTuple

from medmemorybench.errors import SimulationError
from medmemorybench.knowledge.base import KnowledgeBase
from medmemorybench.normalize import normalize_text
from medmemorybench.questions.cohort import CohortPrior
from medmemorybench.questions.facts import Draft, FactFinder
from medmemorybench.questions.models import ChainNode, Question
from medmemorybench.questions.phrasing import Phrasing, load_phrasing
from medmemorybench.questions.spec import QuestionType, question_types
from medmemorybench.render.models import Session, regular_session_id, session_text
from medmemorybench.render.templates import load_templates
from medmemorybench.scoring.multiple_choice import split_option
from medmemorybench.simulate.models import CareYear
from medmemorybench.simulate.rng import rng_for

WINDOW = 10
"""Sessions a checkpoint adds (its "new" sessions)."""
OLD_AGE, OLD_FROM_CHECKPOINT, OLD_SHARE = 30, 50, 0.35
"""From checkpoint 50 on, aim for this share of questions needing a session 30 or more back (the bar is 30 %)."""
NEW_ONLY_SHARE = 0.45
"""Aim for at most this share needing only the newest `WINDOW` sessions (the bar is 50 %)."""
SCHEDULE_ROUNDS = 4
"""Times the schedule is run: each round bans the questions the previous one had to trim to keep a balanced type
even, and those of a plentiful type that made a short type's candidate leak (so their slots go to drafts that
stay balanced, or that leak nothing). Also the most times the whole choice is made again for a wording in another
language that gives an answer away (`generate_renderings`)."""
BALANCE_LEAD = 2
"""How far one side of a balanced type (IG yes/no) may lead within a stratum while the schedule runs (the
end-of-year trimming evens what is left to `TRIM_LEAD`)."""
BALANCED_SLACK = 1.2
"""How far a drug's commoner yes/no answer may stay ahead of its rarer one, in expectation, over the cohort
(`CohortPrior.keeps`; the choice questions' options keep `cohort.SLACK`, 1: their probe is nearer its bar). The
audit's IG cohort-prior probe stays at 0.53-0.59 against bars of ~0.60 on seeds 0-4; 1.4 took seed 2 to 0.592."""
TRIM_LEAD = 2
"""How far one side may lead within a stratum of one patient once the schedule is done (`_trim_unpaired`). Two
questions, in either direction, do not let a rule on what other questions name beat chance over a cohort (the
audit's question-only probe checks it: 0.54-0.55 against bars of 0.62-0.63 on seeds 0-4), and evening every
stratum exactly left patients whose year bars nearly every drug (a budget spent, old age) with a handful of IG
questions (docs/benchmarks.md has what each lead kept)."""


SET_SHARE = {n: comb(4, n) / 14 for n in (1, 2, 3)}
"""The share of a choice question's 14 letter sets with one, two and three right options (4, 6 and 4 of them): a
patient's questions keep to it so that no size, and so no constant letter set, is over-represented."""


SET_LEAD = 2
"""How many choice questions a patient's count of one size may run ahead of its share (`SET_SHARE`)."""


def is_old(draft: Draft, checkpoint: int) -> bool:
    return any(e.index <= checkpoint - OLD_AGE for e in draft.evidence)


def is_new_only(draft: Draft, checkpoint: int) -> bool:
    return bool(draft.evidence) and all(e.index > checkpoint - WINDOW for e in draft.evidence)


class _Schedule:
    """What one patient has been asked so far (the ranks read it)."""

    def __init__(self, persona_id: str = "", prior: CohortPrior | None = None) -> None:
        self.persona_id, self.prior = persona_id, prior
        self.used_facts: set[str] = set()
        self.texts: set[str] = set()
        self.asked: Counter = Counter()          # type -> questions
        self.dated: Counter = Counter()          # type -> questions naming a date
        self.kinds: Counter = Counter()          # (type, kind) -> questions
        self.answers: Counter = Counter()        # (type, answer) -> questions (choice questions' letter sets)
        self.sizes: Counter = Counter()          # right options -> choice questions
        self.categories: set[str] = set()
        self.picked: list[tuple[str, list[str]]] = []   # (normalized text, normalized key facts)
        self.texts_by_type: dict[str, list[str]] = {}  # normalized question texts, by type
        self.items: list[tuple[Draft, str]] = []  # what was taken, in order, with `_named_text`
        self._strata_of: tuple[tuple, dict] = ((), {})  # ((len(items), type) when counted, _strata of that type)
        self.named: list[_Named] = []  # MQ: each choice question taken, with what the others name of its options
        self.with_evidence = 0
        self.new_only = 0
        self.blockers: set[tuple[str, str, str]] = set()
        """(type turned away, type of the question that made it leak, that question's fact key)."""

    def ranker(self, spec: QuestionType, checkpoint: int, at_checkpoint: list[Draft]) -> Callable[[Draft], tuple]:
        """The sort key of the type's drafts now (what does not depend on the draft is counted once)."""
        old_here = sum(is_old(d, checkpoint) for d in at_checkpoint if d.evidence)
        want_old = checkpoint >= OLD_FROM_CHECKPOINT and old_here < OLD_SHARE * (len(at_checkpoint) + 1)
        new_full = self.new_only + 1 > NEW_ONLY_SHARE * (self.with_evidence + 1)
        named_now = _named_in(self.items) if spec.balanced else ""

        def rank(draft: Draft) -> tuple:
            untested = draft.trap_category is not None and draft.trap_category not in self.categories
            age_miss = 0
            if draft.evidence:
                too_new = new_full and is_new_only(draft, checkpoint)
                age_miss = int(want_old and not is_old(draft, checkpoint)) + int(too_new)
            # a balanced type's drug that other questions already name sits in a stratum whose sides rarely even
            # out (a drug the patient takes is named by dose questions and is nearly always "yes"): asked last
            name = _asked_name(draft)
            named = bool(spec.balanced and name and name in named_now)
            # a choice question whose letter set the patient has had least (no constant letter set may win), and of
            # a size (one, two or three right) the patient has had no more than its share of the 14 sets
            letters = self.answers[(spec.code, draft.answer)] if draft.options else 0
            oversized = bool(draft.options) and self.sizes[len(draft.correct_options)] + 1 > \
                math.ceil(SET_SHARE[len(draft.correct_options)] * (self.asked[spec.code] + 1))
            return (0 if untested else 1, age_miss, named, oversized, letters, self.kinds[(spec.code, draft.kind)])

        return rank

    def leaks(self, draft: Draft, text: str) -> bool:
        """Whether the draft and an earlier question of the patient would give each other's answers away: one's
        key facts all stated in the other's text, or a choice question whose right (or wrong) options are
        exactly those some type's questions name (a drug asked about in IG, a dose asked in SUA)."""
        mine = normalize_text(text)
        facts = [normalize_text(f) for f in draft.key_facts]
        for (other, _), (other_text, other_facts) in zip(self.items, self.picked, strict=True):
            if _states_every(other_text, facts) or _states_every(mine, other_facts):
                self.blockers.add((draft.query_type, other.query_type, other.fact_key))
                return True
        if draft.options:
            return _Named(_option_names(draft), self.texts_by_type).reveals()
        # (only a reveal this text would make: one already made, by a trap category's only question, is not its doing)
        return any(named.reveals_with(draft.query_type, mine) for named in self.named)

    def over_date_cap(self, spec: QuestionType, draft: Draft) -> bool:
        """Whether the draft names a date and the type's share of such questions would pass its cap."""
        return draft.names_date and (self.dated[spec.code] + 1) > spec.date_cap * (self.asked[spec.code] + 1)

    def over_kind_cap(self, spec: QuestionType, draft: Draft) -> bool:
        """Whether taking the draft would push its sub-kind past the type's cap (a patient's first question may be
        of any kind); for a balanced type, whether its side would lead the other by more than `BALANCE_LEAD`
        (`_trim_unpaired` evens the sides at the end, among questions that look alike)."""
        if draft.options and self.sizes[len(draft.correct_options)] + 1 > \
                math.ceil(SET_SHARE[len(draft.correct_options)] * (self.asked[spec.code] + 1)) + SET_LEAD:
            return True  # (a size past its share of the 14 letter sets would let a constant letter set win)
        side = draft.kind.partition(":")[2]
        if spec.balanced and side:
            drug = _drug_key(draft)
            untested = draft.trap_category is not None and draft.trap_category not in self.categories
            if self.prior is not None and drug and not untested and not draft.side_by_coin \
                    and not self.prior.keeps(self.persona_id, drug, side == "yes", slack=BALANCED_SLACK):
                return True  # (the drug's commoner answer, evened out over the cohort; every trap is still tested)
            other = "no" if side == "yes" else "yes"
            stratum = _seen_in(_asked_name(draft), self.items)
            if self._strata_of[0] != (len(self.items), spec.code):  # (recounted only once a question was taken)
                self._strata_of = ((len(self.items), spec.code), _strata(self.items, {spec.code}))
            sides = self._strata_of[1].get(stratum, {"yes": [], "no": []})
            return len(sides[side]) >= len(sides[other]) + BALANCE_LEAD
        return self.kinds[(spec.code, draft.kind)] + 1 > max(1.0, spec.kind_cap * (self.asked[spec.code] + 1))

    def take(self, spec: QuestionType, draft: Draft, checkpoint: int, text: str) -> None:
        self.used_facts.add(draft.fact_key)
        self.items.append((draft, _named_text(draft, text)))
        self.picked.append((normalize_text(text), [normalize_text(f) for f in draft.key_facts]))
        if draft.options:
            self.named.append(_Named(_option_names(draft), self.texts_by_type))
        else:
            mine = normalize_text(text)
            self.texts_by_type.setdefault(draft.query_type, []).append(mine)
            for named in self.named:
                named.add(draft.query_type, mine)
        self.asked[spec.code] += 1
        self.dated[spec.code] += int(draft.names_date)
        self.kinds[(spec.code, draft.kind)] += 1
        self.answers[(spec.code, draft.answer)] += 1
        if draft.options:
            self.sizes[len(draft.correct_options)] += 1
        if draft.trap_category:
            self.categories.add(draft.trap_category)
        if draft.evidence:
            self.with_evidence += 1
            self.new_only += int(is_new_only(draft, checkpoint))


class _Named:
    """A choice question's options and which of them the questions taken name, by type and over all types, kept up
    to date question by question. When some group names exactly its right options, or exactly its wrong ones, "pick
    what IG asked about" answers the choice without memory."""

    def __init__(self, choice: tuple[list[str], set[str]], texts_by_type: dict[str, list[str]]) -> None:
        self.names, self.right = choice
        self.wrong = set(self.names) - self.right
        self.by_type = {code: self._named_in(texts) for code, texts in texts_by_type.items()}
        self.anywhere: set[str] = set().union(*self.by_type.values())

    def _named_in(self, texts: list[str]) -> set[str]:
        return {name for name in self.names if any(name in t for t in texts)}

    def _exact(self, group: set[str]) -> bool:
        return bool(group) and group in (self.right, self.wrong)

    def add(self, code: str, text: str) -> None:
        """A question of type `code` was taken with this (normalized) text."""
        named = self._named_in([text])
        self.by_type.setdefault(code, set()).update(named)
        self.anywhere |= named

    def reveals(self) -> bool:
        return any(self._exact(group) for group in [*self.by_type.values(), self.anywhere])

    def reveals_with(self, code: str, text: str) -> bool:
        """Whether a question of type `code` with this text would make the choice reveal its answer (it changes only
        its own type's group and the group of all types), when it does not already."""
        here = self._named_in([text])
        return not self.reveals() and any(self._exact(group) for group in
                                          (self.by_type.get(code, set()) | here, self.anywhere | here))


def _option_names(draft: Draft) -> tuple[list[str], set[str]]:
    """A choice question's options (normalized names) and the right ones among them."""
    parsed = [split_option(o) for o in draft.options]
    names = [normalize_text(body) for _, body in parsed]
    right = {name for name, (letter, _) in zip(names, parsed, strict=True) if letter in draft.correct_options}
    return names, right


def _wording(draft: Draft, phrasing: Phrasing, texts: set[str], rng: random.Random) -> str | None:
    """A variant of the draft's phrasing no earlier question of the patient used; None when all are taken."""
    variants = list(phrasing.variants(draft.template))
    rng.shuffle(variants)
    for variant in variants:
        text = variant.format(**draft.fields)
        if identity(text, draft) not in texts:
            return text
    return None


def identity(text: str, draft: Draft) -> str:
    """What makes two questions the same: their text, and for a choice question its options too."""
    return " | ".join([text, *sorted(draft.options)])


def generate_questions(kb: KnowledgeBase, year: CareYear, sessions: list[Session], checkpoints: list[int],
                       language: str = "en", prior: CohortPrior | None = None) -> list[Question]:
    """All questions of one patient, checkpoint by checkpoint.

    Args:
        sessions: the patient's regular sessions (abstention questions ask only about what they never say).
        prior: how often each drug is allowed across the cohort (`questions.cohort`), so that no drug's answer is
            mostly the same one.
    """
    finder = _finder(kb, year, language, sessions, prior)
    return _numbered(year, _select(year, finder, checkpoints, language, prior).kept)


def generate_renderings(kb: KnowledgeBase, year: CareYear, sessions: dict[str, list[Session]],
                        checkpoints: list[int], prior: CohortPrior | None = None) -> dict[str, list[Question]]:
    """The same questions in every language of `sessions` (language -> the patient's regular sessions): chosen once,
    in the first language, and rendered in each (one truth, many renderings: same ids, facts, evidence and golds,
    each in its language's words).

    A fact counts as never said (abstention) only when no rendering says it, so every language's drafts are the same;
    the others are made with the random state the first language's were made with, matched draft by draft, and
    worded from their own phrasing files.

    Raises:
        SimulationError: if another language's drafts differ from the first's (a phrasing or finder bug).
    """
    languages = list(sessions)
    finders = {lang: _finder(kb, year, lang, sessions[lang], prior) for lang in languages}
    for finder in finders.values():
        finder.renderings = list(finders.values())
    first = languages[0]
    banned: set[str] = set()
    for _ in range(SCHEDULE_ROUNDS):
        selection = _select(year, finders[first], checkpoints, first, prior, banned)
        out = {first: _numbered(year, selection.kept)}
        replayed = {lang: _replay(year, finders[lang], selection, lang) for lang in languages[1:]}
        # a question whose wording in another language states another's key facts (a lay name holding a diagnosis:
        # 身体对胰岛素不敏感的2型糖尿病) is not asked in any language: the schedule runs again without it
        leaking = {key for kept in replayed.values() for key in _revealing(kept)} - banned
        if not leaking:
            break
        banned |= leaking
    for lang, kept in replayed.items():
        out[lang] = _numbered(year, kept)
    return out


def _revealing(kept: list[tuple[int, Draft, str]]) -> set[str]:
    """The fact keys of questions whose text states every key fact of another question of the patient (what
    `_Schedule.leaks` turns away in the first language, found in a rendering)."""
    texts = [(draft.fact_key, normalize_text(text)) for _, draft, text in kept]
    out = set()
    for _, draft, _ in kept:
        facts = [normalize_text(f) for f in draft.key_facts]
        out |= {key for key, text in texts if key != draft.fact_key and _states_every(text, facts)}
    return out


def _states_every(text: str, facts: list[str]) -> bool:
    """Whether a (normalized) question text states every one of a question's (normalized) key facts; a question
    without key facts is stated by none."""
    return bool(facts) and all(f in text for f in facts)


def _finder(kb: KnowledgeBase, year: CareYear, language: str, sessions: list[Session],
            prior: CohortPrior | None) -> FactFinder:
    return FactFinder(kb, year, load_phrasing(language), load_templates(language),
                      {s.session_id: session_text(s) for s in sessions}, prior)


class _Selection(NamedTuple):
    """What the schedule chose, and how to make the same drafts again in another language."""

    kept: list[tuple[int, Draft, str]]
    drafts: dict[tuple[str, int], list[Draft]]
    states: dict[tuple[str, int], tuple]
    """The random state each (type, checkpoint)'s drafts were made with."""


def _select(year: CareYear, finder: FactFinder, checkpoints: list[int], language: str,
            prior: CohortPrior | None, banned: set[str] | None = None) -> _Selection:
    """The questions chosen, but those of the `banned` fact keys."""
    phrasing = finder.phrasing
    drafts: dict[tuple[str, int], list[Draft]] = {}  # (type, checkpoint) -> its candidates, made once
    states: dict[tuple[str, int], tuple] = {}
    banned = set(banned or ())
    caps: dict[tuple[str, int], int] = {}
    best: tuple[list[tuple[int, Draft, str]], set[str]] = ([], set())  # (the fullest round's questions, its bans)
    for _ in range(SCHEDULE_ROUNDS):
        chosen, blockers = _schedule(year, finder, phrasing, checkpoints, language, drafts, banned, prior, caps,
                                     states)
        kept = _trim_unpaired(chosen)
        if len(kept) > len(best[0]):
            best = (kept, set(banned))
        trimmed = {d.fact_key for _, d, _ in chosen} - {d.fact_key for _, d, _ in kept}
        # a type with candidates to spare gives way to one short of its quota: the question that made a short
        # type's candidate leak is not asked again (another of its own candidates takes the slot)
        short, full = _short_and_full(kept, checkpoints)
        # (but a question that tests a trap category: the category may have no other)
        testing = {d.fact_key for _, d, _ in kept if d.trap_category}
        giving_way = {key for turned_away, blocker, key in blockers
                      if turned_away in short and blocker in full and key not in testing}
        if not trimmed and not giving_way - banned:
            break
        banned |= trimmed | giving_way  # (asked again, the schedule fills those slots with drafts that stay balanced)
    kept, banned = best  # (a round's bans can cost more than they win: the fullest round is kept)
    caps = _paced(kept, checkpoints)
    if caps:  # a type short of drafts would fill the early checkpoints and leave the late ones bare: spread it
        chosen, _ = _schedule(year, finder, phrasing, checkpoints, language, drafts, banned, prior, caps, states)
        kept = _trim_unpaired(chosen)
    return _Selection(kept, drafts, states)


def _signature(draft: Draft) -> tuple:
    """What a draft is, whatever its language: type, phrasing intent, sub-kind, evidence, right letters, trap."""
    return (draft.query_type, draft.template, draft.kind, tuple(e.event_id for e in draft.evidence),
            tuple(draft.correct_options), draft.trap_category, draft.abstain, len(draft.key_facts),
            tuple(f.kind for f in draft.facts), tuple(len(f) for f in draft.chain_facts))


def _replay(year: CareYear, finder: FactFinder, selection: _Selection, language: str) -> list[tuple[int, Draft, str]]:
    """The first language's chosen questions, made and worded in `language`."""
    specs = {spec.code: spec for spec in question_types()}
    remade: dict[tuple[str, int], list[Draft]] = {}
    rngs = {code: rng_for(year.seed, year.persona.persona_id, f"questions/{language}/{code}") for code in specs}
    texts: set[str] = set()
    out = []
    for checkpoint, draft, _ in selection.kept:
        key = (draft.query_type, checkpoint)
        if key not in remade:
            state = random.Random()
            state.setstate(selection.states[key])
            remade[key] = specs[draft.query_type].make(finder, checkpoint, state)
        original = selection.drafts[key]
        index = next(i for i, d in enumerate(original) if d is draft)
        twin = remade[key][index] if index < len(remade[key]) else None
        if twin is None or _signature(twin) != _signature(draft):
            raise SimulationError(f"{year.persona.persona_id}: question {draft.fact_key} at checkpoint {checkpoint} "
                                  f"has no twin in '{language}' (its drafts differ from the first language's)")
        text = _wording(twin, finder.phrasing, texts, rngs[draft.query_type])
        if text is None:
            raise SimulationError(f"questions/phrasings/{language}/{draft.template.split('.')[0]}.yaml: "
                                  f"{draft.template}: too few phrasings to word {year.persona.persona_id}'s questions "
                                  "without repeating one")
        texts.add(identity(text, twin))
        out.append((checkpoint, twin, text))
    return out


def _numbered(year: CareYear, kept: list[tuple[int, Draft, str]]) -> list[Question]:
    numbers: Counter = Counter()
    questions: list[Question] = []
    for checkpoint, draft, text in kept:
        numbers[(checkpoint, draft.query_type)] += 1
        questions.append(_finish(draft, year, checkpoint, numbers[(checkpoint, draft.query_type)], text))
    return questions


def _short_and_full(kept: list[tuple[int, Draft, str]], checkpoints: list[int]) -> tuple[set[str], set[str]]:
    """The types below their quota at some checkpoint, and those at it at every checkpoint."""
    counts = Counter((c, d.query_type) for c, d, _ in kept)
    short, full = set(), set()
    for spec in question_types():
        filled = [counts[(c, spec.code)] >= spec.quota for c in checkpoints if c % spec.every == 0]
        (full if all(filled) else short).add(spec.code)
    return short, full


def _paced(kept: list[tuple[int, Draft, str]], checkpoints: list[int]) -> dict[tuple[str, int], int]:
    """Per-checkpoint caps on how many questions a type may have had by then, for the types that fell short of
    their quota at some checkpoint after being full at an earlier one: what they had, spread as evenly as whole
    questions allow over their checkpoints (a checkpoint that could not use its share passes it on)."""
    caps: dict[tuple[str, int], int] = {}
    for spec in question_types():
        asked = [c for c in checkpoints if c % spec.every == 0]
        counts = [sum(1 for c, d, _ in kept if c == checkpoint and d.query_type == spec.code) for checkpoint in asked]
        short = [i for i, n in enumerate(counts) if n < spec.quota]
        if not short or not any(n >= spec.quota for n in counts[:short[-1]]):
            continue
        total = sum(counts)
        for i, checkpoint in enumerate(asked):  # (15 over 10 checkpoints: 2, 3, 5, 6, 8 ... by then)
            caps[(spec.code, checkpoint)] = round(total * (i + 1) / len(asked))
    return caps


def _schedule(year: CareYear, finder: FactFinder, phrasing: Phrasing, checkpoints: list[int], language: str,
              drafts: dict[tuple[str, int], list[Draft]], banned: set[str], prior: CohortPrior | None,
              caps: dict[tuple[str, int], int], states: dict[tuple[str, int], tuple]
              ) -> tuple[list[tuple[int, Draft, str]], set[tuple[str, str, str]]]:
    """Every type's quota (or its cap, when paced) at every checkpoint, from its drafts (`drafts` caches them) but
    the `banned` fact keys; and `_Schedule.blockers`, what made candidates leak."""
    # a stream per type: a change to one type's drafts leaves every other type's draws as they were
    rngs = {spec.code: rng_for(year.seed, year.persona.persona_id, f"questions/{language}/{spec.code}")
            for spec in question_types()}
    schedule = _Schedule(year.persona.persona_id, prior)
    chosen: list[tuple[int, Draft, str]] = []
    for checkpoint in checkpoints:
        at_checkpoint: list[Draft] = []
        for spec in question_types():
            if checkpoint % spec.every:
                continue
            rng = rngs[spec.code]
            if (spec.code, checkpoint) not in drafts:
                states[(spec.code, checkpoint)] = rng.getstate()
                drafts[(spec.code, checkpoint)] = spec.make(finder, checkpoint, rng)
            diagnosed = finder.diagnosed(checkpoint)
            # (a question naming the condition, "given my Alzheimer's", waits for the diagnosis: before it the patient
            # has not been told what they have)
            candidates = [d for d in drafts[(spec.code, checkpoint)]
                          if d.fact_key not in schedule.used_facts and d.fact_key not in banned
                          and (diagnosed or "condition_lay" not in d.fields)]
            rng.shuffle(candidates)
            number = 0
            room = caps.get((spec.code, checkpoint), spec.quota + schedule.asked[spec.code]) - schedule.asked[spec.code]
            ordered = False
            while number < min(spec.quota, room) and candidates:
                # (the ranks change only when a question is taken: a turned-away draft leaves the rest in order, so
                # the list is sorted again only then; the same order as sorting before every pick, far fewer sorts)
                if not ordered:
                    candidates.sort(key=schedule.ranker(spec, checkpoint, at_checkpoint))
                    ordered = True
                draft = candidates.pop(0)
                if draft.fact_key in schedule.used_facts or schedule.over_kind_cap(spec, draft) \
                        or schedule.over_date_cap(spec, draft):
                    continue
                text = _wording(draft, phrasing, schedule.texts, rng)
                untested = draft.trap_category is not None and draft.trap_category not in schedule.categories
                # (a trap category's only question stays even if another names its answer: every disclosed trap is
                # tested; the audit's key-fact probe counts what that costs)
                if text is None or (schedule.leaks(draft, text) and not untested):
                    continue
                number += 1
                ordered = False
                schedule.take(spec, draft, checkpoint, text)
                schedule.texts.add(identity(text, draft))
                at_checkpoint.append(draft)
                chosen.append((checkpoint, draft, text))
    return chosen, schedule.blockers


def _drug_key(draft: Draft) -> str | None:
    """The drug a yes/no question asks about, by key (its fact key is `ig:<drug>[:...]`)."""
    kind, _, rest = draft.fact_key.partition(":")
    return rest.partition(":")[0] or None if kind == "ig" else None


def _asked_name(draft: Draft) -> str:
    return _normalized(draft.fields.get("drug", ""))


@lru_cache(maxsize=4096)
def _normalized(text: str) -> str:
    return normalize_text(text)


def _named_in(items: list[tuple[Draft, str]]) -> str:
    """Every question taken so far, named text by named text (a drug's name found in it is named)."""
    return "\n".join(named for _, named in items)


def _named_text(draft: Draft, text: str) -> str:
    """What a question names, normalized once: its text and its options."""
    return normalize_text(text + " " + " ".join(draft.options))


def _seen_in(name: str, items: list[tuple[Draft, str]], skip: int = -1) -> tuple[str, ...]:
    """The types whose questions (but the one at `skip`) name a drug: what a reader of the other questions knows.
    `items` pairs each draft with its `_named_text`."""
    return tuple(sorted({d.query_type for position, (d, named) in enumerate(items)
                         if position != skip and name and name in named}))


def _strata(items: list[tuple[Draft, str]], balanced: set[str]) -> dict[tuple, dict[str, list[int]]]:
    """Positions of a balanced type's yes and no questions, by the set of types whose other questions name the
    drug asked about (a drug the patient takes is named by dose and date questions, a drug never given is not)."""
    strata: dict[tuple, dict[str, list[int]]] = {}
    for position, (draft, _) in enumerate(items):
        side = draft.kind.partition(":")[2]
        if draft.query_type in balanced and side:
            seen_in = _seen_in(_asked_name(draft), items, skip=position)
            strata.setdefault(seen_in, {"yes": [], "no": []})[side].append(position)
    return strata


def _trim_unpaired(chosen: list[tuple[int, Draft, str]]) -> list[tuple[int, Draft, str]]:
    """Even a balanced type's yes and no golds within each stratum of `_strata` (to within `TRIM_LEAD`), so no rule
    on what other questions name tells yes from no. A leading side loses its questions at the checkpoints holding
    most of the type (the latest first among equals: dropping only the latest would thin the year's end and tilt
    the per-checkpoint mix), but for the only question testing a trap category; repeated until nothing changes
    (dropping a question changes what the others see)."""
    balanced = {s.code for s in question_types() if s.balanced}
    kept = list(chosen)
    while True:
        categories = Counter(d.trap_category for _, d, _ in kept if d.trap_category)
        per_checkpoint = Counter((c, d.query_type) for c, d, _ in kept)
        drop: set[int] = set()
        for sides in _strata([(d, _named_text(d, t)) for _, d, t in kept], balanced).values():
            lead = "yes" if len(sides["yes"]) > len(sides["no"]) else "no"
            surplus = len(sides[lead]) - len(sides["no" if lead == "yes" else "yes"]) - TRIM_LEAD
            fullest_first = sorted(sides[lead], key=lambda p: (per_checkpoint[(kept[p][0], kept[p][1].query_type)], p),
                                   reverse=True)
            for position in fullest_first:
                if surplus <= 0:
                    break
                category = kept[position][1].trap_category
                if category and categories[category] == 1:
                    continue  # (the only question testing a trap category stays)
                drop.add(position)
                per_checkpoint[(kept[position][0], kept[position][1].query_type)] -= 1
                surplus -= 1
                if category:
                    categories[category] -= 1
        if not drop:
            return kept
        kept = [item for position, item in enumerate(kept) if position not in drop]


def _finish(draft: Draft, year: CareYear, checkpoint: int, number: int, text: str) -> Question:
    return Question(
        query_id=f"{year.persona.persona_id}-C{checkpoint:03d}-{draft.query_type}{number}",
        persona_id=year.persona.persona_id,
        checkpoint=checkpoint,
        query_type=draft.query_type,
        question=text,
        options=draft.options,
        answer=draft.answer,
        answer_aliases=draft.aliases,
        correct_options=draft.correct_options,
        evidence_session_ids=sorted({regular_session_id(e.event_id) for e in draft.evidence}),
        key_facts=draft.key_facts,
        facts=draft.facts,
        reasoning_chain=[ChainNode(node=node, session_id=regular_session_id(e.event_id), facts=facts)
                         for (node, e), facts in zip(draft.chain, draft.chain_facts, strict=True)],
        trap_category=draft.trap_category,
        abstain=draft.abstain,
        absent_fact=draft.absent_fact,
        common_wrong_answer=draft.common_wrong_answer,
        subject=draft.fields.get("drug") if draft.query_type == "IG" else None,
        template=draft.template,
    )
