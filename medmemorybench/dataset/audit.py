"""Memory-less probes: can the benchmark be won without reading the sessions? (`medmemorybench audit`)

Each probe reads only what a cheater could (the questions, their wording, their answers' shapes) and has a
threshold; `build` runs them (all but the BM25 one) and refuses to export a dataset that fails one.

- `question_only`: per type, the best of 16 rules over the patient's *other* questions (is an option or a
  drug named in them, and in which type). MQ exact match and IG yes/no agreement must stay within
  `chance_bar` (chance + 5 points, or what the best of 16 guessers reaches by luck in 99 % of draws on that
  many questions); for the other types, another question of the patient may state every key fact of at most
  2 % of questions.
- `cohort_prior`: the other patients as a prior (the same drug's IG answers, the same option's MQ roles), and the
  opposite rule; within `chance_bar`. Questions are balanced against it over the cohort (`questions.cohort`).
- `constant`: the best constant answer: an MQ letter set (within `chance_bar` of the 14 sets), the commonest
  IG polarity (<= 60 %). Always-abstain is answered by the selective score in `scoring`.
- `abs_wording`: the best one-word or bigram rule telling ABS from answerable questions: F1 <= 0.6.
- `date_in_question`: per type, the share of questions naming an ISO date: <= 25 %.
- `evidence_age`: answerable questions needing only the newest 10 sessions <= 50 %; at checkpoints >= 50,
  those needing a session 30+ back >= 30 %.
- `duplicates`: questions of a patient with the same text (and options): 0.
- `noise_lowers_bm25` (needs the exported folder: `medmemorybench audit`): BM25 Recall@5 per type, efficient
  vs mixed, through the harness's observed sessions; noise must lower it for at least 5 of the 6 types.
"""

from __future__ import annotations

import json
import re
from collections import Counter, defaultdict
from dataclasses import dataclass
from functools import lru_cache
from itertools import combinations
from pathlib import Path

from medmemorybench.normalize import normalize_text
from medmemorybench.questions.spec import paper_codes
from medmemorybench.scoring.multiple_choice import split_option

LETTER_SETS = [",".join(c) for n in (1, 2, 3) for c in combinations("ABCD", n)]
"""Every answer an MQ question admits (1-3 of 4 letters): 14."""
MARGIN = 0.05
CHANCE_DRAWS = 4000
FEATURES = ("any", "EEM", "TLA", "SUA", "MQ", "IG", "MCD", "ABS")
"""Where another question may name an option or a drug (any question, or one type's)."""
RULES = 2 * len(FEATURES)
"""Rules the question-only solver tries (each feature, either way round); it reports the best."""
MAX_KEY_FACT_LEAK = 0.02
MIN_COHORT = 10
"""Patients below which the cohort-prior probe is only reported (too few drugs recur to test it)."""
MAX_ABS_F1 = 0.6
MAX_DATE_SHARE = 0.25
MAX_NEW_ONLY, MIN_OLD_LATE = 0.50, 0.30
WINDOW, OLD_AGE, LATE_FROM = 10, 30, 50
ISO_DATE = re.compile(r"(?<!\d)\d{4}-\d{2}-\d{2}(?!\d)")
"""An ISO date in a question (no `\\b`: a Chinese character after a date is a word character)."""
SESSION_INDEX = re.compile(r"-S(\d+)$")


@dataclass(frozen=True)
class ProbeResult:
    """One probe on one slice (a type, or all)."""

    probe: str
    scope: str
    value: float
    threshold: float
    passed: bool
    detail: str = ""
    advisory: bool = False
    """Reported, but a failure does not stop `build` (a known weakness, measured until it is designed away)."""

    @property
    def blocks(self) -> bool:
        """A failure that stops `build` and fails `audit`."""
        return not self.passed and not self.advisory


def chance_bar(chance: float, n: int, rules: int) -> float:
    """The highest score the best of `rules` guessers at rate `chance` reaches over `n` questions in 99 % of
    draws (seeded, so the audit is deterministic), and at least chance + 5 points. A flat 5 points would fail a
    leak-free dataset of 40 MQ or 80 IG questions by noise alone; with the default build's 370 MQ the bar is
    about the 5 points. (Treating the rules as independent makes the bar a little lenient.)"""
    import numpy as np

    draws = np.random.default_rng(0).binomial(max(n, 1), chance, size=(CHANCE_DRAWS, rules)).max(axis=1)
    return max(chance + MARGIN, float(np.quantile(draws, 0.99)) / max(n, 1))


