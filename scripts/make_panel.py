"""How the labelled answer panel (panels/answers.jsonl) is made: never by the scorer it tests.

1. `tasks`: sample questions of a build, stratified by type and language (seeded), and write one task file per
   writer: each question with its gold, its gold facts, the evidence sessions' text and the patient's year as a
   timeline (for near misses drawn from the patient's own record).
2. Writers (careful readers playing a capable model) answer each question twice: a correct answer in their own
   words, and a near-miss wrong answer from the record (the previous dose, a neighbouring date, a relative's value,
   a wrong reason, one letter off, an invented value), as JSON lines {query_id, language, correct, near_miss,
   near_miss_kind}.
3. `review`: one review file per reviewer (a chunk written by another writer): each question with its two answers
   under opaque ids in a seeded order, so the reviewer cannot tell which one was meant to be right.
4. Reviewers (physician-minded readers who did not write them) label every answer `correct` or `wrong` against the
   gold and the record, as JSON lines {answer_id, label, note}.
5. `assemble`: join questions, answers and labels into the panel file (the labels are what the rates are measured
   against; the writer's intent is kept as `intent`).
6. `refresh` (when the generator changes the structured gold but not the questions): replace each question row by
   a fresh build's where the question and its gold answer are word for word the same.

Run: .venv/bin/python scripts/make_panel.py tasks --build out/medmemorybench --per_type en=35 zh=15 --chunks 7 \
         --output panel_work
     .venv/bin/python scripts/make_panel.py review --work panel_work
     .venv/bin/python scripts/make_panel.py assemble --work panel_work --output panels/answers.jsonl
     .venv/bin/python scripts/make_panel.py refresh --panel panels/answers.jsonl --build <seed-5 build>/medmemorybench
"""

from __future__ import annotations

import argparse
import glob
import json
import random
import sys
from collections import defaultdict
from pathlib import Path

import pandas as pd
from rich.console import Console

from medmemorybench.dataset.schema import config_name
from medmemorybench.errors import InputError
from medmemorybench.knowledge import default_knowledge
from medmemorybench.scoring.panel import load_panel, with_fresh_rows, write_panel
from medmemorybench.simulate.models import CareYear
from medmemorybench.simulate.show import render_timeline


def _rows(build: Path, config: str) -> list[dict]:
    frames = [pd.read_parquet(p) for p in sorted(glob.glob(str(build / config / "*.parquet")))]
    return json.loads(pd.concat(frames).to_json(orient="records", force_ascii=False)) if frames else []


def _sessions(build: Path, language: str) -> dict[str, str]:
    """Regular session id -> its text (date and turns)."""
    out = {}
    for row in _rows(build, config_name("efficient", language)):
        for session in row["sessions"]:
            turns = "\n".join(f"{t['role']}: {t['text']}" for t in session["turns"])
            out[session["session_id"]] = f"[{session['session_id']} · {session['date']}]\n{turns}"
    return out


def tasks(args: argparse.Namespace) -> None:
    build, work = Path(args.build), Path(args.output)
    per_type = dict(item.split("=") for item in args.per_type)
    rng = random.Random(args.seed)
    chosen: list[tuple[str, dict]] = []
    taken: set[str] = set()
    for language, count in per_type.items():
        questions = _rows(build, config_name("questions", language))
        by_type: dict[str, list[dict]] = defaultdict(list)
        for q in sorted(questions, key=lambda q: q["query_id"]):
            if q["query_id"] not in taken:
                by_type[q["query_type"]].append(q)
        for query_type, group in sorted(by_type.items()):
            if args.types and query_type not in args.types:
                continue
            for q in rng.sample(group, min(int(count), len(group))):
                taken.add(q["query_id"])
                chosen.append((language, q))
    rng.shuffle(chosen)
    kb = default_knowledge()
    (work / "records").mkdir(parents=True, exist_ok=True)
    for row in _rows(build, "personas"):
        console = Console(record=True, width=140, file=open("/dev/null", "w"))  # noqa: SIM115
        render_timeline(kb, CareYear.model_validate_json(row["care_year_json"]), console)
        (work / "records" / f"{row['persona_id']}.txt").write_text(console.export_text(), encoding="utf-8")
    texts = {lang: _sessions(build, lang) for lang in per_type}
    chunks: list[list[dict]] = [[] for _ in range(args.chunks)]
    for i, (language, q) in enumerate(chosen):
        evidence = [texts[language][s] for s in q["evidence_session_ids"] if s in texts[language]]
        chunks[i % args.chunks].append({"language": language, "record": f"records/{q['persona_id']}.txt",
                                        "evidence_sessions": evidence, "question": q})
    for number, chunk in enumerate(chunks, start=1):
        (work / f"task_{number}.json").write_text(json.dumps(chunk, ensure_ascii=False, indent=1), encoding="utf-8")
    print(f"{len(chosen)} questions in {args.chunks} task files under {work}")


def _lines(pattern: str) -> list[dict]:
    out = []
    for path in sorted(glob.glob(pattern)):
        for number, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), start=1):
            if line.strip():
                try:
                    out.append(json.loads(line))
                except json.JSONDecodeError:
                    sys.exit(f"{path}:{number}: not JSON")
    return out


