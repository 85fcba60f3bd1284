"""Echo: an answer that copies the prompt or the retrieved records instead of answering.

A small model may repeat its system prompt (which holds "That is not in my records.") or paste the
records it was shown. Such an answer is neither an abstention nor an answer: `score_answer(..., echo=True)`
scores it wrong and flags it, and every other measure takes the same `echo` flag.

The rule, on the answer's tokens (`text_overlap.tokenize`): a token is *copied* when it lies inside a
run of `ECHO_NGRAM` consecutive tokens that also occurs in a prompt or record. The answer is an echo
when at least `ECHO_COVERAGE` of its tokens are copied and either some copied run comes from the
prompt's own wording (a run found in the prompts but in no record: the instructions, the question, the
record labels) or at least `RECORD_ECHO_TOKENS` tokens are copied from the records. Phrases the prompt
quotes for the model to say ("That is not in my records.") are left out of the count first: saying
what one was told to say is compliance, not an echo.

Why these numbers: 8 consecutive identical tokens almost never arise by chance between a sentence a
model wrote and its context, so an 8-token run is a copy; an answer under 8 tokens cannot be called
one ("That is not in my records." is 6). 80 % leaves room for a few own words around a copy ("Answer:
..."), while an answer that frames a quote in its own words stays under it. Copying one record's
sentence is how an extractive model answers ("You said: 'I skip my evening dose'"), so a copy of the
records counts as a dump only when it takes `RECORD_ECHO_TOKENS` tokens from two or more record sentences: one long
finding quoted whole is an answer, in Chinese too, where every character is a token (seed 83's ceiling: the chest
examination's 47-character finding, copied with its date, was scored an echo).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from medmemorybench.scoring.text_overlap import tokenize

ECHO_NGRAM = 8
"""Length of a copied run, in tokens."""
ECHO_COVERAGE = 0.8
"""Share of the answer's tokens (quoted phrases left out) that must be copied."""
RECORD_ECHO_TOKENS = 40
"""Copied tokens an answer needs for a copy of the records alone to be an echo."""

_SENTENCE_END = re.compile(r"(?<=[.?!])\s+|(?<=[。！？])\s*|\n+")  # (not "36.6" nor "；": a finding's clauses)

_QUOTED = re.compile(r'"([^"\n]{1,200})"|“([^”\n]{1,200})”|「([^」\n]{1,200})」')


def _runs(text: str) -> frozenset[int]:
    tokens = tokenize(text)
    return frozenset(hash(tuple(tokens[i:i + ECHO_NGRAM])) for i in range(len(tokens) - ECHO_NGRAM + 1))


def _sentence_of_run(records: Sequence[str]) -> dict[int, int]:
    """Each run of a record sentence -> that sentence's number (a run across a sentence end is in none)."""
    sentences = [part for text in records for part in _SENTENCE_END.split(text) if part.strip()]
    return {run: i for i, sentence in enumerate(sentences) for run in _runs(sentence)}


def _quoted_phrases(text: str) -> tuple[tuple[str, ...], ...]:
    phrases = (tuple(tokenize(next(g for g in m.groups() if g is not None))) for m in _QUOTED.finditer(text))
    return tuple(p for p in phrases if p)


def _quoted_positions(tokens: list[str], prompts: Sequence[str]) -> set[int]:
    """Positions of the answer inside a phrase the prompts quote."""
    positions: set[int] = set()
    for phrase in {p for text in prompts for p in _quoted_phrases(text)}:
        for start in range(len(tokens) - len(phrase) + 1):
            if tuple(tokens[start:start + len(phrase)]) == phrase:
                positions.update(range(start, start + len(phrase)))
    return positions


def is_echo(prediction: str, prompts: Sequence[str] = (), records: Sequence[str] = ()) -> bool:
    """Whether the answer copies the prompt or the retrieved records instead of answering.

    Args:
        prediction: The model's answer text.
        prompts: The texts the model was sent: the system message and the user message (which may
            hold the records too).
        records: The retrieved records' texts. Pass them apart from the prompts so that an answer
            quoting one record sentence is not taken for an echo of the prompt.

    Returns:
        True when the answer is an echo (see the module docstring for the rule). Linear in the length
        of the texts (about 15 ms for 13,000 tokens of records): call it once per answer and pass the
        flag on.
    """
    tokens = tokenize(prediction)
    quoted = _quoted_positions(tokens, prompts)
    own = len(tokens) - len(quoted)
    if own < ECHO_NGRAM:
        return False
    prompt_runs, record_runs = [_runs(t) for t in prompts], [_runs(t) for t in records]
    sentence_of = _sentence_of_run(records)
    copied: set[int] = set()
    sentences: set[int] = set()  # (the record sentences copied from; -1, -2: a run across a sentence end)
    from_prompt_wording = False
    for start in range(len(tokens) - ECHO_NGRAM + 1):
        run = hash(tuple(tokens[start:start + ECHO_NGRAM]))
        in_records = any(run in runs for runs in record_runs)
        if in_records or any(run in runs for runs in prompt_runs):
            copied.update(range(start, start + ECHO_NGRAM))
            from_prompt_wording = from_prompt_wording or not in_records
        if in_records:
            sentences |= {sentence_of[run]} if run in sentence_of else {-1, -2}
    n_copied = len(copied - quoted)
    dump = n_copied >= RECORD_ECHO_TOKENS and len(sentences) >= 2
    return n_copied >= ECHO_COVERAGE * own and (from_prompt_wording or dump)
