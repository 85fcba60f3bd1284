"""Aggregation: means, counts, intervals, per mode and over types."""

import pytest

from medmemorybench.scoring import aggregate, wilson_interval
from medmemorybench.scoring.aggregate import bootstrap_interval


def rows_of(query_type, mode, values, checkpoint=10):
    return [{"query_type": query_type, "mode": mode, "checkpoint": checkpoint, "value": v} for v in values]


def test_group_mean_counts_and_errors():
    result = aggregate(rows_of("EEM", "mixed", [1, 0, 1, None]))
    [group] = result.groups
    assert group.key == {"query_type": "EEM", "mode": "mixed", "checkpoint": 10}
    assert group.mean == pytest.approx(2 / 3)
    assert (group.n_scored, group.n_error) == (3, 1)


def test_unscored_rows_are_not_zeros():
    # a None (error) must not pull the mean down
    [group] = aggregate(rows_of("EEM", "mixed", [1, None, None])).groups
    assert group.mean == 1.0


def test_group_of_only_errors_has_no_mean():
    [group] = aggregate(rows_of("EEM", "mixed", [None, None])).groups
    assert group.mean is None and group.ci_low is None and group.n_error == 2


def test_wilson_interval_known_value():
    low, high = wilson_interval(8, 10)
    assert low == pytest.approx(0.4902, abs=1e-4)
    assert high == pytest.approx(0.9433, abs=1e-4)


def test_binary_metric_gets_wilson_interval():
    [group] = aggregate(rows_of("EEM", "mixed", [1] * 8 + [0] * 2)).groups
    assert (group.ci_low, group.ci_high) == pytest.approx(wilson_interval(8, 10))


def test_wilson_interval_of_all_correct_is_below_one():
    # the normal approximation would give the degenerate [1, 1]
    [group] = aggregate(rows_of("EEM", "mixed", [1] * 5)).groups
    assert group.ci_low < 1.0 and group.ci_high == 1.0


def test_continuous_metric_gets_a_seeded_bootstrap_interval():
    values = [0.2, 0.4, 0.6, 0.3, 0.9, 0.1]
    [group] = aggregate(rows_of("EEM", "mixed", values)).groups
    assert group.ci_low < group.mean < group.ci_high
    assert min(values) <= group.ci_low and group.ci_high <= max(values)  # a bootstrap mean never leaves the data
    [again] = aggregate(rows_of("EEM", "mixed", values)).groups
    assert (again.ci_low, again.ci_high) == (group.ci_low, group.ci_high)  # seeded: the same rows, the same interval
    many = [((7 * i) % 31) / 31 for i in range(40)]
    assert bootstrap_interval(many, "a") == bootstrap_interval(many, "a")
    assert bootstrap_interval(many, "a") != bootstrap_interval(many, "b")  # the seed is the group's, not a constant


def test_interval_of_two_recalls_stays_in_range():
    # the normal interval of recalls 0 and 1 (n=2) was -0.48..1.48
    [group] = aggregate(rows_of("EEM", "mixed", [0.0, 1.0, 0.5]), binary=False).groups
    assert 0.0 <= group.ci_low <= group.ci_high <= 1.0
    [one] = aggregate(rows_of("EEM", "mixed", [0.5])).groups
    assert one.mean == 0.5 and one.ci_low is None and one.ci_high is None  # one value: no interval to bootstrap


def test_selective_score_interval_is_clipped_to_its_own_range():
    # -1/0/+1 is not a proportion: a bootstrap interval within [-1, 1], not clipped to [0, 1]
    result = aggregate(rows_of("EEM", "mixed", [-1, -1, 0, 1]) + rows_of("MQ", "mixed", [-1, 0]),
                       binary=False, value_range=(-1.0, 1.0))
    eem = next(g for g in result.groups if g.key["query_type"] == "EEM")
    assert eem.mean == -0.25 and -1.0 <= eem.ci_low < -0.25 < eem.ci_high <= 1.0
    assert result.macro[0].mean == pytest.approx((-0.25 - 0.5) / 2)
    assert -1.0 <= result.macro[0].ci_low < result.macro[0].mean < result.macro[0].ci_high <= 1.0


def test_bools_are_read_as_zero_and_one():
    [group] = aggregate(rows_of("IG", "mixed", [True, False, True, True])).groups
    assert group.mean == 0.75


def test_overall_pools_rows_per_mode():
    rows = rows_of("EEM", "mixed", [1, 1, 1]) + rows_of("MQ", "mixed", [0]) + rows_of("EEM", "efficient", [0])
    overall = {g.key["mode"]: g for g in aggregate(rows).overall}
    assert overall["mixed"].mean == 0.75
    assert overall["efficient"].mean == 0.0


def test_mean_over_types_weights_types_equally():
    # EEM 3/3 and MQ 0/1: pooled 0.75, mean over types 0.5 (the paper's avg accuracy)
    rows = rows_of("EEM", "mixed", [1, 1, 1]) + rows_of("MQ", "mixed", [0])
    [macro] = aggregate(rows).macro
    assert macro.mean == 0.5
    assert macro.n_scored == 4


def test_mean_over_types_leaves_out_abs_by_default():
    rows = rows_of("EEM", "mixed", [1]) + rows_of("ABS", "mixed", [0])
    assert aggregate(rows).macro[0].mean == 1.0
    assert aggregate(rows, macro_types=None).macro[0].mean == 0.5


def test_groups_sorted_by_checkpoint_numerically():
    rows = rows_of("EEM", "mixed", [1], checkpoint=100) + rows_of("EEM", "mixed", [1], checkpoint=20)
    assert [g.key["checkpoint"] for g in aggregate(rows).groups] == [20, 100]


def test_custom_metric_key():
    rows = [{"query_type": "EEM", "mode": "mixed", "checkpoint": 10, "token_f1": 0.5}]
    assert aggregate(rows, metric="token_f1").groups[0].mean == 0.5


def test_row_missing_a_key_names_it():
    with pytest.raises(ValueError, match="row 0 has no 'mode'"):
        aggregate([{"query_type": "EEM", "checkpoint": 10, "value": 1}])


def test_as_dict_is_flat():
    [group] = aggregate(rows_of("EEM", "mixed", [1])).groups
    assert group.as_dict()["query_type"] == "EEM" and group.as_dict()["n_scored"] == 1
