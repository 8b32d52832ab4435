# Set-up on a fresh machine with Python 3.11: `make demo` and `make test` create .venv when needed.
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-dev
SHARED ?= ../shared
export NLTK_DATA ?= $(abspath $(SHARED)/data/nltk_data)

.PHONY: demo test bench gpu-wheels sample clean

$(STAMP): pyproject.toml
	@command -v $(PYTHON) >/dev/null 2>&1 || { echo "need $(PYTHON) (set PYTHON=...)"; exit 2; }
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e ".[dev]"
	touch $(STAMP)

demo: $(STAMP)  ## build ICT, BFS and WLP pairs from the bundled sample dump
	$(BIN)/wikipairs build --output out/sample

# One pytest process per core, at most 4 (pytest-xdist; each loads TensorFlow and JAX: 8.2 GB at
# peak with two), each test file in one process, so that a file's module fixtures (a real dump
# parsed, a build) are made once. On 2 cores: 19.9 min against 31.6 in one process
# (benchmarks/README, "The test suite"). `make test TEST_WORKERS=0` runs it in one process.
# nproc, not `-n auto`: it counts the cores this process may use (psutil's count is the host's).
TEST_WORKERS ?= $(shell nproc 2>/dev/null || echo 1)
test: $(STAMP)
	$(BIN)/python -m pytest -q -n $(TEST_WORKERS) --maxprocesses 4 --dist loadfile

bench: $(STAMP)
	$(BIN)/python benchmarks/parse_throughput.py

# Wheels the GPU machine lacks (it has JAX, numpy, h5py, rich, absl-py, ml-dtypes; no keras and no
# network): keras at this venv's version and its two missing needs, for its Python
# (GPU_PYTHON_VERSION), into .whl/ for `run(carry=[".whl"])`: see benchmarks/README.md.
GPU_PYTHON_VERSION ?= 3.12
GPU_WHEELS = keras==$$($(BIN)/python -c 'import importlib.metadata as m; print(m.version("keras"))') \
	namex==$$($(BIN)/python -c 'import importlib.metadata as m; print(m.version("namex"))') \
	optree==$$($(BIN)/python -c 'import importlib.metadata as m; print(m.version("optree"))')
gpu-wheels: $(STAMP)  ## download the wheels benchmarks/gpu_mfu.sh installs on a GPU machine
	rm -rf .whl && $(BIN)/pip download --quiet --no-deps --only-binary=:all: -d .whl \
	  --python-version $(GPU_PYTHON_VERSION) --implementation cp --platform manylinux_2_28_x86_64 \
	  --platform manylinux_2_27_x86_64 --platform manylinux_2_17_x86_64 \
	  --platform manylinux2014_x86_64 $(GPU_WHEELS)
	ls .whl

sample:  ## regenerate the bundled sample dump from tools/make_sample.py
	python3 tools/make_sample.py

clean:
	rm -rf out .pytest_cache
