# Every target bootstraps what it needs: a fresh clone runs `make test` or `make demo` directly.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: test lint typecheck unit docs demo bench cassettes clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

test: lint typecheck unit docs

lint: $(STAMP)
	$(BIN)/ruff check pytest_opdecide fake_runtimes tests benchmarks examples scripts
	$(BIN)/ruff format --check pytest_opdecide fake_runtimes tests benchmarks examples scripts

typecheck: $(STAMP)
	$(BIN)/mypy

unit: $(STAMP)
	$(BIN)/python -m pytest -p no:cacheprovider
	$(BIN)/python -m pytest -c examples/support_desk/pyproject.toml \
		--rootdir examples/support_desk examples/support_desk -q

docs: $(STAMP)
	$(BIN)/mkdocs build --strict --quiet --site-dir $(VENV)/site

demo: $(STAMP)
	$(BIN)/python scripts/demo.py $(if $(FULL),--full)

cassettes: $(STAMP)
	scripts/record-cassettes

bench: $(STAMP)
	$(BIN)/python -m benchmarks

clean:
	rm -rf $(VENV) site .pytest_cache .mypy_cache .ruff_cache
