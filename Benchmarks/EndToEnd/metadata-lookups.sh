#!/usr/bin/env bash
# How many times the daemon asks the Swift runtime for generic metadata per ping-pong `Send`, and
# from where: an exact count (a uprobe on `swift_getGenericMetadata`), not a sample, so it is the
# same on a quiet machine and a busy one, and two builds compare without interleaving. Code that
# is generic over the application's types looks up each type made from them (`Envelope<Action>`,
# `Optional<…>`) every time it runs; each look-up is a hash-table probe, and together they were a
# sixth of a pipelined `Send` (BENCHMARKS.md, issue 10, twelfth part).
#
#   Benchmarks/EndToEnd/metadata-lookups.sh [DAEMON] [worker|actor]
#
# DAEMON defaults to the release build run.sh makes; the feature is hosted as an actor unless
# `worker` is given. Needs perf with uprobes (root); prints the count per Send, then the callers.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=.build-bench
N=${N:-1000}
daemon=${1:-$out/release/switchyardd}
case ${2:-actor} in
  worker) isolation=process ;;
  *) isolation=actor ;;
esac
[ -x "$out/loadgen" ] || cc -O2 -o "$out/loadgen" Benchmarks/EndToEnd/loadgen.c -lpthread -lssl -lcrypto
library=$(ldd "$daemon" | awk '/libswiftCore/ { print $3 }')
# Both ways in: code of the module that declares the type, and code of another module that has
# the type's metadata prespecialized (the standard library's `Optional`, `Array`), which asks
# through swift_getCanonicalPrespecializedGenericMetadata.
# A constrained existential's (`any FeatureHost<Action>`) comes from its own cache, keyed by its
# generalization signature, which costs more to hash.
entries=(swift_getGenericMetadata swift_getCanonicalPrespecializedGenericMetadata
  swift_getExtendedExistentialTypeMetadata swift_getExtendedExistentialTypeMetadata_unique)
events=("${entries[@]/#/probe_libswiftCore:}")
for event in "${events[@]}"; do perf probe -q -d "$event" 2>/dev/null || true; done
perf probe -q -x "$library" "${entries[@]/#/-a}"

dir=$(mktemp -d)
pid=
cleanup() {
  [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
  for event in "${events[@]}"; do perf probe -q -d "$event" 2>/dev/null || true; done
  rm -rf "$dir"
}
trap cleanup EXIT

env SWITCHYARD_LOG_LEVEL=warning SWITCHYARD_FEATURES_PRIMES_ISOLATION="$isolation" \
  "$daemon" --socket "$dir/daemon.sock" & pid=$!
for _ in $(seq 1 200); do [ -S "$dir/daemon.sock" ] && break; sleep 0.05; done
[ -S "$dir/daemon.sock" ] || { echo "the daemon did not start" >&2; exit 1; }
sleep 1
# A first run warms every cache and lazy path; only the second is counted.
"$out/loadgen" pingpong switchyard "$dir/daemon.sock" "$N" >/dev/null
# Recorded system-wide, so that the worker's look-ups count too, then kept to the daemon and its
# workers: what other processes ask for (a test suite running meanwhile) is left out.
perf record -q -o "$dir/lookups.data" "${events[@]/#/-e}" -g -a -- \
  "$out/loadgen" pingpong switchyard "$dir/daemon.sock" "$N" >/dev/null 2>&1
pids=$(echo "$pid" $(pgrep -P "$pid" || true))
perf script -i "$dir/lookups.data" -F comm,pid,event,ip,sym 2>/dev/null | awk -v n="$N" -v pids="$pids" '
  BEGIN { split(pids, list, " "); for (i in list) ours[list[i]] = 1 }
  # The sample line: comm (which may hold spaces), pid, event. The pid is the field before the event.
  function pid_of_sample(   i) { for (i = 2; i <= NF; i++) if ($i ~ /^probe_libswiftCore:/) return $(i - 1) + 0; return 0 }
  /probe_libswiftCore:swift_get/ && (pid_of_sample() in ours) {
    # The frames below the probe: the metadata accessor, then the function that asked.
    getline accessor; getline caller
    sub(/^[ \t]*[0-9a-f]+ /, "", caller)
    if (caller ~ /^__swift_instantiate/) { getline caller; sub(/^[ \t]*[0-9a-f]+ /, "", caller) }
    count[caller]++; total++
  }
  END {
    printf "lookups_per_send=%.1f sends=%d\n", total / n, n
    # Rows under 0.05 a Send are what the warm-up did not reach.
    for (c in count) if (count[c] / n >= 0.05) printf "%8.2f  %s\n", count[c] / n, c | "sort -rn"
  }' | swift demangle --simplified | cut -c1-200
