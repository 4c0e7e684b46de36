# Kernel Arena. `make run` serves the app on embedded defaults; `make test` runs the whole suite.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
ADDR ?= 127.0.0.1:8000
# The second test pass: real PostgreSQL and Redis on this machine (see README.md).
TEST_DATABASE_URL ?= postgres://postgres@127.0.0.1:5432/test
TEST_BROKER_URL ?= redis://127.0.0.1:6379/15
TEST_CACHE_URL ?= redis://127.0.0.1:6379/14
# Tests run with DEBUG off, as production does; the key only signs test sessions. The two passes'
# environments, with their data (SQLite file, embedded broker, media, caches) in var/$(1).
# The static files are collected once, into a folder the passes share (collecting hashes and
# compresses every file: half a minute of CPU).
EMBEDDED_ENV = env -u DATABASE_URL -u ARENA_BROKER_URL -u ARENA_CACHE_URL \
	ARENA_SECRET_KEY=test-only-secret-key ARENA_DATA_DIR=$(CURDIR)/var/$(1) \
	ARENA_STATIC_ROOT=$(CURDIR)/var/test-static
SERVICES_ENV = $(call EMBEDDED_ENV,$(1)) DATABASE_URL="$(TEST_DATABASE_URL)" \
	ARENA_BROKER_URL="$(TEST_BROKER_URL)" ARENA_CACHE_URL="$(TEST_CACHE_URL)"

.PHONY: agent-clis run test test-static test-stream-one test-stream-two test-stream-three test-stream-services test-embedded test-services lint format setup system-deps sandbox-deps sandbox-image clean

setup: $(STAMP)

# On a host without an NVIDIA GPU, take PyTorch's CPU build first so that the project's plain
# `torch` requirement is already met and no CUDA packages are pulled (DEVELOPERS.md).
$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	if ! nvidia-smi -L >/dev/null 2>&1; then $(BIN)/pip install -q "torch==2.13.0"; fi
	$(BIN)/pip install -q -e ".[dev]"
	touch $(STAMP)

# Untrusted code (solutions, agents) runs only in an isolating sandbox: bubblewrap here, where
# it can be installed; elsewhere grading stops with an error that says what is missing
# (docs/sandboxes.md).
sandbox-deps:
	@if ! command -v bwrap >/dev/null; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap; \
	  else echo "warning: bubblewrap is missing: install it, or grading and agent runs stop with an error (docs/sandboxes.md)"; fi; fi

# bubblewrap backs the grader's bwrap sandbox and its isolation tests; Debian's Chromium runs
# the browser tests (Playwright drives it through executable_path, no browser download);
# docker.io backs the docker sandbox, whose engine is started here when none is running.
system-deps: sandbox-deps
	@missing=""; command -v chromium >/dev/null || missing="$$missing chromium"; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; \
	  else echo "warning: missing$$missing; the tests that need them will be skipped"; fi; fi
	@if ! command -v dockerd >/dev/null && [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq docker.io) || \
	  echo "warning: docker.io could not be installed; the docker sandbox tests will be skipped"; fi
	@if command -v dockerd >/dev/null && ! docker info >/dev/null 2>&1 && [ "$$(id -u)" = 0 ]; then \
	  mkdir -p var && (nohup dockerd >var/dockerd.log 2>&1 &) ; \
	  for i in $$(seq 60); do docker info >/dev/null 2>&1 && break; sleep 1; done; \
	  docker info >/dev/null 2>&1 || echo "warning: dockerd did not start (var/dockerd.log)"; fi

# The agent CLIs at the versions agent-clis/package-lock.json pins (Claude Code, Codex, Gemini
# CLI), for the tests that run them for real against the scripted model server (docs/agents.md).
AGENT_CLIS := var/agent-clis
agent-clis: $(AGENT_CLIS)/.installed
$(AGENT_CLIS)/.installed: agent-clis/package.json agent-clis/package-lock.json
	@if command -v npm >/dev/null; then \
	  mkdir -p $(AGENT_CLIS) && cp agent-clis/package.json agent-clis/package-lock.json $(AGENT_CLIS)/ && \
	  (cd $(AGENT_CLIS) && npm ci --no-audit --no-fund --loglevel=error) && touch $@; \
	else echo "warning: npm is missing; the tests that run real agent CLIs will be skipped"; fi

# The docker sandbox's image, built offline from this machine's files (docs/sandboxes.md).
sandbox-image: $(STAMP)
	PYTHON=$(BIN)/python sandboxes/image/build.sh full

