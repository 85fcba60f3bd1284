"""Reports: side-by-side tables and the saturation plot of one or more runs."""

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

__all__ = ["CEILING_MEMORY", "MODES", "PaperRow", "backbone_label", "cost_per_session", "cost_table", "is_ceiling",
           "load_summary", "metric_table", "paper_rows", "paper_table", "run_label", "saturation_plot", "table_mean"]
