"""`load_dataset("medmemorybench", CONFIG)` as users type it: a build registers itself in the datasets cache, so the
bare name loads it offline from any folder, and never another build without saying so."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import datasets.config
import pyarrow.parquet as pq
import pytest

import medmemorybench
from medmemorybench.dataset import BuildOptions, build_dataset, export_dataset
from medmemorybench.dataset.register import fingerprint_of, register_build, registered, revision_of
from medmemorybench.errors import InputError
from medmemorybench.knowledge import default_knowledge
from medmemorybench.render.templates import load_templates
from tests.helpers import run_cli

SMALL = ["--personas", "2", "--health_sessions", "5", "--family_sessions", "5", "--language", "en"]
USED_BY = ("import json\nfrom datasets import load_dataset\n"
           "mixed_30 = load_dataset('medmemorybench', 'mixed', split='checkpoint_30')\n"
           "print(json.dumps({'rows': mixed_30.to_list(), 'description': mixed_30.info.description}, default=str))")


def rows_of(folder, config="mixed", split="checkpoint_30"):
    return json.loads(json.dumps(pq.read_table(folder / config / f"{split}.parquet").to_pylist(), default=str))


def used_by_line(cwd):
    """The card's usage line, run offline in a fresh process from `cwd` (no build there)."""
    env = {k: v for k, v in os.environ.items() if k != "MEDMEMORYBENCH_DATA"}
    result = subprocess.run([sys.executable, "-c", USED_BY], cwd=cwd, capture_output=True, text=True,
                            env={**env, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"})
    assert result.returncode == 0, result.stderr[-2000:]
    return json.loads(result.stdout.splitlines()[-1])


@pytest.mark.slow  # (about 27 s of CPU: a CLI build and three registrations; `make test-all`)
def test_the_used_by_line_runs_offline_from_a_temporary_folder_after_a_build(tmp_path, builds):
    built = run_cli("build", "--seed", "2", "--output_path", str(tmp_path / "a"), *SMALL)
    assert built.returncode == 0, built.stderr
    assert "registered: load_dataset('medmemorybench', 'mixed')" in built.stdout
    folder_a = tmp_path / "a" / "medmemorybench"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    loaded = used_by_line(elsewhere)
    assert loaded["rows"] == rows_of(folder_a)
    assert fingerprint_of(folder_a) in loaded["description"]

    # a newer build takes the name (registering it, as `build` does): never the older one silently
    folder_b = tmp_path / "b" / "medmemorybench"
    shutil.copytree(builds[5], folder_b)
    assert run_cli("register", str(folder_b)).returncode == 0
    assert rows_of(folder_b) != rows_of(folder_a)
    assert used_by_line(elsewhere)["rows"] == rows_of(folder_b)
    registration = registered()
    assert registration.fingerprint == fingerprint_of(folder_b) and revision_of(fingerprint_of(folder_a)) in \
        registration.replaced
    # and `register` points it back
    again = run_cli("register", str(folder_a))
    assert again.returncode == 0, again.stderr
    assert used_by_line(elsewhere)["rows"] == rows_of(folder_a)


def cli_in(cache_root, *args: str) -> subprocess.CompletedProcess:
    """The CLI in a fresh process from `cache_root`, with the datasets cache `own_cache` gave this test."""
    env = {k: v for k, v in os.environ.items() if k != "MEDMEMORYBENCH_DATA"}
    return subprocess.run([sys.executable, "-m", "medmemorybench.cli", *args], capture_output=True, text=True,
                          cwd=cache_root, env={**env, "HF_DATASETS_CACHE": str(cache_root / "hf-datasets")})


@pytest.fixture
def own_cache(tmp_path, monkeypatch):
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", str(tmp_path / "hf-datasets"))
    monkeypatch.delenv("MEDMEMORYBENCH_DATA", raising=False)
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.fixture(scope="module")
def builds(tmp_path_factory):
    """Small builds of seeds 4, 5 and 6, made once for the module; `_build` copies one where a test wants it."""
    root = tmp_path_factory.mktemp("builds")
    options = {"personas": 2, "health_sessions": 5, "family_sessions": 5}
    return {seed: export_dataset(build_dataset(default_knowledge(), load_templates("en"),
                                               BuildOptions(seed=seed, **options)), root / str(seed))
            for seed in (4, 5, 6)}


@pytest.fixture
def _build(builds):
    def copy(out, seed):
        target = out / "medmemorybench"
        shutil.copytree(builds[seed], target)
        return target

    return copy


def test_package_loader_returns_the_registered_build_even_when_the_name_is_shadowed(own_cache, _build):
    folder_a, folder_b = _build(own_cache / "a", 4), _build(own_cache / "b", 5)
    register_build(folder_a)
    # loading another folder named `medmemorybench` by path prepares it under the same name, and newer
    datasets.load_dataset(str(folder_b), "mixed", split="checkpoint_30")
    rows = json.loads(json.dumps(medmemorybench.load("mixed", "checkpoint_30").to_list(), default=str))
    assert rows == rows_of(folder_a)


def test_a_registration_whose_folder_is_gone_is_an_error_naming_it_never_another_build(own_cache, _build):
    folder_a, folder_b = _build(own_cache / "a", 4), _build(own_cache / "tmp" / "b", 5)
    register_build(folder_a)
    # a side build in a temporary folder takes the name, then the folder is deleted
    registration = register_build(folder_b)
    assert registration.previous["folder"] == str(folder_a.resolve())
    shutil.rmtree(own_cache / "tmp")
    with pytest.raises(InputError, match=f"came from {folder_b.resolve()}, which is gone; register the build"):
        medmemorybench.load("mixed", "checkpoint_30")
    shown = cli_in(own_cache, "ls", "registration")
    assert f"from {folder_b.resolve()} (that folder is gone)" in shown.stdout
    assert f"`medmemorybench register {folder_a.resolve()}` points the name back" in shown.stdout
    # `run` names where it looked, the gone folder among them
    ran = cli_in(own_cache, "run", "--tasks", "medmemorybench_efficient", "--memory", "bm25", "--output_path",
                 str(own_cache / "run"))
    assert ran.returncode == 2 and f"the registered build {folder_b.resolve()} (gone)" in ran.stderr, ran.stderr
    # a build put back in the folder is not the registered one either
    _build(own_cache / "tmp" / "b", 6)
    with pytest.raises(InputError, match="which holds another build now"):
        medmemorybench.load("mixed", "checkpoint_30")


def test_registering_another_build_says_which_it_replaced_and_how_to_go_back(own_cache, _build):
    folder_a, folder_b = _build(own_cache / "a", 4), _build(own_cache / "b", 5)
    assert cli_in(own_cache, "register", str(folder_a)).returncode == 0
    replaced = cli_in(own_cache, "register", str(folder_b))
    assert replaced.returncode == 0, replaced.stderr
    assert (f"this replaced the registration of build {fingerprint_of(folder_a)[:12]} from {folder_a.resolve()}; "
            f"to point the name back: `medmemorybench register {folder_a.resolve()}`") in replaced.stdout
    # registering the same build again replaces nothing worth naming
    assert "this replaced" not in cli_in(own_cache, "register", str(folder_b)).stdout


def test_package_loader_names_configs_and_splits_of_a_registered_build(own_cache, _build):
    folder = _build(own_cache / "a", 4)
    register_build(folder)
    with pytest.raises(InputError, match="unknown split 'checkpoint_5' for config 'mixed'; valid splits: "):
        medmemorybench.load("mixed", "checkpoint_5")
    with pytest.raises(InputError, match="unknown config 'mixd'"):
        medmemorybench.load("mixd", "checkpoint_10")


def test_register_refuses_a_folder_that_is_not_a_build(own_cache):
    (own_cache / "empty").mkdir()
    with pytest.raises(InputError, match=r"empty/medmemorybench.json: missing or not JSON"):
        register_build(own_cache / "empty")
