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

.PHONY: test test-random test-latest test-lowest demo bench lint typecheck pyright lock clean

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

test: typecheck pyright lint
	$(BIN)/pytest

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
		extras='redis,mcp,embeddings,otel,durable,testing'; \
	else \
		echo "no CPU build of torch ($(TORCH_CPU)) here: without [embeddings], whose tests will be skipped"; \
		extras='redis,mcp,otel,durable,testing'; \
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
	rm -rf $(VENV) $(OTHER) $(TOOLS) .mypy_cache .ruff_cache .pytest_cache build dist *.egg-info
