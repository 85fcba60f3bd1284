"""Issue 28's "other build" attack for `scripts/bench_faults.py --only attacks` (the rest are in `fault_attacks.py`):
a run on another MedMemoryBench build (a 1-patient private build of another seed, complete on its own data) handed in
as if it were a run on the release, then its build edited to agree with the run, all through the command.

What must hold: `submit` against the release refuses it; submitted on its own build, the board never ranks it (left
out saying how to show it, or, with `--other_release`, in a table of its own headed with its build); a copy claiming
the release's fingerprint fails re-scoring; `publish --space` leaves it out; an edited copy of its build (the gold's
evidence ids set to the sessions the run retrieved) is refused, with the fingerprint the build records or one made
anew.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

from fault_attacks import Row, cli, errors, is_one_line, left_out, rehash, short, submit

OTHER_SEED = 6
"""The other build's seed (the public release's is 11): fixed, so the bench repeats."""


def page_data(html_dir: Path) -> dict:
    """The data a written board embeds (empty when no page was written)."""
    page = html_dir / "index.html"
    found = re.search(r'<script[^>]*type="application/json"[^>]*>(.*?)</script>', page.read_text(encoding="utf-8"),
                      re.S) if page.exists() else None
    return json.loads(found.group(1)) if found else {}


def ranked_ids(data: dict) -> list[str]:
    return [row["id"] for row in data.get("rows", []) if row["kind"] == "run"]


def edit_build(build: Path, into: Path, run_dir: Path, refingerprint: bool) -> int:
    """A copy of `build` whose every question's evidence is the first session the run retrieved for it (what makes
    its Recall@k 1.0), with the fingerprint the build recorded or, as a cleverer forger would, one computed anew.
    Returns the questions edited."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from medmemorybench.dataset import read_rows
    from medmemorybench.dataset.build import fingerprint_rows

    shutil.copytree(build, into)
    retrieved = {}
    for line in (run_dir / "samples.jsonl").read_text(encoding="utf-8").splitlines():
        sample = json.loads(line)
        if sample.get("retrieved"):
            retrieved.setdefault(sample["query_id"], sample["retrieved"][0]["session_ids"][:1])
    edited = 0
    for path in sorted(into.rglob("*.parquet")):
        rows = pq.read_table(path).to_pylist()
        for row in rows:
            for question in [row, *(row.get("questions") or [])]:
                if question.get("query_id") in retrieved and "evidence_session_ids" in question:
                    question["evidence_session_ids"] = retrieved[question["query_id"]]
                    edited += 1
        pq.write_table(pa.Table.from_pylist(rows, schema=pq.read_schema(path)), path)
    if refingerprint:
        metadata = json.loads((into / "medmemorybench.json").read_text(encoding="utf-8"))
        metadata["fingerprint"] = fingerprint_rows(read_rows(into))
        (into / "medmemorybench.json").write_text(json.dumps(metadata, indent=1), encoding="utf-8")
    return edited


