"""Hidden-gold releases (`dataset.hidden`): the public half holds no gold, the sealed file restores the build exactly,
runs on it are recorded unscored and scored only against the sealed gold, and the board labels such rows verified."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import pytest

from medmemorybench.dataset.build import BuildOptions, fingerprint_rows
from medmemorybench.dataset.hidden import GOLD_FIELDS, read_sealed, reveal_rows, without_questions, write_sealed
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
    card = (folder / "README.md").read_text(encoding="utf-8")
    assert "seed 11" not in card and "best rule" not in card and not meta["stats"]["audit_table"]
    assert "ABS" not in meta["stats"]["questions_by_type"]
    assert not sealed.resolve().is_relative_to(folder.resolve()) and sealed.stat().st_mode & 0o077 == 0
    assert {q["template"] for q in questions} <= {"eem", "tla", "sua", "mq", "ig", "mcd"}
    # a gold field left in a hidden release is what validation exists to catch
    leaked = {**rows, "questions": {s: [{**q, "answer": "80 mg"} for q in split]
                                    for s, split in rows["questions"].items()}}
    assert any("holds gold" in p for p in validate_rows(leaked, hidden=True))


def test_no_type_count_gives_an_abstention_away(release):
    """The schedule asks a fixed number of each type per patient and checkpoint; an abstention comes on top, typed as
    the type it borrows, so its group was the large one (130 of 197 abstentions found by that and the template)."""
    folder, sealed_path, _ = release
    sealed = read_sealed(sealed_path)
    real = {public_id: q["query_type"] for public_id, q in sealed["questions"]["en"].items()}
    groups: dict[tuple, list[str]] = {}
    for split in read_rows(folder)["questions"].values():
        for q in split:
            groups.setdefault((q["persona_id"], q["checkpoint"], q["query_type"]), []).append(real[q["query_id"]])
    sizes: dict[tuple[str, bool], list[int]] = {}
    for (_, _, shown), group in groups.items():
        sizes.setdefault((shown, "ABS" in group), []).append(len(group))
    for (shown, with_abs), found in sizes.items():
        if with_abs:
            assert max(found) <= max(sizes.get((shown, False), [0])), (shown, found)
    assert sealed["withheld"] and any(with_abs for _, with_abs in sizes)


def test_the_sealed_gold_restores_the_build_it_was_sealed_from(release, tmp_path):
    folder, sealed_path, public = release
    sealed = read_sealed(sealed_path)
    restored = reveal_rows(read_rows(folder), sealed)
    # (the build less the answerable questions withheld so that no type's count shows an abstention)
    assert fingerprint_rows(restored) == fingerprint_rows(without_questions(read_rows(public), set(sealed["withheld"])))
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
    reference = {s["query_id"]: s for s in verify_run(public_run.output_path, public).samples}
    original = {public_id: q["query_id"] for public_id, q in read_sealed(sealed_path)["questions"]["en"].items()}
    for sample in scored.samples:  # (each answer scores as the same answer on the public half)
        theirs = reference[original[sample["query_id"]]]
        assert [sample[k] for k in ("query_type", "correct", "recall_at_k", "abstained")] == \
            [theirs[k] for k in ("query_type", "correct", "recall_at_k", "abstained")]
    assert 0 < scored.summary["tasks"]["medmemorybench_efficient"]["metrics"]["correct"]["overall"][0]["mean"] < 1

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
    # (the public run: on another build, shown only re-scored against it, in a table of its own)
    assert any("ran on another MedMemoryBench build" in reason for reason in board.left_out)


@pytest.mark.parametrize("option", [{"memory": "oracle"}, {"judge": "hf"}, {"tasks": ["medmemorybench_efficient_abs"]}])
def test_what_needs_the_gold_is_refused_on_a_hidden_release(release, tmp_path, option):
    with pytest.raises(InputError, match="hidden-gold release"):
        Runner(run_config(release[0], tmp_path, memory=option.get("memory", "bm25"), judge=option.get("judge"),
                          **({"tasks": option["tasks"]} if "tasks" in option else {})))


def test_a_type_filtered_task_is_scored_with_the_abstentions_it_asked(release, tmp_path):
    folder, sealed_path, _ = release
    config = run_config(folder, tmp_path, memory="bm25", tasks=["medmemorybench_efficient_eem"])
    run(config)
    scored = verify_run(config.output_path, folder, read_sealed(sealed_path))
    assert {s["query_type"] for s in scored.samples} == {"EEM", "ABS"}  # (the abstentions shown as EEM)
