"""Importers of public memory benchmarks into our dataset format, so the same harness, memories and scorers run on
them (docs/other_benchmarks.md): `import_locomo` and `import_longmemeval` write `<out>/medmemorybench/` and return an
`ImportReport` counting every quirk of the source they met."""

from medmemorybench.importers.common import ImportReport
from medmemorybench.importers.locomo import import_locomo
from medmemorybench.importers.longmemeval import import_longmemeval

__all__ = ["ImportReport", "import_locomo", "import_longmemeval"]