def other_build_run(work: Path, public: Path, other: Path, runs: dict[str, Path]) -> Row:
    release, build, results = public / "medmemorybench", other / "medmemorybench", work / "results-other"
    private_run = work / "run-other-build"
    ran = cli("run", "--tasks", "medmemorybench", "--memory", "bm25", "--model", "none", "--dataset_path", str(build),
              "--output_path", str(private_run), "--no_cache")
    as_official, _ = submit(private_run, work / "results-unused", release)  # (named as the release's run)
    honest, official = submit(runs["both"], results, release)
    own, bundle = submit(private_run, results, build)  # (its own build: it verifies, complete on its own data)
    coverage = re.search(r"(\d+ of \d+ questions)", own.stdout)
    claimed_results = work / "results-other-claim"  # (a copy claiming the release's fingerprint, beside the honest)
    submit(runs["both"], claimed_results, release)
    claimed = claimed_results / bundle.relative_to(results)
    shutil.copytree(bundle, claimed)
    header = json.loads((claimed / "run.json").read_text(encoding="utf-8"))
    header["dataset_fingerprint"] = json.loads((release / "medmemorybench.json").read_text())["fingerprint"]
    (claimed / "run.json").write_text(json.dumps(header, indent=1), encoding="utf-8")
    rehash(claimed, "run.json")

    def board(name: str, *extra: str, folder: Path = results) -> tuple[object, dict]:
        result = cli("leaderboard", "--results", str(folder), "--html", str(work / name), "--dataset_path",
                     str(release), *extra)
        return result, page_data(work / name)

    plain, plain_page = board("board-other")
    shown, shown_page = board("board-other-shown", "--other_release", str(other))
    claim, claim_page = board("board-other-claim", folder=claimed_results)
    space = cli("publish", "--space", "attacker/board", "--results", str(results), "--dry_run", "--dataset_path",
                str(release))
    edits = {name: edit_build(build, work / f"edited-{name.replace(' ', '-')}", private_run,
                              name == "re-fingerprinted") for name in ("kept fingerprint", "re-fingerprinted")}
    edited = {name: board(f"board-edited-{i}", "--other_release", str(work / f"edited-{name.replace(' ', '-')}"))
              for i, name in enumerate(edits)}

    official_id = official.relative_to(results).as_posix()
    mine = str(bundle)
    builds = shown_page.get("other_builds", [])
    fingerprint = json.loads((build / "medmemorybench.json").read_text())["fingerprint"]
    own_table = (len(builds) == 1 and builds[0]["release"]["fingerprint"] == fingerprint
                 and [row["id"] for row in builds[0]["rows"]] == [bundle.relative_to(results).as_posix()])
    plain_reason = next((r for r in left_out(plain) if r.startswith(mine)), "")
    claim_reason = next((r for r in left_out(claim) if r.startswith(str(claimed))), "")
    space_reason = next((r for r in left_out(space) if r.startswith(mine)), "")
    edited_reasons = {name: next((r for r in left_out(result) if r.startswith(mine)), "")
                      for name, (result, _page) in edited.items()}
    checks = {
        "submit against the release refused": is_one_line(as_official) and "is not the release" in
        errors(as_official)[0],
        "submitted on its own build": ran.returncode == own.returncode == honest.returncode == 0 and bool(coverage),
        "no --other_release: not ranked, left out": plain.returncode == 0 and ranked_ids(plain_page) == [official_id]
        and not plain_page.get("other_builds") and "--other_release FOLDER" in plain_reason,
        "--other_release: its own table only": shown.returncode == 0 and ranked_ids(shown_page) == [official_id]
        and own_table and "1 runs on other builds (not ranked)" in shown.stdout,
        "claiming the release's fingerprint: left out": claim.returncode == 0 and bool(claim_reason)
        and ranked_ids(claim_page) == [official_id],
        "publish --space: left out": space.returncode == 0 and "not published with the board" in space_reason,
        "edited build refused": all(result.returncode == 0 and not page.get("other_builds")
                                    and ranked_ids(page) == [official_id] for result, page in edited.values())
        and "do not match its own fingerprint" in edited_reasons["kept fingerprint"]
        and "--other_release FOLDER" in edited_reasons["re-fingerprinted"],
    }
    failed = [name for name, ok in checks.items() if not ok]

    def why(reason: str, bundle_path: str | Path, width: int = 60) -> str:  # (a left-out line less its bundle)
        return short(reason[len(str(bundle_path)):].lstrip(": /") or "(shown)", width)

    def tail(reason: str) -> str:  # (a line about another build, after the fingerprints it names)
        return short(reason.split("): ")[-1] or "(shown)", 90)

    table = builds[0]["release"] if builds else {}
    return Row("run on another build as if official", "submit against the release refuses it; never a ranked row; "
               "with --other_release in its own table headed with its build; a copy claiming the release's "
               "fingerprint, publish --space and an edited copy of its build: left out with a reason",
               f"its run: {coverage[1] if coverage else '-'} of its own 1-patient build; submit as the release's: "
               f"exit {as_official.returncode} ({short(errors(as_official)[0] if errors(as_official) else '-', 70)}); "
               f"board: {len(ranked_ids(plain_page))} ranked row (the release's), left out ({why(plain_reason, mine)})"
               f"; --other_release: exit {shown.returncode}, {len(builds)} own table ({table.get('patients', '-')} "
               f"patient, {table.get('questions', '-')} questions, fingerprint "
               f"{str(table.get('fingerprint', '-'))[:12]}), {len(ranked_ids(shown_page))} ranked; claiming the "
               f"release's fingerprint: left out ({why(claim_reason, claimed)}); publish --space: "
               f"{tail(space_reason)}; edited build ({edits['kept fingerprint']} evidence lists set to the "
               "sessions it retrieved): "
               + f"kept fingerprint: {why(edited_reasons['kept fingerprint'], mine, 110)}; re-fingerprinted: "
               f"{tail(edited_reasons['re-fingerprinted'])}"
               + (f"; FAILED: {', '.join(failed)}" if failed else ""), not failed, 0)
