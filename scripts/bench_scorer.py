"""Benchmark of the scorers on the labelled answer panel: false rejects, false accepts and Cohen's kappa against the
physician-minded labels, per question type and language, for the rule scorer and, when a judge model is given, for
the LLM judge (on the types it decides: TLA, SUA, IG, MCD).

Run: .venv/bin/python scripts/bench_scorer.py [--panel panels/answers.jsonl] [--show-misses]
     .venv/bin/python scripts/bench_scorer.py --judge hf [--judge_args ...]   # the judge too (slow on CPU)
     .venv/bin/python scripts/bench_scorer.py --write_judge_prompts P.jsonl   # the judge's prompts, to answer
     .venv/bin/python scripts/bench_scorer.py --judge_replies R.jsonl        # score with those written replies
A capable judge that cannot run here (a person, or a model elsewhere) answers the prompts of --write_judge_prompts
(one JSON object per line: key, query_id, content; no answer id, which may tell the writer's intent): its replies,
one {"key", "reply"} per line, are read by --judge_replies exactly as a judge model's completions (the same
requests, the same verdict parser).
Prints a table per scorer and writes --output (JSON) when given. The bars (SPEC §4): false rejects <= 3 % and false
accepts <= 2 % on every type in both languages, kappa >= 0.9.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from medmemorybench.errors import InputError
from medmemorybench.files import loads_json
from medmemorybench.models.base import Backbone, ChatRequest, Completion
from medmemorybench.questions.spec import judged_codes, type_codes
from medmemorybench.scoring import load_judge_prompts, score_answer, score_answers
from medmemorybench.scoring.llm_judge import build_judge_request
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


def request_key(request: ChatRequest) -> str:
    """A judge request's key: the SHA-256 of its messages (the rendered prompt)."""
    return hashlib.sha256(json.dumps(request.messages, ensure_ascii=False).encode("utf-8")).hexdigest()


def write_judge_prompts(panel: list[PanelAnswer], path: Path) -> int:
    """The judge's request for every judged answer of the panel, one JSON object per line; how many."""
    prompts = load_judge_prompts()
    lines = []
    for answer in panel:
        if answer.query_type in judged_codes():
            request = build_judge_request(answer.question, answer.answer,
                                          prompts["mcd" if answer.query_type == "MCD" else "rubric"])
            # (no answer id: a panel's ids may tell the writer's intent, and the judge must not see it)
            lines.append(json.dumps({"key": request_key(request), "query_id": answer.question["query_id"],
                                     "content": request.messages[-1]["content"]}, ensure_ascii=False))
    path.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
    return len(lines)


class WrittenReplies(Backbone):
    """A judge whose replies were written beforehand (`--judge_replies`): each request is answered with the reply
    stored under its key, or an error naming the missing key."""

    name = "written-replies"

    def __init__(self, path: Path) -> None:
        self.path = path
        self.replies: dict[str, str] = {}
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError) as exc:
            raise InputError(f"{path}: cannot read the replies ({exc})") from None
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                row = loads_json(line)
            except ValueError:
                raise InputError(f"{path}:{number}: not JSON") from None
            if not isinstance(row, dict) or not isinstance(row.get("key"), str) \
                    or not isinstance(row.get("reply"), str):
                raise InputError(f"{path}:{number}: expected {{\"key\": str, \"reply\": str}}")
            self.replies[row["key"]] = row["reply"]

    @property
    def model_id(self) -> str:
        return str(self.path)

    def generate(self, requests: Sequence[ChatRequest]) -> list[Completion]:
        out = []
        for request in requests:
            key = request_key(request)
            reply = self.replies.get(key)
            out.append(Completion(text=reply) if reply is not None
                       else Completion(error=f"no written reply for key {key[:12]}"))
        return out


def judge_verdicts(panel: list[PanelAnswer], backbone: Backbone) -> list[tuple[PanelAnswer, bool, str]]:
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
            elif verdict is not None:
                print(f"judge: {answer.id}: no verdict ({verdict.explanation})", file=sys.stderr)
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
    parser.add_argument("--write_judge_prompts", type=Path,
                        help="write the judge's prompt for every judged answer here (JSONL) and stop")
    parser.add_argument("--judge_replies", type=Path,
                        help="score with a judge's replies written beforehand (JSONL of key and reply)")
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
        if args.judge and args.judge_replies:
            raise InputError("--judge and --judge_replies: give one judge")
        written = WrittenReplies(args.judge_replies) if args.judge_replies else None
    except InputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.write_judge_prompts:
        count = write_judge_prompts(panel, args.write_judge_prompts)
        print(f"{count} judge prompts: {args.write_judge_prompts}")
        return 0
    counts = {t: sum(a.query_type == t for a in panel) for t in type_codes()}
    print(f"panel {args.panel}: {len(panel)} answers of {len({a.question['query_id'] for a in panel})} questions; "
          + ", ".join(f"{t} {n}" for t, n in counts.items()) + f"; machine: {os.cpu_count()} cores")
    start = time.perf_counter()
    figures = {"rule": report("rule scorer", rule_verdicts(panel), args.show_misses)}
    print(f"rule scorer: {len(panel)} answers in {time.perf_counter() - start:.1f} s")
    if args.judge:
        from medmemorybench.models import load_backbone

        backbone = load_backbone(args.judge, args.judge_args, "--judge")
        figures["judge"] = report(f"LLM judge ({args.judge})", judge_verdicts(panel, backbone), args.show_misses)
    if written is not None:
        figures["judge"] = report(f"judge (replies written in {args.judge_replies})", judge_verdicts(panel, written),
                                  args.show_misses)
    if args.output:
        args.output.write_text(json.dumps(figures, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
