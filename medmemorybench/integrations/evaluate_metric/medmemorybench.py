"""MedMemoryBench's scores as an `evaluate` metric: evaluate.load(medmemorybench.metric_path())."""

import datasets
import evaluate

from medmemorybench.integrations.evaluate_scores import score_predictions

_DESCRIPTION = "Per-question-type accuracy, selective score, F1, ROUGE-L, safety (and Recall@k, MRR, hallucination " \
    "with retrieved session ids) of answers to MedMemoryBench questions, scored as `medmemorybench run` scores them."
_INPUTS = """
Args:
    predictions: the answers (strings).
    references: the query ids of the questions answered, in the same order.
    questions: the question rows (the `questions` config; any order).
    retrieved (optional): per answer, the session ids of each retrieved item, best first.
    echo (optional): per answer, whether it copies its prompt or records (as `medmemorybench run` records it).
Returns:
    {metric: {TYPE: mean, ..., "all": mean, "mean_over_types": mean}, ..., "n": count}
"""
_CITATION = """@inproceedings{medmemorybench2026,
  title = {MedMemoryBench: Benchmarking Agent Memory in Personalized Healthcare},
  booktitle = {Advances in Neural Information Processing Systems}, year = {2026}, eprint = {2605.11814}
}"""


class MedMemoryBench(evaluate.Metric):
    """A thin shell: the scoring is `medmemorybench.integrations.evaluate_scores.score_predictions`."""

    def _info(self):
        return evaluate.MetricInfo(
            description=_DESCRIPTION, citation=_CITATION, inputs_description=_INPUTS,
            features=datasets.Features({"predictions": datasets.Value("string"),
                                        "references": datasets.Value("string")}),
            reference_urls=["https://arxiv.org/abs/2605.11814"],
        )

    def _compute(self, predictions, references, questions=(), retrieved=None, echo=None,
                 task="medmemorybench_efficient"):
        return score_predictions(predictions, references, questions, retrieved=retrieved, echo=echo, task=task)
