# Every target creates (or reuses) the local virtual environment .venv and installs what it needs.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test lint bench proto clean

$(STAMP): pyproject.toml
	test -d $(VENV) || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/tichu demo

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

test: lint
	$(BIN)/pytest -n 2

bench: $(STAMP)
	$(BIN)/python bench/engine.py
	$(BIN)/python bench/bots.py
	$(BIN)/python bench/referee_bench.py
	$(BIN)/python bench/replay_bench.py
	$(BIN)/python bench/proof_bench.py
	$(BIN)/python bench/tournament_bench.py

proto: $(STAMP)
	$(BIN)/python -m referee.wire.generate

clean:
	rm -rf $(VENV) .mypy_cache .pytest_cache .ruff_cache .hypothesis
