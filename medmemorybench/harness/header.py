"""The run header (run.json): everything needed to rebuild or rescore a run (inspect_ai's EvalSpec)."""

from __future__ import annotations

import json
import subprocess
from dataclasses import asdict
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any

from medmemorybench import __version__
from medmemorybench.dataset.schema import METADATA_FILE
from medmemorybench.redact import scrub

if TYPE_CHECKING:
    from medmemorybench.harness.config import RunConfig
    from medmemorybench.harness.tasks import TaskConfig
    from medmemorybench.models.base import Backbone

PACKAGES = ("torch", "transformers", "datasets", "bm25s", "sentence-transformers", "openai", "vllm", "pydantic")


def _git_revision() -> str | None:
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, timeout=5,
                             cwd=Path(__file__).parent)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout.strip() or None


def _versions() -> dict[str, str | None]:
    out: dict[str, str | None] = {}
    for name in PACKAGES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out


def _jsonable(value: Any) -> Any:
    return json.loads(json.dumps(value, default=str))


def config_record(config: RunConfig) -> dict[str, Any]:
    """The run options as run.json records them: `resume` left out (a resume is the same run), and `patients` when
    it is None (a whole run), so that a sweep's cell has the header of a one-process run of it."""
    record = asdict(config)
    record.pop("resume", None)
    if record.get("patients") is None:
        record.pop("patients", None)
    return scrub(_jsonable(record))


def run_header(config: RunConfig, dataset: Path, tasks: list[TaskConfig], backbone: Backbone | None,
               judge: Backbone | None, memory_backbone: Backbone | None = None,
               answer_mode: str = "shared") -> dict[str, Any]:
    """Config, dataset fingerprint, versions, model, judge, memory (and the LLM it builds with) and task
    identities."""
    from medmemorybench.harness.prompting import template_hashes

    meta_path = dataset / METADATA_FILE
    meta = json.loads(meta_path.read_text(encoding="utf-8")) if meta_path.exists() else {}
    judge_identity = None
    if judge is not None:
        from medmemorybench.scoring import load_judge_prompts

        judge_identity = {**judge.identity(), "prompts": {k: p.sha256 for k, p in load_judge_prompts().items()}}
        if any(t.metadata.scoring == "longmemeval" for t in tasks):
            from medmemorybench.scoring.longmemeval import load_longmemeval_prompts

            judge_identity["longmemeval_prompts"] = {p.name: p.sha256 for p in load_longmemeval_prompts().values()}
    return scrub(_jsonable({
        "medmemorybench": __version__,
        "git_revision": _git_revision(),
        "packages": _versions(),
        "dataset": str(dataset),
        "dataset_fingerprint": meta.get("fingerprint"),
        "dataset_seed": meta.get("seed"),
        **({"dataset_hidden": True} if meta.get("hidden") is True else {}),
        # (an import's source benchmark, so reports and boards label its rows; absent for our builds, as before)
        **({"dataset_source": _source_of(meta)} if _source_of(meta) else {}),
        "config": config_record(config),
        "tasks": [{"task": t.task, "version": t.version, "source_file": t.source_file, "mode": t.mode,
                   "language": t.language,
                   "query_types": t.types(), "retrieval_k": t.retrieval_k, "prompts": template_hashes(t),
                   # (recorded only when it is a source's, so our tasks' headers are as before)
                   **({"scoring": t.metadata.scoring} if t.metadata.scoring != "medmemorybench" else {})}
                  for t in tasks],
        "model": backbone.identity() if backbone is not None else {"backbone": "none"},
        "judge": judge_identity,
        "memory": {"memory": config.memory, **config.memory_args},
        "memory_model": memory_backbone.identity() if memory_backbone is not None else None,
        "embedder": config.embedder,
        "answer_mode": answer_mode,
    }))


def _source_of(meta: dict[str, Any]) -> dict[str, Any] | None:
    """The public benchmark an imported dataset came from (name, title, variant, version, licence, SHA-256)."""
    stats = meta.get("stats")
    source = stats.get("source") if isinstance(stats, dict) else None
    if not isinstance(source, dict):
        return None
    return {k: source.get(k) for k in ("name", "title", "variant", "version", "license", "sha256")}
