"""Build, validate, export, load and publish the MedMemoryBench Hugging Face dataset."""

from medmemorybench.dataset.build import BuildOptions, BuiltDataset, build_dataset
from medmemorybench.dataset.export import export_dataset
from medmemorybench.dataset.load import HUB_ID, find_local, load, read_rows
from medmemorybench.dataset.validate import validate_rows

__all__ = ["HUB_ID", "BuildOptions", "BuiltDataset", "build_dataset", "export_dataset", "find_local", "load",
           "read_rows", "validate_rows"]
