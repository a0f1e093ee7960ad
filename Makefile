# Stammtisch: `make run` brings the stack up, `make test` runs every test.
# Both install what they need into .venv first (quick when already done).

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: run test proto lint bench loadtest venv clean

venv: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[dev]'
	touch $(STAMP)

run: $(STAMP)
	$(BIN)/stammtisch up

test: $(STAMP)
	$(BIN)/python -m pytest

proto: $(STAMP)
	$(BIN)/python -m shared.protogen

lint: $(STAMP)
	$(BIN)/ruff check shared services tests
	$(BIN)/mypy shared services
	cd proto && ../$(BIN)/buf lint

bench: $(STAMP)
	$(BIN)/stammtisch bench

loadtest: $(STAMP)
	$(BIN)/stammtisch loadtest

clean:
	rm -rf $(VENV) .var .pytest_cache .mypy_cache .ruff_cache
