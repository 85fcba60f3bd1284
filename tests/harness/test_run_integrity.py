"""A complete run or a clear failure: damaged datasets and bad options are refused before anything runs, a run
with too many failed answers says so after keeping everything, a resume never loses the samples file, and
answers are cached as they arrive."""

from __future__ import annotations

import json
import shutil

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from medmemorybench.errors import InputError, RunFailedError
from medmemorybench.harness import results as results_module
from medmemorybench.harness.cache import ResponseCache
from medmemorybench.harness.results import read_samples
from medmemorybench.models.base import Completion
from tests.harness.conftest import RecordingBackbone, run, run_config

EEM = ["medmemorybench_efficient_eem"]


@pytest.fixture
def damaged(dataset_dir, tmp_path):
    """A copy of the shared dataset to damage."""
    copy = tmp_path / "data"
    shutil.copytree(dataset_dir, copy)
    return copy


def test_a_missing_split_is_refused_before_anything_runs(damaged, tmp_path):
    (damaged / "efficient" / "checkpoint_50.parquet").unlink()
    with pytest.raises(InputError, match=r"efficient: splits checkpoint_50 are missing"):
        run(run_config(damaged, tmp_path, limit=1))
    assert not (tmp_path / "run" / "samples.jsonl").exists()


def test_a_missing_config_is_refused(damaged, tmp_path):
    shutil.rmtree(damaged / "mixed")
    with pytest.raises(InputError, match=r"config 'mixed' missing from the dataset"):
        run(run_config(damaged, tmp_path, tasks=["medmemorybench_mixed_eem"], limit=1))


def test_a_corrupt_split_names_its_file(damaged, tmp_path):
    path = damaged / "efficient" / "checkpoint_30.parquet"
    path.write_bytes(path.read_bytes()[:200])
    with pytest.raises(InputError, match=r"checkpoint_30.parquet: corrupted or not a parquet file"):
        run(run_config(damaged, tmp_path, limit=1))


def test_a_question_without_a_known_type_is_refused_not_skipped(damaged, tmp_path):
    path = damaged / "efficient" / "checkpoint_10.parquet"
    rows = pq.read_table(path).to_pylist()
    rows[0]["questions"][0]["query_type"] = None
    pq.write_table(pa.Table.from_pylist(rows, schema=pq.read_schema(path)), path)
    with pytest.raises(InputError, match=r"checkpoint_10.parquet: row 0: questions\[\d+\]\.query_type is null"):
        run(run_config(damaged, tmp_path, limit=1))


@pytest.mark.parametrize("limit", [0, -1])
def test_limit_must_be_a_number_of_patients(dataset_dir, tmp_path, limit):
    with pytest.raises(InputError, match=rf"--limit: {limit} is not a number of patients"):
        run(run_config(dataset_dir, tmp_path, limit=limit))


def test_a_damaged_run_header_on_resume_is_an_input_error(dataset_dir, tmp_path):
    config = run_config(dataset_dir, tmp_path, limit=1, tasks=EEM)
    run(config)
    (config.output_path / "run.json").write_text("{cut", encoding="utf-8")
    config.resume = True
    with pytest.raises(InputError, match=r"run.json is damaged"):
        run(config)


def test_errors_above_the_tolerance_fail_the_run_after_keeping_everything(dataset_dir, tmp_path):
    class Flaky(RecordingBackbone):  # every third answer fails, starting with the first
        calls = 0

        def generate(self, requests):  # noqa: ANN001, ANN201
            out = []
            for _ in requests:
                out.append(Completion(text="x") if self.calls % 3 else Completion(error="HTTP 500: boom"))
                self.calls += 1
            return out

    config = run_config(dataset_dir, tmp_path, model="recording", memory="none", limit=1, tasks=EEM, use_cache=False)
    with pytest.raises(RunFailedError, match=r"answers failed \(\d+\.\d %, above --max_error_rate 0.0\)"):
        run(config, Flaky())
    samples = read_samples(config.output_path / "samples.jsonl")
    assert {s["status"] for s in samples} == {"scored", "error"} and (config.output_path / "summary.json").exists()
    tolerant = run_config(dataset_dir, tmp_path / "tolerant", model="recording", memory="none", limit=1, tasks=EEM,
                          use_cache=False, max_error_rate=0.5)
    run(tolerant, Flaky())  # a third failed, half allowed: the run stands


