# Two commands do all the set-up on a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test lint typecheck unit bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# llama-cpp-python compiles from source: a portable build (a native one crashes on some CPUs
# with AMX), without the multimodal library (LLAVA_BUILD: accord sends text only) and without
# llama.cpp's tests, examples and server; pip caches the wheel, so only the first install on
# a machine pays for it. pip prints each step (no --quiet): the compile is the long one.
# editable_mode=compat installs a plain .pth path: setuptools' default import finder adds
# ~45 ms to every `accord` start.
LLAMA_CMAKE := -DGGML_NATIVE=OFF -DLLAVA_BUILD=OFF -DLLAMA_BUILD_TESTS=OFF \
	-DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_SERVER=OFF
$(STAMP): pyproject.toml | $(BIN)/python
	@echo "installing accord and its dependencies; a first install compiles llama.cpp for the"
	@echo "offline local model (about 10 minutes on 2 cores, once: pip caches the wheel)"
	CMAKE_ARGS="$(LLAMA_CMAKE)" $(BIN)/pip install --progress-bar on -e '.[dev,local,ray,conformance]' \
		--config-settings editable_mode=compat
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/accord run workflows/sales_review/sales_review.workflow.yml

lint: $(STAMP)
	$(BIN)/ruff check engine tasks tests benchmarks src/accord/*.py
	$(BIN)/ruff format --check engine tasks tests benchmarks src/accord/*.py

typecheck: $(STAMP)
	$(BIN)/mypy

# The loader fuzz tests (tests/faults/test_fuzz_loader.py) take 300 examples locally and
# 10,000 in CI (about 90 s of one core); set ACCORD_FUZZ_EXAMPLES to choose another count.
FUZZ_EXAMPLES := $(if $(filter true,$(CI)),10000,300)

unit: $(STAMP)
	ACCORD_FUZZ_EXAMPLES=$${ACCORD_FUZZ_EXAMPLES:-$(FUZZ_EXAMPLES)} $(BIN)/pytest -n auto -q --durations=25

test: lint typecheck unit

bench: $(STAMP)
	for script in benchmarks/b*.py; do $(BIN)/python $$script || exit 1; done

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache
