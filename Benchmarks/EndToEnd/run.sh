#!/usr/bin/env bash
# End-to-end benchmark: switchyardd against references started by this same run — a minimal
# NUL-framed echo server (C, epoll) and Redis 7 on a Unix socket — with one load tool (loadgen.c)
# for all of them. Prints each figure and the ratios to the references, unpinned (what a user
# sees on this VM) and pinned to one CPU (which compares the software, not the cross-CPU wakeups).
set -euo pipefail
cd "$(dirname "$0")/../.."
out=.build-bench
mkdir -p "$out"
N=${N:-20000}
FANOUT_N=${FANOUT_N:-2000}

if ! command -v redis-server >/dev/null; then
  echo "installing redis-server (the reference)"
  apt-get update -qq && apt-get install -y -qq redis-server >/dev/null
fi
cc -O2 -o "$out/loadgen" Benchmarks/EndToEnd/loadgen.c -lpthread
swift build -c release --scratch-path "$out" --product switchyardd >/dev/null
daemon="$(swift build -c release --scratch-path "$out" --show-bin-path)/switchyardd"

dir=$(mktemp -d)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$dir"
}
trap cleanup EXIT

wait_for() { for _ in $(seq 1 200); do [ -S "$1" ] && return 0; sleep 0.05; done; echo "no socket $1" >&2; exit 1; }

start_servers() { # $1: the command prefix (empty, or taskset)
  local prefix=$1
  $prefix "$out/loadgen" echo-server "$dir/echo.sock" & pids+=($!)
  $prefix redis-server --port 0 --unixsocket "$dir/redis.sock" --save '' --appendonly no --loglevel warning >/dev/null & pids+=($!)
  SWITCHYARD_SUBSCRIPTIONS_QUEUE_LIMIT=100000 SWITCHYARD_LOG_LEVEL=warning $prefix "$daemon" --socket "$dir/switchyard.sock" & pids+=($!)
  wait_for "$dir/echo.sock"; wait_for "$dir/redis.sock"; wait_for "$dir/switchyard.sock"
}

stop_servers() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  pids=()
  rm -f "$dir"/*.sock
}

field() { sed -n "s/.*$1=\([0-9.]*\).*/\1/p" <<<"$2"; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (b == 0 ? 0 : a / b) }'; }

run_phase() { # $1: label, $2: prefix
  local label=$1 prefix=$2
  start_servers "$prefix"
  local load="$prefix $out/loadgen"
  local pp_s pp_e pp_r pl_s pl_e pl_r
  pp_s=$($load pingpong switchyard "$dir/switchyard.sock" "$N")
  pp_e=$($load pingpong echo "$dir/echo.sock" "$N")
  pp_r=$($load pingpong redis "$dir/redis.sock" "$N")
  pl_s=$($load pipeline switchyard "$dir/switchyard.sock" "$((N * 5))" 16)
  pl_e=$($load pipeline echo "$dir/echo.sock" "$((N * 5))" 16)
  pl_r=$($load pipeline redis "$dir/redis.sock" "$((N * 5))" 16)
  echo "## $label"
  echo
  echo "| measurement | switchyardd | echo (C) | Redis | vs Redis | goal |"
  echo "|---|---:|---:|---:|---:|---|"
  echo "| Send ping-pong, round trips/s | $(field rate "$pp_s") | $(field rate "$pp_e") | $(field rate "$pp_r") | $(ratio "$(field rate "$pp_s")" "$(field rate "$pp_r")")× | |"
  echo "| Send ping-pong p50, µs | $(field p50_us "$pp_s") | $(field p50_us "$pp_e") | $(field p50_us "$pp_r") | $(ratio "$(field p50_us "$pp_s")" "$(field p50_us "$pp_r")")× | ≤ 1.5× |"
  echo "| Send ping-pong p99, µs | $(field p99_us "$pp_s") | $(field p99_us "$pp_e") | $(field p99_us "$pp_r") | $(ratio "$(field p99_us "$pp_s")" "$(field p99_us "$pp_r")")× | |"
  echo "| Send pipelined (16 in flight), msgs/s | $(field rate "$pl_s") | $(field rate "$pl_e") | $(field rate "$pl_r") (PING) | $(ratio "$(field rate "$pl_s")" "$(field rate "$pl_r")")× | ≥ 0.5× |"
  for subscribers in 1 10 100; do
    local fo_s fo_r
    fo_s=$($load fanout switchyard "$dir/switchyard.sock" "$subscribers" "$FANOUT_N")
    fo_r=$($load fanout redis "$dir/redis.sock" "$subscribers" "$FANOUT_N")
    echo "| one change to $subscribers subscriber(s), deliveries/s | $(field rate "$fo_s") | | $(field rate "$fo_r") (PUBLISH) | $(ratio "$(field rate "$fo_s")" "$(field rate "$fo_r")")× | ≥ 1× |"
    echo "| … delivery p50 / p99, µs | $(field p50_us "$fo_s") / $(field p99_us "$fo_s") | | $(field p50_us "$fo_r") / $(field p99_us "$fo_r") | | |"
  done
  echo
  stop_servers
}

