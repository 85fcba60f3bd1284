"""The leaderboard as one self-contained HTML page (CSS, script and data inline; no network), written to a folder
or uploaded as a static Hub Space.

The page's data is JSON inside a `<script type="application/json">` with `<`, `>` and `&` escaped, so no
submitted text can close the element; the script writes every submitted string as text; and a
Content-Security-Policy allows only the page's own inline style and script (by hash), so markup that slipped
through anyway could run nothing.
"""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import json
from pathlib import Path
from typing import Any

from jinja2 import StrictUndefined
from markupsafe import Markup

from medmemorybench import __version__
from medmemorybench.files import write_atomic
from medmemorybench.leaderboard.board import Board
from medmemorybench.templating import BoundedSandbox

STATIC = Path(__file__).parent / "static"
PAGE = "index.html"
SPACE_CARD = """---
title: MedMemoryBench leaderboard
emoji: 🩺
colorFrom: blue
colorTo: green
sdk: static
app_file: index.html
pinned: false
---

The MedMemoryBench leaderboard: runs submitted to the results repo, beside the numbers the paper reported on its own
data. Runs on a hidden-gold release are scored by the board against the sealed gold (verified); runs on a public
release are self-reported (their files re-scored and checked for consistency). Rebuilt with
`medmemorybench publish --space`.
"""
_SCRIPT_SAFE = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}


def _csp_hash(text: str) -> str:
    return "sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii")


def embedded_json(value: Any) -> str:
    """JSON that is safe inside a `<script>` element: no `<`, `>` or `&` in it (escaped as \\uXXXX)."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return "".join(_SCRIPT_SAFE.get(char, char) for char in text)


def render_page(board: Board, source: str, built: dt.datetime | None = None) -> str:
    """The page's HTML."""
    style = (STATIC / "board.css").read_text(encoding="utf-8")
    script = (STATIC / "board.js").read_text(encoding="utf-8")
    env = BoundedSandbox(undefined=StrictUndefined, autoescape=True, keep_trailing_newline=True)
    template = env.from_string((STATIC / "board.html.jinja").read_text(encoding="utf-8"))
    when = (built or dt.datetime.now(dt.timezone.utc)).strftime("%Y-%m-%d %H:%M UTC")
    return template.render(style=Markup(style), script=Markup(script), data=Markup(embedded_json(board.as_dict())),
                           style_hash=_csp_hash(style), script_hash=_csp_hash(script), paper=board.paper, board=board,
                           version=__version__, built=when, source=source)


def write_site(board: Board, out: Path, source: str) -> Path:
    """Write `index.html` into `out`; returns its path.

    Raises:
        OutputError: naming the file when it cannot be written.
    """
    path = Path(out) / PAGE
    write_atomic(path, render_page(board, source))
    return path


def space_files(board: Board, source: str) -> dict[str, bytes]:
    """The files of a static Hub Space serving the page: its card (`sdk: static`) and `index.html`."""
    return {"README.md": SPACE_CARD.encode("utf-8"), PAGE: render_page(board, source).encode("utf-8")}


def publish_space(board: Board, source: str, space_id: str, api: Any = None) -> Any:
    """Create the Space if needed and upload the page in one commit; returns the commit info."""
    from huggingface_hub import CommitOperationAdd, HfApi

    from medmemorybench.leaderboard.hub import hub_call

    api = api or HfApi()
    operations = [CommitOperationAdd(path_in_repo=name, path_or_fileobj=data)
                  for name, data in space_files(board, source).items()]
    with hub_call(f"--space {space_id}"):
        api.create_repo(space_id, repo_type="space", space_sdk="static", exist_ok=True)
        return api.create_commit(repo_id=space_id, repo_type="space", operations=operations,
                                 commit_message="Rebuild the MedMemoryBench leaderboard")
