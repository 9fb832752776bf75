# Every target bootstraps what it needs: a fresh clone runs `make test` or `make demo` directly.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# The lowest-versions environment: every runtime dependency at the oldest version pyproject.toml
# allows (uv's lowest-direct resolution), the test tools at the newest versions that fit them.
LOWEST := .venv-lowest
LOWEST_STAMP := $(LOWEST)/.installed
LOWEST_TESTS := tests/decision tests/fakes tests/plugin tests/cassettes
# Left to the main run, to keep `make test` within its budget: the xdist runs (pytest-xdist is at
# its newest here, as every test tool) and three of the four record modes of the split-key probe
# (the lowest vcrpy is still tried with the first).
LOWEST_SKIP := --ignore=tests/cassettes/test_xdist.py --ignore=tests/plugin/test_xdist.py \
	--deselect tests/plugin/test_live_runs.py::test_the_same_counts_under_xdist \
	--deselect 'tests/cassettes/test_hostile_server.py::test_a_key_split_across_events_is_never_written[rewrite]' \
	--deselect 'tests/cassettes/test_hostile_server.py::test_a_key_split_across_events_is_never_written[new_episodes]' \
	--deselect 'tests/cassettes/test_hostile_server.py::test_a_key_split_across_events_is_never_written[all]'
# The other supported interpreters (pyproject.toml's classifiers): found on PATH or under pyenv;
# a missing one fails `make test`, never skips. They run the decision suite and the plugin's
# core tests only, to keep `make test` within its time budget.
PY312 ?= $(firstword $(wildcard $(HOME)/.pyenv/versions/3.12*/bin/python3.12) $(shell command -v python3.12))
PY313 ?= $(firstword $(wildcard $(HOME)/.pyenv/versions/3.13*/bin/python3.13) $(shell command -v python3.13))
VERSION_TESTS := tests/decision tests/plugin/test_fixtures.py tests/plugin/test_marker.py \
	tests/plugin/test_short_failures.py tests/test_extras.py
# What those suites need, and no more (the docs, type and lint tools run once, on the main one).
VERSION_DEPS := '.[strategies,contexts]' pytest pytest-xdist pytest-asyncio

.PHONY: test lint typecheck unit lowest versions docs demo bench cassettes clean

# Bytecode caches are written (git ignores them) even where the environment says not to: the
# suite starts hundreds of pytest sessions, and each would otherwise compile the package and
# rewrite its assertions anew (a fresh clone's unit run: 4 min 36 s without, 2 min 53 s with).
unexport PYTHONDONTWRITEBYTECODE

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

$(LOWEST_STAMP): pyproject.toml $(STAMP)
	rm -rf $(LOWEST)
	$(PYTHON) -m venv $(LOWEST)
	$(BIN)/uv pip install --quiet --compile-bytecode --python $(LOWEST)/bin/python --resolution lowest-direct \
		-e '.[strategies,contexts]'
	$(BIN)/python scripts/lowest-pins.py $(LOWEST)/bin/python > $(LOWEST)/pins.txt
	$(BIN)/uv pip install --quiet --compile-bytecode --python $(LOWEST)/bin/python -e '.[test]' \
		--constraint $(LOWEST)/pins.txt
	$(BIN)/python scripts/lowest-pins.py --check $(LOWEST)/bin/python
	touch $(LOWEST_STAMP)

test: lint typecheck unit lowest versions docs

lint: $(STAMP)
	$(BIN)/ruff check pytest_opdecide fake_runtimes tests benchmarks examples scripts
	$(BIN)/ruff format --check pytest_opdecide fake_runtimes tests benchmarks examples scripts
	$(BIN)/lint-imports --no-cache

typecheck: $(STAMP)
	$(BIN)/mypy

unit: $(STAMP)
	$(BIN)/python -m pytest -p no:cacheprovider -n 2 --dist loadfile
	$(BIN)/python -m pytest -c examples/support_desk/pyproject.toml \
		--rootdir examples/support_desk examples/support_desk -q

lowest: $(LOWEST_STAMP)
	$(LOWEST)/bin/python -m pytest -p no:cacheprovider -q -n 2 --dist loadfile $(LOWEST_TESTS) \
		$(LOWEST_SKIP)

# One environment per interpreter (.venv-3.12, .venv-3.13), rebuilt when pyproject.toml changes.
.venv-%/.installed: pyproject.toml $(STAMP)
	@test -n "$(PY$(subst .,,$*))" || { echo "Python $* not found (on PATH as python$* or under" \
		"~/.pyenv/versions/$*.*): install it, or set PY$(subst .,,$*)=/path/to/python$*"; exit 1; }
	rm -rf .venv-$*
	$(BIN)/uv venv --quiet --python "$(PY$(subst .,,$*))" .venv-$*
	$(BIN)/uv pip install --quiet --compile-bytecode --python .venv-$*/bin/python \
		-e $(VERSION_DEPS)
	touch $@

versions: .venv-3.12/.installed .venv-3.13/.installed
	for version in 3.12 3.13; do \
		.venv-$$version/bin/python -m pytest -p no:cacheprovider -q -n 2 --dist loadfile \
			$(VERSION_TESTS) || exit 1; \
	done

docs: $(STAMP)
	$(BIN)/mkdocs build --strict --quiet --site-dir $(VENV)/site

demo: $(STAMP)
	$(BIN)/python scripts/demo.py $(if $(FULL),--full)

cassettes: $(STAMP)
	scripts/record-cassettes

bench: $(STAMP)
	$(BIN)/python -m benchmarks

clean:
	rm -rf $(VENV) $(LOWEST) .venv-3.12 .venv-3.13 site .pytest_cache .mypy_cache .ruff_cache
