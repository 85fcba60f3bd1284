"""Backbone names, lm-eval style model_args, and the install hint for a missing optional dependency."""

from __future__ import annotations

import builtins

import pytest

from medmemorybench.errors import InputError
from medmemorybench.models import load_backbone, parse_model_args


def test_model_args_are_parsed_with_types():
    assert parse_model_args("pretrained=/m,tensor_parallel_size=2,temperature=0.5,trust=true") == {
        "pretrained": "/m", "tensor_parallel_size": 2, "temperature": 0.5, "trust": True}
    assert parse_model_args("") == {}


def test_malformed_model_args_name_the_flag():
    with pytest.raises(InputError, match=r"--judge_args: 'oops' is not key=value"):
        parse_model_args("a=1,oops", "--judge_args")


def test_unknown_backbone_suggests_and_lists():
    expected = r"--model: unknown model 'vlm'\. Did you mean 'vllm'\?.*Available: hf, none, openai, vllm"
    with pytest.raises(InputError, match=expected):
        load_backbone("vlm")


def test_missing_vllm_points_to_a_separate_gpu_environment(monkeypatch):
    real_import = builtins.__import__

    def no_vllm(name, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003, ANN202
        if name == "vllm" or name.startswith("vllm."):
            raise ModuleNotFoundError("No module named 'vllm'", name="vllm")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_vllm)
    monkeypatch.delitem(__import__("sys").modules, "medmemorybench.models.vllm_backend", raising=False)
    with pytest.raises(InputError, match=r"needs the package 'vllm'.*GPU environment of its own") as raised:
        load_backbone("vllm", {"pretrained": "x"})
    assert "pip install" not in str(raised.value)  # (installed into this CPU env it would replace CPU torch)


def test_bad_constructor_argument_is_an_input_error():
    with pytest.raises(InputError, match=r"--model_args for 'openai'"):
        load_backbone("openai", {"modle": "x"})


def test_none_is_a_registered_backbone_that_answers_nothing():
    from medmemorybench.models.registry import MODELS

    none = load_backbone("none")
    assert none.answers is False and "none" in MODELS.names()
    with pytest.raises(InputError, match=r"--model_args for 'none'"):
        load_backbone("none", {"model": "x"})


def test_a_third_party_backbone_is_found_by_its_entry_point(monkeypatch):
    from importlib.metadata import EntryPoint

    import medmemorybench.registry as shared_registry
    from medmemorybench.models.registry import ENTRY_POINT_GROUP

    entry = EntryPoint("echoing", "tests.models.test_serve_robust:PickyBackbone", ENTRY_POINT_GROUP)
    monkeypatch.setattr(shared_registry, "entry_points", lambda group: [entry] if group == ENTRY_POINT_GROUP else [])
    backbone = load_backbone("echoing")
    assert backbone.model_id == "picky" and backbone.answers
