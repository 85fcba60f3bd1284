"""Physician review: seeded, stratified review sheets of a built dataset, and scoring of the filled sheets."""

from medmemorybench.review.score import (
    Agreement,
    ErrorRate,
    ReviewedItem,
    ReviewScores,
    agreement,
    cohen_kappa,
    error_rates,
    read_sheet,
    score_sheets,
    write_scores_json,
)
from medmemorybench.review.sheet import COLUMNS, VERDICTS, ReviewItem, ReviewSheet, write_review_sheet

__all__ = ["COLUMNS", "VERDICTS", "Agreement", "ErrorRate", "ReviewItem", "ReviewScores", "ReviewSheet",
           "ReviewedItem", "agreement", "cohen_kappa", "error_rates", "read_sheet", "score_sheets",
           "write_review_sheet", "write_scores_json"]
