"""Dense retrieval with the real all-MiniLM-L6-v2: finds facts, embeds each chunk once, batches questions."""

from __future__ import annotations

import numpy as np
import pytest

from medmemorybench.errors import InputError
from medmemorybench.memory import load_memory
from medmemorybench.memory.dense import DEFAULT_MODEL, DenseMemory, resolve_model, shared_model
from tests.memory.conftest import FACT_QUESTION, FACT_SESSION_ID

QUESTIONS = [FACT_QUESTION, "What dose of metformin do I take?", "How is my blood pressure?"]


@pytest.fixture(scope="module")
def shared_cache(tmp_path_factory):
    """One embedding cache for the tests that only read results (each chunk is embedded once per module)."""
    return str(tmp_path_factory.mktemp("embeddings"))


@pytest.fixture
def encode_calls(monkeypatch):
    """The texts of every encode call on the shared model."""
    model = shared_model(resolve_model(DEFAULT_MODEL)[0])
    calls: list[list[str]] = []
    original = model.encode

    def counting(texts, *args, **kwargs):
        calls.append(list(texts))
        return original(texts, *args, **kwargs)

    monkeypatch.setattr(model, "encode", counting)
    return calls


def test_finds_the_session_holding_a_rare_lab(stream, shared_cache):
    memory = DenseMemory(cache_dir=shared_cache)
    memory.ingest(stream)
    [retrieval] = memory.retrieve([FACT_QUESTION], k=5)
    assert FACT_SESSION_ID in {sid for item in retrieval.items for sid in item.session_ids}


def test_chunk_hits_carry_their_session(stream, shared_cache):
    memory = DenseMemory(cache_dir=shared_cache)
    memory.ingest(stream)
    [retrieval] = memory.retrieve([FACT_QUESTION], k=5)
    hit = next(item for item in retrieval.items if item.session_ids == (FACT_SESSION_ID,))
    assert "ceruloplasmin came back at 0.12 g/L" in hit.text
    assert hit.text.count("\n") == 4  # one window of 4 turns under the date header
    valid = {s.session_id for s in stream}
    assert all(item.session_ids and set(item.session_ids) <= valid for item in retrieval.items)
    scores = [item.score for item in retrieval.items]
    assert scores == sorted(scores, reverse=True) and len(scores) == 5


def test_each_chunk_is_embedded_once_across_instances(stream, tmp_path, encode_calls):
    first = DenseMemory(cache_dir=str(tmp_path))
    first.ingest(stream)
    assert sum(len(texts) for texts in encode_calls) == len(first.store)
    expected = first.retrieve(QUESTIONS, k=5)
    encode_calls.clear()
    second = DenseMemory(cache_dir=str(tmp_path))  # another patient or mode holding the same sessions
    second.ingest(stream)
    assert encode_calls == []
    got = second.retrieve(QUESTIONS, k=5)
    assert encode_calls == [QUESTIONS]  # all questions in one call
    assert [[i.session_ids for i in r.items] for r in got] == [[i.session_ids for i in r.items] for r in expected]
    assert np.allclose([i.score for r in got for i in r.items], [i.score for r in expected for i in r.items],
                       atol=1e-5)
    assert second.model is first.model


def test_reset_forgets_and_reingest_reads_the_cache(stream, shared_cache, encode_calls):
    memory = DenseMemory(cache_dir=shared_cache)
    memory.ingest(stream)
    memory.reset()
    assert memory.session_ids() == set()
    assert all(not r.items for r in memory.retrieve(QUESTIONS, k=5))
    encode_calls.clear()
    memory.ingest(stream[:3])
    assert encode_calls == []
    assert memory.session_ids() == {s.session_id for s in stream[:3]}
    assert {sid for r in memory.retrieve(QUESTIONS, k=20) for i in r.items for sid in i.session_ids} <= \
        memory.session_ids()


def test_embeddings_are_normalized(stream, shared_cache):
    memory = DenseMemory(cache_dir=shared_cache)
    memory.ingest(stream[:2])
    memory.retrieve(["x"], k=1)
    assert np.allclose(np.linalg.norm(memory._matrix, axis=1), 1.0, atol=1e-4)


def test_threads_option_sets_torch_threads(monkeypatch, tmp_path):
    import torch

    seen = []
    monkeypatch.setattr(torch, "set_num_threads", seen.append)
    DenseMemory(cache_dir=str(tmp_path), threads=3)
    assert seen == [3]


def test_missing_model_folder_is_a_clear_error(tmp_path):
    with pytest.raises(InputError, match=r"--memory_args for 'dense'.*not a local sentence-transformers folder"):
        load_memory("dense", {"model": str(tmp_path / "nowhere"), "cache_dir": str(tmp_path)})


def test_the_bf16_backend_ranks_as_float32_does_within_its_tolerance_and_is_cached_apart(stream, tmp_path):
    exact = DenseMemory(cache_dir=str(tmp_path))
    fast = DenseMemory(cache_dir=str(tmp_path), backend="torch-bf16")
    assert fast.model_id == f"{exact.model_id}#torch-bf16"  # (its vectors never stand in for float32's)
    for memory in (exact, fast):
        memory.ingest(stream)
    ranked = [memory.retrieve(QUESTIONS, k=5) for memory in (exact, fast)]
    for a, b in zip(*ranked, strict=True):
        # the documented tolerance: scores within 0.005 of float32's, the top-5 overlapping by at least four of five
        assert max(abs(x.score - y.score) for x, y in zip(a.items, b.items, strict=True)) < 0.005
        assert len({i.text for i in a.items} & {i.text for i in b.items}) >= 4
    assert FACT_SESSION_ID in {sid for item in ranked[1][0].items for sid in item.session_ids}


def test_the_openvino_backend_ranks_exactly_as_float32_does_and_is_cached_apart(stream, tmp_path):
    pytest.importorskip("openvino")
    exact = DenseMemory(cache_dir=str(tmp_path))
    converted = DenseMemory(cache_dir=str(tmp_path), backend="openvino")
    assert converted.model_id == f"{exact.model_id}#openvino"
    for memory in (exact, converted):
        memory.ingest(stream)
    ranked = [memory.retrieve(QUESTIONS, k=5) for memory in (exact, converted)]
    for a, b in zip(*ranked, strict=True):
        # the documented tolerance: the same chunks in the same order, scores within 1e-5 of float32's
        assert [i.text for i in a.items] == [i.text for i in b.items]
        assert max(abs(x.score - y.score) for x, y in zip(a.items, b.items, strict=True)) < 1e-5


def test_the_openvino_backend_without_its_package_is_a_clear_error(monkeypatch, tmp_path):
    import sys

    from medmemorybench.memory.dense import load_embedder

    monkeypatch.setitem(sys.modules, "openvino", None)  # (an import of it now raises ImportError)
    with pytest.raises(ValueError, match=r"backend openvino needs the openvino package: pip install"):
        load_embedder(resolve_model(DEFAULT_MODEL)[0], backend="openvino")


def test_an_unknown_backend_is_a_clear_error(tmp_path):
    with pytest.raises(InputError, match=r"backend must be one of torch, torch-bf16, openvino, not 'onnx'"):
        load_memory("dense", {"backend": "onnx", "cache_dir": str(tmp_path)})
