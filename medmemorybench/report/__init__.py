"""Reports: side-by-side tables and the saturation plot of one or more runs."""

from medmemorybench.report.benchmarks import benchmark_of, cross_benchmark_table, source_of
from medmemorybench.report.plots import saturation_plot
from medmemorybench.report.tables import (
    CEILING_MEMORY,
    MODES,
    PaperRow,
    backbone_label,
    cost_per_session,
    cost_table,
    is_ceiling,
    load_summary,
    metric_table,
    paper_rows,
    paper_table,
    run_label,
    table_mean,
)

__all__ = ["CEILING_MEMORY", "MODES", "PaperRow", "backbone_label", "benchmark_of", "cost_per_session", "cost_table",
           "cross_benchmark_table", "is_ceiling", "load_summary", "metric_table", "paper_rows", "paper_table",
           "run_label", "saturation_plot", "source_of", "table_mean"]