def review(args: argparse.Namespace) -> None:
    """Review files: reviewer n reads the answers written for task n + 1 (never their own), each question's two
    answers under opaque ids in a seeded order; `review_key.json` maps the ids back."""
    work = Path(args.work)
    rng = random.Random(args.seed)
    tasks = sorted(work.glob("task_*.json"), key=lambda p: int(p.stem.split("_")[1]))
    answers = {(a["query_id"], a["language"]): a for a in _lines(str(work / "answers_*.jsonl"))}
    key: dict[str, dict] = {}
    for number in range(1, len(tasks) + 1):
        chunk = json.loads(tasks[number % len(tasks)].read_text(encoding="utf-8"))
        out = []
        for item in chunk:
            q = item["question"]
            written = answers.get((q["query_id"], item["language"]))
            if written is None:
                sys.exit(f"no answers for {q['query_id']} ({item['language']})")
            pair = [("correct", written["correct"]), ("near_miss", written["near_miss"])]
            rng.shuffle(pair)
            shown = []
            for which, text in pair:
                answer_id = f"{q['query_id']}-{item['language']}-{rng.randrange(16 ** 6):06x}"
                key[answer_id] = {"query_id": q["query_id"], "language": item["language"], "which": which}
                shown.append({"answer_id": answer_id, "answer": text})
            out.append({**item, "answers": shown})
        (work / f"review_{number}.json").write_text(json.dumps(out, ensure_ascii=False, indent=1), encoding="utf-8")
    (work / "review_key.json").write_text(json.dumps(key, indent=1), encoding="utf-8")
    print(f"{len(key)} answers in {len(tasks)} review files under {work}")


def assemble(args: argparse.Namespace) -> None:
    work = Path(args.work)
    questions = {(item["question"]["query_id"], item["language"]): item["question"]
                 for path in sorted(work.glob("task_*.json")) for item in json.loads(path.read_text(encoding="utf-8"))}
    key = json.loads((work / "review_key.json").read_text(encoding="utf-8"))
    labels = {}
    for row in _lines(str(work / "labels_*.jsonl")):
        if row["answer_id"] not in key or row["label"] not in ("correct", "wrong"):
            sys.exit(f"label {row} names no answer or is not correct/wrong")
        meta = key[row["answer_id"]]
        labels[(meta["query_id"], meta["language"], meta["which"])] = row
    out, missing = [], []
    for answer in _lines(str(work / "answers_*.jsonl")):
        key_ = (answer["query_id"], answer["language"])
        if key_ not in questions:
            sys.exit(f"answers name {key_}, which no task holds")
        for which in ("correct", "near_miss"):
            label = labels.get((*key_, which))
            if label is None:
                missing.append(f"{key_} {which}")
                continue
            out.append({"id": f"{key_[0]}-{key_[1]}-{which}", "language": key_[1], "question": questions[key_],
                        "answer": answer[which], "intent": which,
                        "near_miss": answer.get("near_miss_kind", "") if which == "near_miss" else "",
                        "label": label["label"], "note": label.get("note", "")})
    if missing:
        sys.exit(f"{len(missing)} answers have no label, e.g. {missing[:3]}")
    Path(args.output).parent.mkdir(parents=True, exist_ok=True)
    Path(args.output).write_text("".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in out),
                                 encoding="utf-8")
    overruled = sum((r["intent"] == "correct") != (r["label"] == "correct") for r in out)
    print(f"{len(out)} labelled answers -> {args.output} ({overruled} where the reviewer overruled the writer)")


def refresh(args: argparse.Namespace) -> None:
    """The panel's question rows replaced by a fresh build's where the question and gold are unchanged (its labels
    hold for them), written back in place: the scorer's tests then read today's rows."""
    path = Path(args.panel)
    try:
        panel, replaced = with_fresh_rows(load_panel(path), Path(args.build))
    except InputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(2)
    write_panel(panel, path)
    print(f"{replaced} of {len(panel)} question rows of {path} replaced by {args.build}'s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    make = sub.add_parser("tasks")
    make.add_argument("--build", required=True, help="a build's dataset folder (<out>/medmemorybench)")
    make.add_argument("--per_type", nargs="+", default=["en=35", "zh=15"], help="questions per type, by language")
    make.add_argument("--types", nargs="+", default=None,
                      help="only these question types (default: every type; a panel for the one type off its bar)")
    make.add_argument("--chunks", type=int, default=7)
    make.add_argument("--seed", type=int, default=26)
    make.add_argument("--output", required=True)
    shuffle = sub.add_parser("review")
    shuffle.add_argument("--work", required=True)
    shuffle.add_argument("--seed", type=int, default=27)
    join = sub.add_parser("assemble")
    join.add_argument("--work", required=True)
    join.add_argument("--output", required=True)
    fresh = sub.add_parser("refresh")
    fresh.add_argument("--panel", required=True)
    fresh.add_argument("--build", required=True, help="a fresh build of the panel's seed (<out>/medmemorybench)")
    args = parser.parse_args()
    {"tasks": tasks, "review": review, "assemble": assemble, "refresh": refresh}[args.command](args)


if __name__ == "__main__":
    main()
