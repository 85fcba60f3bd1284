"""Reports: side-by-side tables and the saturation plot of one or more runs."""

from medmemorybench.report.plots import saturation_plot
from medmemorybench.report.tables import cost_table, load_summary, metric_table, paper_table, run_label

__all__ = ["cost_table", "load_summary", "metric_table", "paper_table", "run_label", "saturation_plot"]
