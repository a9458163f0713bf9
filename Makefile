# costwise: the two commands of the README are `make run` and `make test`.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: run test lint bench-core bench-service clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

$(VENV)/.installed-run: pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet -e .
	touch $@

$(VENV)/.installed-dev: pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet -e ".[dev,bench,papers]"
	touch $@ $(VENV)/.installed-run

## run: set up and serve the API on the embedded SQLite registry (http://127.0.0.1:8000/docs)
run: $(VENV)/.installed-run
	$(BIN)/costwise serve

## test: set up and run the whole test suite (SQLite, plus PostgreSQL when reachable)
test: $(VENV)/.installed-dev
	PATH="$(CURDIR)/$(BIN):$$PATH" ./scripts/test.sh

lint: $(VENV)/.installed-dev
	$(BIN)/ruff check app models costwise tests bench
	$(BIN)/mypy

bench-core: $(VENV)/.installed-dev
	$(BIN)/python -m bench training.core

bench-service: $(VENV)/.installed-dev
	$(BIN)/python -m bench serving.service

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache costwise-data
