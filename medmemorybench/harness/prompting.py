"""Rendering question prompts from the Jinja templates in `prompts/` (sandboxed, StrictUndefined).

The memory goes first and the question last, so that a patient's shared history is a common prefix
(vLLM's prefix cache serves the repeats). No wall-clock time: `as_of` is the date of the latest
session the memory has read (a regular visit: noise is always dated before its checkpoint's last one).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from jinja2 import FileSystemLoader, StrictUndefined, TemplateError, meta

from medmemorybench.harness.tasks import TaskConfig, TaskConfigError
from medmemorybench.memory.base import MemoryItem
from medmemorybench.models.base import ChatRequest
from medmemorybench.questions.spec import type_codes
from medmemorybench.resources import prompts_dir
from medmemorybench.templating import BoundedSandbox


def item_dates(item: MemoryItem, dates: dict[str, str]) -> list[str]:
    """The distinct dates of an item's sessions as its memory saw them (`ObservedStream.dates`, keyed by the dataset's
    id), in the item's order. A prompt names an item by these alone, as a deployed assistant knows when a
    conversation was held and never whether it was a visit, a general question or one about a relative."""
    return list(dict.fromkeys(dates[sid] for sid in item.session_ids))


def prompt_hash(request: ChatRequest) -> str:
    """SHA-256 of the messages (what the model reads)."""
    text = "\n".join(f"{m['role']}:{m['content']}" for m in request.messages)
    return hashlib.sha256(text.encode()).hexdigest()


def template_hashes(task: TaskConfig, folder: Path | None = None) -> dict[str, str]:
    """SHA-256 of every template file a task's prompts are rendered from (its system prompt, each type's template
    and what they include), by name relative to `prompts/`: the run header records them, so a run made with edited
    prompts is known as such."""
    folder = folder or prompts_dir()
    env = BoundedSandbox(undefined=StrictUndefined)
    pending = [task.system_prompt, *(task.template_for(code) for code in task.types())]
    hashes: dict[str, str] = {}
    while pending:
        name = pending.pop()
        if name in hashes:
            continue
        text = (folder / name).read_text(encoding="utf-8")
        hashes[name] = hashlib.sha256(text.encode("utf-8")).hexdigest()
        pending += [ref for ref in meta.find_referenced_templates(env.parse(text)) if ref]
    return dict(sorted(hashes.items()))


class PromptBuilder:
    """Builds the chat request of a question."""

    def __init__(self, folder: Path | None = None) -> None:
        self.env = BoundedSandbox(loader=FileSystemLoader(str(folder or prompts_dir())),
                                        undefined=StrictUndefined, keep_trailing_newline=False)

    def _render(self, template: str, source: str, **context: object) -> str:
        try:
            return self.env.get_template(template).render(**context).strip()
        except TemplateError as exc:
            raise TaskConfigError(f"{source}: template '{template}': {exc}") from None
        except (MemoryError, OverflowError, RecursionError) as exc:  # (what the sandbox's bounds do not foresee)
            raise TaskConfigError(f"{source}: template '{template}': too large to render "
                                  f"({exc.__class__.__name__})") from None

    def build(self, task: TaskConfig, question: dict, memory: list[MemoryItem], dates: dict[str, str],
              as_of: str) -> ChatRequest:
        """The request for one question given what the memory retrieved; `dates`: dataset session id -> the date
        its memory saw."""
        records = [{"dates": item_dates(item, dates), "text": item.text, "session_ids": list(item.session_ids)}
                   for item in memory]
        system = self._render(task.system_prompt, task.source_file, as_of=as_of)
        user = self._render(task.template_for(shown_as(question)), task.source_file,
                            question=question, memory=records, as_of=as_of)
        kwargs = task.generation_kwargs
        return ChatRequest(messages=[{"role": "system", "content": system}, {"role": "user", "content": user}],
                           max_tokens=kwargs.max_tokens, temperature=kwargs.temperature, stop=kwargs.stop)


def shown_as(question: dict) -> str:
    """The type whose prompt a question is shown with: an abstention question borrows the prompt of the type
    whose wording it borrows (`template` `sua.current_dose` -> SUA), so neither its text nor its prompt tells a
    model that the honest answer is to abstain."""
    if question["query_type"] == "ABS":
        borrowed = (question.get("template") or "").partition(".")[0].upper()
        if borrowed in type_codes():
            return borrowed
    return question["query_type"]
