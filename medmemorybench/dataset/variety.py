"""How varied the rendered conversations are: duplicate turns, distinct-n, the most repeated turn, stock filler.

Measured per mode (all turns of the `efficient` or `mixed` rows) and per session kind, on the rows alone, so the
build, the card and `scripts/bench_variety.py` report the same figures. Words are lower-cased runs of letters and
digits (English) or, for Chinese, characters and `jieba` words. The share of the patient's turns that are stock
filler (thanks, "I see", nothing specific to the patient) is counted by the renderer as it plans each turn
(`Act.filler`), since text alone cannot tell a stock phrase from a short specific answer.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import asdict, dataclass

from medmemorybench import segment

TARGETS = {"duplicate_share": 0.05, "distinct_2_efficient": 0.20, "distinct_2_mixed": 0.15, "max_repeat": 20,
           "filler_share": 0.10}
"""The targets of issue 12 (docs/benchmarks.md): at most 5 % duplicate turns in regular and in noise sessions,
distinct-2 of at least 0.20 (efficient) and 0.15 (mixed), no turn text more than 20 times, at most 10 % of the
patient's turns stock filler."""

_EN_WORD = re.compile(r"[a-z0-9]+(?:['.][a-z0-9]+)*")


def tokens(text: str, unit: str) -> list[str]:
    """The tokens of a turn: `word` (English words), `char` (Chinese characters, and ASCII runs as one token
    each) or `jieba` (Chinese words by jieba, punctuation and spaces dropped)."""
    if unit == "word":
        return _EN_WORD.findall(text.lower())
    if unit == "char":
        return segment.characters(text)
    return segment.words(text)


@dataclass(frozen=True)
class Variety:
    """The variety of one set of turns."""

    turns: int
    tokens: int
    distinct_turns: int
    duplicate_share: float
    """Turns whose exact text occurs more than once in the set."""
    distinct_1: float
    distinct_2: float
    """Distinct token bigrams (within turns) over all bigrams."""
    max_repeat: int
    """Uses of the commonest turn text."""
    most_repeated: str


def measure(texts: list[str], unit: str) -> Variety:
    counts = Counter(texts)
    unigrams: Counter = Counter()
    bigrams: Counter = Counter()
    for text in texts:
        words = tokens(text, unit)
        unigrams.update(words)
        bigrams.update(zip(words, words[1:], strict=False))
    top, top_n = counts.most_common(1)[0] if counts else ("", 0)
    n_uni, n_bi = sum(unigrams.values()), sum(bigrams.values())
    return Variety(turns=len(texts), tokens=n_uni, distinct_turns=len(counts),
                   duplicate_share=sum(n for n in counts.values() if n > 1) / max(len(texts), 1),
                   distinct_1=len(unigrams) / max(n_uni, 1), distinct_2=len(bigrams) / max(n_bi, 1),
                   max_repeat=top_n, most_repeated=top)


def units_for(language: str) -> tuple[str, ...]:
    """The token units a language is measured in."""
    return ("char", "jieba") if language == "zh" else ("word",)


def stream_variety(rows: list[dict], language: str) -> dict[str, dict[str, dict]]:
    """Variety of one mode's rows (`efficient` or `mixed`): unit -> scope (`all` or a session kind) -> figures."""
    by_kind: dict[str, list[str]] = {}
    for row in rows:
        for session in row["sessions"]:
            by_kind.setdefault(session["kind"], []).extend(t["text"] for t in session["turns"])
    everything = [t for texts in by_kind.values() for t in texts]
    return {unit: {"all": asdict(measure(everything, unit)),
                   **{kind: asdict(measure(texts, unit)) for kind, texts in sorted(by_kind.items())}}
            for unit in units_for(language)}


def format_variety(report: dict[str, dict[str, dict[str, dict]]], filler_share: float | None) -> str:
    """A Markdown table of a build's variety (config -> unit -> scope -> figures), for the card and the script."""
    lines = ["| config | unit | scope | turns | duplicate turns | distinct-1 | distinct-2 | most repeated turn |",
             "|---|---|---|---|---|---|---|---|"]
    for config, units in report.items():
        for unit, scopes in units.items():
            for scope, v in scopes.items():
                lines.append(f"| {config} | {unit} | {scope} | {v['turns']} | {v['duplicate_share']:.1%} | "
                             f"{v['distinct_1']:.3f} | {v['distinct_2']:.3f} | {v['max_repeat']}× |")
    if filler_share is not None:
        lines.append("")
        lines.append(f"Patient turns that are stock filler (counted as rendered): {filler_share:.1%}.")
    return "\n".join(lines)
