"""The saturation plot: accuracy and Recall@k against checkpoint, efficient vs mixed, one line per run."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")  # files only, no display
import matplotlib.pyplot as plt  # noqa: E402

from medmemorybench.files import atomic_path  # noqa: E402
from medmemorybench.report.tables import run_label  # noqa: E402

PANELS = (("correct", "accuracy"), ("recall_at_k", "Recall@k"))
STYLES = {"efficient": "-", "mixed": "--"}


def saturation_plot(summaries: list[dict[str, Any]], out: Path) -> Path:
    """Write the plot as PNG; panels without data say so instead of staying blank."""
    fig, axes = plt.subplots(1, len(PANELS), figsize=(11, 4.2), constrained_layout=True)
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for axis, (metric, title) in zip(axes, PANELS, strict=True):
        drawn = False
        for index, summary in enumerate(summaries):
            for task in summary["tasks"].values():
                points = task["metrics"].get(metric, {}).get("by_checkpoint", [])
                points = [p for p in points if p.get("mean") is not None]
                if not points:
                    continue
                xs = [p["checkpoint"] for p in points]
                axis.plot(xs, [p["mean"] for p in points], STYLES.get(task["mode"], "-"), marker="o",
                          color=colors[index % len(colors)], label=f"{run_label(summary)} [{task['mode']}]")
                axis.fill_between(xs, [p["ci_low"] if p["ci_low"] is not None else p["mean"] for p in points],
                                  [p["ci_high"] if p["ci_high"] is not None else p["mean"] for p in points],
                                  color=colors[index % len(colors)], alpha=0.08)
                drawn = True
        axis.set_title(f"{title} by checkpoint")
        axis.set_xlabel("checkpoint (regular sessions read)")
        axis.set_ylim(0, 1)
        axis.grid(alpha=0.3)
        if drawn:
            axis.legend(fontsize=7)
        else:
            axis.text(0.5, 0.5, "no data (retrieval-only run?)", ha="center", va="center", transform=axis.transAxes)
    try:
        with atomic_path(out) as tmp:  # (a kill or a full disk never leaves half a PNG)
            fig.savefig(tmp, dpi=120, format="png")
    finally:
        plt.close(fig)
    return out
