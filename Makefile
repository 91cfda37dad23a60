# Everything bgai needs on a fresh machine: `make run` (the main job) and `make test` (the whole test suite).
# Each creates the virtual environment .venv and installs what it needs the first time.

PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp

.PHONY: install run test bench clean

install: $(STAMP)

# torch is pinned to the CPU build that pip finds locally; an unpinned torch pulls a multi-GB CUDA build.
$(STAMP): pyproject.toml Makefile
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet torch==2.13.0
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

# The main job. Until the trained network lands (TD(λ) self-play), it plays duplicate games between the built-in
# players: pubeval against the heuristic player.
run: $(STAMP)
	$(VENV)/bin/bgai duel pubeval heuristic --games 2000

test: $(STAMP)
	$(PY) -m pytest -n 2 --durations=10

bench: $(STAMP)
	$(PY) benchmarks/bench.py --json benchmarks/results.json

clean:
	rm -rf $(VENV) .pytest_cache build *.egg-info