run: $(STAMP) sandbox-deps
	export ARENA_DEBUG=$${ARENA_DEBUG:-1}; \
	$(BIN)/python manage.py migrate --no-input -v 0 && \
	$(BIN)/python manage.py sync_tasks && \
	$(BIN)/python manage.py seed_demo --if-empty && \
	exec $(BIN)/python manage.py serve --addr $(ADDR)

lint: $(STAMP)
	$(BIN)/ruff check --no-cache .
	$(BIN)/ruff format --no-cache --check .
	$(BIN)/mypy
	$(BIN)/lint-imports --no-cache

format: $(STAMP)
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

# `make test` runs the suite as four streams at once, each in a data folder of its own (its
# SQLite file, embedded broker, media and caches), so they share nothing but the machine's cores:
# stream one, the grader's tests (most of them grade real solutions in real sandboxes); stream
# three, the tasks', sandboxes', transcripts', leaderboard's and browser tests; stream two,
# arena's and the API's; and the services pass, every test that talks to the database, the broker
# or the cache, against PostgreSQL + Redis (the browser tests, which drive pages already served
# from PostgreSQL by the API and page tests of that pass, run once, in stream three). Much of each
# stream's time is spent waiting on its children (a timeout run out, a worker's poll, a browser),
# so four streams keep two cores busy where two left a quarter of their time idle. Each line is
# prefixed with its stream's name. `make test-embedded test-services` runs the same tests one pass
# after the other.
STREAM_ONE_TESTS := tests/evaluator
STREAM_THREE_TESTS := tests/tasks tests/sandbox tests/transcripts tests/leaderboard tests/browser
STREAM_TWO_TESTS := tests $(addprefix --ignore=,$(STREAM_ONE_TESTS) $(STREAM_THREE_TESTS))
STREAM_PYTEST := $(BIN)/python -m pytest -p no:cacheprovider

test: lint test-static
	@$(MAKE) --no-print-directory -j4 test-stream-one test-stream-two test-stream-three \
		test-stream-services

# The streams find the static files current and collect nothing, so none collects beside another.
test-static: $(STAMP)
	$(call EMBEDDED_ENV,test-collect) DJANGO_SETTINGS_MODULE=config.settings $(BIN)/python -c \
		"import django; django.setup(); from web.static_files import static_files_collect; static_files_collect()"

test-stream-one: $(STAMP) system-deps
	@echo "== stream one: the grader (embedded)"
	set -o pipefail; $(call EMBEDDED_ENV,test-one) $(STREAM_PYTEST) $(STREAM_ONE_TESTS) $(PYTEST_ARGS) \
		2>&1 | sed -u 's/^/[one] /'

test-stream-three: $(STAMP) system-deps
	@echo "== stream three: tasks, sandboxes, transcripts, leaderboard, browser (embedded)"
	set -o pipefail; $(call EMBEDDED_ENV,test-three) $(STREAM_PYTEST) $(STREAM_THREE_TESTS) \
		$(PYTEST_ARGS) 2>&1 | sed -u 's/^/[three] /'

test-stream-two: $(STAMP) system-deps agent-clis
	@echo "== stream two: arena and the API (embedded)"
	set -o pipefail; $(call EMBEDDED_ENV,test-two) $(STREAM_PYTEST) $(STREAM_TWO_TESTS) $(PYTEST_ARGS) \
		2>&1 | sed -u 's/^/[two] /'

test-stream-services: $(STAMP) system-deps agent-clis
	@echo "== the services pass: every services test on PostgreSQL + Redis"
	$(BIN)/python -m tests.services_ready "$(TEST_DATABASE_URL)" "$(TEST_BROKER_URL)"
	set -o pipefail; $(call SERVICES_ENV,test-services) $(STREAM_PYTEST) -m services \
		--ignore=tests/browser $(PYTEST_ARGS) \
		2>&1 | sed -u 's/^/[services] /'

test-embedded: $(STAMP) system-deps agent-clis
	@echo "== test pass 1: embedded defaults (SQLite + filesystem broker)"
	$(call EMBEDDED_ENV,test) $(BIN)/python -m pytest $(PYTEST_ARGS)

# The second pass runs the tests that talk to the database, the broker or the cache (marked
# `services` by tests/conftest.py); the others have run in the first and need neither.
test-services: $(STAMP) system-deps
	@echo "== test pass 2: PostgreSQL + Redis (tests that use them)"
	$(BIN)/python -m tests.services_ready "$(TEST_DATABASE_URL)" "$(TEST_BROKER_URL)"
	$(call SERVICES_ENV,test) $(BIN)/python -m pytest -m services $(PYTEST_ARGS)

clean:
	rm -rf var/test var/test-* .pytest_cache .ruff_cache .mypy_cache
