"""Memory systems: what the protocol runner streams a patient's sessions into and retrieves from.

Built-ins (none, long_context, bm25, dense) and third-party systems (entry-point group
`medmemorybench.memory_systems`) are loaded lazily by name with `load_memory`.
"""

from medmemorybench.memory.base import MemoryItem, MemorySystem, Retrieval
from medmemorybench.memory.registry import available_memories, load_memory

__all__ = ["MemoryItem", "MemorySystem", "Retrieval", "available_memories", "load_memory"]
