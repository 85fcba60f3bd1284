"""How fast each embedding backend of the `dense` memory embeds a build's chunks on this CPU, and whether it ranks
the chunks as the PyTorch float32 path does.

The chunks are the demo's (4-turn windows, stride 4) of the first PATIENTS patients' mixed stream, every checkpoint;
the queries are their questions. Each backend embeds every chunk once (no cache), in one run, one after another on
the same machine, so the ratios are comparable; agreement is measured per question: the share of questions whose
top-5 chunks are the same set as float32's, and the largest cosine difference of any chunk.

    .venv/bin/python scripts/bench_dense_backends.py --dataset /tmp/build/medmemorybench --patients 2
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from medmemorybench.dataset import read_rows  # noqa: E402
from medmemorybench.memory._chunks import ChunkingOptions, chunk_session  # noqa: E402
from medmemorybench.memory.dense import BACKENDS, DEFAULT_MODEL, load_embedder, resolve_model  # noqa: E402
from medmemorybench.render.models import ObservedSession  # noqa: E402

TOP_K = 5


def chunks_and_questions(dataset: Path, patients: int) -> tuple[list[str], list[str]]:
    rows = read_rows(dataset)
    options = ChunkingOptions(chunking="turns", window=4, stride=4)
    chunks: dict[str, None] = {}
    questions: list[str] = []
    splits = sorted(rows["mixed"], key=lambda s: int(s.rpartition("_")[2]))
    keep = sorted({r["persona_id"] for r in rows["mixed"][splits[0]]})[:patients]
    for split in splits:
        for row in rows["mixed"][split]:
            if row["persona_id"] not in keep:
                continue
            for session in row["sessions"]:
                observed = ObservedSession(session_id=session["session_id"], date=session["date"] or "",
                                           turns=session["turns"])
                chunks.update(dict.fromkeys(chunk_session(observed, options)))
            questions += [q["question"] for q in row["questions"]]
    return list(chunks), questions


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", type=Path, required=True)
    parser.add_argument("--patients", type=int, default=2)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--backends", nargs="+", choices=BACKENDS, default=list(BACKENDS),
                        help="backends to time, the first being the reference (default: all)")
    args = parser.parse_args()
    import torch

    torch.set_num_threads(args.threads)
    chunks, questions = chunks_and_questions(args.dataset, args.patients)
    path, _ = resolve_model(DEFAULT_MODEL)
    print(f"{len(chunks)} distinct chunks, {len(questions)} questions, {args.threads} threads, "
          f"load {os.getloadavg()[0]:.2f}", flush=True)
    results, reference = {}, None
    for backend in args.backends:
        model = load_embedder(path, backend=backend)
        model.encode(chunks[:64], normalize_embeddings=True)  # (warm: first-call allocations and kernels)
        started = time.perf_counter()
        vectors = np.asarray(model.encode(chunks, normalize_embeddings=True, batch_size=32), dtype=np.float32)
        seconds = time.perf_counter() - started
        asked = np.asarray(model.encode(questions, normalize_embeddings=True), dtype=np.float32)
        scores = asked @ vectors.T
        top = [set(np.argsort(-row)[:TOP_K].tolist()) for row in scores]
        if reference is None:
            reference = (scores, top)
        same = sum(a == b for a, b in zip(top, reference[1], strict=True)) / len(top)
        overlap = float(np.mean([len(a & b) / TOP_K for a, b in zip(top, reference[1], strict=True)]))
        results[backend] = {"seconds": round(seconds, 2), "chunks_per_s": round(len(chunks) / seconds, 1),
                            "same_top5_share": round(same, 4), "mean_top5_overlap": round(overlap, 4),
                            "max_cosine_diff": round(float(np.abs(scores - reference[0]).max()), 5),
                            "load_after": round(os.getloadavg()[0], 2)}
        print(backend, json.dumps(results[backend]), flush=True)
    base = results[args.backends[0]]["seconds"]
    for backend, row in results.items():
        print(f"{backend}: {base / row['seconds']:.2f}x the speed of {args.backends[0]}")


if __name__ == "__main__":
    main()
