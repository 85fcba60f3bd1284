"""The clinical knowledge base: conditions, drugs, safety rules and noise topics, kept as YAML data."""

from medmemorybench.knowledge.base import KnowledgeBase
from medmemorybench.knowledge.loader import DATA_DIR, default_knowledge, load_knowledge

__all__ = ["DATA_DIR", "KnowledgeBase", "default_knowledge", "load_knowledge"]
