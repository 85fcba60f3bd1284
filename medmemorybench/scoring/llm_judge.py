"""The LLM judge for TLA, SUA, IG and MCD, through an injected Backbone (the paper's measure for these types).

Prompts are `prompts/judge/rubric.jinja` (TLA/SUA/IG: {"correct", "reason"}) and `prompts/judge/mcd.jinja`
(MCD: NCR, CRC, CC, same conclusion, veto). Requests go at temperature 0 with a fixed seed, all in one
`generate` call. Every verdict records the judge model and the SHA-256 of the template text. A backbone
error or an unparseable reply is `Score(value=None, status="error")`, never a default score.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from jinja2 import StrictUndefined, Template

from medmemorybench.errors import InputError
from medmemorybench.models.base import Backbone, ChatRequest, Completion
from medmemorybench.questions.spec import judged_codes
from medmemorybench.resources import prompts_dir
from medmemorybench.scoring._verdict import VerdictError, read_mcd_verdict, read_rubric_verdict
from medmemorybench.scoring.base import Question, Score
from medmemorybench.templating import BoundedSandbox

JUDGE_MAX_TOKENS = 512

_RUBRIC_SCHEMA = {"type": "object", "required": ["correct", "reason"],
                  "properties": {"correct": {"type": "boolean"}, "reason": {"type": "string"}}}
_MCD_SCHEMA = {"type": "object", "required": ["ncr", "crc", "cc", "same_conclusion", "veto", "reason"],
               "properties": {"ncr": {"type": "number", "minimum": 0, "maximum": 1},
                              "crc": {"type": "number", "minimum": 0, "maximum": 1},
                              "cc": {"enum": [1, 0.7, 0.5, 0.3, 0]},
                              "same_conclusion": {"type": "boolean"}, "veto": {"type": "boolean"},
                              "reason": {"type": "string"}}}


@dataclass(frozen=True)
class JudgePrompt:
    """A judge template and its provenance."""

    name: str
    """"judge/rubric.jinja" or "judge/mcd.jinja"."""
    template: Template
    """The compiled (sandboxed, StrictUndefined) template."""
    sha256: str
    """SHA-256 of the template text, recorded with every verdict."""


def load_judge_prompts(folder: Path | None = None) -> dict[str, JudgePrompt]:
    """The two judge templates, keyed "rubric" and "mcd".

    Args:
        folder: Where the templates are; default `prompts/judge/`.

    Returns:
        The compiled templates with their hashes.
    """
    return read_judge_templates(folder or prompts_dir() / "judge", ("rubric", "mcd"), "judge")


def read_judge_templates(folder: Path, keys: Sequence[str], name_prefix: str, *,
                         keep_trailing_newline: bool = True) -> dict[str, JudgePrompt]:
    """`<folder>/<key>.jinja` for each key, compiled (sandboxed, StrictUndefined) with its SHA-256.

    Raises:
        InputError: If a template file is missing (one line naming it).
    """
    env = BoundedSandbox(undefined=StrictUndefined, keep_trailing_newline=keep_trailing_newline)
    prompts = {}
    for key in keys:
        path = folder / f"{key}.jinja"
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise InputError(f"{path}: judge template missing (the judge cannot run without it)") from None
        prompts[key] = JudgePrompt(f"{name_prefix}/{key}.jinja", env.from_string(text),
                                   hashlib.sha256(text.encode("utf-8")).hexdigest())
    return prompts


def _context(question: Question, prediction: str) -> dict[str, Any]:
    chain = [node if isinstance(node, dict) else node.model_dump() for node in question.get("reasoning_chain") or []]
    return {"query_type": question["query_type"], "question": question["question"], "answer": question["answer"],
            "answer_aliases": list(question.get("answer_aliases") or []),
            "key_facts": list(question.get("key_facts") or []), "trap_category": question.get("trap_category"),
            "common_wrong_answer": question.get("common_wrong_answer"), "reasoning_chain": chain,
            "facts": [f if isinstance(f, dict) else f.model_dump() for f in question.get("facts") or []],
            "prediction": prediction}


def build_judge_request(question: Question, prediction: str, prompt: JudgePrompt) -> ChatRequest:
    """The chat request asking the judge about one answer (temperature 0, seed 0, JSON schema).

    Raises:
        ValueError: If the question's type is not judged.
    """
    if question.get("query_type") not in judged_codes():
        raise ValueError(f"{question.get('query_id')}: query type {question.get('query_type')!r} is not judged; "
                         f"the judge grades {', '.join(judged_codes())}")
    schema = _MCD_SCHEMA if question["query_type"] == "MCD" else _RUBRIC_SCHEMA
    content = prompt.template.render(**_context(question, prediction))
    return ChatRequest(messages=[{"role": "user", "content": content}], max_tokens=JUDGE_MAX_TOKENS,
                       temperature=0.0, seed=0, response_schema=schema)


def judge_many(questions: Sequence[Question], predictions: Sequence[str], backbone: Backbone,
               prompts: dict[str, JudgePrompt] | None = None) -> list[Score]:
    """Judge many answers with one `backbone.generate` call.

    Args:
        questions: Question rows of the judged types (TLA, SUA, IG, MCD).
        predictions: The answers, one per question (never an errored generation: the runner keeps those).
        backbone: The judge model.
        prompts: Preloaded templates; default `load_judge_prompts()`.

    Returns:
        One Score per question: 1.0 or 0.0 with the verdict in metadata, or value None and status
        "error" when the backbone failed or the reply was not a valid verdict.

    Raises:
        ValueError: If the lists differ in length or a question's type is not judged.
        RuntimeError: If the backbone returns a different number of completions than requests.
    """
    if len(questions) != len(predictions):
        raise ValueError(f"judge_many: {len(questions)} questions but {len(predictions)} predictions")
    prompts = prompts or load_judge_prompts()
    chosen = [prompts["mcd" if q.get("query_type") == "MCD" else "rubric"] for q in questions]
    completions = ask_judge(backbone, [build_judge_request(q, p, t)
                                       for q, p, t in zip(questions, predictions, chosen, strict=True)])
    scores = []
    for question, prompt, completion in zip(questions, chosen, completions, strict=True):
        provenance = {"judge_model": backbone.model_id, "judge_template": prompt.name,
                      "judge_template_sha256": prompt.sha256, "judge_reply": completion.text}
        if completion.error:
            scores.append(Score(None, explanation=f"judge error: {completion.error}", status="error",
                                metadata=provenance))
            continue
        read = read_mcd_verdict if question.get("query_type") == "MCD" else read_rubric_verdict
        try:
            score = read(completion.text)
        except VerdictError as error:
            scores.append(Score(None, explanation=str(error), status="error", metadata=provenance))
            continue
        scores.append(replace(score, metadata={**score.metadata, **provenance}))
    return scores


def ask_judge(backbone: Backbone, requests: list[ChatRequest]) -> list[Completion]:
    """Every judge request in one `generate` call.

    Raises:
        RuntimeError: If the backbone returns a different number of completions than requests.
    """
    completions = backbone.generate(requests) if requests else []
    if len(completions) != len(requests):
        raise RuntimeError(f"judge backbone {backbone.model_id!r} returned {len(completions)} completions "
                           f"for {len(requests)} requests")
    return completions


class LLMJudge:
    """A judge bound to a backbone and its templates; callable like a scorer on one answer."""

    def __init__(self, backbone: Backbone, prompts: dict[str, JudgePrompt] | None = None) -> None:
        self.backbone = backbone
        self.prompts = prompts or load_judge_prompts()

    def __call__(self, question: Question, prediction: str) -> Score:
        """Judge one answer (prefer `many` for a batch)."""
        return self.many([question], [prediction])[0]

    def many(self, questions: Sequence[Question], predictions: Sequence[str]) -> list[Score]:
        """Judge many answers in one backbone call (see `judge_many`)."""
        return judge_many(questions, predictions, self.backbone, self.prompts)

    def identity(self) -> dict[str, Any]:
        """What to record in the run header: the judge backbone and the template hashes."""
        return {**self.backbone.identity(), "templates": {p.name: p.sha256 for p in self.prompts.values()}}
