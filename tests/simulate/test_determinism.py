"""Same seed, same bytes; another seed, another year; any number of patients and encounters."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from medmemorybench.errors import InputError
from medmemorybench.knowledge import default_knowledge
from medmemorybench.simulate import iter_cohort, simulate_patient
from medmemorybench.simulate.store import care_year_json


@pytest.fixture(scope="module")
def kb():
    return default_knowledge()


def test_same_seed_gives_identical_bytes(kb):
    assert care_year_json(simulate_patient(kb, 7, 3)) == care_year_json(simulate_patient(kb, 7, 3))


def test_bytes_do_not_depend_on_hash_randomisation(kb):
    # String hashing is salted per process; the year must not be.
    code = ("from medmemorybench.knowledge import default_knowledge;"
            "from medmemorybench.simulate import simulate_patient;"
            "from medmemorybench.simulate.store import care_year_json;"
            "import hashlib;print(hashlib.sha256(care_year_json(simulate_patient(default_knowledge(),7,3)).encode())"
            ".hexdigest())")
    digests = {
        subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                       env={**os.environ, "PYTHONHASHSEED": salt}).stdout
        for salt in ("1", "2")
    }
    assert len(digests) == 1


def test_another_seed_gives_another_year(kb):
    assert care_year_json(simulate_patient(kb, 0, 0)) != care_year_json(simulate_patient(kb, 1, 0))


def test_roster_cycles_through_conditions_for_any_count(kb):
    years = list(iter_cohort(kb, 0, 23))
    conditions = [y.persona.condition for y in years]
    assert conditions[:20] == [c.key for c in kb.roster]
    assert conditions[20:] == conditions[:3]
    assert len({y.persona.persona_id for y in years}) == 23


@pytest.mark.parametrize("n", [10, 37, 365])
def test_any_number_of_encounters(kb, n):
    year = simulate_patient(kb, 0, 4, n_encounters=n)
    assert len(year.events) == n
    assert [e.index for e in year.events] == list(range(1, n + 1))
    assert any(e.kind == "diagnosis" for e in year.events)


@pytest.mark.parametrize("n", [0, 9, 366])
def test_encounters_out_of_range_is_an_input_error(kb, n):
    with pytest.raises(InputError, match="--encounters"):
        simulate_patient(kb, 0, 0, n_encounters=n)


def test_unknown_condition_lists_known_ones(kb):
    with pytest.raises(InputError, match=r"unknown condition 'nope'.*known: .*pcos"):
        list(iter_cohort(kb, 0, 1, conditions=["nope"]))