@lru_cache(maxsize=4)
def _polarity_words(language: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """How a gold answer says yes and no (`polarity` of the language's common.yaml), longest first."""
    from medmemorybench.questions.phrasing import load_phrasing

    words = load_phrasing(language).common("polarity")
    order = lambda items: tuple(sorted((normalize_text(w) for w in items), key=len, reverse=True))  # noqa: E731
    return order(words["yes"]), order(words["no"])


def _polarity(text: str, language: str = "en") -> str:
    """`yes`, `no` or `other`: how an IG gold answer begins (a "no" word is tried first: 不可以 holds 可以)."""
    yes, no = _polarity_words(language)
    head = normalize_text(text)
    for polarity, words in (("no", no), ("yes", yes)):
        for word in words:
            if head.startswith(word) and (language == "zh" or head[len(word):len(word) + 1] in ("", " ", ",", ".")):
                return polarity
    return "other"


def _option_name(option: str) -> str:
    return normalize_text(split_option(option)[1])


def _by_patient(questions: list[dict]) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = defaultdict(list)
    for q in questions:
        out[q["persona_id"]].append(q)
    return out


def _mentions(others: list[tuple[str, str]], name: str) -> dict[str, bool]:
    """In which types' question texts (or MQ options) a name appears; `others` are (type, normalized text)."""
    found: dict[str, bool] = {}
    for query_type, text in others:
        found[query_type] = found.get(query_type, False) or name in text
    found["any"] = any(found.values())
    return found


def _others(questions: list[dict]) -> dict[str, list[tuple[str, str]]]:
    """For each question id, the (type, normalized text and options) of the patient's other questions."""
    texts = {q["query_id"]: (q["query_type"], normalize_text(q["question"] + " " + " ".join(q.get("options") or [])))
             for q in questions}
    out = {}
    for members in _by_patient(questions).values():
        for q in members:
            out[q["query_id"]] = [texts[p["query_id"]] for p in members if p is not q]
    return out


def question_only(questions: list[dict], language: str = "en") -> list[ProbeResult]:
    results = []
    patients = _by_patient(questions)
    # MQ: choose the options a feature marks (or does not); an empty choice falls back to "A"
    context = _others(questions)
    mq = [(q, context[q["query_id"]]) for q in questions if q["query_type"] == "MQ"]
    if mq:
        best, best_rule = 0.0, ""
        for feature in FEATURES:
            for wanted in (True, False):
                hits = 0
                for q, others in mq:
                    chosen = [split_option(o)[0] for o in q["options"]
                              if _mentions(others, _option_name(o)).get(feature, False) is wanted] or ["A"]
                    hits += sorted(chosen) == sorted(q["correct_options"])
                if hits / len(mq) > best:
                    best, best_rule = hits / len(mq), f"options {'' if wanted else 'not '}named in {feature}"
        bar = max(_best_constant_mq(questions) + MARGIN, chance_bar(1 / len(LETTER_SETS), len(mq), RULES))
        results.append(ProbeResult("question_only", "MQ", best, bar, best <= bar, f"{best_rule} (n={len(mq)})"))
    ig = [(q, context[q["query_id"]]) for q in questions
          if q["query_type"] == "IG" and _polarity(q["answer"], language) != "other"]
    if ig:
        vocabulary = sorted({_option_name(o) for q in questions for o in q.get("options") or []}, key=len,
                            reverse=True)
        drugs = [_drug_of(q, vocabulary) for q, _ in ig]
        best, best_rule = 0.0, ""
        for feature in FEATURES:
            for wanted in ("yes", "no"):
                hits = sum((wanted if (d and _mentions(o, d).get(feature, False)) else _other(wanted))
                           == _polarity(q["answer"], language) for (q, o), d in zip(ig, drugs, strict=True))
                if hits / len(ig) > best:
                    best, best_rule = hits / len(ig), f"'{wanted}' when the drug is named in {feature}"
        majority = max(Counter(_polarity(q["answer"], language) for q, _ in ig).values()) / len(ig)
        bar = chance_bar(majority, len(ig), RULES)
        results.append(ProbeResult("question_only", "IG", best, bar, best <= bar, f"{best_rule} (n={len(ig)})"))
    for code in ("EEM", "TLA", "SUA", "MCD"):
        rows = [q for q in questions if q["query_type"] == code and q.get("key_facts")]
        if not rows:
            continue
        leaked = 0
        for q in rows:
            facts = [normalize_text(f) for f in q["key_facts"]]
            texts = [normalize_text(p["question"]) for p in patients[q["persona_id"]] if p is not q]
            leaked += any(all(f in text for f in facts) for text in texts)
        share = leaked / len(rows)
        results.append(ProbeResult("question_only", code, share, MAX_KEY_FACT_LEAK, share <= MAX_KEY_FACT_LEAK,
                                   "another question of the patient states every key fact"))
    return results


def _other(polarity: str) -> str:
    return "no" if polarity == "yes" else "yes"


def _drug_of(question: dict, vocabulary: list[str]) -> str | None:
    """The drug an IG question names: the longest drug name of the dataset (its MQ options) in its text."""
    text = normalize_text(question["question"])
    return next((name for name in vocabulary if name in text), None)


def _best_constant_mq(questions: list[dict]) -> float:
    rows = [q for q in questions if q["query_type"] == "MQ"]
    if not rows:
        return 0.0
    counts = Counter(",".join(sorted(q["correct_options"])) for q in rows)
    return max(counts.get(s, 0) for s in LETTER_SETS) / len(rows)


def constant(questions: list[dict], language: str = "en") -> list[ProbeResult]:
    results = []
    mq_rows = [q for q in questions if q["query_type"] == "MQ"]
    if mq_rows:
        best = _best_constant_mq(questions)
        chance = 1 / len(LETTER_SETS)
        bar = chance_bar(chance, len(mq_rows), len(LETTER_SETS))
        results.append(ProbeResult("constant", "MQ", best, bar, best <= bar,
                                   f"most common letter set (n={len(mq_rows)})"))
    ig_rows = [q for q in questions if q["query_type"] == "IG"]
    if ig_rows:
        share = max(Counter(_polarity(q["answer"], language) for q in ig_rows).values()) / len(ig_rows)
        results.append(ProbeResult("constant", "IG", share, 0.5 + 2 * MARGIN, share <= 0.5 + 2 * MARGIN,
                                   "always the commonest polarity"))
    return results


def _ngrams(text: str, language: str = "en") -> set[str]:
    """The words of a question and their bigrams (Chinese words by jieba)."""
    if language == "zh":
        from medmemorybench.segment import words as zh_words

        words = zh_words(normalize_text(text))
    else:
        words = re.findall(r"[a-z0-9']+", normalize_text(text))
    return set(words) | {f"{a} {b}" for a, b in zip(words, words[1:], strict=False)}


def abs_wording(questions: list[dict], language: str = "en") -> list[ProbeResult]:
    labels = [q["query_type"] == "ABS" for q in questions]
    if not any(labels):
        return []
    grams = [_ngrams(q["question"], language) for q in questions]
    positives = sum(labels)
    with_gram: Counter = Counter()
    with_gram_abs: Counter = Counter()
    for gram_set, is_abs in zip(grams, labels, strict=True):
        for gram in gram_set:
            with_gram[gram] += 1
            with_gram_abs[gram] += is_abs
    best, best_gram = 0.0, ""
    for gram, count in with_gram.items():
        tp = with_gram_abs[gram]
        if tp == 0:
            continue
        f1 = 2 * tp / (count + positives)
        if f1 > best:
            best, best_gram = f1, gram
    return [ProbeResult("abs_wording", "ABS", best, MAX_ABS_F1, best <= MAX_ABS_F1, f"best rule: '{best_gram}'")]


def date_in_question(questions: list[dict], language: str = "en") -> list[ProbeResult]:
    results = []
    for code in sorted({q["query_type"] for q in questions}):
        rows = [q for q in questions if q["query_type"] == code]
        share = sum(bool(ISO_DATE.search(q["question"])) for q in rows) / len(rows)
        results.append(ProbeResult("date_in_question", code, share, MAX_DATE_SHARE, share <= MAX_DATE_SHARE))
    return results


def _indices(question: dict) -> list[int]:
    return [int(m.group(1)) for s in question["evidence_session_ids"] if (m := SESSION_INDEX.search(s))]


def evidence_age(questions: list[dict], language: str = "en") -> list[ProbeResult]:
    rows = [q for q in questions if not q["abstain"] and _indices(q)]
    if not rows:
        return []
    new_only = sum(min(_indices(q)) > q["checkpoint"] - WINDOW for q in rows) / len(rows)
    late = [q for q in rows if q["checkpoint"] >= LATE_FROM]
    old = sum(min(_indices(q)) <= q["checkpoint"] - OLD_AGE for q in late) / len(late) if late else 1.0
    return [ProbeResult("evidence_age", "new-only (all)", new_only, MAX_NEW_ONLY, new_only <= MAX_NEW_ONLY),
            ProbeResult("evidence_age", f"30+ back (checkpoints >= {LATE_FROM})", old, MIN_OLD_LATE,
                        old >= MIN_OLD_LATE)]


def age_distribution(questions: list[dict]) -> dict[str, int]:
    """Answerable questions by the age of their oldest evidence (sessions back from the checkpoint)."""
    bins = Counter()
    for q in questions:
        if q["abstain"] or not _indices(q):
            continue
        age = q["checkpoint"] - min(_indices(q))
        bins["0-9" if age < 10 else "10-29" if age < 30 else "30-59" if age < 60 else "60+"] += 1
    return dict(sorted(bins.items()))


def duplicates(questions: list[dict], language: str = "en") -> list[ProbeResult]:
    seen: Counter = Counter((q["persona_id"], q["question"], tuple(sorted(q.get("options") or []))) for q in questions)
    repeated = sum(count - 1 for count in seen.values() if count > 1)
    return [ProbeResult("duplicates", "all", repeated, 0, repeated == 0)]


def cohort_prior(questions: list[dict], language: str = "en") -> list[ProbeResult]:
    """The other patients as a prior: an IG answer guessed as the majority answer of the same drug for the other
    patients, an MQ option as right when it was mostly right for them; and the opposite rules (answers forced
    equal over the cohort would make the opposite win). A question with no other patient's answer to go by gets
    the commonest answer (IG) or option "A" (MQ)."""
    results = []
    ig = [q for q in questions
          if q["query_type"] == "IG" and q.get("subject") and _polarity(q["answer"], language) != "other"]
    if ig:
        votes: dict[str, Counter] = defaultdict(Counter)
        for q in ig:
            votes[normalize_text(q["subject"])][(q["persona_id"], _polarity(q["answer"], language))] += 1
        commonest = Counter(_polarity(q["answer"], language) for q in ig).most_common(1)[0][0]
        hits = {True: 0, False: 0}
        for q in ig:
            others = Counter()
            for (persona, polarity), count in votes[normalize_text(q["subject"])].items():
                if persona != q["persona_id"]:
                    others[polarity] += count
            for follow in (True, False):
                if others["yes"] == others["no"]:
                    guess = commonest
                else:
                    leader = "yes" if others["yes"] > others["no"] else "no"
                    guess = leader if follow else _other(leader)
                hits[follow] += guess == _polarity(q["answer"], language)
        best, follow = max((hits[f] / len(ig), f) for f in (True, False))
        majority = max(Counter(_polarity(q["answer"], language) for q in ig).values()) / len(ig)
        bar = chance_bar(majority, len(ig), 2)
        # (a cohort of a few patients shares too few drugs for the prior to mean anything: reported, not enforced)
        results.append(ProbeResult("cohort_prior", "IG", best, bar, best <= bar,
                                   f"{'the' if follow else 'against the'} other patients' answer for the drug "
                                   f"(n={len(ig)})", advisory=len(_by_patient(ig)) < MIN_COHORT))
    mq = [q for q in questions if q["query_type"] == "MQ"]
    if mq:
        roles: dict[str, Counter] = defaultdict(Counter)
        for q in mq:
            for option in q["options"]:
                letter, _ = split_option(option)
                roles[_option_name(option)][(q["persona_id"], letter in q["correct_options"])] += 1
        hits = {True: 0, False: 0}
        for q in mq:
            for follow in (True, False):
                chosen = []
                for option in q["options"]:
                    others = Counter()
                    for (persona, right), count in roles[_option_name(option)].items():
                        if persona != q["persona_id"]:
                            others[right] += count
                    if others[True] != others[False] and (others[True] > others[False]) == follow:
                        chosen.append(split_option(option)[0])
                hits[follow] += sorted(chosen or ["A"]) == sorted(q["correct_options"])
        best, follow = max((hits[f] / len(mq), f) for f in (True, False))
        bar = max(_best_constant_mq(questions) + MARGIN, chance_bar(1 / len(LETTER_SETS), len(mq), 2))
        # advisory: the options of "which of these is safe / do I take / was I given" come from the patient's own
        # condition and year, whose drugs recur across the cohort's conditions; thinning them evenly leaves too few
        # (docs/dataset.md, "What is still open")
        results.append(ProbeResult("cohort_prior", "MQ", best, bar, best <= bar,
                                   f"options {'' if follow else 'not '}mostly right for the other patients "
                                   f"(n={len(mq)})", advisory=True))
    return results


PROBES = (question_only, cohort_prior, constant, abs_wording, date_in_question, evidence_age, duplicates)
MIN_TYPES_NOISE_LOWERS = 5
"""Noise must lower BM25 Recall@5 for at least this many of the six paper types."""


def retrieval_by_mode(folder: Path, work: Path, language: str = "en") -> dict[str, dict[str, float]]:
    """BM25 Recall@5 per type in each mode, through the harness (observed sessions, the real queries)."""
    from medmemorybench.harness.config import RunConfig
    from medmemorybench.harness.runner import run_evaluation

    suffix = "" if language == "en" else f"_{language}"
    run_evaluation(RunConfig(tasks=[f"medmemorybench_efficient{suffix}", f"medmemorybench_mixed{suffix}"],
                             output_path=work, memory="bm25", dataset_path=str(folder), use_cache=False))
    recall: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    with (work / "samples.jsonl").open(encoding="utf-8") as handle:
        for line in handle:
            sample = json.loads(line)
            if sample["recall_at_k"] is not None:
                recall[sample["mode"]][sample["query_type"]].append(sample["recall_at_k"])
    return {mode: {t: sum(v) / len(v) for t, v in sorted(by_type.items())} for mode, by_type in recall.items()}


def noise_lowers_retrieval(by_mode: dict[str, dict[str, float]]) -> list[ProbeResult]:
    """Noise sessions must make retrieval harder: mixed R@5 below efficient for most types (noise that is
    easier to skip than to read, undated or labelled, would raise it)."""
    efficient, mixed = by_mode.get("efficient", {}), by_mode.get("mixed", {})
    types = [t for t in paper_codes() if t in efficient and t in mixed]
    lowered = [t for t in types if mixed[t] < efficient[t]]
    detail = ", ".join(f"{t} {efficient[t]:.3f}->{mixed[t]:.3f}" for t in types)
    return [ProbeResult("noise_lowers_bm25", "six types", len(lowered), MIN_TYPES_NOISE_LOWERS,
                        len(lowered) >= MIN_TYPES_NOISE_LOWERS, detail)]


def audit_questions(questions: list[dict], language: str = "en") -> list[ProbeResult]:
    """Every probe over one language's questions (the `questions` or `questions_zh` config's rows)."""
    return [result for probe in PROBES for result in probe(questions, language)]


def audit_folder(questions: list[dict], folder: Path, retrieval: bool = True,
                 language: str = "en") -> list[ProbeResult]:
    """Every probe over one language's questions, with the BM25 one over the exported `folder` when `retrieval`
    (`medmemorybench audit`)."""
    results = audit_questions(questions, language)
    if retrieval:
        import tempfile

        with tempfile.TemporaryDirectory() as work:
            results += noise_lowers_retrieval(retrieval_by_mode(folder, Path(work), language))
    return results


def six_type_count(questions: list[dict]) -> int:
    return sum(q["query_type"] in paper_codes() for q in questions)


def format_table(results: list[ProbeResult]) -> str:
    """A Markdown table of probe results (for the terminal, the card and docs)."""
    lines = ["| probe | scope | value | threshold | result | note |", "|---|---|---|---|---|---|"]
    for r in results:
        verdict = "pass" if r.passed else "FAIL (advisory)" if r.advisory else "FAIL"
        lines.append(f"| {r.probe} | {r.scope} | {r.value:.3f} | {r.threshold:.3f} | {verdict} | {r.detail} |")
    return "\n".join(lines)
