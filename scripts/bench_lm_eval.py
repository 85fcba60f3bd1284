"""lm-evaluation-harness against `medmemorybench run` on the same slice, with the same model: how many prompts,
answers and per-type numbers agree, and how long each took.

lm-eval runs the shipped tasks (`--include_path tasks`, its `hf` model on the embedded SmolLM2-135M, float32,
`--apply_chat_template`, `--metadata` for the slice); our runner runs them with `--model hf` at `batch_size=1`
(lm-eval's `hf` runs one request at a time). Writes a JSON report and prints it.

    .venv/bin/python scripts/bench_lm_eval.py --dataset_path out/medmemorybench --work /tmp/bench-lm-eval \
        --tasks medmemorybench_efficient,medmemorybench_mixed --patients 1 --checkpoints 10,50
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from medmemorybench.harness.prompting import prompt_hash  # noqa: E402
from medmemorybench.harness.results import read_samples  # noqa: E402
from medmemorybench.models.base import ChatRequest  # noqa: E402
from medmemorybench.models.embedded import embedded_model_path  # noqa: E402

METRICS = ("correct", "selective", "recall_at_k", "mrr", "token_f1", "rouge_l", "hallucinated", "trap_safe",
           "trap_abstained")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset_path", type=Path, required=True)
    parser.add_argument("--work", type=Path, required=True)
    parser.add_argument("--tasks", default="medmemorybench_efficient")
    parser.add_argument("--patients", type=int, default=1)
    parser.add_argument("--checkpoints", default="10")
    parser.add_argument("--compare_only", action="store_true",
                        help="Compare the two runs already in --work (their times are then not known).")
    args = parser.parse_args()
    checkpoints = [int(c) for c in args.checkpoints.split(",")]
    if args.compare_only:
        report = compare(args.work)
        print(json.dumps(report, indent=1))
        return
    shutil.rmtree(args.work, ignore_errors=True)
    args.work.mkdir(parents=True)
    model = embedded_model_path()
    env = {**os.environ, "MEDMEMORYBENCH_DATA": str(args.dataset_path.resolve()), "HF_HUB_OFFLINE": "1",
           "TRANSFORMERS_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}
    load_before = os.getloadavg()[0]

    started = time.monotonic()
    subprocess.run([sys.executable, "-m", "lm_eval", "run", "--tasks", args.tasks, "--include_path",
                    str(ROOT / "tasks"), "--model", "hf", "--model_args", f"pretrained={model},dtype=float32",
                    "--apply_chat_template", "--metadata",
                    json.dumps({"patients": args.patients, "checkpoints": checkpoints}),
                    "--output_path", str(args.work / "lm_eval"), "--log_samples"],
                   env=env, check=True, cwd=args.work, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    lm_eval_s = time.monotonic() - started

    started = time.monotonic()
    subprocess.run([str(ROOT / ".venv" / "bin" / "medmemorybench"), "run", "--tasks", args.tasks, "--memory", "bm25",
                    "--model", "hf", "--model_args", f"pretrained={model},batch_size=1", "--limit",
                    str(args.patients), "--checkpoints", args.checkpoints, "--dataset_path", str(args.dataset_path),
                    "--output_path", str(args.work / "ours"), "--no_cache"],
                   env=env, check=True, cwd=args.work, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    ours_s = time.monotonic() - started
    report = {"tasks": args.tasks, "patients": args.patients, "checkpoints": checkpoints, **compare(args.work),
              "lm_eval_s": round(lm_eval_s, 1), "ours_s": round(ours_s, 1), "load_before": round(load_before, 2),
              "load_after": round(os.getloadavg()[0], 2), "cpus": os.cpu_count()}
    (args.work / "bench_lm_eval.json").write_text(json.dumps(report, indent=1) + "\n")
    print(json.dumps(report, indent=1))


def compare(work: Path) -> dict:
    """Prompts, answers and numbers of the lm-eval run against ours, both in `work`."""
    (results_file,) = (work / "lm_eval").rglob("results_*.json")
    results = json.loads(results_file.read_text())["results"]
    summary = json.loads((work / "ours" / "summary.json").read_text())
    ours = {(s["task"], s["query_id"]): s for s in read_samples(work / "ours" / "samples.jsonl")}
    same_prompt = same_answer = total = 0
    for path in (work / "lm_eval").rglob("samples_*.jsonl"):
        task = path.name.removeprefix("samples_").rsplit("_", 1)[0]
        if task not in summary["tasks"]:
            continue  # (a task our run did not get to)
        for line in path.read_text().splitlines():
            sample = json.loads(line)
            mine = ours[(task, sample["doc"]["query_id"])]
            messages = [{"role": "system", "content": sample["doc"]["system"]},
                        {"role": "user", "content": sample["doc"]["prompt"]}]
            same_prompt += prompt_hash(ChatRequest(messages=messages)) == mine["prompt_hash"]
            same_answer += sample["filtered_resps"][0].strip() == mine["output"]
            total += 1
    compared = agreed = 0
    largest = 0.0
    for task, data in summary["tasks"].items():
        for metric in METRICS:
            table = data["metrics"].get(metric)
            if not table:
                continue
            pairs = [(results[task][f"{metric},none"], table["overall"][0]["mean"])]
            if metric in ("correct", "recall_at_k"):
                pairs += [(results[task][f"{metric}_{g['query_type']},none"], g["mean"]) for g in table["by_type"]]
            for theirs, mine in pairs:
                compared += 1
                agreed += abs(theirs - mine) < 1e-9
                largest = max(largest, abs(theirs - mine))
    return {"questions": total, "same_prompt": same_prompt, "same_answer": same_answer, "numbers_compared": compared,
            "numbers_equal": agreed, "largest_difference": largest}


if __name__ == "__main__":
    main()
