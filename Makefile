# Switchyard — the two commands of the quick start, and a few more.
#
#   make run     build and start switchyardd in the foreground, serving PrimeTime
#   make test    build everything and run every test (the fuzz targets briefly too): what CI runs
#   make test-quick  the build, the Swift suite and the Python suite without its slowest parts
#   make examples-test  build each application in Examples/ from its own package and test it
#   make docs-test  check that the tutorial's code is the code of Examples/Tutorial
#   make bench   run the runtime benchmarks and print their ratios to the references
#   make bench-e2e  run the end-to-end benchmark against an echo server and Redis
#   make bench-tls  only its TLS rows: TCP+TLS against the Unix socket, beside Redis's --tls-port
#   make bench-ab BASELINE=…  this build against an older switchyardd, interleaved rounds
#   make bench-peers  the same work on Switchyard, Redis and etcd, each durability side by side
#   make bench-scale  how the cost grows: fan-out, journal length, state size and features, with plots
#   make bench-lookups  count the Swift runtime's generic metadata look-ups per Send, by caller
#   make bench-inspector  the inspector's first render on a long journal, its event stream under load
#   make bench-restart  the pause a restart through systemd's fd store makes, seen by 2,000 clients
#   make bench-restart-systemd  the same under a real systemd in nspawn
#                   (REEXECUTE=1: SIGUSR2, the executable run again in its process, for either)
#   make bench-sandbox  what each part of the service unit's sandbox costs systemd at a start
#   make bench-cluster  strict Sends on PostgreSQL against SQLite and etcd, a standby's lag, failover time
#   make install    release build, installed with its systemd units under PREFIX (and DESTDIR);
#                   APP=… PACKAGE=… installs another application's daemon the same way
#   make verify-units APP=… [DESTDIR=…]  systemd-analyze verify on APP's installed (or staged) units
#   make systemd-test  unit-file checks, then switchyard.socket/.service under a real systemd in nspawn
#   make soak    the live protocol fuzzer with a million inputs, then 100 kill -9 rounds under load
#   make soak-cluster  100 failovers of a three-daemon cluster on PostgreSQL, in network namespaces
#   make test-tsan  every Swift suite under ThreadSanitizer
#   make fuzz    each libFuzzer target for FUZZ_SECONDS

SWIFT        ?= swift
BUILD_DIR    ?= .build
BENCH_DIR    ?= .build-bench
BENCH_OUT    ?= $(BENCH_DIR)/results
SWIFT_FLAGS  ?=
# Every release build of the daemon (install, benchmarks, soak): see the file for why.
RELEASE_SWIFT_FLAGS := $(shell grep -v '^\#' scripts/release-swift-flags)
# SwiftPM lists a package's traits as -D flags in the order of a Set, which hashing seeds anew in
# each process: when a build is planned again (another environment, another package in a shared
# folder), swift-dependencies and everything above it compile again for the order alone
# (swiftlang/swift-package-manager#10525). Fixed hashing keeps the order from one plan to the next.
SWIFT_BUILD = SWIFT_DETERMINISTIC_HASHING=1 $(SWIFT) build
# A release build in a folder of its own (the benchmarks', make install's): without the tests and
# what only they use (Package.swift, at its end), so without libcurl.
RELEASE_BUILD = SWITCHYARD_RELEASE_BUILD=1 $(SWIFT_BUILD)

.PHONY: all build run test bench bench-e2e deps clean

all: build

# libsystemd-dev (the CSystemd module) and systemd-container (systemd-nspawn, for Tests/Systemd),
# installed only when missing and pinned to the installed libsystemd0: an unpinned install pulls a
# newer point release and upgrades the whole systemd stack of the machine.
SYSTEMD_PACKAGES := libsystemd-dev systemd-container
# libsqlite3-dev (GRDB's SQLite, the journal), pinned the same way to the installed libsqlite3-0;
# libssl-dev (the load tool's TLS mode, Benchmarks/EndToEnd/loadgen.c) to the installed libssl3.
PINNED_PACKAGES  := $(foreach p,$(SYSTEMD_PACKAGES),$(p):libsystemd0) libsqlite3-dev:libsqlite3-0 libssl-dev:libssl3

# Debian's chromium and its chromedriver, for the inspector's browser test: installed when
# missing, as they are (no installed package to pin them to).
BROWSER_PACKAGES := chromium chromium-driver
# PostgreSQL 15's server programs: the PostgreSQL journal's tests start servers of their own
# with its initdb (Tests/Support/PostgresServer.swift), installed only when missing.
POSTGRES_BIN := /usr/lib/postgresql/15/bin

