#!/usr/bin/env bash
# The batched mode of two builds side by side, against `off` and `strict` of the first, in one
# run: four daemons (the actor-hosted counter), five interleaved rounds of ping-pong and pipelined
# Sends, the medians and their ratios to `off`. For a change to where or when the journal commits.
#
#   Benchmarks/EndToEnd/durability-ab.sh A/switchyardd B/switchyardd [ROUNDS]
#   PIN=1 Benchmarks/EndToEnd/durability-ab.sh …     every daemon and the load on CPU 0
#
# Needs the load tool that Benchmarks/EndToEnd/run.sh builds (.build-bench/loadgen).
set -euo pipefail
cd "$(dirname "$0")/../.."
a=$1 b=$2 rounds=${3:-5} n=${N:-20000}
loadgen=.build-bench/loadgen
[ -x "$loadgen" ] || cc -O2 -o "$loadgen" Benchmarks/EndToEnd/loadgen.c -lpthread -lssl -lcrypto
pin=()
[ "${PIN:-0}" = 1 ] && pin=(taskset -c 0)
dir=$(mktemp -d)
declare -A pid
cleanup() { for p in "${pid[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$dir"; }
trap cleanup EXIT
start() { # NAME BINARY MODE
  env SWITCHYARD_FEATURES_PRIMES_ISOLATION=actor SWITCHYARD_LOG_LEVEL=warning SWITCHYARD_DURABILITY_MODE="$3" \
    SWITCHYARD_STATE_DIRECTORY="$dir/state-$1" "${pin[@]}" "$2" --socket "$dir/$1.sock" >/dev/null 2>&1 &
  pid[$1]=$!
}
names=(off batched-a batched-b strict)
start off "$a" off
start batched-a "$a" batched
start batched-b "$b" batched
start strict "$a" strict
for name in "${names[@]}"; do
  for _ in $(seq 1 200); do [ -S "$dir/$name.sock" ] && break; sleep 0.05; done
done
rate() { sed -n 's/.*rate=\([0-9.]*\).*/\1/p'; }
for _ in $(seq 1 "$rounds"); do
  for name in "${names[@]}"; do
    pingpong=$("${pin[@]}" "$loadgen" pingpong switchyard "$dir/$name.sock" "$n" | rate)
    pipelined=$("${pin[@]}" "$loadgen" pipeline switchyard "$dir/$name.sock" "$((n * 5))" 16 | rate)
    echo "$name $pingpong $pipelined"
  done
done >"$dir/results"
python3 - "$dir/results" <<'PY'
import collections, statistics, sys
rows = collections.defaultdict(lambda: ([], []))
for line in open(sys.argv[1]):
    name, pingpong, pipelined = line.split()
    rows[name][0].append(float(pingpong))
    rows[name][1].append(float(pipelined))
off = [statistics.median(column) for column in rows["off"]]
print("| daemon | ping-pong, round trips/s | / off | pipelined, msgs/s | / off |")
print("|---|---:|---:|---:|---:|")
for name in ("off", "batched-a", "batched-b", "strict"):
    pp, pl = (statistics.median(column) for column in rows[name])
    print(f"| {name} | {pp:.0f} | {pp / off[0]:.2f}× | {pl:.0f} | {pl / off[1]:.2f}× |")
PY
