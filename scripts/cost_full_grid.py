"""The paper's full grid costed on paper: calls and tokens from `sweep --plan` (each memory's measured per-session
cost, `medmemorybench/sweep/costs.yaml`), then hours on 8 GPUs from a roofline of an 8B model on an H100 and on 8
CPU nodes like the reference machine from the measured seconds.

The GPU hours are bounds, not measurements (no GPU was lent): prefill at `MFU` of the H100's dense bf16 peak, decode
memory-bound (weights plus the batch's KV cache read once per step). Memories build each patient's memory session
after session, so a grid also has a critical path: the longest patient stream's calls one after another, each
decoding at one sequence's share of a batched step.

    .venv/bin/python scripts/cost_full_grid.py --dataset out/medmemorybench
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from medmemorybench.harness.config import RunConfig  # noqa: E402
from medmemorybench.sweep.grid import make_cells  # noqa: E402
from medmemorybench.sweep.plan import measured_costs, plan_cells  # noqa: E402
from scripts.run_slice import PAPER_SYSTEMS  # noqa: E402

# An 8B model of the Llama-3 shape in bf16 on one H100 SXM (public figures).
PARAMS = 8.03e9
WEIGHT_BYTES = 2 * PARAMS
KV_BYTES_PER_TOKEN = 2 * 32 * 8 * 128 * 2  # K and V, 32 layers, 8 KV heads of 128, bf16: 128 KiB
PEAK_FLOPS = 989e12
HBM_BYTES_PER_S = 3.35e12
MFU = 0.5
BATCH = 64
CONTEXT = 2_000
"""Decode batch and mean context per sequence assumed for the decode bound."""


def gpu_rates() -> tuple[float, float, float]:
    """(prefill tokens/s, decode tokens/s, one sequence's decode tokens/s) of one GPU, from the roofline."""
    prefill = MFU * PEAK_FLOPS / (2 * PARAMS)
    step_s = (WEIGHT_BYTES + BATCH * CONTEXT * KV_BYTES_PER_TOKEN) / HBM_BYTES_PER_S
    return prefill, BATCH / step_s, 1 / step_s


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", required=True)
    parser.add_argument("--gpus", type=int, default=8)
    parser.add_argument("--nodes", type=int, default=8)
    args = parser.parse_args()
    base = RunConfig(tasks=[], output_path=Path("grid"), dataset_path=args.dataset, judge="openai",
                     judge_args={"model": "judge"})
    cells = make_cells(list(PAPER_SYSTEMS), [{"model": "openai", "model_args": {"model": "answerer"}}],
                       ["medmemorybench_efficient", "medmemorybench_mixed"], base, Path("grid"))
    plans = plan_cells(cells)
    prefill, decode, one_sequence = gpu_rates()
    costs = measured_costs()["memories"]
    print(f"roofline per GPU: prefill {prefill:,.0f} tokens/s, decode {decode:,.0f} tokens/s at batch {BATCH} "
          f"({one_sequence:.0f} tokens/s per sequence)")
    print("| memory | mode | LLM calls | prompt tokens | completion tokens | GPU-hours (bound) | critical path h | "
          f"hours on {args.nodes} CPU nodes |")
    print("|---|---|---|---|---|---|---|---|")
    totals = {"calls": 0.0, "prompt": 0.0, "completion": 0.0, "gpu_h": 0.0, "path_h": 0.0, "cpu_h": 0.0}
    for plan, cell in zip(plans, cells, strict=True):
        calls = plan.memory_calls + plan.answer_calls + plan.judge_calls
        gpu_h = (plan.prompt_tokens / prefill + plan.completion_tokens / decode) / 3600
        per_call = costs[cell.config.memory]["completion_tokens"] / max(costs[cell.config.memory]["llm_calls"], 1)
        # one patient's stream, call after call (its memory's construction), at one sequence's decode rate
        path_h = plan.memory_calls / max(plan.patients, 1) * per_call / one_sequence / 3600
        cpu_h = plan.seconds / 3600 / (2 * args.nodes)  # (2 shards at once per 2-core node)
        for key, value in zip(totals, (calls, plan.prompt_tokens, plan.completion_tokens, gpu_h, 0, cpu_h),
                              strict=True):
            totals[key] += value
        totals["path_h"] = max(totals["path_h"], path_h)
        mode = cell.task.rpartition("_")[2]
        print(f"| {cell.config.memory} | {mode} | {calls:,.0f} | {plan.prompt_tokens:,.0f} | "
              f"{plan.completion_tokens:,.0f} | {gpu_h:.2f} | {path_h:.2f} | {cpu_h:,.1f} |")
    wall = max(totals["gpu_h"] / args.gpus, totals["path_h"])
    print(f"| all | | {totals['calls']:,.0f} | {totals['prompt']:,.0f} | {totals['completion']:,.0f} | "
          f"{totals['gpu_h']:.1f} | {totals['path_h']:.2f} (longest) | {totals['cpu_h']:,.0f} |")
    print(f"\n{args.gpus} GPUs: at least {wall:.1f} h of wall time (the larger of GPU-hours / {args.gpus} and the "
          f"longest stream); {args.nodes} CPU nodes with SmolLM2-135M: {totals['cpu_h']:,.0f} h")
    return 0


if __name__ == "__main__":
    sys.exit(main())
