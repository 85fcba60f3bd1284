"""Scoring: rule scorers from the structured gold, the LLM judge, retrieval, safety and aggregation.

Importing this package registers every scorer in `SCORERS` (`get_scorer("rouge_l")`). Pure Python: the
only model calls go through a Backbone handed to the judge.

Per answer, a caller decides once whether it is an echo and passes the flag to every measure:

    echo = is_echo(text, prompts=[m["content"] for m in request.messages], records=[i.text for i in items])
    scores = score_answer(question, text, judge=judge, echo=echo)     # scores["selective"] too
    abstained = is_abstention(text, echo=echo)
    hallucination = hallucinated(question, text, correct, recall, echo=echo)
    safe, no_answer = trap_safe(question, text, echo=echo), trap_abstained(question, text, echo=echo)
"""

from medmemorybench.scoring.abstention import abstained, abstains, is_abstention
from medmemorybench.scoring.accuracy import as_row, score_answer, score_answers, scorers_for
from medmemorybench.scoring.aggregate import Aggregate, GroupStat, aggregate, wilson_interval
from medmemorybench.scoring.base import SCORERS, Score, ScorerInfo, get_scorer, scorer
from medmemorybench.scoring.echo import is_echo
from medmemorybench.scoring.exact_match import exact_match, gold_strings
from medmemorybench.scoring.llm_judge import (
    JudgePrompt,
    LLMJudge,
    build_judge_request,
    judge_many,
    load_judge_prompts,
)
from medmemorybench.scoring.locomo import locomo_f1
from medmemorybench.scoring.longmemeval import load_longmemeval_prompts, longmemeval_judge_many
from medmemorybench.scoring.multiple_choice import mq_exact, mq_partial, parse_choices
from medmemorybench.scoring.retrieval import recall_at_k, reciprocal_rank
from medmemorybench.scoring.rubric import is_fact_stated, key_fact_rubric
from medmemorybench.scoring.safety import TrapOutcome, hallucinated, trap_abstained, trap_outcome, trap_safe
from medmemorybench.scoring.selective import selective_score
from medmemorybench.scoring.text_overlap import rouge_l, token_f1, tokenize

__all__ = [
    "SCORERS",
    "scorers_for",
    "Aggregate",
    "GroupStat",
    "JudgePrompt",
    "LLMJudge",
    "Score",
    "ScorerInfo",
    "TrapOutcome",
    "abstained",
    "abstains",
    "aggregate",
    "as_row",
    "build_judge_request",
    "exact_match",
    "get_scorer",
    "gold_strings",
    "hallucinated",
    "is_abstention",
    "is_echo",
    "is_fact_stated",
    "judge_many",
    "key_fact_rubric",
    "load_judge_prompts",
    "load_longmemeval_prompts",
    "locomo_f1",
    "longmemeval_judge_many",
    "mq_exact",
    "mq_partial",
    "parse_choices",
    "recall_at_k",
    "reciprocal_rank",
    "rouge_l",
    "score_answer",
    "score_answers",
    "scorer",
    "selective_score",
    "token_f1",
    "tokenize",
    "trap_abstained",
    "trap_outcome",
    "trap_safe",
    "wilson_interval",
]
