"""The LLM renderer's control flow, with test doubles for the model: verified sessions are kept and
labelled, failing ones are retried and then fall back to the template session."""

from __future__ import annotations

import re

import pytest

from medmemorybench.knowledge import default_knowledge
from medmemorybench.models.base import Backbone, Completion
from medmemorybench.render.conversation import SessionRenderer
from medmemorybench.render.llm import LLMSessionRenderer, is_complete, required_facts
from medmemorybench.render.templates import load_templates
from medmemorybench.simulate import simulate_patient


class RecitingBackbone(Backbone):
    """Unit-test double: recites the quoted facts its prompt asks for (or nothing, when `mute`)."""

    name = "reciting"

    def __init__(self, mute: bool = False) -> None:
        self.mute, self.calls = mute, 0

    @property
    def model_id(self) -> str:
        return "reciting-double"

    def generate(self, requests):  # noqa: ANN001, ANN201
        self.calls += 1
        out = []
        for request in requests:
            prompt = request.messages[-1]["content"]
            facts = re.findall(r'^- "(.*)"$', prompt, flags=re.MULTILINE)
            out.append(Completion(text="Hello." if self.mute else " ".join(facts) or "Hello."))
        return out


@pytest.fixture(scope="module")
def year():
    return simulate_patient(default_knowledge(), 0, 2, n_encounters=10)


def test_sessions_that_state_every_fact_are_kept_and_labelled(year):
    sessions = LLMSessionRenderer(default_knowledge(), load_templates("en"), year, RecitingBackbone()).render_year()
    assert all(s.renderer == "llm:reciting-double" for s in sessions)
    assert all(len(s.turns) == 8 and s.turns[0].role == "patient" for s in sessions)
    kb = default_knowledge()
    for event, session in zip(year.events, sessions, strict=True):
        assert is_complete(session, required_facts(kb, year, event))


def test_failing_sessions_are_retried_then_fall_back_to_templates(year):
    kb, templates = default_knowledge(), load_templates("en")
    backbone = RecitingBackbone(mute=True)
    sessions = LLMSessionRenderer(kb, templates, year, backbone, retries=1).render_year()
    assert backbone.calls == 2 * 8  # two attempts of eight turns
    assert sessions == SessionRenderer(kb, templates, year).render_year()
    assert all(s.renderer == "template" for s in sessions)


class DyingBackbone(RecitingBackbone):
    """Unit-test double: recites like `RecitingBackbone` until its `lives` batches are spent, then the process
    "is killed" (an error mid-build)."""

    def __init__(self, lives: int) -> None:
        super().__init__()
        self.lives = lives

    def generate(self, requests):  # noqa: ANN001, ANN201
        if self.calls >= self.lives:
            raise RuntimeError("killed")
        return super().generate(requests)


def test_a_killed_llm_rendering_goes_on_where_it_stopped(year, tmp_path):
    from medmemorybench.harness.cache import CachingBackbone, ResponseCache

    kb, templates = default_knowledge(), load_templates("en")
    cache_path = tmp_path / "llm-render-cache.sqlite"
    with pytest.raises(RuntimeError, match="killed"):
        LLMSessionRenderer(kb, templates, year, CachingBackbone(DyingBackbone(lives=3), ResponseCache(cache_path)),
                           retries=0).render_year()
    again = RecitingBackbone()
    resumed = LLMSessionRenderer(kb, templates, year, CachingBackbone(again, ResponseCache(cache_path)),
                                 retries=0).render_year()
    assert again.calls == 8 - 3  # the three turns written before the kill come from the cache
    cold = LLMSessionRenderer(kb, templates, year, RecitingBackbone(), retries=0).render_year()
    assert resumed == cold
