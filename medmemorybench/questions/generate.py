"""The question schedule: at every checkpoint EEM 2, TLA 2, SUA 1, MQ 2, IG 2, ABS 1; MCD 2 every 20 sessions.

Candidates whose evidence falls in the checkpoint's new sessions are preferred (the memory has just
read them; older facts are asked too when the window has none). Every fact is asked at most once per
patient, and IG/MQ questions cycle through the trap categories so all six are tested.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import yaml

from medmemorybench.knowledge.base import KnowledgeBase
from medmemorybench.questions.makers import Draft, QuestionMaker
from medmemorybench.questions.models import ChainNode, Question
from medmemorybench.render.models import Session, regular_session_id, session_text
from medmemorybench.simulate.models import TRAP_CATEGORIES, CareYear
from medmemorybench.simulate.rng import rng_for

PHRASING_DIR = Path(__file__).parent / "templates"
QUOTAS = {"EEM": 2, "TLA": 2, "SUA": 1, "MQ": 2, "IG": 2, "ABS": 1}
MCD_QUOTA, MCD_EVERY = 2, 20


@lru_cache(maxsize=4)
def load_phrasing(language: str = "en") -> dict:
    """Question phrasings and answer sentences of a language."""
    with (PHRASING_DIR / f"{language}.yaml").open(encoding="utf-8") as handle:
        return yaml.safe_load(handle)


def _pick(drafts: list[Draft], used: set[str], window: range, count: int, rng, prefer_category=None,  # noqa: ANN001
          covered: set[str] = frozenset()) -> list[Draft]:  # type: ignore[assignment]
    fresh = [d for d in drafts if d.fact_key not in used]
    rng.shuffle(fresh)

    def rank(d: Draft) -> tuple[int, int, int]:
        in_window = any(e.index in window for e in d.evidence) or not d.evidence
        wanted = prefer_category is not None and d.trap_category in prefer_category
        # a trap category no question has tested yet goes first: every disclosed trap is tested
        untested = d.trap_category is not None and d.trap_category not in covered
        return (0 if untested else 1, 0 if wanted else 1, 0 if in_window else 1)

    fresh.sort(key=rank)
    chosen = []
    for draft in fresh:
        if len(chosen) == count:
            break
        if draft.fact_key in used:
            continue
        used.add(draft.fact_key)
        chosen.append(draft)
    return chosen


def generate_questions(kb: KnowledgeBase, year: CareYear, sessions: list[Session], checkpoints: list[int],
                       language: str = "en") -> list[Question]:
    """All questions of one patient, checkpoint by checkpoint.

    Args:
        sessions: the patient's regular sessions (used to make sure abstention questions ask about
            something the patient's own sessions never mention).
    """
    phrasing = load_phrasing(language)
    maker = QuestionMaker(kb, year, phrasing["answers"],
                          {s.session_id: session_text(s) for s in sessions}, language)
    rng = rng_for(year.seed, year.persona.persona_id, f"questions/{language}")
    used: set[str] = set()
    category_turn = 0
    covered: set[str] = set()
    questions: list[Question] = []
    previous = 0
    for checkpoint in checkpoints:
        window = range(previous + 1, checkpoint + 1)
        batches: list[Draft] = []
        for query_type, count in QUOTAS.items():
            prefer = None
            if query_type in ("IG", "MQ"):
                prefer = {TRAP_CATEGORIES[(category_turn + i) % len(TRAP_CATEGORIES)] for i in range(count)}
                category_turn += count
            if query_type == "MQ":
                candidates = maker.mq(checkpoint, rng)
            else:
                candidates = getattr(maker, query_type.lower())(checkpoint)
            picked = _pick(candidates, used, window, count, rng, prefer, covered)
            covered.update(d.trap_category for d in picked if d.trap_category)
            batches.extend(picked)
        if checkpoint % MCD_EVERY == 0:
            batches.extend(_pick(maker.mcd(checkpoint), used, window, MCD_QUOTA, rng))
        counters: dict[str, int] = {}
        for draft in batches:
            counters[draft.query_type] = counters.get(draft.query_type, 0) + 1
            questions.append(_finish(draft, year, checkpoint, counters[draft.query_type], phrasing, rng))
        previous = checkpoint
    return questions


def _finish(draft: Draft, year: CareYear, checkpoint: int, number: int, phrasing: dict, rng) -> Question:  # noqa: ANN001
    text = rng.choice(phrasing[draft.template]).format(**draft.fields)
    return Question(
        query_id=f"{year.persona.persona_id}-C{checkpoint:03d}-{draft.query_type}{number}",
        persona_id=year.persona.persona_id,
        checkpoint=checkpoint,
        query_type=draft.query_type,  # type: ignore[arg-type]
        question=text,
        options=draft.options,
        answer=draft.answer,
        answer_aliases=draft.aliases,
        correct_options=draft.correct_options,
        evidence_session_ids=sorted({regular_session_id(e.event_id) for e in draft.evidence}),
        key_facts=draft.key_facts,
        reasoning_chain=[ChainNode(node=node, session_id=regular_session_id(e.event_id)) for node, e in draft.chain],
        trap_category=draft.trap_category,
        abstain=draft.abstain,
        absent_fact=draft.absent_fact,
        common_wrong_answer=draft.common_wrong_answer,
        template=draft.template,
    )
