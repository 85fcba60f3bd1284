"""The benchmark's ceiling: a capable reader over the oracle memory's prompts (the question's evidence sessions plus
four seeded distractors, in date order: `--memory oracle`), scored by the rule scorers.

1. `prompts`: a stratified sample of questions of a build (per type and language, seeded) with the exact prompts
   the harness would send (task medmemorybench_efficient[_zh], memory oracle), one JSON file per reader.
2. Readers (careful readers answering as a capable model would, or an API model) answer every prompt:
   JSON lines {query_id, language, answer}.
3. `score`: every answer scored as a run scores it (echo check included); accuracy per type and language, the mean
   over types, and every miss with the scorer's reason, for the closing note's miss-by-miss causes.

Run: .venv/bin/python scripts/bench_ceiling.py prompts --dataset_path out --per_type en=15 zh=5 --readers 4 \
         --output ceiling_work
     .venv/bin/python scripts/bench_ceiling.py score --work ceiling_work
"""

from __future__ import annotations

import argparse
import glob
import json
import random
import sys
from collections import defaultdict
from pathlib import Path

from medmemorybench.harness.config import RunConfig
from medmemorybench.harness.stream import Models, TaskStream, new_memory
from medmemorybench.harness.tasks import resolve_tasks
from medmemorybench.questions.spec import type_codes
from medmemorybench.scoring import is_echo, score_answer

TASKS = {"en": "medmemorybench_efficient", "zh": "medmemorybench_efficient_zh"}


def _prepared(dataset: str, language: str, wanted: set[str], work: Path) -> dict[str, dict]:
    """query id -> {question, messages} for the wanted questions, streamed as a run streams them."""
    from medmemorybench.dataset.load import find_local
    from medmemorybench.harness.runner import dataset_splits

    config = RunConfig(tasks=[TASKS[language]], output_path=work / f"run_{language}", memory="oracle",
                       dataset_path=dataset)
    task = resolve_tasks(config.tasks)[0]
    folder = find_local(dataset)
    if folder is None:
        sys.exit(f"--dataset_path: no build at {dataset}")
    splits = dataset_splits(folder, [task], None)[task.task]
    stream = TaskStream(task, folder, splits, config,
                        lambda t, pid, cost: new_memory(config, t, pid, cost, Models(), "shared"), prompts=True)
    out = {}
    for point in stream.checkpoints():
        for asked in point.asked:
            if asked.question["query_id"] in wanted and asked.request is not None:
                out[asked.question["query_id"]] = {"question": asked.question, "messages": asked.request.messages,
                                                   "records": [i.text for i in asked.retrieval.items]}
    return out


def prompts(args: argparse.Namespace) -> None:
    from medmemorybench.dataset.load import find_local, read_split

    work = Path(args.output)
    work.mkdir(parents=True, exist_ok=True)
    rng = random.Random(args.seed)
    folder = find_local(args.dataset_path)
    if folder is None:
        sys.exit(f"--dataset_path: no build at {args.dataset_path}")
    items: list[dict] = []
    taken: set[str] = set()
    for spec in args.per_type:
        language, count = spec.split("=")
        config = "questions" if language == "en" else f"questions_{language}"
        rows = [q for path in sorted((folder / config).glob("*.parquet")) for q in read_split(path, config)]
        by_type: dict[str, list[dict]] = defaultdict(list)
        for q in sorted(rows, key=lambda q: q["query_id"]):
            if q["query_id"] not in taken:
                by_type[q["query_type"]].append(q)
        wanted = set()
        for code in type_codes():
            for q in rng.sample(by_type[code], min(int(count), len(by_type[code]))):
                wanted.add(q["query_id"])
                taken.add(q["query_id"])
        prepared = _prepared(args.dataset_path, language, wanted, work)
        items += [{"language": language, "query_id": qid, **prepared[qid]} for qid in sorted(prepared)]
    rng.shuffle(items)
    for reader in range(args.readers):
        mine = items[reader::args.readers]
        (work / f"prompts_{reader + 1}.json").write_text(json.dumps(
            [{"query_id": i["query_id"], "language": i["language"], "messages": i["messages"]} for i in mine],
            ensure_ascii=False, indent=1), encoding="utf-8")
    (work / "questions.json").write_text(json.dumps(items, ensure_ascii=False), encoding="utf-8")
    print(f"{len(items)} prompts for {args.readers} readers under {work}")


def score(args: argparse.Namespace) -> None:
    work = Path(args.work)
    items = {(i["query_id"], i["language"]): i for i in json.loads((work / "questions.json").read_text("utf-8"))}
    answers = [json.loads(line) for path in sorted(glob.glob(str(work / "answers_*.jsonl")))
               for line in Path(path).read_text(encoding="utf-8").splitlines() if line.strip()]
    results: dict[tuple[str, str], list[bool]] = defaultdict(list)
    misses = []
    for answer in answers:
        item = items[(answer["query_id"], answer["language"])]
        echo = is_echo(answer["answer"], [m["content"] for m in item["messages"]], item["records"])
        correct = score_answer(item["question"], answer["answer"], echo=echo)["correct"]
        results[(item["question"]["query_type"], answer["language"])].append(correct.value == 1.0)
        if correct.value != 1.0:
            misses.append((item["question"], answer["answer"], correct.explanation))
    print("| type | " + " | ".join(sorted({lang for _, lang in results})) + " | both |")
    print("|---|" + "---|" * (len({lang for _, lang in results}) + 1))
    means = []
    for code in type_codes():
        cells = []
        for lang in sorted({lang for _, lang in results}):
            hits = results.get((code, lang), [])
            cells.append(f"{sum(hits)}/{len(hits)}" if hits else "-")
        both = [h for (c, _), hits in results.items() if c == code for h in hits]
        if both:
            means.append(sum(both) / len(both))
        print(f"| {code} | " + " | ".join(cells) + f" | {100 * sum(both) / max(1, len(both)):.1f} % |")
    print(f"mean over types: {100 * sum(means) / max(1, len(means)):.1f} % ({len(answers)} answers)")
    for question, answer, why in misses:
        print(f"- MISS {question['query_id']} [{question['query_type']}] {question['question']}\n"
              f"  gold: {question['answer']}\n  answer: {answer}\n  scorer: {why}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    make = sub.add_parser("prompts")
    make.add_argument("--dataset_path", required=True)
    make.add_argument("--per_type", nargs="+", default=["en=15", "zh=5"])
    make.add_argument("--readers", type=int, default=4)
    make.add_argument("--seed", type=int, default=95)
    make.add_argument("--output", required=True)
    grade = sub.add_parser("score")
    grade.add_argument("--work", required=True)
    args = parser.parse_args()
    {"prompts": prompts, "score": score}[args.command](args)


if __name__ == "__main__":
    main()
