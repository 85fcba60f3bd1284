"""The saturation plot: panels chosen by what runs hold, labelled axes with units, the efficient-mixed gap."""

from __future__ import annotations

import matplotlib.pyplot as plt
import pytest

from medmemorybench.harness.summary import summarize_metric
from medmemorybench.report.plots import Point, gap, saturation_figure, saturation_plot

TYPES = ("EEM", "MQ")


def summary(memory: str, *, answered: bool, modes=("efficient", "mixed"), memory_args=None,
            checkpoints=(10, 20, 30)) -> dict:
    """A run's summary from samples whose recall falls with the checkpoint in mixed mode only."""
    tasks = {}
    for mode in modes:
        samples = []
        for checkpoint in checkpoints:
            for i in range(12):
                drop = (checkpoint // 10) * 2 if mode == "mixed" else 0
                hit = float(i % 12 >= drop + 3)
                samples.append({"query_type": TYPES[i % 2], "checkpoint": checkpoint, "mode": mode, "status": "scored",
                                "recall_at_k": hit, "correct": hit if answered else None})
        metrics = {m: summarize_metric(samples, m) for m in ("correct", "recall_at_k")}
        tasks[f"medmemorybench_{mode}"] = {"mode": mode, "metrics": {k: v for k, v in metrics.items() if v}}
    model = {"backbone": "hf", "model": "/x/smollm2"} if answered else {"backbone": "none"}
    return {"header": {"memory": {"memory": memory, **(memory_args or {})}, "model": model}, "tasks": tasks}


def titles_and_labels(fig) -> list[tuple[str, str, str]]:
    return [(a.get_title(), a.get_xlabel(), a.get_ylabel()) for a in fig.axes if a.get_visible()]


def test_a_retrieval_only_run_plots_recall_not_an_empty_accuracy_panel():
    fig = saturation_figure([summary("bm25", answered=False)])
    panels = titles_and_labels(fig)
    plt.close(fig)
    assert not any("accuracy" in title for title, _, _ in panels)
    assert panels[0] == ("Recall@k by checkpoint (95 % intervals)", "checkpoint (regular sessions read)",
                         "Recall@k (%)")
    assert all(x and y for _, x, y in panels)  # every axis says what it shows, with its unit
    assert panels[1][2] == panels[2][2] == "efficient - mixed (percentage points)"


def test_answering_and_retrieval_runs_get_both_panels_and_labels_show_chunking():
    runs = [summary("bm25", answered=True), summary("dense", answered=False, memory_args={"stride": 4})]
    fig = saturation_figure(runs)
    titles = [t for t, _, _ in titles_and_labels(fig)]
    legend = [text.get_text() for a in fig.axes if a.get_legend() for text in a.get_legend().get_texts()]
    plt.close(fig)
    assert titles[0].startswith("accuracy by checkpoint") and titles[1].startswith("Recall@k by checkpoint")
    assert "bm25 / smollm2: accuracy" in legend and "dense (stride=4) / none: Recall@k" in legend
    recall_lines = [text.get_text() for text in fig.axes[1].get_legend().get_texts()]
    assert all(label.startswith("dense") for label in recall_lines)  # the answering run is on the accuracy panel


def test_gap_grows_with_the_checkpoint_when_mixed_saturates():
    fig = saturation_figure([summary("bm25", answered=False)])
    gap_axis = fig.axes[1]
    (line,) = gap_axis.get_lines()[:1]
    plt.close(fig)
    ys = list(line.get_ydata())
    assert ys == sorted(ys) and ys[-1] > ys[0] > 0


def test_skipped_checkpoints_are_points_not_a_line_and_titles_state_no_conclusion():
    # a run asked at 10, 20 and 100: 10-20 joined, 100 alone (no trend drawn over the 70 sessions never measured)
    fig = saturation_figure([summary("bm25", answered=False, checkpoints=(10, 20, 100))])
    recall, gap_axis = fig.axes[0], fig.axes[1]
    joined = [list(line.get_xdata()) for line in recall.get_lines() if len(line.get_xdata()) > 1]
    gap_lines = [list(line.get_xdata()) for line in gap_axis.get_lines() if line.get_marker() == "o"]
    titles = [a.get_title() for a in fig.axes]
    plt.close(fig)
    assert joined == [[10, 20], [10, 20]]  # efficient and mixed
    assert sorted(map(len, gap_lines)) == [1, 2]
    assert not any("grow" in title or "saturation" in title for title in titles)


def test_every_interval_lies_inside_its_axes():
    fig = saturation_figure([summary("bm25", answered=False), summary("dense", answered=False)])
    for axis in fig.axes[1:]:
        low, high = axis.get_ylim()
        for collection in axis.collections:  # the error bars
            for segment in getattr(collection, "get_segments", lambda: [])():
                assert all(low <= y <= high for _, y in segment), axis.get_title()
    plt.close(fig)


def test_gap_interval_combines_both_modes_and_stays_in_range():
    diff = gap(Point(10, 80.0, 70.0, 88.0), Point(10, 50.0, 40.0, 61.0))
    assert diff.mean == 30.0 and diff.low < 30.0 < diff.high
    assert diff.low == pytest.approx(30.0 - (10.0 ** 2 + 11.0 ** 2) ** 0.5)
    extreme = gap(Point(10, 100.0, 60.0, 100.0), Point(10, 0.0, 0.0, 40.0))
    assert extreme.mean == 100.0 and -100.0 <= extreme.low < 100.0 and extreme.high == 100.0
    assert gap(Point(10, 50.0, None, None), Point(10, 40.0, 30.0, 50.0)).low is None


def test_one_mode_only_says_there_is_no_gap(tmp_path):
    out = saturation_plot([summary("bm25", answered=True, modes=("efficient",))], tmp_path / "plot.png")
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    fig = saturation_figure([summary("bm25", answered=True, modes=("efficient",))])
    notes = [t.get_text() for a in fig.axes for t in a.texts]
    plt.close(fig)
    assert notes.count("no run has both modes: no gap to show") == 2
