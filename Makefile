# Set-up on a fresh machine with Python 3.11: `make demo` and `make test` create .venv when needed.
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-dev
SHARED ?= ../shared
export NLTK_DATA ?= $(abspath $(SHARED)/data/nltk_data)

.PHONY: demo test bench sample clean

$(STAMP): pyproject.toml
	@command -v $(PYTHON) >/dev/null 2>&1 || { echo "need $(PYTHON) (set PYTHON=...)"; exit 2; }
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e ".[dev]"
	touch $(STAMP)

demo: $(STAMP)  ## build ICT, BFS and WLP pairs from the bundled sample dump
	$(BIN)/wikipairs build --output out/sample

test: $(STAMP)
	$(BIN)/python -m pytest -q

bench: $(STAMP)
	$(BIN)/python benchmarks/parse_throughput.py

sample:  ## regenerate the bundled sample dump from tools/make_sample.py
	python3 tools/make_sample.py

clean:
	rm -rf out .pytest_cache
