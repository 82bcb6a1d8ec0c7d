# Switchyard — the two commands of the quick start, and a few more.
#
#   make run     build and start switchyardd in the foreground, serving PrimeTime
#   make test    build everything and run every test
#   make bench   run the runtime benchmarks and print their ratios to the references
#   make bench-e2e  run the end-to-end benchmark against an echo server and Redis

SWIFT        ?= swift
BUILD_DIR    ?= .build
BENCH_DIR    ?= .build-bench
BENCH_OUT    ?= $(BENCH_DIR)/results
SWIFT_FLAGS  ?=

.PHONY: all build run test bench bench-e2e deps clean

all: build

# Swift itself is the one prerequisite that is not installed here: it comes with the machine.
deps:
	@command -v $(SWIFT) >/dev/null || { echo "error: swift is not on PATH; install Swift 6.1 or later" >&2; exit 1; }
	@command -v python3 >/dev/null || { echo "installing python3"; apt-get update -qq && apt-get install -y -qq python3; }

build: deps
	$(SWIFT) build $(SWIFT_FLAGS) --build-tests

test: build python-test
	$(SWIFT) test $(SWIFT_FLAGS) --skip-build

# Tests/Python: a third-party client's view of switchyardd (PyPI varlink, jsonpatch, asyncvarlink),
# in a virtual environment inside the build folder; pip runs only when requirements.txt changed.
VENV                ?= $(BUILD_DIR)/venv
PYTHON_REQUIREMENTS := Tests/Python/requirements.txt
PYTHON_STAMP        := $(BUILD_DIR)/python-requirements.stamp

.PHONY: python-test
python-test: deps $(PYTHON_STAMP)
	$(SWIFT) build $(SWIFT_FLAGS) --product switchyardd
	SWITCHYARDD="$$($(SWIFT) build $(SWIFT_FLAGS) --show-bin-path)/switchyardd" PYTHONDONTWRITEBYTECODE=1 \
	  $(VENV)/bin/python3 -m pytest -q Tests/Python

$(VENV)/pyvenv.cfg:
	python3 -m venv $(VENV) || { \
	  echo "python3 -m venv failed; installing python3-venv"; rm -rf $(VENV); \
	  apt-get update -qq && apt-get install -y -qq python3-venv && python3 -m venv $(VENV); }

$(PYTHON_STAMP): $(PYTHON_REQUIREMENTS) $(VENV)/pyvenv.cfg
	$(VENV)/bin/python3 -m pip install -q -r $(PYTHON_REQUIREMENTS)
	touch $@

# Serves PrimeTime on run/switchyard.sock in the foreground; prints how to talk to it.
run: deps
	./scripts/run.sh

# Release build of Benchmarks/, in a folder of its own so it never invalidates the debug build.
bench: deps
	rm -rf $(BENCH_OUT)
	$(SWIFT) package --scratch-path $(BENCH_DIR) --allow-writing-to-package-directory \
	  benchmark --format jmh --path $(BENCH_OUT) --no-progress
	python3 Benchmarks/ratios.py $(BENCH_OUT)

# End-to-end: switchyardd against a C echo server and Redis, started by the same run.
bench-e2e: deps
	Benchmarks/EndToEnd/run.sh

clean:
	rm -rf $(BUILD_DIR) $(BENCH_DIR)
