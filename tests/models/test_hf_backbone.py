"""The embedded SmolLM2-135M-Instruct through transformers on CPU: a real model, a real batch."""

from __future__ import annotations

import pytest

from medmemorybench.models import ChatRequest, load_backbone


@pytest.fixture(scope="module")
def smol():
    return load_backbone("hf", {"batch_size": 4, "max_length": 384})  # a short window keeps the test fast


def test_batched_greedy_generation_is_deterministic(smol):
    requests = [ChatRequest(messages=[{"role": "user", "content": f"Say the number {n}."}], max_tokens=8)
                for n in range(3)]
    first, second = smol.generate(requests), smol.generate(requests)
    assert [c.text for c in first] == [c.text for c in second]
    assert all(c.text and c.error is None and 0 < c.completion_tokens <= 8 for c in first)
    assert all(c.prompt_tokens > 5 for c in first)


def test_over_long_prompt_is_cut_and_the_cut_recorded(smol):
    long = "records " * (smol.context_window + 200)
    (out,) = smol.generate([ChatRequest(messages=[{"role": "user", "content": long + " Question: hi?"}],
                                        max_tokens=4)])
    assert out.truncated_tokens > 0 and out.prompt_tokens <= smol.context_window - 4


def test_identity_names_the_embedded_model(smol):
    assert "smollm2" in smol.identity()["model"].lower()
