# `make serve` runs the calculator; `make test` installs everything the tests need and runs them.
# Both build the virtual environment .venv on first use (Python >= 3.11, PyPI and Debian only).

VENV   ?= .venv
PYTHON ?= python3
BIN    := $(VENV)/bin

.PHONY: serve test lint typecheck pytest browser bench clean

$(BIN)/activate:
	$(PYTHON) -m venv $(VENV)

# What serving needs: the core and the web extra.
$(VENV)/.web: pyproject.toml | $(BIN)/activate
	$(BIN)/pip install --quiet -e '.[web]'
	touch $@

# Every extra: web (page + API), trace, dev (test tools). The tested torch goes first, so that the
# trace extra's range (torch>=2.4) installs nothing larger: 2.13.0, a CPU build from local disk.
TORCH ?= torch==2.13.0
$(VENV)/.installed: pyproject.toml | $(BIN)/activate
	$(BIN)/pip install --quiet '$(TORCH)'
	$(BIN)/pip install --quiet -e '.[web,trace,dev]'
	touch $@ $(VENV)/.web

serve: $(VENV)/.web
	$(BIN)/vramplan serve

# Debian's chromium drives the browser tests through Playwright (no browser download).
browser:
	@command -v chromium >/dev/null 2>&1 || { apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; }

lint: $(VENV)/.installed
	$(BIN)/ruff check src tests benchmarks scripts

typecheck: $(VENV)/.installed
	$(BIN)/mypy

pytest: $(VENV)/.installed browser
	$(BIN)/pytest

test: lint typecheck pytest

bench: $(VENV)/.installed
	$(BIN)/python benchmarks/cli_startup.py

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache test-output
