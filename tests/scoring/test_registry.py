"""The scorer registry."""

import pytest

import medmemorybench.scoring as scoring
from medmemorybench.errors import InputError


def test_importing_scoring_registers_every_scorer():
    assert set(scoring.SCORERS) == {"exact_match", "mq_exact", "mq_partial", "key_fact_rubric", "abstained",
                                    "token_f1", "rouge_l"}


def test_registered_scorer_carries_its_description():
    info = scoring.get_scorer("rouge_l")
    assert info.fn is scoring.rouge_l and info.higher_is_better and info.description


def test_unknown_scorer_suggests_a_near_match():
    with pytest.raises(InputError, match="unknown scorer 'rougel'; did you mean 'rouge_l'"):
        scoring.get_scorer("rougel")


def test_public_api_is_exported():
    assert all(hasattr(scoring, name) for name in scoring.__all__)
