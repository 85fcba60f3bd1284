"""What the graph memories (`graphrag`, `remem`) share: a graph of typed nodes joined by weighted undirected edges,
the vectors of its embedded nodes, names normalized into node keys, and the two ways of spreading from a
question's seeds over the graph: best-first traversal (the paper's GraphRAG) and personalized PageRank (HippoRAG,
ReMem).

Everything grows by appending: a checkpoint adds nodes, vectors and edges and never rebuilds what exists.
"""

from __future__ import annotations

import heapq
import re
from collections.abc import Callable, Sequence
from typing import Any

import networkx as nx
import numpy as np

from medmemorybench.memory.context import best_first

Node = tuple[str, Any]
"""(kind, key): ("chunk", 3), ("concept", "ceruloplasmin"), ("fact", 12)."""


def node_name(text: str) -> str:
    """A concept's or entity's key: lower case, single spaces, no punctuation at its ends ("Metformin." and
    "metformin" are one node; the original GraphRAG lemmatized with NLTK WordNet, whose data is not on disk here)."""
    return re.sub(r"\s+", " ", text).strip(" \t\n.,;:!?\"'()[]").lower()


class NodeVectors:
    """The embedded nodes of one kind in the order they were added, with their normalized vectors (a row each)."""

    def __init__(self) -> None:
        self.nodes: list[Node] = []
        self.matrix = np.zeros((0, 0), dtype=np.float32)

    def __len__(self) -> int:
        return len(self.nodes)

    def add(self, nodes: Sequence[Node], vectors: np.ndarray) -> None:
        if not nodes:
            return
        self.nodes.extend(nodes)
        self.matrix = vectors if self.matrix.size == 0 else np.vstack([self.matrix, vectors])

    def similarities(self, queries: np.ndarray) -> np.ndarray:
        """Cosine of each query (row) with each node (column); (queries, 0) when there are no nodes."""
        if not self.nodes:
            return np.zeros((len(queries), 0), dtype=np.float32)
        return queries @ self.matrix.T

    def new_pairs(self, new: int, threshold: float, per_node: int | None = None) -> list[tuple[Node, Node, float]]:
        """Each of the last `new` nodes paired with every other node (earlier, or new and before it) at least
        `threshold` similar, at most `per_node` pairs per new node, most similar first: only what the new nodes
        add, so an incremental build links exactly what a full rebuild would (with `per_node`, the new node's
        nearest)."""
        first = len(self.nodes) - new
        pairs = []
        for index in range(first, len(self.nodes)):
            scores = self.matrix[:index] @ self.matrix[index]
            candidates = [j for j in best_first(scores, per_node or index) if scores[j] >= threshold]
            pairs += [(self.nodes[index], self.nodes[j], float(scores[j])) for j in candidates]
        return pairs

    def clear(self) -> None:
        self.nodes.clear()
        self.matrix = np.zeros((0, 0), dtype=np.float32)


class MemoryGraph:
    """Typed nodes and weighted undirected edges (a networkx `Graph`, kept as `graph`)."""

    def __init__(self) -> None:
        self.graph = nx.Graph()

    def add_node(self, node: Node) -> None:
        self.graph.add_node(node)

    def add_edge(self, a: Node, b: Node, weight: float) -> None:
        """Join `a` and `b`; an edge found twice keeps its stronger weight."""
        if a == b:
            return
        if self.graph.has_edge(a, b):
            weight = max(weight, self.graph[a][b]["weight"])
        self.graph.add_edge(a, b, weight=weight)

    def clear(self) -> None:
        self.graph.clear()

    def personalized_pagerank(self, seeds: dict[Node, float], damping: float) -> dict[Node, float]:
        """PageRank restarting at `seeds` (node -> weight >= 0, normalized here) and following an edge with
        probability `damping` in proportion to its weight; {} when no seed has weight. Dangling nodes restart at
        the seeds too (networkx's default, as igraph's `personalized_pagerank` in HippoRAG)."""
        seeds = {node: weight for node, weight in seeds.items() if weight > 0 and node in self.graph}
        if not seeds:
            return {}
        return nx.pagerank(self.graph, alpha=damping, personalization=seeds, weight="weight", max_iter=200,
                           tol=1e-8)

    def traverse(self, seeds: dict[Node, float], is_item: Callable[[Node], bool], count: int,
                 tie: Callable[[Node], float]) -> list[tuple[Node, float]]:
        """Best-first (Dijkstra) from `seeds` (node -> starting cost), each edge costing 1 / its weight: the first
        `count` nodes that `is_item`, cheapest first, with their costs. Equal costs go by `tie` (lower first),
        then by node."""
        heap = [(cost, tie(node), node) for node, cost in seeds.items() if node in self.graph]
        heapq.heapify(heap)
        done: set[Node] = set()
        reached: list[tuple[Node, float]] = []
        while heap and len(reached) < count:
            cost, _tie, node = heapq.heappop(heap)
            if node in done:
                continue
            done.add(node)
            if is_item(node):
                reached.append((node, cost))
            for neighbour, edge in self.graph[node].items():
                if neighbour not in done:
                    heapq.heappush(heap, (cost + 1.0 / edge["weight"], tie(neighbour), neighbour))
        return reached
