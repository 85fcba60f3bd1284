"""The efficient and mixed streams of one patient, and their split into checkpoints.

Noise is inserted early-weighted, as upstream: shuffled noise sessions fall into five buckets in
proportion 3:3:2:1:1; bucket b lands at random positions within the first (b+1)/5 of the regular stream.
"""

from __future__ import annotations

import math
import random

from medmemorybench.render.models import Session

BUCKET_WEIGHTS = (3, 3, 2, 1, 1)
CHECKPOINT_EVERY = 10


def bucket_sizes(total: int, weights: tuple[int, ...] = BUCKET_WEIGHTS) -> list[int]:
    """Split `total` in proportion to `weights` (largest remainder, earliest bucket wins ties)."""
    exact = [total * w / sum(weights) for w in weights]
    sizes = [math.floor(x) for x in exact]
    by_remainder = sorted(range(len(weights)), key=lambda i: (-(exact[i] - sizes[i]), i))
    for i in by_remainder[: total - sum(sizes)]:
        sizes[i] += 1
    return sizes


def insert_noise(regular: list[Session], noise: list[Session], rng: random.Random) -> list[Session]:
    """The mixed stream: `regular` in order with `noise` interleaved, early-weighted.

    A noise session placed at position p comes right before regular session p+1, so it never follows
    the last regular session and always belongs to a checkpoint that has questions.
    """
    noise = list(noise)
    rng.shuffle(noise)
    n_regular = len(regular)
    placed: list[tuple[int, int, Session]] = []
    start = 0
    for bucket, size in enumerate(bucket_sizes(len(noise))):
        limit = max(1, math.ceil(n_regular * (bucket + 1) / len(BUCKET_WEIGHTS)))
        for offset, session in enumerate(noise[start : start + size]):
            placed.append((rng.randrange(min(limit, n_regular)), start + offset, session))
        start += size
    placed.sort(key=lambda item: (item[0], item[1]))
    stream: list[Session] = []
    cursor = 0
    for index, session in enumerate(regular):
        while cursor < len(placed) and placed[cursor][0] == index:
            stream.append(placed[cursor][2])
            cursor += 1
        stream.append(session)
    return stream


def checkpoints_of(n_regular: int, every: int = CHECKPOINT_EVERY) -> list[int]:
    """Checkpoint numbers for a year of `n_regular` sessions: 10, 20, ..., and the last if uneven."""
    points = list(range(every, n_regular + 1, every))
    if not points or points[-1] != n_regular:
        points.append(n_regular)
    return points


def split_by_checkpoint(stream: list[Session], checkpoints: list[int]) -> dict[int, list[Session]]:
    """The sessions each checkpoint adds: everything after the previous checkpoint's last regular session
    up to and including the checkpoint's own last regular session."""
    out: dict[int, list[Session]] = {c: [] for c in checkpoints}
    regular_seen = 0
    pending: list[Session] = []
    bounds = iter(checkpoints)
    current = next(bounds)
    for session in stream:
        pending.append(session)
        if session.kind == "regular":
            regular_seen += 1
            if regular_seen == current:
                out[current].extend(pending)
                pending = []
                current = next(bounds, current)
    if pending:  # trailing noise (none with insert_noise) joins the last checkpoint
        out[checkpoints[-1]].extend(pending)
    return out
