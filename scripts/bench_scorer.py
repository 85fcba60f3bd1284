"""Benchmark of the scorers on the labelled answer panel: false rejects, false accepts and Cohen's kappa against the
physician-minded labels, per question type and language, for the rule scorer and, when a judge model is given, for
the LLM judge (on the types it decides: TLA, SUA, IG, MCD).

Run: .venv/bin/python scripts/bench_scorer.py [--panel panels/answers.jsonl] [--show-misses]
     .venv/bin/python scripts/bench_scorer.py --judge hf [--judge_args ...]   # the judge too (slow on CPU)
Prints a table per scorer and writes --output (JSON) when given. The bars (SPEC §4): false rejects <= 3 % and false
accepts <= 2 % on every type in both languages, kappa >= 0.9.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

from medmemorybench.errors import InputError
from medmemorybench.questions.spec import judged_codes, type_codes
from medmemorybench.scoring import score_answer, score_answers
from medmemorybench.scoring.panel import Agreement, PanelAnswer, agreement, by_slice, load_panel, with_fresh_rows

DEFAULT_PANEL = Path(__file__).resolve().parents[1] / "panels" / "answers.jsonl"
BARS = {"false_reject": 0.03, "false_accept": 0.02, "kappa": 0.9}


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f} %"


def table(title: str, slices: dict[str, Agreement], overall: Agreement) -> str:
    lines = [f"### {title}", "", "| slice | n | labelled correct / wrong | false rejects | false accepts | kappa |",
             "|---|---|---|---|---|---|"]
    for name, a in [*slices.items(), ("all", overall)]:
        kappa = "-" if a.kappa is None else f"{a.kappa:.3f}"
        lines.append(f"| {name} | {a.n} | {a.n_correct} / {a.n_wrong} | {a.false_rejects} ({_pct(a.false_reject_rate)})"
                     f" | {a.false_accepts} ({_pct(a.false_accept_rate)}) | {kappa} |")
    return "\n".join(lines)


def failures(slices: dict[str, Agreement], overall: Agreement) -> list[str]:
    """The slices past a bar."""
    out = []
    for name, a in slices.items():
        if a.false_reject_rate is not None and a.false_reject_rate > BARS["false_reject"]:
            out.append(f"{name}: false rejects {_pct(a.false_reject_rate)}")
        if a.false_accept_rate is not None and a.false_accept_rate > BARS["false_accept"]:
            out.append(f"{name}: false accepts {_pct(a.false_accept_rate)}")
    if overall.kappa is not None and overall.kappa < BARS["kappa"]:
        out.append(f"kappa {overall.kappa:.3f}")
    return out


def rule_verdicts(panel: list[PanelAnswer]) -> list[tuple[PanelAnswer, bool, str]]:
    out = []
    for answer in panel:
        correct = score_answer(answer.question, answer.answer)["correct"]
        out.append((answer, correct.value == 1.0, correct.explanation))
    return out


def judge_verdicts(panel: list[PanelAnswer], model: str, model_args: str) -> list[tuple[PanelAnswer, bool, str]]:
    from medmemorybench.models import load_backbone

    backbone = load_backbone(model, model_args, "--judge")
    judged = [a for a in panel if a.query_type in judged_codes()]
    out = []
    start, last = time.monotonic(), time.monotonic()
    for i in range(0, len(judged), 8):
        batch = judged[i:i + 8]
        scores = score_answers([a.question for a in batch], [a.answer for a in batch], backbone)
        for answer, score in zip(batch, scores, strict=True):
            verdict = score.get("llm_judge")
            if verdict is not None and verdict.status == "scored":
                out.append((answer, verdict.value == 1.0, verdict.explanation))
        if time.monotonic() - last >= 10 or i + 8 >= len(judged):
            print(f"judge: {min(i + 8, len(judged))}/{len(judged)} answers, {time.monotonic() - start:.0f} s",
                  file=sys.stderr, flush=True)
            last = time.monotonic()
    return out


def report(name: str, verdicts: list[tuple[PanelAnswer, bool, str]], show_misses: bool) -> dict:
    pairs = [(a, v) for a, v, _ in verdicts]
    slices = by_slice(pairs, lambda a: f"{a.query_type} {a.language}")
    overall = agreement(pairs)
    print(table(name, slices, overall))
    print()
    for kind, group in (("per type", by_slice(pairs, lambda a: a.query_type)),
                        ("per language", by_slice(pairs, lambda a: a.language))):
        print(f"{kind}: " + "; ".join(
            f"{k} FR {_pct(a.false_reject_rate)} FA {_pct(a.false_accept_rate)} "
            f"kappa {'-' if a.kappa is None else f'{a.kappa:.3f}'}" for k, a in group.items()))
    missed = failures(slices, overall)
    print(f"bars (FR <= 3 %, FA <= 2 % per type and language, kappa >= 0.9): "
          f"{'all met' if not missed else 'NOT met: ' + '; '.join(missed)}")
    if show_misses:
        for answer, verdict, why in verdicts:
            if verdict != (answer.label == "correct"):
                kind = "false reject" if verdict is False else "false accept"
                print(f"- {kind} {answer.id} [{answer.query_type} {answer.language}] "
                      f"gold: {answer.question['answer']!r}"
                      f"\n  answer: {answer.answer!r}\n  scorer: {why}")
    print()
    return {"slices": {k: vars(v) for k, v in slices.items()}, "overall": vars(overall), "missed_bars": missed}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--panel", type=Path, default=DEFAULT_PANEL)
    parser.add_argument("--judge", help="a backbone to judge with (hf, openai, vllm ...)")
    parser.add_argument("--judge_args", "--judge-args", default="")
    parser.add_argument("--show-misses", "--show_misses", action="store_true")
    parser.add_argument("--output", type=Path, help="write the figures as JSON here")
    parser.add_argument("--rows", type=Path, help="a fresh build of the panel's seed (<out>/medmemorybench): score "
                                                  "with its question rows where the question and gold are unchanged")
    args = parser.parse_args()
    try:
        panel = load_panel(args.panel)
        if args.rows:
            panel, replaced = with_fresh_rows(panel, args.rows)
            print(f"question rows of {args.rows}: {replaced} of {len(panel)} answers rescored with today's rows")
    except InputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    counts = {t: sum(a.query_type == t for a in panel) for t in type_codes()}
    print(f"panel {args.panel}: {len(panel)} answers of {len({a.question['query_id'] for a in panel})} questions; "
          + ", ".join(f"{t} {n}" for t, n in counts.items()) + f"; machine: {os.cpu_count()} cores")
    start = time.perf_counter()
    figures = {"rule": report("rule scorer", rule_verdicts(panel), args.show_misses)}
    print(f"rule scorer: {len(panel)} answers in {time.perf_counter() - start:.1f} s")
    if args.judge:
        figures["judge"] = report(f"LLM judge ({args.judge})", judge_verdicts(panel, args.judge, args.judge_args),
                                  args.show_misses)
    if args.output:
        args.output.write_text(json.dumps(figures, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
