"""Report tables: a run of the oracle memory is the ceiling, labelled so and shown after the systems, apart."""

from __future__ import annotations

import json

from medmemorybench.console import print_report
from medmemorybench.report import is_ceiling, paper_table, run_label


def _summary(memory: dict, mean: float) -> dict:
    stat = {"mean": mean, "n_scored": 10, "n_error": 0}
    metrics = {"by_type": [{"query_type": "EEM", **stat}], "mean_over_types": [stat], "overall": [stat]}
    return {"header": {"memory": memory, "model": {"backbone": "openai", "model": "gpt-x"}},
            "tasks": {"medmemorybench_efficient": {"mode": "efficient", "metrics": {"correct": metrics}}}}


ORACLE = _summary({"memory": "oracle"}, 0.97)
BM25 = _summary({"memory": "bm25", "window": 4}, 0.41)


def test_an_oracle_run_is_labelled_the_ceiling():
    assert is_ceiling(ORACLE) and not is_ceiling(BM25)
    assert run_label(ORACLE) == "oracle (ceiling) / gpt-x"
    assert run_label(_summary({"memory": "oracle", "distractors": 2}, 0.9)) == "oracle (ceiling, distractors=2) / gpt-x"
    assert run_label(BM25) == "bm25 (window=4) / gpt-x"
    _header, rows = paper_table([ORACLE, BM25])
    assert [row[0] for row in rows] == ["oracle (ceiling) / gpt-x", "bm25 (window=4) / gpt-x"]


def test_the_report_shows_the_ceiling_after_the_systems_set_apart(tmp_path, capsys):
    runs = []
    for name, summary in (("oracle", ORACLE), ("bm25", BM25)):  # (the ceiling given first)
        (tmp_path / name).mkdir()
        (tmp_path / name / "summary.json").write_text(json.dumps(summary), encoding="utf-8")
        runs.append(tmp_path / name)
    print_report(runs)
    lines = capsys.readouterr().out.splitlines()
    paper = lines[next(i for i, line in enumerate(lines) if "paper's layout" in line):]
    system = next(i for i, line in enumerate(paper) if "bm25 (window=4) / gpt-x" in line)
    ceiling = next(i for i, line in enumerate(paper) if "oracle (ceiling) / gpt-x" in line)
    assert system < ceiling and paper[ceiling - 1].startswith("├")  # (a rule between the systems and the ceiling)
    accuracy = next(line for line in lines if "bm25 (window=4) / gpt-x" in line and "oracle" in line)
    assert accuracy.index("bm25") < accuracy.index("oracle")  # (its column last in the per-type tables too)


def test_a_rule_scored_mcd_accuracy_is_reported_as_an_upper_bound(tmp_path, capsys):
    from medmemorybench.report.benchmarks import rule_bound_notes

    mcd = _summary({"memory": "bm25"}, 0.5)
    by_type = mcd["tasks"]["medmemorybench_efficient"]["metrics"]["correct"]["by_type"]
    by_type.append({"query_type": "MCD", "mean": 0.4, "n_scored": 10, "n_error": 0})
    judged = json.loads(json.dumps(mcd))
    judged["header"]["judge"] = {"backbone": "openai", "model": "gpt-judge"}
    assert rule_bound_notes([BM25, judged]) == []  # (no MCD scored; a judge scored it)
    (note,) = rule_bound_notes([mcd, judged])
    assert note.startswith("bm25 / gpt-x: MCD accuracy scored by rules (no --judge) is an upper bound")
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "summary.json").write_text(json.dumps(mcd), encoding="utf-8")
    print_report([tmp_path / "run"])
    assert "is an upper bound" in " ".join(capsys.readouterr().out.split())