# Swift itself is the one prerequisite that is not installed here: it comes with the machine.
deps:
	@command -v $(SWIFT) >/dev/null || { echo "error: swift is not on PATH; install Swift 6.1 or later" >&2; exit 1; }
	@command -v python3 >/dev/null || { echo "installing python3"; apt-get update -qq && apt-get install -y -qq python3; }
	@for pair in $(PINNED_PACKAGES); do \
	  pkg=$${pair%%:*}; base=$${pair#*:}; \
	  dpkg-query -W -f='$${Status}' $$pkg 2>/dev/null | grep -q ' ok installed' && continue; \
	  version=$$(dpkg-query -W -f='$${Version}' $$base) || { echo "error: $$base is not installed" >&2; exit 1; }; \
	  echo "installing $$pkg=$$version (pinned to the installed $$base)"; \
	  apt-get install -y -qq $$pkg=$$version \
	    || { echo "pinned install failed; apt-get update and retry"; apt-get update -qq && apt-get install -y -qq $$pkg=$$version; } \
	    || { echo "error: could not install $$pkg=$$version" >&2; exit 1; }; \
	done
	@missing=; for pkg in $(BROWSER_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$pkg 2>/dev/null | grep -q ' ok installed' || missing="$$missing $$pkg"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "installing$$missing"; \
	  apt-get install -y -qq $$missing || { apt-get update -qq && apt-get install -y -qq $$missing; } \
	    || { echo "error: could not install$$missing" >&2; exit 1; }; \
	fi
	@[ -x $(POSTGRES_BIN)/initdb ] || { echo "installing postgresql-15"; \
	  apt-get install -y -qq postgresql-15 || { apt-get update -qq && apt-get install -y -qq postgresql-15; }; }

# One build for everything, tests included: building a single product after it (or the other way
# round) plans again with other settings and compiles modules a second time.
build: deps
	$(SWIFT_BUILD) $(SWIFT_FLAGS) --build-tests

# Everything CI runs: the one build, then three lanes at once, each mostly waiting on its own
# processes — the Python suite and the example packages; nspawn's systemd, the cluster's failover
# rounds in network namespaces and the docs checks; the fuzzers (a package of their own,
# instrumented: their build, then a brief run) at the lowest priority, taking the cores the other
# two leave idle. Not beside the package's build: both builds are CPU-bound, and two at once take
# as long as one after the other. The Swift suite, which loads both cores with daemons of its
# own, runs last and alone.
test:
	$(MAKE) --no-print-directory -j3 test-lane-python test-lane-systemd test-lane-fuzz
	BUILD_DIR=$(BUILD_DIR) scripts/swift-test-with-deadline $(SWIFT) test $(SWIFT_FLAGS) --skip-build

.PHONY: test-lane-python test-lane-systemd test-lane-fuzz
CLUSTER_PYTHON_TEST := Tests/Python/test_cluster_netns.py
test-lane-python: build $(BUILD_DIR)/python-requirements.stamp
	$(MAKE) --no-print-directory SKIP_BUILD=1 python-test PYTHON_TESTS="Tests/Python --ignore=$(CLUSTER_PYTHON_TEST)"
	$(MAKE) --no-print-directory SKIP_BUILD=1 examples-test
test-lane-systemd: build $(BUILD_DIR)/python-requirements.stamp
	$(MAKE) --no-print-directory SKIP_BUILD=1 systemd-test
	$(MAKE) --no-print-directory SKIP_BUILD=1 python-test PYTHON_TESTS=$(CLUSTER_PYTHON_TEST)
	$(MAKE) --no-print-directory SKIP_BUILD=1 docs-test
test-lane-fuzz: build
	$(MAKE) --no-print-directory fuzz-build
	$(MAKE) --no-print-directory FUZZ_NICE=19 fuzz-brief

# The check to run before a commit: the build, the Swift suite, the docs checks and the Python
# suite without its slowest parts (a browser, network namespaces, the live fuzzer's 100,000
# inputs: 10,000 here). `make test` runs all of it, and nspawn, the fuzzers and the examples.
QUICK_PYTHON_SKIPS := --ignore=Tests/Python/test_inspector_browser.py --ignore=Tests/Python/test_tls_netns.py
.PHONY: test-quick
test-quick: build docs-test $(PYTHON_STAMP)
	SWITCHYARDD="$$($(SWIFT) build $(SWIFT_FLAGS) --show-bin-path)/switchyardd" PYTHONDONTWRITEBYTECODE=1 \
	  SWITCHYARD_FUZZ_INPUTS=10000 $(VENV)/bin/python3 -m pytest -q -m "not handover" $(QUICK_PYTHON_SKIPS) Tests/Python
	BUILD_DIR=$(BUILD_DIR) scripts/swift-test-with-deadline $(SWIFT) test $(SWIFT_FLAGS) --skip-build

# The stages build first, except in `make test`, which has built once before them (SKIP_BUILD=1).
BUILD_FIRST = $(if $(SKIP_BUILD),,build)

# Examples/: applications on Switchyard, each a package of its own that depends on this one by
# path, tested there — its unit tests and its end-to-end tests, which drive its daemon with this
# package's switchyard CLI. They build in this package's own folder: an example compiles this
# package and the same dependencies with the same settings, so its build finds them up to date and
# compiles only its own modules. Each package resolves the shared checkouts to its own graph, so
# the next build of the other resolves again (seconds, from the local mirror) and compiles nothing.
EXAMPLES       := Flags Tutorial
EXAMPLES_BUILD ?= $(abspath $(BUILD_DIR))
.PHONY: examples-test
examples-test: $(BUILD_FIRST)
	@for example in $(EXAMPLES); do \
	  $(MAKE) -C Examples/$$example test SWIFT=$(SWIFT) BUILD_PATH=$(EXAMPLES_BUILD) \
	    SWITCHYARD_CLI="$$($(SWIFT) build $(SWIFT_FLAGS) --show-bin-path)/switchyard" || exit 1; \
	done

# Tests/Python: a third-party client's view of switchyardd (PyPI varlink, jsonpatch, asyncvarlink),
# in a virtual environment inside the build folder; pip runs only when requirements.txt changed.
VENV                ?= $(BUILD_DIR)/venv
PYTHON_REQUIREMENTS := Tests/Python/requirements.txt
PYTHON_STAMP        := $(BUILD_DIR)/python-requirements.stamp

.PHONY: python-test
# PYTHON_TESTS: which of them (pytest's arguments); make test's lanes split them.
PYTHON_TESTS ?= Tests/Python
python-test: $(BUILD_FIRST) $(PYTHON_STAMP)
	SWITCHYARDD="$$($(SWIFT) build $(SWIFT_FLAGS) --show-bin-path)/switchyardd" PYTHONDONTWRITEBYTECODE=1 \
	  SWITCHYARD_SCREENSHOTS=$(BUILD_DIR)/inspector-screenshots $(VENV)/bin/python3 -m pytest -q $(PYTHON_TESTS)

# The connection handover's tests alone (a test plays systemd's fd store), also in python-test.
.PHONY: test-handover
test-handover: build $(PYTHON_STAMP)
	SWITCHYARDD="$$($(SWIFT) build $(SWIFT_FLAGS) --show-bin-path)/switchyardd" PYTHONDONTWRITEBYTECODE=1 \
	  $(VENV)/bin/python3 -m pytest -q -m handover Tests/Python

# The README's picture of the inspector: the browser test's screenshot of the timeline with a
# change open, from a real daemon.
.PHONY: inspector-screenshot
inspector-screenshot: build $(PYTHON_STAMP)
	SWITCHYARDD="$$($(SWIFT) build $(SWIFT_FLAGS) --show-bin-path)/switchyardd" PYTHONDONTWRITEBYTECODE=1 \
	  SWITCHYARD_SCREENSHOTS=$(BUILD_DIR)/inspector-screenshots $(VENV)/bin/python3 -m pytest -q Tests/Python/test_inspector_browser.py
	mkdir -p docs/images && cp $(BUILD_DIR)/inspector-screenshots/change.png docs/images/inspector.png

$(VENV)/pyvenv.cfg:
	python3 -m venv $(VENV) || { \
	  echo "python3 -m venv failed; installing python3-venv"; rm -rf $(VENV); \
	  apt-get update -qq && apt-get install -y -qq python3-venv && python3 -m venv $(VENV); }

$(PYTHON_STAMP): $(PYTHON_REQUIREMENTS) $(VENV)/pyvenv.cfg
	$(VENV)/bin/python3 -m pip install -q -r $(PYTHON_REQUIREMENTS)
	touch $@

# Tests/Docs: the tutorial's code blocks are the code of Examples/Tutorial (test_tutorial.py), in
# the same virtual environment; it builds nothing.
.PHONY: docs-test
docs-test: deps $(PYTHON_STAMP)
	PYTHONDONTWRITEBYTECODE=1 $(VENV)/bin/python3 -m pytest -q Tests/Docs

# Every Swift suite under ThreadSanitizer, in a build folder of its own. SWITCHYARD_TSAN makes the
# project's Mutex tell TSan when it is taken and given back (the standard one waits in the
# uninstrumented runtime, so TSan would see races behind every lock). A race ends the run: in the
# test process at once, in a daemon a test starts with exit status 66, which fails that test.
# One test at a time: TSan slows everything five to fifteen times, and tests that measure time
# (watchdog intervals, probe timeouts) would measure the crowding instead.
TSAN_DIR   ?= .build-tsan
TSAN_FLAGS := --sanitize=thread -Xswiftc -DSWITCHYARD_TSAN --scratch-path $(TSAN_DIR)
.PHONY: test-tsan
test-tsan: deps
	$(SWIFT_BUILD) --build-tests $(TSAN_FLAGS)
	TSAN_OPTIONS="halt_on_error=1 exitcode=66" SWITCHYARD_TEST_TIME_SCALE=4 $(SWIFT) test $(TSAN_FLAGS) --skip-build --no-parallel

# libFuzzer targets (Fuzz/README.md): `make fuzz` runs each for FUZZ_SECONDS in release;
# `make fuzz-brief` runs each for 5 s in debug.
FUZZ_DIR     ?= .build-fuzz
FUZZ_SECONDS ?= 60
FUZZ_JOBS    ?= 1
.PHONY: fuzz fuzz-brief fuzz-build
fuzz:
	SWIFT=$(SWIFT) FUZZ_BUILD_DIR=$(abspath $(FUZZ_DIR)) FUZZ_JOBS=$(FUZZ_JOBS) Fuzz/run.sh $(FUZZ_SECONDS)
# FUZZ_NICE: the priority it runs at (make test's lane lowers it beside the other lanes).
FUZZ_NICE ?= 0
fuzz-brief:
	SWIFT=$(SWIFT) FUZZ_BUILD_DIR=$(abspath $(FUZZ_DIR)) FUZZ_CONFIGURATION=debug FUZZ_JOBS=2 nice -n $(FUZZ_NICE) Fuzz/run.sh 5
# fuzz-brief's build alone, at the lowest priority (`make test` runs it beside other stages).
fuzz-build:
	SWIFT=$(SWIFT) FUZZ_BUILD_DIR=$(abspath $(FUZZ_DIR)) FUZZ_CONFIGURATION=debug FUZZ_JOBS=2 nice -n 19 Fuzz/run.sh build

# The live protocol fuzzer (Tests/Python/test_live_fuzz.py) at length: a million invalid inputs
# against a release build while a well-behaved client keeps calling. `make test` sends 100,000.
SOAK_INPUTS ?= 1000000
.PHONY: soak
soak: deps $(PYTHON_STAMP)
	$(SWIFT) build -c release $(RELEASE_SWIFT_FLAGS) --product switchyardd
	SWITCHYARDD="$$($(SWIFT) build -c release $(RELEASE_SWIFT_FLAGS) --show-bin-path)/switchyardd" SWITCHYARD_FUZZ_INPUTS=$(SOAK_INPUTS) \
	  PYTHONDONTWRITEBYTECODE=1 $(VENV)/bin/python3 -m pytest -q -s Tests/Python/test_live_fuzz.py
	$(MAKE) soak-durability

# kill -9 under pipelined load, SOAK_KILL_ROUNDS rounds (make test runs 20): every answered Send
# is in the recovered state, and numbers only go up.
SOAK_KILL_ROUNDS ?= 100
.PHONY: soak-durability
soak-durability: build
	SWITCHYARD_KILL_ROUNDS=$(SOAK_KILL_ROUNDS) $(SWIFT) test $(SWIFT_FLAGS) --skip-build --filter killedUnderLoad

# Three daemons in network namespaces on one PostgreSQL, the leader killed or cut off
# SOAK_CLUSTER_ROUNDS times (make test runs 10) under pipelined Sends: the history check, and
# the failover time's p50 and p99.
SOAK_CLUSTER_ROUNDS ?= 100
.PHONY: soak-cluster
soak-cluster: build $(PYTHON_STAMP)
	SWITCHYARDD="$$($(SWIFT) build $(SWIFT_FLAGS) --show-bin-path)/switchyardd" SWITCHYARD_CLUSTER_ROUNDS=$(SOAK_CLUSTER_ROUNDS) \
	  PYTHONDONTWRITEBYTECODE=1 $(VENV)/bin/python3 -m pytest -q -s Tests/Python/test_cluster_netns.py

# Serves PrimeTime on run/switchyard.sock in the foreground; prints how to talk to it.
run: deps
	./scripts/run.sh

# Release build of Benchmarks/Runtime, a package of its own, in a folder of its own so it never
# invalidates the debug build.
bench: deps
	rm -rf $(BENCH_OUT)
	$(SWIFT) package --package-path Benchmarks/Runtime --scratch-path $(abspath $(BENCH_DIR))/runtime \
	  --allow-writing-to-package-directory \
	  benchmark --target RuntimeBenchmarks --format jmh --path $(abspath $(BENCH_OUT)) --no-progress
	python3 Benchmarks/ratios.py $(BENCH_OUT)

# End-to-end: switchyardd against a C echo server and Redis, started by the same run.
bench-e2e: deps
	Benchmarks/EndToEnd/run.sh

# Its rows for remote clients alone (N, HANDSHAKES: how many calls and fresh connections).
.PHONY: bench-tls
bench-tls: deps
	Benchmarks/EndToEnd/run.sh tls

# The same work on Switchyard, Redis 7 and etcd 3.4 (installed when missing), each durability
# side by side, in interleaved rounds: medians, ranges and the ratios the goals are set on.
.PHONY: bench-peers bench-scale
bench-peers: deps
	Benchmarks/Peers/run.sh

# The curves: fan-out to 10–10,000 subscribers against Redis, a journal of 10–10,000,000 changes,
# a state of 10–1,000,000 elements, an application of 1, 10 and 100 features; data and SVG plots
# (gnuplot) under .build-bench/scale, about two and a half minutes in all.
# Smaller runs: SUBSCRIBERS=… LENGTHS=… SIZES=… FEATURES=… (Benchmarks/Peers/scale.sh says more).
bench-scale: deps
	Benchmarks/Peers/scale.sh

# The inspector's figures: the first render of a 1,000,000-change journal in chromium, and the
# event stream under 10,000 changes/s with viewers, the daemon's RSS before and after
# (Benchmarks/Inspector/figures.py; CHANGES=… RATE=… DURATION=… VIEWERS=… STALLED=… to change them).
.PHONY: bench-inspector
bench-inspector: deps $(PYTHON_STAMP)
	$(RELEASE_BUILD) -c release $(RELEASE_SWIFT_FLAGS) --scratch-path $(BENCH_DIR) --product switchyardd
	$(VENV)/bin/python3 Benchmarks/Inspector/figures.py $(BENCH_DIR)/release/switchyardd \
	  --changes $(or $(CHANGES),1000000) --rate $(or $(RATE),10000) --seconds $(or $(DURATION),20) \
	  --viewers $(or $(VIEWERS),6) --stalled $(or $(STALLED),2)

# The cluster on PostgreSQL in one run (Benchmarks/Cluster): strict Sends on the PostgreSQL journal
# against SQLite's (ping-pong and 16 in flight), a standby's lag under that load, failover time
# over ROUNDS kill -9 rounds with the default lease, and etcd 3.4 for scale (N=… ROUNDS=…;
# DAEMON=… measures that binary instead of the release build).
.PHONY: bench-cluster
bench-cluster: deps
	Benchmarks/Cluster/run.sh

# The connection handover's pause over RESTARTS restarts with CONNECTIONS clients calling and
# SUBSCRIBERS following (20, 1,000, 1,000), measured at the clients (Benchmarks/Restart).
.PHONY: bench-restart
bench-restart: deps
	Benchmarks/Restart/run.sh

# The same benchmark under a real systemd 252 as PID 1 (systemd-nspawn, as make systemd-test):
# `systemctl restart` of switchyard.service as make install writes it, with a store for every
# client, against make install's build, installed into a folder of the benchmarks'. Needs root.
RESTART_BENCH_INSTALL := $(abspath $(BENCH_DIR))/restart-systemd
.PHONY: bench-restart-systemd
bench-restart-systemd: deps
	$(MAKE) --no-print-directory install-bin DESTDIR=$(RESTART_BENCH_INSTALL)
	SWITCHYARD_BIN_DIR="$(RESTART_BENCH_INSTALL)$(BINDIR)" \
	  SWITCHYARD_E2E_SCRIPT=Benchmarks/Restart/in-systemd.sh SWITCHYARD_E2E_TIMEOUT=900 \
	  SWITCHYARD_E2E_ENVIRONMENT="RESTARTS=$(or $(RESTARTS),20) CONNECTIONS=$(or $(CONNECTIONS),1000) SUBSCRIBERS=$(or $(SUBSCRIBERS),1000) REEXECUTE=$(REEXECUTE)" \
	  SWITCHYARD_E2E_DROPIN="$$(printf 'WatchdogSec=10s\nFileDescriptorStoreMax=4096\nEnvironment=SWITCHYARD_FDSTORE=4096 SWITCHYARD_LIMITS_MAX_CONNECTIONS=4000')" \
	  Tests/Systemd/nspawn-e2e.sh

# What building switchyard.service's sandbox costs systemd 252 at each start, option by option
# (a oneshot /bin/true with the unit's hardening lines, less the ones named), in the same
# container. Needs root.
.PHONY: bench-sandbox
bench-sandbox: deps
	$(MAKE) --no-print-directory install-bin DESTDIR=$(RESTART_BENCH_INSTALL)
	SWITCHYARD_BIN_DIR="$(RESTART_BENCH_INSTALL)$(BINDIR)" \
	  SWITCHYARD_E2E_SCRIPT=Benchmarks/Restart/sandbox-cost.sh SWITCHYARD_E2E_TIMEOUT=600 \
	  Tests/Systemd/nspawn-e2e.sh

# A change to the daemon against the build before it: BASELINE=path/to/old/switchyardd, in ROUNDS
# interleaved rounds pinned to one CPU (a release build of the old commit made with
# scripts/release-swift-flags, as run.sh builds this one).
.PHONY: bench-ab
bench-ab: deps
	@test -n "$(BASELINE)" || { echo "usage: make bench-ab BASELINE=path/to/old/switchyardd [ROUNDS=8]" >&2; exit 2; }
	BASELINE="$(BASELINE)" ROUNDS="$(or $(ROUNDS),8)" Benchmarks/EndToEnd/run.sh ab

# An exact count (uprobes, needs perf and root), for the release build bench-e2e makes: the
# actor-hosted counter, then the worker-hosted one.
.PHONY: bench-lookups
bench-lookups: deps
	command -v perf >/dev/null || { apt-get update -qq && apt-get install -y -qq linux-perf; }
	$(RELEASE_BUILD) -c release $(RELEASE_SWIFT_FLAGS) --scratch-path $(BENCH_DIR) --product switchyardd
	Benchmarks/EndToEnd/metadata-lookups.sh $(BENCH_DIR)/release/switchyardd actor
	Benchmarks/EndToEnd/metadata-lookups.sh $(BENCH_DIR)/release/switchyardd worker

clean:
	rm -rf $(BUILD_DIR) $(BENCH_DIR) $(RELEASE_DIR) $(TSAN_DIR) $(FUZZ_DIR) $(EXAMPLES_BUILD) $(EXAMPLES:%=Examples/%/.build)

# Tests/Systemd: the units checked offline (systemd-analyze verify and security), then run under a
# real systemd 252 as PID 1 in systemd-nspawn against the debug build: socket activation, notify,
# watchdog, reload, journal fields, clean stop, and the connection handover under a short load
# (3 restarts while 5 senders pipeline and 10 subscribers watch, then 3 kill -9): the restarts
# alternate between the debug build and UPGRADE_BIN (below), as an upgrade and a downgrade.
# Needs root.
.PHONY: systemd-test
systemd-test: $(BUILD_FIRST)
	SWITCHYARD_BIN_DIR="$$($(SWIFT) build $(SWIFT_FLAGS) --show-bin-path)" Tests/Systemd/unit-checks.sh
	$(if $(UPGRADE_BIN),,Tests/Systemd/upgrade-build.sh $(BUILD_DIR) $(UPGRADE_BUILD))
	SWITCHYARD_E2E_HANDOVER_LOAD="$${SWITCHYARD_E2E_HANDOVER_LOAD:-3 5 10 3}" \
	  SWITCHYARD_E2E_UPGRADE_BIN="$(or $(UPGRADE_BIN),$(UPGRADE_BUILD))" \
	  SWITCHYARD_BIN_DIR="$$($(SWIFT) build $(SWIFT_FLAGS) --show-bin-path)" Tests/Systemd/nspawn-e2e.sh

# The build a restart upgrades to: the release build of this checkout (make soak and
# systemd-soak make it) when there is one; without it, the debug build's objects linked again
# with another version in its main module (Tests/Systemd/upgrade-build.sh: seconds, not a build).
UPGRADE_BIN ?= $(wildcard $(BUILD_DIR)/release/switchyardd)
UPGRADE_BUILD := $(BUILD_DIR)/upgrade/switchyardd

# systemd-test with issue 34's load: 20 restarts, debug and release builds in turn, while 50
# senders pipeline and 100 subscribers watch; then 5 kill -9 under the same load.
.PHONY: systemd-soak
systemd-soak: build test-handover
	$(SWIFT) build -c release $(RELEASE_SWIFT_FLAGS) --product switchyardd
	SWITCHYARD_E2E_HANDOVER_LOAD="$${SWITCHYARD_E2E_HANDOVER_LOAD:-20 50 100 5}" SWITCHYARD_E2E_TIMEOUT=1500 \
	  SWITCHYARD_E2E_UPGRADE_BIN="$$($(SWIFT) build -c release $(RELEASE_SWIFT_FLAGS) --show-bin-path)/switchyardd" \
	  SWITCHYARD_BIN_DIR="$$($(SWIFT) build $(SWIFT_FLAGS) --show-bin-path)" Tests/Systemd/nspawn-e2e.sh

# make install [APP=switchyardd] [PACKAGE=.] [NAME=…] [PREFIX=/usr/local] [DESTDIR=]: any
# application's daemon, installed the same way. A release build of the executable APP from the
# Swift package at PACKAGE (and of the CLI, a product of this package that PACKAGE depends on),
# with the Swift runtime and Foundation linked statically, so the service depends on nothing under
# the toolchain's folder; built in a folder of its own so it never invalidates the debug build.
# Its units, sysusers.d file and configuration are written from the one template in systemd/:
# NAME.socket listening on /run/NAME/NAME.sock for the group NAME, NAME.service running APP as a
# dynamic user named APP, with /var/lib/NAME and NAME.json in SYSCONFDIR/NAME. NAME is APP
# without a final "d" (switchyardd: switchyard; flagsd: flags); it must differ from APP. Units go
# where systemd looks for them under PREFIX (/usr/local/lib/systemd/system is on systemd's search
# path; for another PREFIX set UNITDIR=/etc/systemd/system). An existing configuration is kept.
APP           ?= switchyardd
PACKAGE       ?= .
NAME          ?= $(patsubst %d,%,$(APP))
# The configuration installed: PACKAGE's config/NAME.json when it has one, Switchyard's default otherwise.
CONFIG        ?= $(firstword $(wildcard $(PACKAGE)/config/$(NAME).json) config/switchyard.json)
# Switchyard's default names PrimeTime's features: installed for another application, without them.
CONFIG_FLAGS  := $(if $(and $(filter config/switchyard.json,$(CONFIG)),$(filter-out switchyardd,$(APP))),--without-features)
PREFIX        ?= /usr/local
BINDIR        ?= $(PREFIX)/bin
UNITDIR       ?= $(PREFIX)/lib/systemd/system
SYSUSERSDIR   ?= $(PREFIX)/lib/sysusers.d
SYSCONFDIR    ?= /etc
RELEASE_DIR   ?= $(PACKAGE)/.build-release
# systemd's file descriptor store keeps every connection across a restart (README, "Restart
# without dropping anyone"): sized to limits.maxConnections of the configuration installed, and
# one more for the state handed over. HANDOVER=no leaves it off: a restart then ends every connection.
HANDOVER      ?= yes
FDSTORE       ?= $(if $(filter yes,$(HANDOVER)),$(shell python3 -c 'import json,sys; c=json.load(open(sys.argv[1])); print(c.get("switchyard",c).get("limits",{}).get("maxConnections",1024)+1)' $(CONFIG) 2>/dev/null || echo 1025),0)
RELEASE_FLAGS ?= -c release --static-swift-stdlib --package-path $(PACKAGE) --scratch-path $(RELEASE_DIR) $(RELEASE_SWIFT_FLAGS)

.PHONY: install install-bin install-units uninstall check-names
install: install-bin install-units

# Names systemd takes as a unit's, a user's and a group's, and a user that is not the group.
check-names:
	@for name in "$(APP)" "$(NAME)"; do \
	  echo "$$name" | grep -Eqx '[a-z_][a-z0-9_-]{0,30}' \
	    || { echo "error: '$$name' is not a name systemd takes for a unit, user and group ([a-z_][a-z0-9_-]*, at most 31)" >&2; exit 1; }; \
	done
	@[ "$(APP)" != "$(NAME)" ] || { echo "error: NAME (the units and the socket's group) must differ from APP (the daemon's dynamic user): systemd refuses a dynamic user named like a static group; give NAME=" >&2; exit 1; }

install-bin: deps check-names
	$(RELEASE_BUILD) $(RELEASE_FLAGS) --product $(APP)
	$(RELEASE_BUILD) $(RELEASE_FLAGS) --product switchyard
	install -d $(DESTDIR)$(BINDIR)
	bin="$$($(RELEASE_BUILD) $(RELEASE_FLAGS) --show-bin-path)" && \
	  install -m 0755 "$$bin/$(APP)" "$$bin/switchyard" $(DESTDIR)$(BINDIR)/

# A template with the application's names, written whole (mode 0644) or not at all.
render = sed -e 's|@APP@|$(APP)|g' -e 's|@NAME@|$(NAME)|g' -e 's|@BINDIR@|$(BINDIR)|g' -e 's|@FDSTORE@|$(FDSTORE)|g' \
  -e 's|@SYSCONFDIR@|$(SYSCONFDIR)|g' $(1) > $(2).tmp && chmod 0644 $(2).tmp && mv $(2).tmp $(2)

# The units, the sysusers.d file for the socket's group, and the configuration with the socket
# where NAME.socket listens. Without DESTDIR (a real install) the group is created at once, as a
# package's postinst would.
install-units: check-names
	install -d $(DESTDIR)$(UNITDIR) $(DESTDIR)$(SYSUSERSDIR) $(DESTDIR)$(SYSCONFDIR)/$(NAME)
	$(call render,systemd/service.in,$(DESTDIR)$(UNITDIR)/$(NAME).service)
	$(call render,systemd/socket.in,$(DESTDIR)$(UNITDIR)/$(NAME).socket)
	$(call render,systemd/sysusers.in,$(DESTDIR)$(SYSUSERSDIR)/$(NAME).conf)
	@config="$(DESTDIR)$(SYSCONFDIR)/$(NAME)/$(NAME).json"; \
	if [ -e "$$config" ]; then echo "keeping the existing $$config"; \
	else python3 systemd/service-config.py $(CONFIG_FLAGS) $(CONFIG) /run/$(NAME)/$(NAME).sock > "$$config.tmp" \
	  && chmod 0644 "$$config.tmp" && mv "$$config.tmp" "$$config" && echo "installed $$config"; fi
	@if [ -z "$(DESTDIR)" ] && command -v systemd-sysusers >/dev/null; then \
	  systemd-sysusers $(SYSUSERSDIR)/$(NAME).conf; \
	  echo "next: systemctl daemon-reload && systemctl enable --now $(NAME).socket"; fi

# make verify-units APP=… [NAME=…] [DESTDIR=…]: systemd-analyze verify on the units install-units
# writes for APP, with ExecStart naming the executable where install-bin put it (under DESTDIR
# when staged, so a staged install can be checked before it is a real one). Prints one line when
# verify has nothing to say, and fails with what it said otherwise. Run as root, verify leaves
# /run/systemd/systemd-units-load behind; it is removed when it was not there before.
.PHONY: verify-units
verify-units: check-names
	@exe="$(abspath $(DESTDIR)$(BINDIR))/$(APP)"; \
	[ -x "$$exe" ] || { echo "error: there is no $$exe: make install APP=$(APP) PACKAGE=… first, with the same DESTDIR" >&2; exit 1; }; \
	tmp="$$(mktemp -d)"; marker=/run/systemd/systemd-units-load; had_marker=0; [ ! -e $$marker ] || had_marker=1; \
	$(MAKE) -s --no-print-directory install-units DESTDIR="$$tmp" BINDIR="$(abspath $(DESTDIR)$(BINDIR))" \
	  UNITDIR=/units SYSUSERSDIR=/sysusers.d >/dev/null \
	  && out="$$(cd "$$tmp/units" && systemd-analyze verify ./$(NAME).socket ./$(NAME).service 2>&1)"; status=$$?; \
	rm -rf "$$tmp"; [ $$had_marker = 1 ] || rm -f $$marker; \
	if [ $$status = 0 ] && [ -z "$$out" ]; then echo "systemd-analyze verify $(NAME).socket $(NAME).service: no complaint"; \
	else echo "systemd-analyze verify $(NAME).socket $(NAME).service:" >&2; echo "$$out" >&2; exit 1; fi

# Leaves SYSCONFDIR/NAME (it may hold local changes) and the group. The CLI goes with switchyardd
# only: other applications' services may still use it. The unit directories go when left empty.
uninstall: check-names
	rm -f $(DESTDIR)$(BINDIR)/$(APP)
	$(if $(filter switchyardd,$(APP)),rm -f $(DESTDIR)$(BINDIR)/switchyard)
	rm -f $(DESTDIR)$(UNITDIR)/$(NAME).service $(DESTDIR)$(UNITDIR)/$(NAME).socket
	rm -f $(DESTDIR)$(SYSUSERSDIR)/$(NAME).conf
	-rmdir --ignore-fail-on-non-empty $(DESTDIR)$(UNITDIR) $(DESTDIR)$(SYSUSERSDIR) $(DESTDIR)$(dir $(UNITDIR)) 2>/dev/null
