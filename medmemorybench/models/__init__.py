"""Backbones: the language models that answer (hf, openai-compatible, vllm), loaded lazily by name."""

from medmemorybench.models.base import Backbone, ChatRequest, Completion, Generation
from medmemorybench.models.registry import BACKBONES, load_backbone, parse_model_args

__all__ = ["BACKBONES", "Backbone", "ChatRequest", "Completion", "Generation", "load_backbone", "parse_model_args"]
