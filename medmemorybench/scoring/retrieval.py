"""Retrieval measures over what a memory system returned: Recall@k and reciprocal rank of evidence sessions.

These read session ids, not answers. Each retrieved item may cite several sessions (a merged chunk, a
graph node); an item hits when any of its sessions is an evidence session. A question without evidence
(ABS) has no retrieval score: None, which reports count apart from zero.
"""

from __future__ import annotations

from collections.abc import Sequence


def _check_k(k: int | None) -> None:
    if k is not None and k <= 0:
        raise ValueError(f"k must be a positive number of retrieved items, got {k}")


def _ids(item: Sequence[str] | str) -> Sequence[str]:
    return [item] if isinstance(item, str) else item  # one bare session id, not its characters


def recall_at_k(retrieved_session_ids: Sequence[Sequence[str]], evidence: Sequence[str], k: int) -> float | None:
    """Share of the evidence sessions cited by the top-k retrieved items.

    Args:
        retrieved_session_ids: Per retrieved item, best first, the session ids it came from.
        evidence: The question's evidence session ids.
        k: How many top items count.

    Returns:
        A share in [0, 1]; None when the question has no evidence.

    Raises:
        ValueError: If k is not positive.
    """
    _check_k(k)
    wanted = set(evidence)
    if not wanted:
        return None
    found = {sid for item in retrieved_session_ids[:k] for sid in _ids(item)} & wanted
    return len(found) / len(wanted)


def reciprocal_rank(retrieved_session_ids: Sequence[Sequence[str]], evidence: Sequence[str],
                    k: int | None = None) -> float | None:
    """1 / rank of the first retrieved item citing any evidence session (its mean over questions is MRR).

    Args:
        retrieved_session_ids: Per retrieved item, best first, the session ids it came from.
        evidence: The question's evidence session ids.
        k: Only the top k items count; None: all of them.

    Returns:
        1/rank, 0.0 when no item hits; None when the question has no evidence.

    Raises:
        ValueError: If k is not positive.
    """
    _check_k(k)
    wanted = set(evidence)
    if not wanted:
        return None
    items = retrieved_session_ids if k is None else retrieved_session_ids[:k]
    for rank, item in enumerate(items, start=1):
        if wanted.intersection(_ids(item)):
            return 1.0 / rank
    return 0.0
