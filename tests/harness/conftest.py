"""A small real dataset folder shared by the harness tests, and recording test doubles."""

from __future__ import annotations

import pytest

from medmemorybench.dataset import BuildOptions, build_dataset, export_dataset
from medmemorybench.knowledge import default_knowledge
from medmemorybench.models.base import Backbone, ChatRequest, Completion
from medmemorybench.render.templates import load_templates


@pytest.fixture(scope="session")
def dataset_dir(tmp_path_factory):
    built = build_dataset(default_knowledge(), load_templates("en"),
                          BuildOptions(seed=5, personas=3, health_sessions=10, family_sessions=10))
    return export_dataset(built, tmp_path_factory.mktemp("data"))


class RecordingBackbone(Backbone):
    """Unit-test double: answers every request with `reply` (or an error) and records each batch."""

    name = "recording"

    def __init__(self, reply: str = "That is not in my records.", error: str | None = None) -> None:
        self.reply, self.error = reply, error
        self.batches: list[list[ChatRequest]] = []

    @property
    def model_id(self) -> str:
        return "recording-double"

    def generate(self, requests):  # noqa: ANN001, ANN201
        self.batches.append(list(requests))
        if self.error:
            return [Completion(error=self.error) for _ in requests]
        return [Completion(text=self.reply, prompt_tokens=10, completion_tokens=3) for _ in requests]
