"""Hidden-gold releases (`dataset.hidden`): the public half holds no gold, the sealed file restores the build exactly,
runs on it are recorded unscored and scored only against the sealed gold, and the board labels such rows verified."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import pytest

from medmemorybench.dataset.build import BuildOptions, fingerprint_rows
from medmemorybench.dataset.hidden import GOLD_FIELDS, read_sealed, reveal_rows, write_sealed
from medmemorybench.dataset.load import read_rows
from medmemorybench.dataset.pipeline import build_and_export
from medmemorybench.dataset.schema import METADATA_FILE
from medmemorybench.dataset.validate import validate_rows
from medmemorybench.errors import InputError
from medmemorybench.harness.runner import Runner
from medmemorybench.leaderboard.board import load_board
from medmemorybench.leaderboard.rescore import verify_run
from medmemorybench.leaderboard.submit import prepare_submission, write_to_folder
from medmemorybench.models.base import ChatRequest, Completion
from tests.harness.conftest import RecordingBackbone, dataset_questions, run, run_config

OPTIONS = BuildOptions(seed=11, personas=2, encounters=20, health_sessions=3, family_sessions=3, language="en")


@pytest.fixture(scope="module")
def release(tmp_path_factory) -> tuple[Path, Path, Path]:
    """(the public half of a hidden-gold release, its sealed gold, the same build published with its gold)."""
    out = tmp_path_factory.mktemp("hidden")
    sealed = out / "sealed-gold.json.gz"
    folder, _ = build_and_export(out / "season", OPTIONS, sealed_gold=sealed, allow_audit_failures=True)
    public, _ = build_and_export(out / "public", OPTIONS, allow_audit_failures=True)
    return folder, sealed, public


def test_the_public_half_holds_no_gold(release):
    folder, sealed, public = release
    rows = read_rows(folder)
    assert validate_rows(rows, hidden=True) == []
    assert "personas" not in rows and not (folder / "personas").exists()
    questions = [q for split in rows["questions"].values() for q in split]
    assert questions and all(q[name] == blank for q in questions for name, blank in GOLD_FIELDS.items())
    full = [q for split in read_rows(public)["questions"].values() for q in split]
    assert {q["query_type"] for q in full} >= {"ABS", "IG", "MQ"}  # (what there was to hide)
    assert "ABS" not in {q["query_type"] for q in questions}
    assert not any(code in q["query_id"] for q in questions for code in ("ABS", "EEM", "IG", "MQ", "TLA", "SUA"))
    assert all(not s["event_ids"] for split in rows["efficient"].values() for row in split for s in row["sessions"])
    meta = json.loads((folder / METADATA_FILE).read_text(encoding="utf-8"))
    assert meta["hidden"] is True and meta["seed"] is None and "seed" not in meta["options"]
    assert "seed 11" not in (folder / "README.md").read_text(encoding="utf-8")
    assert not sealed.resolve().is_relative_to(folder.resolve())
    # a gold field left in a hidden release is what validation exists to catch
    leaked = {**rows, "questions": {s: [{**q, "answer": "80 mg"} for q in split]
                                    for s, split in rows["questions"].items()}}
    assert any("holds gold" in p for p in validate_rows(leaked, hidden=True))


def test_the_sealed_gold_restores_the_build_it_was_sealed_from(release, tmp_path):
    folder, sealed_path, public = release
    sealed = read_sealed(sealed_path)
    restored = reveal_rows(read_rows(folder), sealed)
    assert fingerprint_rows(restored) == json.loads((public / METADATA_FILE).read_text())["fingerprint"]
    assert sealed["seed"] == OPTIONS.seed
    edited = json.loads(json.dumps(sealed))
    first = next(iter(edited["questions"]["en"].values()))
    first["answer"] = "something else"
    with pytest.raises(InputError, match="edited"):
        reveal_rows(read_rows(folder), edited)
    with pytest.raises(InputError, match="sealed for release"):
        reveal_rows(read_rows(public), sealed)
    for data in (b"not gzip", gzip.compress(b"[1, 2]")):
        (tmp_path / "bad.gz").write_bytes(data)
        with pytest.raises(InputError, match="--gold: .*bad.gz"):
            read_sealed(tmp_path / "bad.gz")
    write_sealed(sealed, tmp_path / "again.gz")
    assert read_sealed(tmp_path / "again.gz") == sealed


class KnowingBackbone(RecordingBackbone):
    """Unit-test double: answers every other question (by its text) with the true gold, the rest wrongly."""

    name = "knowing"

    def __init__(self, questions: list[dict]) -> None:
        super().__init__()
        self.gold = {q["question"]: q["answer"] if i % 2 == 0 else "I believe it was 5 mg."
                     for i, q in enumerate(questions)}

    @property
    def model_id(self) -> str:
        return "knowing-double"

    def generate(self, requests: list[ChatRequest]) -> list[Completion]:
        return [Completion(text=next((a for q, a in self.gold.items() if q in r.messages[-1]["content"]), "no idea"),
                           prompt_tokens=10, completion_tokens=3) for r in requests]


def test_a_run_is_recorded_unscored_and_scored_only_against_the_sealed_gold(release, tmp_path):
    folder, sealed_path, public = release
    questions = dataset_questions(public, "efficient")
    hidden_run = run_config(folder, tmp_path / "hidden", memory="bm25", model="hf")
    run(hidden_run, backbone=KnowingBackbone(questions))
    public_run = run_config(public, tmp_path / "public", memory="bm25", model="hf")
    run(public_run, backbone=KnowingBackbone(questions))
    samples = [json.loads(line) for line in (hidden_run.output_path / "samples.jsonl").read_text().splitlines()]
    assert {s["status"] for s in samples} == {"answered"}
    assert all(s["gold"] is None and s["recall_at_k"] is None and s["correct"] is None for s in samples)

    assert verify_run(hidden_run.output_path, folder).verification == "unscored"
    scored = verify_run(hidden_run.output_path, folder, read_sealed(sealed_path))
    assert scored.verification == "hidden gold"
    reference = verify_run(public_run.output_path, public)
    for metric in ("correct", "recall_at_k"):
        mine = scored.summary["tasks"]["medmemorybench_efficient"]["metrics"][metric]["overall"][0]["mean"]
        theirs = reference.summary["tasks"]["medmemorybench_efficient"]["metrics"][metric]["overall"][0]["mean"]
        assert mine == pytest.approx(theirs) and 0 < mine < 1

    # a forged line (a score claimed where the release has none to give) is refused before any gold is read
    forged = tmp_path / "forged"
    shutil.copytree(hidden_run.output_path, forged, ignore=shutil.ignore_patterns("memory"))
    lines = (forged / "samples.jsonl").read_text().splitlines()
    lines[0] = json.dumps({**json.loads(lines[0]), "correct": 1.0})
    (forged / "samples.jsonl").write_text("\n".join(lines) + "\n")
    with pytest.raises(InputError, match="correct is 1.0"):
        verify_run(forged, folder, read_sealed(sealed_path))

    # the board: left out without the sealed gold, a verified row with it
    results = tmp_path / "results"
    write_to_folder(prepare_submission(hidden_run.output_path, dataset_path=folder), results)
    write_to_folder(prepare_submission(public_run.output_path, dataset_path=public), results)
    board = load_board(results)
    assert [r.verification for r in board.rows if r.kind == "run"] == ["public gold"]
    assert any("hidden-gold release" in reason for reason in board.left_out)
    board = load_board(results, verify_with=folder, sealed=read_sealed(sealed_path))
    assert [r.verification for r in board.rows if r.kind == "run"] == ["hidden gold"]
    assert any("is not the release" in reason for reason in board.left_out)  # (the public run: another release)


@pytest.mark.parametrize("option", [{"memory": "oracle"}, {"judge": "hf"}])
def test_what_needs_the_gold_is_refused_on_a_hidden_release(release, tmp_path, option):
    with pytest.raises(InputError, match="hidden-gold release"):
        Runner(run_config(release[0], tmp_path, memory=option.get("memory", "bm25"), judge=option.get("judge")))
