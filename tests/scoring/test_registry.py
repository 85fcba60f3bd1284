"""The scorer registry."""

import pytest

import medmemorybench.scoring as scoring
from medmemorybench.errors import InputError


def test_importing_scoring_registers_every_scorer():
    assert set(scoring.SCORERS) == {"exact_match", "mq_exact", "mq_partial", "key_fact_rubric", "abstained",
                                    "token_f1", "rouge_l", "locomo_f1"}


def test_registered_scorer_carries_its_description():
    info = scoring.get_scorer("rouge_l")
    assert info.fn is scoring.rouge_l and info.higher_is_better and info.description


def test_unknown_scorer_suggests_a_near_match():
    with pytest.raises(InputError, match="scorer: unknown scorer 'rougel'. Did you mean 'rouge_l'"):
        scoring.get_scorer("rougel")


def test_a_third_party_scorer_is_found_through_its_entry_point(tmp_path, monkeypatch):
    """Registered in the `medmemorybench.scorers` group, its module is imported when the scorer is first asked
    for, and its `@scorer` registers it; an entry point that registers nothing is named."""
    from importlib.metadata import EntryPoint

    import medmemorybench.registry

    (tmp_path / "my_scorers.py").write_text(
        "from medmemorybench.scoring.base import Score, scorer\n"
        "@scorer('says_mg', description='the answer names a dose in mg')\n"
        "def says_mg(question, prediction):\n"
        "    return Score(value=float('mg' in prediction))\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    entries = [EntryPoint("says_mg", "my_scorers:says_mg", "medmemorybench.scorers"),
               EntryPoint("says_nothing", "my_scorers", "medmemorybench.scorers")]
    monkeypatch.setattr(medmemorybench.registry, "entry_points",
                        lambda group: [e for e in entries if e.group == group])
    monkeypatch.delitem(scoring.SCORERS, "says_mg", raising=False)
    info = scoring.get_scorer("says_mg")
    assert info.fn({}, "500 mg").value == 1.0 and "says_mg" in scoring.SCORERS
    monkeypatch.delitem(scoring.SCORERS, "says_mg")
    with pytest.raises(InputError, match="scorer says_nothing: its entry point loaded but registered nothing"):
        scoring.get_scorer("says_nothing")


def test_public_api_is_exported():
    assert all(hasattr(scoring, name) for name in scoring.__all__)
