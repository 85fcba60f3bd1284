"""MedMemoryBench: a benchmark of agent memory for personalized healthcare."""

__version__ = "0.1.0"


def load(config: str = "efficient", split: str | None = None, path=None):  # noqa: ANN001, ANN201
    """Load MedMemoryBench (a local build if one is found, else the Hub); see `medmemorybench.dataset.load`."""
    from medmemorybench.dataset.load import load as _load

    return _load(config, split, path)


__all__ = ["__version__", "load"]