def test_a_kill_while_a_resume_rewrites_the_samples_leaves_them_whole(dataset_dir, tmp_path, monkeypatch):
    config = run_config(dataset_dir, tmp_path, model="recording", memory="none", limit=1, tasks=EEM, use_cache=False)
    run(config, RecordingBackbone())
    path = config.output_path / "samples.jsonl"
    with path.open("a", encoding="utf-8") as handle:
        handle.write('{"cut by a kill')  # the kill cut the last line: the resume must rewrite the file
    before = read_samples(path)

    def killed(target, text):  # noqa: ANN001, ANN202 - dies after writing half of the new file
        (target.parent / ".samples.jsonl.partial").write_text(text[: len(text) // 2], encoding="utf-8")
        raise KeyboardInterrupt

    monkeypatch.setattr(results_module, "write_atomic", killed)
    config.resume = True
    with pytest.raises(KeyboardInterrupt):
        run(config, RecordingBackbone())
    assert read_samples(path) == before and len(before) > 0  # the old file, whole


def test_answers_are_cached_as_they_arrive_not_per_batch(dataset_dir, tmp_path):
    class DiesAfterTwo(RecordingBackbone):
        def generate_each(self, requests, on_done):  # noqa: ANN001, ANN201
            for index in range(2):
                on_done(index, Completion(text="kept"))
            raise KeyboardInterrupt  # killed mid-batch

    config = run_config(dataset_dir, tmp_path, model="recording", memory="none", limit=1, tasks=EEM)
    backbone = DiesAfterTwo()
    with pytest.raises(KeyboardInterrupt):
        run(config, backbone)
    cache = ResponseCache(config.cache_path)
    rows = cache._db.execute("SELECT key, completion FROM responses").fetchall()
    cache.close()
    assert len(rows) == 2 and all(json.loads(c)["text"] == "kept" for _, c in rows)


def test_no_planted_secret_reaches_any_file_of_a_run(dataset_dir, tmp_path):
    secrets = ["sk-live-abcdefgh12345678", "hunter2", "abc123xyz", "tok-9f8e7d6c5b4a"]
    config = run_config(dataset_dir, tmp_path, limit=1, tasks=EEM, model="openai", model_args={
        "api_key_env": secrets[0], "base_url": f"http://bob:{secrets[1]}@host/v1?api_key={secrets[2]}",
        "auth_token": secrets[3], "model": "kept-model-name"})
    run(config, backbone=RecordingBackbone())  # (the options are recorded as given; a double answers)
    written = {p: p.read_text(encoding="utf-8") for p in config.output_path.rglob("*") if p.is_file()}
    assert {p.name for p in written} >= {"run.json", "samples.jsonl", "summary.json"}
    for path, text in written.items():
        assert not [s for s in secrets if s in text], path
    assert "kept-model-name" in written[config.output_path / "run.json"]  # only secrets are removed


def test_a_question_with_an_unknown_fact_kind_is_refused_with_its_file(damaged, tmp_path):
    path = damaged / "efficient" / "checkpoint_10.parquet"
    rows = pq.read_table(path).to_pylist()
    question = next(q for row in rows for q in row["questions"] if q["facts"])
    question["facts"][0]["kind"] = "colour"
    pq.write_table(pa.Table.from_pylist(rows, schema=pq.read_schema(path)), path)
    with pytest.raises(InputError, match=r"checkpoint_10.parquet: .*fact kind 'colour' is not one of quantity"):
        run(run_config(damaged, tmp_path, limit=None))


@pytest.mark.parametrize("hostile", ["ABSOLUTE", "../../victim", "..", "P0001/../../victim"])
def test_a_persona_id_that_is_a_path_is_refused_and_nothing_outside_the_run_is_touched(damaged, tmp_path, hostile):
    # (issue 28: a persona_id naming a folder made `run` remove that folder before using it as the memory's own)
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "keep.txt").write_text("mine")
    persona_id = str(victim) if hostile == "ABSOLUTE" else hostile
    for path in sorted((damaged / "efficient").glob("*.parquet")):
        rows = pq.read_table(path).to_pylist()
        for row in rows:
            row["persona_id"] = persona_id
            for question in row["questions"]:
                question["persona_id"] = persona_id
        pq.write_table(pa.Table.from_pylist(rows, schema=pq.read_schema(path)), path)
    with pytest.raises(InputError, match=r"persona_id .* is not a plain id"):
        run(run_config(damaged, tmp_path, limit=1, memory="bm25"))
    assert (victim / "keep.txt").read_text() == "mine"
    assert not (tmp_path / "run" / "memory").exists() or not any((tmp_path / "run" / "memory").rglob("*.txt"))


def test_the_validator_names_a_persona_id_that_is_a_path(damaged):
    from medmemorybench.dataset import read_rows, validate_rows

    path = damaged / "personas" / "patients.parquet"
    rows = pq.read_table(path).to_pylist()
    rows[0]["persona_id"] = "/etc"
    pq.write_table(pa.Table.from_pylist(rows, schema=pq.read_schema(path)), path)
    problems = validate_rows(read_rows(damaged))
    assert any("persona_id '/etc' is not a plain id" in p for p in problems), problems[:5]
