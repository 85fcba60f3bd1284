"""`RunConfig`: everything a run needs, recorded in run.json (apart from the runner, so that the header can
read it without importing the runner)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from medmemorybench.memory.dense import DEFAULT_MODEL as DEFAULT_EMBEDDER


@dataclass
class RunConfig:
    """Everything a run needs; recorded in run.json."""

    tasks: list[str]
    output_path: Path
    model: str = "none"
    model_args: dict = field(default_factory=dict)
    memory: str = "bm25"
    memory_args: dict = field(default_factory=dict)
    dataset_path: str | None = None
    limit: int | None = None
    """Evaluate only the first N patients."""
    checkpoints: list[int] | None = None
    """Ask only at these checkpoints (sessions of earlier ones are still ingested)."""
    judge: str | None = None
    judge_args: dict = field(default_factory=dict)
    resume: bool = False
    use_cache: bool = True
    cache_path: Path | None = None
    max_error_rate: float = 0.0
    """The run fails (exit 1, everything kept) when more than this share of its answers are errors."""
    memory_model: str | None = None
    """Backbone a memory builds itself with (default: the answering model)."""
    memory_model_args: dict = field(default_factory=dict)
    embedder: str = DEFAULT_EMBEDDER
    """Sentence embedder handed to memories: the packaged all-MiniLM-L6-v2 or a local folder."""
    memory_concurrency: int = 1
    """Patients ingested at the same time at a checkpoint (their memory LLM calls share batches)."""
    answer_mode: str | None = None
    """`shared` or `native` (`memory.base.ANSWER_MODES`); None: the memory's own default."""
    patients: list[str] | None = None
    """Evaluate only these persona ids, among the first `limit` (one shard of a sweep, `sweep/shards.py`); None:
    every patient. Not recorded when None, so a run's header is the same as before shards existed."""
