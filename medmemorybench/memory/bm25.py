"""BM25 retrieval over session chunks with `bm25s`, indexed at most once per checkpoint.

The original harness rebuilt its index after every session (SPEC.md §6). Here `ingest` only tokenizes
and appends; the index is (re)built lazily by the first `retrieve` after new chunks arrived, so a
stream of n checkpoints costs n index builds whatever the number of sessions.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

import bm25s

from medmemorybench.memory._chunks import ChunkingOptions, ChunkStore
from medmemorybench.memory.base import MemoryItem, MemorySystem, Retrieval
from medmemorybench.render.models import ObservedSession
from medmemorybench.segment import has_cjk, words

logger = logging.getLogger(__name__)

STOPWORD_LISTS = ("en_plus", "en", "none")
ZH_STOPWORDS = frozenset((
    "的", "了", "是", "我", "您", "你", "在", "有", "吗", "呢",
    "吧", "啊", "呀", "和", "就", "都", "也", "还", "这", "那",
    "个", "一", "不", "给", "让", "被", "把", "跟", "与", "及",
    "什么", "多少", "哪", "哪些", "哪个", "怎么", "为什么", "时候", "那次", "一下",
    "一个", "这个", "那个", "我们", "咱们", "他", "她", "它", "医生", "患者",
    "日期",
))
"""Function words (and the role and date labels of a session's text) left out of Chinese BM25 terms: a question's
"什么"/"多少" would otherwise outscore a rare lab name, as "what"/"my" would in English."""


def english_stemmer() -> object | None:
    """PyStemmer's English Snowball stemmer, or None (with a warning) when PyStemmer is not installed."""
    try:
        import Stemmer
    except ModuleNotFoundError:
        logger.warning("PyStemmer is not installed; BM25 runs without stemming (pip install PyStemmer)")
        return None
    return Stemmer.Stemmer("english")


class BM25Memory(MemorySystem):
    """Okapi BM25 over turn windows (or whole sessions), English stopwords removed, stemmed.

    Args:
        chunking: "turns" (windows of `window` turns every `stride` turns) or "session".
        window: turns per chunk (chunking="turns").
        stride: turns between window starts; stride < window makes windows overlap.
        k1: BM25 term-frequency saturation.
        b: BM25 length normalization.
        stopwords: a `bm25s` stopword list: "en_plus" (NLTK's English list, the default: questions open
            with "what", "when", "my", which the 33-word "en" list keeps and which then outscore a
            rare lab name), "en", or "none".
        stem: stem with PyStemmer's English stemmer when it is installed.
    """

    name = "bm25"

    def __init__(self, chunking: str = "turns", window: int = 4, stride: int = 2, k1: float = 1.5,
                 b: float = 0.75, stopwords: str = "en_plus", stem: bool = True) -> None:
        self.chunking = ChunkingOptions(chunking, window, stride)
        if stopwords not in STOPWORD_LISTS:
            raise ValueError(f"stopwords must be one of {', '.join(STOPWORD_LISTS)}, not {stopwords!r}")
        if not 0.0 <= float(b) <= 1.0 or float(k1) < 0.0:
            raise ValueError(f"need k1 >= 0 and 0 <= b <= 1, got k1={k1!r}, b={b!r}")
        super().__init__(chunking=chunking, window=window, stride=stride, k1=float(k1), b=float(b),
                         stopwords=stopwords, stem=bool(stem))
        self.k1, self.b = float(k1), float(b)
        self.stopwords = None if stopwords == "none" else stopwords
        self.stemmer = english_stemmer() if stem else None
        self.store = ChunkStore(self.chunking)
        self._tokens: list[list[str]] = []
        self._index: bm25s.BM25 | None = None
        self._indexed_chunks = 0

    def reset(self) -> None:
        """Forget every chunk and the index."""
        self.store.clear()
        self._tokens.clear()
        self._index = None
        self._indexed_chunks = 0

    def ingest(self, sessions: Sequence[ObservedSession]) -> None:
        """Cut the sessions into chunks and tokenize the new ones (no indexing here)."""
        new = self.store.add(sessions)
        if new:
            self._tokens.extend(self._tokenize([chunk.text for chunk in new]))

    def retrieve(self, questions: Sequence[str], k: int, token_budget: int | None = None) -> list[Retrieval]:
        """The top-k chunks per question, all questions in one batched `bm25s` call.

        Chunks that share no term with the question (score 0) are left out: their order is arbitrary.
        """
        if not questions:
            return []
        if not self.store or k < 1:
            return [Retrieval() for _ in questions]
        index = self._current_index()
        depth = min(k, len(self.store))
        results = index.retrieve(self._tokenize(list(questions)), k=depth, show_progress=False)
        retrievals = []
        for doc_row, score_row in zip(results.documents, results.scores, strict=True):
            items = []
            for doc, score in zip(doc_row.tolist(), score_row.tolist(), strict=True):
                if score > 0.0:
                    chunk = self.store.chunks[doc]
                    items.append(MemoryItem(text=chunk.text, session_ids=tuple(chunk.session_ids), score=score))
            retrievals.append(Retrieval(items=items))
        return retrievals

    def size(self) -> int:
        return len(self.store)

    def session_ids(self) -> set[str]:
        """Every session ingested."""
        return set(self.store.session_ids)

    def _tokenize(self, texts: list[str]) -> list[list[str]]:
        """English by `bm25s` (stopwords, stemming); a text holding Chinese by jieba's words, its function words
        dropped (`ZH_STOPWORDS`), so one index serves either language."""
        english = [i for i, t in enumerate(texts) if not has_cjk(t)]
        out: list[list[str]] = [[] for _ in texts]
        if english:
            tokenized = bm25s.tokenize([texts[i] for i in english], stopwords=self.stopwords, stemmer=self.stemmer,
                                       return_ids=False, show_progress=False)
            for i, toks in zip(english, tokenized, strict=True):
                out[i] = list(toks)
        for i, text in enumerate(texts):
            if has_cjk(text):
                out[i] = [w for w in words(text) if w not in ZH_STOPWORDS]
        return out

    def _current_index(self) -> bm25s.BM25:
        """The index over every chunk, rebuilt only when chunks arrived since the last build."""
        if self._index is None or self._indexed_chunks != len(self._tokens):
            index = bm25s.BM25(k1=self.k1, b=self.b)
            index.index(self._tokens, show_progress=False)
            self._index, self._indexed_chunks = index, len(self._tokens)
            logger.debug("bm25: indexed %d chunks", len(self._tokens))
        return self._index
