# Two entry points: `make demo` (the example agent, offline) and `make test` (everything CI runs).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: test demo bench lint typecheck pyright clean

# An editable install that is a plain path entry (see [tool.setuptools] in pyproject.toml),
# so mypy and pyright run in this venv from anywhere see the packages.
$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
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
