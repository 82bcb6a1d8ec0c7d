#!/usr/bin/env bash
# A/B of two switchyardd binaries where one run's noise would hide a few percent: both daemons
# up at once (PrimeTime's default, the counter in a worker process), pinned to CPU 0, and
# ping-pong rounds that take turns, so that drift on the VM hits both alike. Prints each round's
# daemon CPU per Send (workers included) and the load tool's figures.
#
#   Benchmarks/EndToEnd/alternate.sh OLD_SWITCHYARDD [NEW_SWITCHYARDD] [ROUNDS]
set -euo pipefail
# The benchmarks' build folder is a release build's: the tests and what only they use are left
# out (Package.swift, at its end).
export SWITCHYARD_RELEASE_BUILD=1
cd "$(dirname "$0")/../.."
out=.build-bench
old=$1
new=${2:-$(swift build -c release $(grep -v '^#' scripts/release-swift-flags) --scratch-path "$out" --show-bin-path)/switchyardd}
rounds=${3:-4}
N=${N:-20000}
cc -O2 -o "$out/loadgen" Benchmarks/EndToEnd/loadgen.c -lpthread -lssl -lcrypto
dir=$(mktemp -d)
taskset -c 0 "$old" --socket "$dir/old.sock" >"$dir/old.log" 2>&1 & old_pid=$!
taskset -c 0 "$new" --socket "$dir/new.sock" >"$dir/new.log" 2>&1 & new_pid=$!
trap 'kill $old_pid $new_pid 2>/dev/null; wait 2>/dev/null; rm -rf "$dir"' EXIT
sleep 1.5
hz=$(getconf CLK_TCK)
ticks() { # the daemon's and its workers' CPU ticks
  local total=0 pid fields
  for pid in $1 $(pgrep -P "$1"); do
    read -r -a fields <"/proc/$pid/stat"
    total=$((total + fields[13] + fields[14]))
  done
  echo "$total"
}
for round in $(seq "$rounds"); do
  for which in old new; do
    pid=$([ "$which" = old ] && echo "$old_pid" || echo "$new_pid")
    before=$(ticks "$pid")
    result=$(taskset -c 0 "$out/loadgen" pingpong switchyard "$dir/$which.sock" "$N")
    cpu=$(awk -v t="$(($(ticks "$pid") - before))" -v hz="$hz" -v n="$N" 'BEGIN { printf "%.1f", t * 1e6 / hz / n }')
    echo "round $round $which: $cpu µs CPU per Send  $result"
  done
done
