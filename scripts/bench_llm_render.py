"""Benchmark of the LLM renderer: a slice (1 patient, 10 sessions) written by LLM agents with the fact verifier.

Run: .venv/bin/python scripts/bench_llm_render.py [--model hf] [--model_args ...] [--language en] [--sessions 10]
Prints how many sessions passed the fact verifier at the first try, after the retry, or fell back to templates;
the seconds per session; the variety of what the model wrote (`dataset/variety.py`); and one LLM-written session.
The default model is the embedded SmolLM2-135M on CPU (`--model hf`); any backbone spec works (`--model openai
--model_args ...`, `--model vllm --model_args pretrained=...`).
"""

from __future__ import annotations

import argparse
import os
import time

from medmemorybench.dataset.variety import measure, units_for
from medmemorybench.knowledge import default_knowledge
from medmemorybench.models import load_backbone, parse_model_args
from medmemorybench.render.llm import LLMSessionRenderer
from medmemorybench.render.templates import load_templates
from medmemorybench.simulate import simulate_patient


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--model", default="hf")
    parser.add_argument("--model_args", default="")
    parser.add_argument("--language", default="en", choices=["en", "zh"])
    parser.add_argument("--sessions", type=int, default=10)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} at the start")
    kb = default_knowledge()
    backbone = load_backbone(args.model, parse_model_args(args.model_args))
    year = simulate_patient(kb, args.seed, 0, n_encounters=max(10, args.sessions))
    year = year.model_copy(update={"events": year.events[: args.sessions]})
    renderer = LLMSessionRenderer(kb, load_templates(args.language), year, backbone)
    start = time.perf_counter()
    sessions = renderer.render_year()
    seconds = time.perf_counter() - start
    stats = renderer.stats
    print(f"model {backbone.model_id}; {len(sessions)} sessions: first try {stats['first_try']}, after retry "
          f"{stats['after_retry']}, fallback to templates {stats['fallback']}; {seconds / len(sessions):.1f} s per "
          f"session ({seconds:.0f} s in all)")
    written = [t.text for s in sessions if s.renderer.startswith("llm:") for t in s.turns]
    for unit in units_for(args.language):
        if written:
            v = measure(written, unit)
            print(f"LLM-written turns ({unit}): {v.turns} turns, duplicate {v.duplicate_share:.1%}, distinct-2 "
                  f"{v.distinct_2:.3f}, most repeated {v.max_repeat}x")
    shown = next((s for s in sessions if s.renderer.startswith("llm:")), None)
    if shown is not None:
        print(f"\n{shown.session_id} ({shown.date}):")
        for turn in shown.turns:
            print(f"  {turn.role}: {turn.text}")


if __name__ == "__main__":
    main()
