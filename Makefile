# Switchyard — the two commands of the quick start, and a few more.
#
#   make run     build and start switchyardd in the foreground, serving PrimeTime
#   make test    build everything and run every test
#   make bench   run the benchmarks and print their ratios to the references

SWIFT        ?= swift
BUILD_DIR    ?= .build
BENCH_DIR    ?= .build-bench
BENCH_OUT    ?= $(BENCH_DIR)/results
SWIFT_FLAGS  ?=

.PHONY: all build run test bench deps clean

all: build

# Swift itself is the one prerequisite that is not installed here: it comes with the machine.
deps:
	@command -v $(SWIFT) >/dev/null || { echo "error: swift is not on PATH; install Swift 6.1 or later" >&2; exit 1; }
	@command -v python3 >/dev/null || { echo "installing python3"; apt-get update -qq && apt-get install -y -qq python3; }

build: deps
	$(SWIFT) build $(SWIFT_FLAGS) --build-tests

test: build
	$(SWIFT) test $(SWIFT_FLAGS) --skip-build

# Serves PrimeTime on run/switchyard.sock in the foreground; prints how to talk to it.
run: deps
	./scripts/run.sh

# Release build of Benchmarks/, in a folder of its own so it never invalidates the debug build.
bench: deps
	rm -rf $(BENCH_OUT)
	$(SWIFT) package --scratch-path $(BENCH_DIR) --allow-writing-to-package-directory \
	  benchmark --format jmh --path $(BENCH_OUT) --no-progress
	python3 Benchmarks/ratios.py $(BENCH_OUT)

clean:
	rm -rf $(BUILD_DIR) $(BENCH_DIR)
