# Two entry points: `make demo` (the example agent, offline) and `make test` (everything CI runs).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# Local embeddings (extra [embeddings]) need torch; only a CPU build is wanted here.
TORCH_CPU := torch==2.13.0+cpu

.PHONY: test demo bench lint typecheck pyright clean

# An editable install that is a plain path entry (see [tool.setuptools] in pyproject.toml),
# so mypy and pyright run in this venv from anywhere see the packages.
$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	@# PyPI has no +cpu builds (its Linux torch is the multi-GB CUDA one), so this install
	@# succeeds only where pip is configured with a CPU wheel, and fails fast elsewhere;
	@# the extra follows only then, keeping the torch already installed.
	@if $(BIN)/python -m pip install --quiet '$(TORCH_CPU)' >/dev/null 2>&1; then \
		$(BIN)/python -m pip install --quiet -e '.[dev,embeddings]'; \
	else \
		echo "no CPU build of torch ($(TORCH_CPU)) here: the local-embedding tests will be skipped"; \
	fi
	touch $(STAMP)

typecheck: $(STAMP)
	$(BIN)/mypy

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

# Beside mypy: many users read our types through pyright (VS Code). --pythonpath points
# pyright at this venv whether or not it is activated; the wrapper's PyPI "newer version" check is
# skipped, so the run is offline (pyright's own code and node come in the installed wheels).
pyright: $(STAMP)
	PYRIGHT_PYTHON_IGNORE_WARNINGS=1 $(BIN)/pyright --pythonpath $(BIN)/python

test: typecheck pyright lint
	$(BIN)/pytest

demo: $(STAMP)
	$(BIN)/python -m agents demo

bench: $(STAMP)
	$(BIN)/python -m benchmarks

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache build dist *.egg-info