# The primes feature in a worker process (the default) against the same feature in an actor of
# the daemon's process, two daemons in the same run; then how fast a killed worker is back.
run_workers() {
  SWITCHYARD_LOG_LEVEL=warning SWITCHYARD_FEATURES_PRIMES_ISOLATION=actor "$daemon" --socket "$dir/actor.sock" & pids+=($!)
  SWITCHYARD_LOG_LEVEL=warning SWITCHYARD_SUPERVISION_INTENSITY=1000 "$daemon" --socket "$dir/process.sock" & pids+=($!)
  wait_for "$dir/actor.sock"; wait_for "$dir/process.sock"
  local load="$out/loadgen" pp_a pp_p pl_a pl_p restarts
  pp_a=$($load pingpong switchyard "$dir/actor.sock" "$N")
  pp_p=$($load pingpong switchyard "$dir/process.sock" "$N")
  pl_a=$($load pipeline switchyard "$dir/actor.sock" "$((N * 5))" 16)
  pl_p=$($load pipeline switchyard "$dir/process.sock" "$((N * 5))" 16)
  restarts=$(python3 Benchmarks/EndToEnd/restarts.py "$dir/process.sock" "${RESTARTS:-50}" 0.3)
  echo "## Worker process vs actor (the primes feature, unpinned)"
  echo
  echo "| measurement | worker process | actor | process / actor |"
  echo "|---|---:|---:|---:|"
  echo "| Send ping-pong, round trips/s | $(field rate "$pp_p") | $(field rate "$pp_a") | $(ratio "$(field rate "$pp_p")" "$(field rate "$pp_a")")× |"
  echo "| Send ping-pong p50 / p99, µs | $(field p50_us "$pp_p") / $(field p99_us "$pp_p") | $(field p50_us "$pp_a") / $(field p99_us "$pp_a") | $(ratio "$(field p50_us "$pp_p")" "$(field p50_us "$pp_a")")× (p50) |"
  echo "| Send pipelined (16 in flight), msgs/s | $(field rate "$pl_p") | $(field rate "$pl_a") | $(ratio "$(field rate "$pl_p")" "$(field rate "$pl_a")")× |"
  echo "| Send pipelined p50 / p99, µs | $(field p50_us "$pl_p") / $(field p99_us "$pl_p") | $(field p50_us "$pl_a") / $(field p99_us "$pl_a") | |"
  echo
  echo "Worker back after kill -9 (kill → Status shows the new worker running; one kill every 0.3 s):"
  echo "\`$restarts\`"
  echo
  stop_servers
}

case "${1:-all}" in
  workers) run_workers ;;
  *)
    run_phase "Unpinned (2 vCPUs)" ""
    run_phase "Pinned to one CPU (taskset -c 0)" "taskset -c 0"
    run_workers
    ;;
esac
