"""The `evaluate` metric module's folder (`medmemorybench.py` is loaded by `evaluate.load`, not imported)."""
