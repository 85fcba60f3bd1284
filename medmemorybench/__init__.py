"""MedMemoryBench: a benchmark of agent memory for personalized healthcare."""

__version__ = "0.1.0"


def load(config: str = "efficient", split: str | None = None, path=None):  # noqa: ANN001, ANN201
    """Load MedMemoryBench (a local build if one is found, else the registered build, else the Hub); see
    `medmemorybench.dataset.load`."""
    from medmemorybench.dataset.load import load as _load

    return _load(config, split, path)


def metric_path() -> str:
    """The `evaluate` metric module, for `evaluate.load(medmemorybench.metric_path())` (offline: a local file)."""
    from medmemorybench.integrations import metric_path as _metric_path

    return _metric_path()


__all__ = ["__version__", "load", "metric_path"]
