# Two entry points: `make demo` (the example agent, offline) and `make test` (everything CI runs).
# Both install from uv.lock, so a fresh clone gets the versions the suite last passed with;
# `make test-latest` runs the same suite on the newest versions our declared ranges allow.
PYTHON ?= python3
UV_VERSION := 0.13.9
TOOLS := .tools
UV := $(TOOLS)/bin/uv
VENV := .venv
BIN := $(VENV)/bin
OTHER := .venv-resolved
# uv uses the Python that runs make, never one it downloads.
export UV_PYTHON_DOWNLOADS := never
export UV_PYTHON := $(PYTHON)

# torch comes in through the [embeddings] extra. The lock pins the release, but PyPI's Linux
# build of it is CUDA (several GB with its nvidia-*/cuda-*/triton wheels), so the sync leaves
# those out and installs the CPU-only build of the same release where pip can find one (a
# local wheel, or an index configured for pip). Where it cannot, the install fails fast and
# the local-embedding tests skip, saying why.
TORCH_CPU := torch==2.13.0+cpu
NO_CUDA = $(shell sed -nE 's/^name = "((torch|triton|nvidia-.*|cuda-.*))"$$/--no-install-package \1/p' uv.lock)
PIP_INTO = $(PYTHON) -m pip --python

.PHONY: test test-random test-latest test-lowest demo web bench lint typecheck pyright lock clean \
	docs docs-serve chromium

$(UV):
	$(PYTHON) -m venv $(TOOLS)
	$(TOOLS)/bin/python -m pip install --quiet --disable-pip-version-check 'uv==$(UV_VERSION)'

# The demo needs the library's own dependencies only: no extras, no dev tools, no torch.
# --inexact keeps whatever `make test` installed in the same venv.
$(VENV)/.demo: uv.lock pyproject.toml | $(UV)
	$(UV) sync --locked --inexact --no-dev
	touch $@

$(VENV)/.test: uv.lock pyproject.toml | $(UV)
	$(UV) sync --locked --all-extras $(NO_CUDA)
	@$(PIP_INTO) $(BIN)/python install --quiet --no-deps '$(TORCH_CPU)' >/dev/null 2>&1 \
		|| echo "no CPU build of torch ($(TORCH_CPU)) here: the local-embedding tests will be skipped"
	touch $@

demo: $(VENV)/.demo
	$(BIN)/python -m agents demo

# The playground (agents.ui, extra [ui]): the demo agent's chat page on 127.0.0.1:8000,
# offline on its scripted model; its booking change waits for your approval.
$(VENV)/.web: uv.lock pyproject.toml | $(UV)
	$(UV) sync --locked --inexact --no-dev --extra ui
	touch $@

web: $(VENV)/.web
	$(BIN)/python -m agents web

typecheck: $(VENV)/.test
	$(BIN)/mypy

lint: $(VENV)/.test
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

# Beside mypy: many users read our types through pyright (VS Code). --pythonpath points
# pyright at this venv whether or not it is activated; the wrapper's PyPI "newer version" check is
# skipped, so the run is offline (pyright's own code and node come in the installed wheels).
pyright: $(VENV)/.test
	PYRIGHT_PYTHON_IGNORE_WARNINGS=1 $(BIN)/pyright --pythonpath $(BIN)/python

test: typecheck pyright lint chromium
	$(BIN)/pytest

# The documentation site (docs/, mkdocs.yml) with mkdocs and the Material theme, the API
# reference by mkdocstrings-python. Zensical, Material's successor, reads the same
# mkdocs.yml and builds these pages offline too (0.0.73 was tried, --strict included), but
# its mkdocstrings support is preliminary (no backlinks) and it is not 1.0; mkdocs-material
# is what the suite pins and tests (tests/docs/), and moving means changing the commands
# below. The suite builds the site with --strict itself (tests/docs/test_site.py) and
# looks at it in Chromium (tests/docs/test_site_in_browser.py); every code block of the
# pages runs in tests/test_readme.py.
export NO_MKDOCS_2_WARNING := 1
docs: $(VENV)/.test
	$(BIN)/mkdocs build --strict

# Served on 127.0.0.1:8000 (mkdocs.yml's dev_addr), rebuilt on every change.
docs-serve: $(VENV)/.test
	$(BIN)/mkdocs serve

# The browser test drives Debian's Chromium (Playwright's own browser download comes from a
# CDN out of reach). Installed here where we are root with apt-get; elsewhere, or when the
# install fails, the test is skipped and says why.
CHROMIUM := /usr/bin/chromium
chromium:
	@if [ -x $(CHROMIUM) ]; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
		echo "installing Debian's chromium for tests/docs/test_site_in_browser.py"; \
		(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium) \
			>/dev/null 2>&1 || echo "apt-get could not install chromium: the browser test will be skipped"; \
	else \
		echo "no $(CHROMIUM), and no root with apt-get to install it: the browser test will be skipped"; \
	fi

# The suite in a shuffled order (the modules, and the tests in each), from a seed it prints
# first; `make test-random SEED=N` replays that order.
test-random: $(VENV)/.test
	@seed=$${SEED:-$$(od -An -N2 -tu2 /dev/urandom | tr -d ' ')}; \
	echo "random order seed: $$seed (make test-random SEED=$$seed replays it)"; \
	$(BIN)/pytest --random-order-bucket=module --random-order-seed=$$seed

# The same checks and suite in a venv of their own, resolved afresh from pyproject.toml's
# ranges (the lock is not read): the newest versions they allow (`test-latest`), so a release
# that breaks us shows here first, or the lowest (`test-lowest`), so no lower bound is a
# claim we never tested. A fresh venv each time: nothing left from an earlier resolution.
test-latest: RESOLUTION := highest
test-lowest: RESOLUTION := lowest-direct
test-latest test-lowest: | $(UV)
	rm -rf $(OTHER)
	$(UV) venv --quiet $(OTHER)
	@if $(PIP_INTO) $(OTHER)/bin/python install --quiet '$(TORCH_CPU)' >/dev/null 2>&1; then \
		extras='redis,mcp,embeddings,otel,durable,code,ui,testing'; \
	else \
		echo "no CPU build of torch ($(TORCH_CPU)) here: without [embeddings], whose tests will be skipped"; \
		extras='redis,mcp,otel,durable,code,ui,testing'; \
	fi; \
	set -x; $(UV) pip install --quiet --python $(OTHER)/bin/python --resolution $(RESOLUTION) \
		-e ".[$$extras]" --group dev
	$(UV) pip list --python $(OTHER)/bin/python
	$(OTHER)/bin/mypy
	PYRIGHT_PYTHON_IGNORE_WARNINGS=1 $(OTHER)/bin/pyright --pythonpath $(OTHER)/bin/python
	$(OTHER)/bin/ruff check .
	$(OTHER)/bin/ruff format --check .
	$(OTHER)/bin/pytest

# After changing a range in pyproject.toml: re-resolve (keeping locked versions where they
# still fit) and commit uv.lock with it.
lock: | $(UV)
	$(UV) lock

bench: $(VENV)/.test
	$(BIN)/python -m benchmarks

clean:
	rm -rf $(VENV) $(OTHER) $(TOOLS) .mypy_cache .ruff_cache .pytest_cache build dist *.egg-info \
		site .artifacts
