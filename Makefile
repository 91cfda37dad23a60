# Everything bgai needs on a fresh machine: `make run` (the main job) and `make test` (the whole test suite).
# Each creates the virtual environment .venv and installs what it needs the first time.

PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp

.PHONY: install system-deps run train test bench fuzz wheel docs clean

install: $(STAMP) system-deps

# Debian packages the tests and benchmarks use: GNU Backgammon (match files made by another program, the judge of
# the reference sets) and Chromium (the web app's browser tests, driven by Playwright). Installed once, as root.
system-deps:
	@missing=""; \
	[ -x /usr/games/gnubg ] || missing="$$missing gnubg"; \
	[ -x /usr/bin/chromium ] || missing="$$missing chromium"; \
	if [ -n "$$missing" ]; then \
		if [ "$$(id -u)" != 0 ]; then echo "bgai needs the Debian packages:$$missing (run make as root or apt-get install them)"; exit 1; fi; \
		echo "installing Debian packages:$$missing"; \
		apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q $$missing >/dev/null; \
	fi

# torch is pinned to the CPU build that pip finds locally; an unpinned torch pulls a multi-GB CUDA build.
$(STAMP): pyproject.toml Makefile
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet torch==2.13.0
	$(PY) -m pip install --quiet -e '.[dev]'
	@# numba compiles each kernel on its first call on a machine (about 10 s of CPU for the move generator alone)
	@# and caches it: compile the ones play and hints use now, so the first hint answers at once.
	$(VENV)/bin/bgai hint 4HPwATDgc/ABMA 31 --plies 1 > /dev/null
	touch $(STAMP)

# The main job: train a bot from scratch by TD(λ) self-play with the default config, then benchmark it.
train: $(STAMP)
	$(VENV)/bin/bgai train --config training/configs/default.toml --run-dir runs/default-$$(date +%Y%m%d-%H%M%S)

run: train

# The linter and the type checker first (seconds), then the suite, a test file at a time on each of two processes
# (--dist loadfile: a file's module fixtures, the bots and tests/test_workers.py's pools, load once; loadgroup's
# xdist_group marks are not honoured by pytest-xdist 3.8 under pytest 9, whose node ids it can no longer extend).
test: $(STAMP) system-deps
	$(VENV)/bin/ruff check .
	$(VENV)/bin/mypy
	$(PY) -m pytest -n 2 --dist loadfile --durations=10

bench: $(STAMP)
	$(PY) benchmarks/bench.py --json benchmarks/results.json
	$(PY) benchmarks/selfplay_bench.py --json benchmarks/results/selfplay.json
	$(PY) benchmarks/lookahead_bench.py --positions 100 --json benchmarks/results/lookahead_speed.json
	$(PY) benchmarks/ply_speed.py --positions 200 --json benchmarks/results/ply_speed.json
	$(PY) benchmarks/fast_network_bench.py --json benchmarks/results/fast_network.json
	$(PY) benchmarks/eval_speed.py --json benchmarks/results/eval_speed.json
	$(PY) -m bgai.coach.target_bench --positions 500 --json benchmarks/results/targets.json
	$(PY) benchmarks/target_cost.py --positions 300 --rollouts 60 --json benchmarks/results/target_cost.json
	$(PY) benchmarks/precision_bench.py --json benchmarks/results/precision.json
	$(PY) -m bgai.coach.cube_accuracy --plies 0 1 --json benchmarks/results/cube_accuracy.json
	$(PY) -m bgai.coach.move_accuracy --plies 0 1 2 --json benchmarks/results/move_accuracy.json
	$(PY) benchmarks/workers_bench.py --json benchmarks/results/workers.json
	$(PY) benchmarks/rollout_bench.py --json benchmarks/results/rollout.json
	$(PY) benchmarks/rollout_bench.py --skip se,bearoff --repeats 3 --trials 648 --jobs 2 --positions contact,prime,race --json benchmarks/results/rollout_speed.json
	$(PY) benchmarks/tuning.py --json benchmarks/results/tuning.json

# The long runs of the fuzzers the test suite runs briefly: hostile match files, checkpoints, parsers and requests.
fuzz: $(STAMP)
	$(PY) -m bgai.coach.fuzz_matchfiles --inputs 100000 --seed 1
	$(PY) -m bgai.coach.fuzz_checkpoints --inputs 8000 --seed 1
	$(PY) -m bgai.coach.fuzz_api --inputs 20000 --seed 1 --json benchmarks/results/fuzz_api.json

# The package users install (pip install dist/bgai-*.whl): the source archive and, built from it, the wheel with
# the shipped network, the match equity table and the web page. tests/test_wheel.py installs one.
wheel: $(STAMP)
	$(PY) -m build --outdir dist

# The documentation site (mkdocs.yml, docs/) into site/; --strict makes a broken link or docstring an error.
# tests/test_docs.py builds it the same way.
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict

clean:
	rm -rf $(VENV) .pytest_cache build dist site *.egg-info
