"""Recall@k and reciprocal rank of evidence sessions."""

import pytest

from medmemorybench.scoring import recall_at_k, reciprocal_rank

RETRIEVED = [["S1"], ["S7", "S2"], ["S9"], ["S3"]]


def test_recall_counts_evidence_cited_in_top_k():
    assert recall_at_k(RETRIEVED, ["S2", "S3"], k=2) == 0.5


def test_recall_with_larger_k():
    assert recall_at_k(RETRIEVED, ["S2", "S3"], k=5) == 1.0


def test_recall_counts_each_evidence_session_once():
    # the same session retrieved twice is still one of two evidence sessions
    assert recall_at_k([["S2"], ["S2"]], ["S2", "S3"], k=5) == 0.5


def test_recall_without_evidence_is_none():
    # ABS questions have no evidence: no recall, which is not zero
    assert recall_at_k(RETRIEVED, [], k=5) is None


def test_recall_of_nothing_retrieved_is_zero():
    assert recall_at_k([], ["S2"], k=5) == 0.0


def test_bare_session_id_item_is_one_id():
    # a string item must not be read as a list of characters
    assert recall_at_k(["S2"], ["S2"], k=5) == 1.0


def test_non_positive_k_is_rejected():
    with pytest.raises(ValueError, match="k must be"):
        recall_at_k(RETRIEVED, ["S2"], k=0)


def test_reciprocal_rank_of_first_hit():
    assert reciprocal_rank(RETRIEVED, ["S3", "S2"]) == 0.5


def test_reciprocal_rank_beyond_k_is_zero():
    assert reciprocal_rank(RETRIEVED, ["S3"], k=3) == 0.0


def test_reciprocal_rank_without_evidence_is_none():
    assert reciprocal_rank(RETRIEVED, []) is None
