"""The leaderboard: submit a run (verified and re-scored against the release), and the board built from a results
folder, as a static page or a Hub Space."""

from medmemorybench.leaderboard.board import Board, BoardRow, load_board, relative_link
from medmemorybench.leaderboard.bundle import SystemClaim, SystemDescription
from medmemorybench.leaderboard.rescore import VerifiedRun, verify_run
from medmemorybench.leaderboard.site import publish_space, render_page, write_site
from medmemorybench.leaderboard.submit import (
    Submission,
    load_claim,
    prepare_submission,
    send_to_hub,
    write_eval_results,
    write_to_folder,
)

__all__ = ["Board", "BoardRow", "Submission", "SystemClaim", "SystemDescription", "VerifiedRun", "load_board",
           "load_claim", "prepare_submission", "publish_space", "relative_link", "render_page", "send_to_hub",
           "verify_run", "write_eval_results", "write_site", "write_to_folder"]
