"""LongMemEval's own QA measure: its LLM judge with its answer-check prompts (not ours).

The prompts are `prompts/judge/longmemeval/*.jinja`, verbatim from xiaowu0162/LongMemEval
`src/evaluation/evaluate_qa.py` (`get_anscheck_prompt`, commit d6dc8b50a2d9ac0c99485ea28fa5755c62414c34): one per
question type (single-session-user, single-session-assistant and multi-session share `default`) and one for
abstention questions (their id holds `_abs`), each filled with the question, the gold answer (for abstention, the
source's explanation) and the reply. As there: one user message, temperature 0, at most 10 tokens, and the verdict
is whether 'yes' occurs in the lower-cased reply. Unlike there: every request of a checkpoint goes in one batched
`generate`; a backbone error or an empty reply is `status="error"`, never a verdict (their script would count an
empty reply as no); each verdict records the judge model, the template and its SHA-256, and the raw reply.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from medmemorybench.models.base import Backbone, ChatRequest
from medmemorybench.resources import prompts_dir
from medmemorybench.scoring.base import Question, Score
from medmemorybench.scoring.llm_judge import JudgePrompt, ask_judge, read_judge_templates

JUDGE_MAX_TOKENS = 10
"""Their `max_tokens`."""
TEMPLATES = ("default", "temporal-reasoning", "knowledge-update", "single-session-preference", "abstention")
SOURCE_TYPES = ("single-session-user", "single-session-assistant", "multi-session", "temporal-reasoning",
                "knowledge-update", "single-session-preference")
"""LongMemEval's question types (`question_type`)."""
_PREFIX = "longmemeval."


def load_longmemeval_prompts(folder: Path | None = None) -> dict[str, JudgePrompt]:
    """The five pinned answer-check templates, keyed as in `TEMPLATES`.

    Raises:
        InputError: If one is missing.
    """
    # (no trailing newline: the rendered prompt is byte for byte the string their code formats)
    return read_judge_templates(folder or prompts_dir() / "judge" / "longmemeval", TEMPLATES, "judge/longmemeval",
                                keep_trailing_newline=False)


def source_type(question: Question) -> tuple[str, bool] | None:
    """(LongMemEval question type, abstention?) of an imported question, from its `template`
    (`longmemeval.multi-session`, `longmemeval.multi-session.abstention`); None for any other question."""
    template = str(question.get("template") or "")
    if not template.startswith(_PREFIX):
        return None
    kind, _, flag = template[len(_PREFIX):].partition(".")
    if kind not in SOURCE_TYPES:
        return None
    return kind, flag == "abstention" or bool(question.get("abstain"))


def template_key(question: Question) -> str:
    """Which template judges the question (`get_anscheck_prompt`'s choice).

    Raises:
        ValueError: If the question is not an imported LongMemEval question.
    """
    found = source_type(question)
    if found is None:
        raise ValueError(f"{question.get('query_id')}: not a LongMemEval question (template "
                         f"{question.get('template')!r}); LongMemEval's judge needs its question type")
    kind, abstention = found
    if abstention:
        return "abstention"
    return kind if kind in TEMPLATES else "default"


def build_longmemeval_request(question: Question, prediction: str, prompt: JudgePrompt) -> ChatRequest:
    """The judge request for one reply: one user message, temperature 0, 10 tokens (as theirs)."""
    content = prompt.template.render(question=question["question"], answer=question["answer"], response=prediction)
    return ChatRequest(messages=[{"role": "user", "content": content}], max_tokens=JUDGE_MAX_TOKENS, temperature=0.0)


def longmemeval_judge_many(questions: Sequence[Question], predictions: Sequence[str], backbone: Backbone,
                           prompts: dict[str, JudgePrompt] | None = None) -> list[Score]:
    """LongMemEval's verdict on many replies with one `backbone.generate` call.

    Returns:
        One Score per reply: 1.0 when 'yes' is in the judge's lower-cased reply, else 0.0; value None with status
        "error" when the backbone failed or replied nothing. Metadata: the source type, the judge model, the
        template's name and SHA-256, and the raw reply.

    Raises:
        ValueError: If the lists differ in length or a question is not an imported LongMemEval question.
        RuntimeError: If the backbone returns a different number of completions than requests.
    """
    if len(questions) != len(predictions):
        raise ValueError(f"longmemeval_judge_many: {len(questions)} questions but {len(predictions)} predictions")
    prompts = prompts or load_longmemeval_prompts()
    chosen = [prompts[template_key(q)] for q in questions]
    completions = ask_judge(backbone, [build_longmemeval_request(q, p, t)
                                       for q, p, t in zip(questions, predictions, chosen, strict=True)])
    scores = []
    for question, prompt, completion in zip(questions, chosen, completions, strict=True):
        metadata = {"source_type": question.get("template"), "judge_model": backbone.model_id,
                    "judge_template": prompt.name, "judge_template_sha256": prompt.sha256,
                    "judge_reply": completion.text}
        if completion.error or not (completion.text or "").strip():
            reason = f"judge error: {completion.error}" if completion.error else "judge replied nothing"
            scores.append(Score(None, explanation=reason, status="error", metadata=metadata))
            continue
        label = "yes" in completion.text.lower()
        scores.append(Score(float(label), extracted=completion.text.strip(),
                            explanation=f"LongMemEval judge: {'yes' if label else 'no'}", metadata=metadata))
    return scores
