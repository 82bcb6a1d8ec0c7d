#!/usr/bin/env bash
# End-to-end benchmark: switchyardd against references started by this same run — a minimal
# NUL-framed echo server (C, epoll), the same echo made by a worker process behind two pipes (the
# process switches of a worker-hosted feature and nothing else), both again made with SwiftNIO
# channels and nothing else (Benchmarks/NIORelay: the floors any NIO server has) and Redis 7 on
# a Unix socket —
# with one load tool (loadgen.c) for all of them. Prints each figure and the ratios to the
# references, unpinned (what a user sees on this VM) and pinned to one CPU (which compares the
# software, not the cross-CPU wakeups), for the counter feature hosted in a worker process
# (PrimeTime's default) and in an actor of the daemon; then the daemon's CPU per call, its memory
# per connection and per subscriber, and how fast a killed worker is back.
#
#   Benchmarks/EndToEnd/run.sh                 everything
#   Benchmarks/EndToEnd/run.sh unpinned|pinned|workers|memory|durability|tls   one part
#   BASELINE=path/to/old/switchyardd run.sh    also measures that binary in the same run, side by
#                                              side (a regression check across a change)
#   BASELINE=… ROUNDS=8 run.sh ab              only this build against the baseline, pinned, in
#                                              interleaved rounds: medians and rounds ahead/behind
#   HALT_POLL_NS=200000 run.sh durability      also measures the modes unpinned with the guest's
#                                              idle polling at that value (root; put back after)
set -euo pipefail
# The benchmarks' build folder is a release build's: the tests and what only they use are left
# out (Package.swift, at its end).
export SWITCHYARD_RELEASE_BUILD=1
cd "$(dirname "$0")/../.."
out=.build-bench
mkdir -p "$out"
N=${N:-20000}
FANOUT_N=${FANOUT_N:-2000}

if ! command -v redis-server >/dev/null; then
  echo "installing redis-server (the reference)"
  apt-get update -qq && apt-get install -y -qq redis-server >/dev/null
fi
cc -O2 -o "$out/loadgen" Benchmarks/EndToEnd/loadgen.c -lpthread -lssl -lcrypto
# Built as `make install` builds the daemon (scripts/release-swift-flags), the NIO relay too.
release=(-c release $(grep -v '^#' scripts/release-swift-flags) --scratch-path "$out")
swift build "${release[@]}" --product switchyardd >/dev/null
swift build "${release[@]}" --product nio-relay >/dev/null
daemon="$(swift build "${release[@]}" --show-bin-path)/switchyardd"
nio_relay="$(swift build "${release[@]}" --show-bin-path)/nio-relay"

dir=$(mktemp -d)
pids=()
halt_poll=/sys/module/haltpoll/parameters/guest_halt_poll_ns
halt_poll_before=
cleanup() {
  [ -n "$halt_poll_before" ] && echo "$halt_poll_before" >"$halt_poll"
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  pkill -f "$nio_relay child" 2>/dev/null || true
  wait 2>/dev/null || true
  rm -rf "$dir"
}
trap cleanup EXIT

wait_for() { for _ in $(seq 1 200); do [ -S "$1" ] && return 0; sleep 0.05; done; echo "no socket $1" >&2; exit 1; }

# cpu_ticks PID: the CPU time (clock ticks) of a process and its children (the workers) so far.
cpu_ticks() {
  local total=0 p
  for p in "$1" $(pgrep -P "$1" || true); do
    total=$((total + $(awk '{print $14 + $15}' "/proc/$p/stat" 2>/dev/null || echo 0)))
  done
  echo "$total"
}
hz=$(getconf CLK_TCK)

start_daemon() { # $1: name (its socket), $2: prefix, $3: binary, then VAR=value settings
  local name=$1 prefix=$2 binary=$3
  shift 3
  env SWITCHYARD_SUBSCRIPTIONS_QUEUE_LIMIT=100000 SWITCHYARD_LOG_LEVEL=warning "$@" \
    $prefix "$binary" --socket "$dir/$name.sock" & pids+=($!)
  daemon_pid[$name]=$!
}

declare -A daemon_pid
start_servers() { # $1: the command prefix (empty, or taskset)
  local prefix=$1
  $prefix "$out/loadgen" echo-server "$dir/echo.sock" & pids+=($!)
  $prefix "$out/loadgen" relay-server "$dir/relay.sock" & pids+=($!)
  $prefix "$nio_relay" echo "$dir/nio-echo.sock" & pids+=($!)
  $prefix "$nio_relay" server "$dir/nio-relay.sock" & pids+=($!)
  $prefix "$nio_relay" server "$dir/nio-cat.sock" /bin/cat & pids+=($!)
  $prefix redis-server --port 0 --unixsocket "$dir/redis.sock" --save '' --appendonly no --loglevel warning >/dev/null & pids+=($!)
  start_daemon worker "$prefix" "$daemon"
  start_daemon actor "$prefix" "$daemon" SWITCHYARD_FEATURES_PRIMES_ISOLATION=actor
  local sockets=(echo relay nio-echo nio-relay nio-cat redis worker actor)
  if [ -n "${BASELINE:-}" ]; then
    start_daemon baseline-worker "$prefix" "$BASELINE"
    start_daemon baseline-actor "$prefix" "$BASELINE" SWITCHYARD_FEATURES_PRIMES_ISOLATION=actor
    sockets+=(baseline-worker baseline-actor)
  fi
  for socket in "${sockets[@]}"; do wait_for "$dir/$socket.sock"; done
  sleep 1 # the standby workers start after the socket listens
}

stop_servers() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  pkill -f "$nio_relay child" 2>/dev/null || true
  wait 2>/dev/null || true
  pids=()
  rm -f "$dir"/*.sock
}

field() { sed -n "s/.*$1=\([0-9.]*\).*/\1/p" <<<"$2"; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (b == 0 ? 0 : a / b) }'; }

declare -A pp ppp pl fo cpu
# measure NAME PREFIX: ping-pong (with the daemon's CPU per call; then once more with the client
# awaiting each reply in poll), pipelined and fan-out figures of one server, into pp[NAME],
# ppp[NAME], pl[NAME], fo[NAME,subscribers] and cpu[NAME].
measure() {
  local name=$1 prefix=$2 load="$2 $out/loadgen" proto=switchyard before
  case $name in echo | redis) proto=$name ;; relay | nio-echo | nio-relay | nio-cat) proto=echo ;; esac
  [ "$proto" = switchyard ] && before=$(cpu_ticks "${daemon_pid[$name]}")
  pp[$name]=$($load pingpong "$proto" "$dir/$name.sock" "$N")
  case $name in relay | nio-echo | nio-relay | nio-cat) return ;; esac
  if [ "$proto" = switchyard ]; then
    cpu[$name]=$(awk -v t="$(($(cpu_ticks "${daemon_pid[$name]}") - before))" -v hz="$hz" -v n="$N" \
      'BEGIN { printf "%.1f", t * 1e6 / hz / n }')
  fi
  ppp[$name]=$($load pingpong-poll "$proto" "$dir/$name.sock" "$N")
  pl[$name]=$($load pipeline "$proto" "$dir/$name.sock" "$((N * 5))" 16)
  [ "$proto" = echo ] && return
  for subscribers in 1 10 100; do
    fo[$name,$subscribers]=$($load fanout "$proto" "$dir/$name.sock" "$subscribers" "$FANOUT_N")
  done
}

# row LABEL FIELD ARRAY GOAL: one figure for the worker, the actor, echo and Redis, and the ratios.
row() {
  local label=$1 key=$2 goal=$3 w a e r
  local -n values=$4
  w=$(field "$key" "${values[worker]}"); a=$(field "$key" "${values[actor]}")
  e=$(field "$key" "${values[echo]:-}"); r=$(field "$key" "${values[redis]}")
  echo "| $label | $w | $a | ${e:-} | $r | $(ratio "$w" "$r")× | $(ratio "$a" "$r")× | $goal |"
}

run_phase() { # $1: label, $2: prefix
  local label=$1 prefix=$2
  start_servers "$prefix"
  local name
  for name in worker actor echo relay nio-echo nio-relay nio-cat redis; do measure "$name" "$prefix"; done
  echo "## $label"
  echo
  echo "The counter feature in a worker process (PrimeTime's default) and in an actor of the daemon."
  echo
  echo "| measurement | worker | actor | echo (C) | Redis | worker / Redis | actor / Redis | goal |"
  echo "|---|---:|---:|---:|---:|---:|---:|---|"
  row "Send ping-pong, round trips/s" rate "" pp
  row "Send ping-pong p50, µs" p50_us "pinned: worker ≤ 3×, actor ≤ 2×" pp
  row "Send ping-pong p99, µs" p99_us "" pp
  # The floors: the same process switches and system calls as a Send and nothing else, in C and
  # with SwiftNIO's channels (Benchmarks/NIORelay), whose difference is what NIO itself costs.
  local redis_p50 reference p50 what floor
  redis_p50=$(field p50_us "${pp[redis]}")
  for reference in "relay:the C echo through a worker process behind two pipes:the worker path's floor" \
    "nio-relay:the same relay made with NIO channels (nio-relay server):the worker path's floor with NIO" \
    "nio-cat:the NIO relay with cat as its child (nio-relay server SOCK /bin/cat):the floor with NIO in the daemon only, as switchyardd's workers have it" \
    "nio-echo:an echo made with NIO channels (nio-relay echo):the actor path's floor with NIO"; do
    IFS=: read -r name what floor <<<"$reference"
    p50=$(field p50_us "${pp[$name]}")
    if [ "$name" = nio-echo ]; then
      echo "| … reference: $what, p50, µs | | $p50 | | $redis_p50 | | $(ratio "$p50" "$redis_p50")× | $floor |"
    else
      echo "| … reference: $what, p50, µs | $p50 | | | $redis_p50 | $(ratio "$p50" "$redis_p50")× | | $floor |"
    fi
  done
  row "… client awaiting replies in poll: p50, µs" p50_us "" ppp
  row "… client awaiting replies in poll: p99, µs" p99_us "" ppp
  row "Send pipelined (16 in flight), msgs/s (Redis: PING)" rate "actor ≥ 0.25×" pl
  echo "| daemon CPU per ping-pong Send (workers included), µs | ${cpu[worker]} | ${cpu[actor]} | | | | | |"
  for subscribers in 1 10 100; do
    local -A f=([worker]="${fo[worker,$subscribers]}" [actor]="${fo[actor,$subscribers]}" [redis]="${fo[redis,$subscribers]}")
    row "one change to $subscribers subscriber(s), deliveries/s (Redis: PUBLISH)" rate "$([ "$subscribers" = 100 ] && echo "≥ 0.5×")" f
    echo "| … delivery p50 / p99, µs | $(field p50_us "${f[worker]}") / $(field p99_us "${f[worker]}") | $(field p50_us "${f[actor]}") / $(field p99_us "${f[actor]}") | | $(field p50_us "${f[redis]}") / $(field p99_us "${f[redis]}") | | | |"
  done
  echo
  if [ -n "${BASELINE:-}" ]; then
    for name in baseline-worker baseline-actor; do measure "$name" "$prefix"; done
    echo "### This build against the baseline ($BASELINE), same run"
    echo
    echo "| measurement | worker: baseline → this | actor: baseline → this |"
    echo "|---|---:|---:|"
    compare() { # LABEL FIELD ARRAY
      local -n v=$3
      echo "| $1 | $(field "$2" "${v[baseline-worker]}") → $(field "$2" "${v[worker]}") | $(field "$2" "${v[baseline-actor]}") → $(field "$2" "${v[actor]}") |"
    }
    compare "Send ping-pong, round trips/s" rate pp
    compare "Send ping-pong p50, µs" p50_us pp
    compare "Send ping-pong p99, µs" p99_us pp
    compare "… client in poll: p50, µs" p50_us ppp
    compare "Send pipelined, msgs/s" rate pl
    echo "| daemon CPU per ping-pong Send, µs | ${cpu[baseline-worker]} → ${cpu[worker]} | ${cpu[baseline-actor]} → ${cpu[actor]} |"
    local -A f100=([baseline-worker]="${fo[baseline-worker,100]}" [worker]="${fo[worker,100]}" [baseline-actor]="${fo[baseline-actor,100]}" [actor]="${fo[actor,100]}")
    compare "one change to 100 subscribers, deliveries/s" rate f100
    compare "… delivery p99, µs" p99_us f100
    echo
  fi
  stop_servers
}

# What idle connections and subscribers cost: the daemon's resident set with 10,000 connections
# that send nothing and 1,000 more that each follow the whole state.
run_memory() {
  local idle=${IDLE_CONNECTIONS:-10000} subscribers=${SUBSCRIBERS:-1000}
  start_daemon memory "" "$daemon" SWITCHYARD_LIMITS_MAX_CONNECTIONS=$((idle + subscribers + 16))
  wait_for "$dir/memory.sock"
  sleep 1
  local m
  m=$(python3 Benchmarks/EndToEnd/memory.py "$dir/memory.sock" "${daemon_pid[memory]}" "$idle" "$subscribers")
  echo "## Memory (resident set of the daemon's process)"
  echo
  echo "| measurement | switchyardd | goal |"
  echo "|---|---:|---|"
  echo "| idle daemon, KiB | $(field idle_kib "$m") | |"
  echo "| per idle connection, bytes | $(field per_connection_bytes "$m") | |"
  echo "| per subscriber (a connection following the whole state), bytes | $(field per_subscriber_bytes "$m") | |"
  echo "| $idle idle connections and $subscribers subscribers above the idle daemon, MiB | $(field total_above_idle_mib "$m") | < 64 |"
  echo
  stop_servers
}

# How fast a killed worker is back: kill -9 the primes worker again and again.
run_workers() {
  start_daemon restarts "" "$daemon" SWITCHYARD_SUPERVISION_INTENSITY=1000
  wait_for "$dir/restarts.sock"
  local restarts
  restarts=$(python3 Benchmarks/EndToEnd/restarts.py "$dir/restarts.sock" "${RESTARTS:-50}" 0.3)
  echo "## Worker back after kill -9"
  echo
  echo "From the kill to \`Status\` showing the new worker running; one kill every 0.3 s:"
  echo "\`$restarts\`"
  echo
  stop_servers
}

# What keeping the journal costs: the actor-hosted counter with no state directory and in each
# durability mode, unpinned and pinned to one CPU; then start to serving with an empty journal
# and with a million journaled changes. Unpinned, a ping-pong on this VM mostly measures how fast
# an idle vCPU wakes up: `off` alone gives 12k or 30k round trips/s from one run to the next, as
# its journal thread happens to keep the other vCPU awake or not. Pinned, every thread shares one
# CPU and the modes compare their software, as the issue-10 figures do.
#
# What a late reply costs unpinned depends on the guest's idle driver: with `haltpoll` and
# guest_halt_poll_ns at 0 (this VM's setting) an idle vCPU halts at once, and every wake-up is an
# exit to the host; the kernel's default polls for up to 200 µs first. HALT_POLL_NS=N measures
# the unpinned modes once more with N, and puts the setting back afterwards.
run_durability() {
  measure_durability "unpinned, guest_halt_poll_ns=$(cat "$halt_poll" 2>/dev/null || echo none)" ""
  if [ -n "${HALT_POLL_NS:-}" ]; then
    if [ -w "$halt_poll" ]; then
      halt_poll_before=$(cat "$halt_poll")
      echo "$HALT_POLL_NS" >"$halt_poll"
      measure_durability "unpinned, guest_halt_poll_ns=$HALT_POLL_NS" ""
      echo "$halt_poll_before" >"$halt_poll"
      halt_poll_before=
    else
      echo "HALT_POLL_NS: $halt_poll is not writable here (the haltpoll driver, as root); skipped" >&2
    fi
  fi
  measure_durability "pinned to one CPU (taskset -c 0)" "taskset -c 0"
  measure_recovery
}

measure_durability() { # $1: title, $2: the command prefix (empty, or taskset)
  local title=$1 prefix=$2 mode
  rm -rf "$dir"/state-*
  start_daemon memory "$prefix" "$daemon" SWITCHYARD_FEATURES_PRIMES_ISOLATION=actor
  for mode in off batched strict; do
    start_daemon "$mode" "$prefix" "$daemon" SWITCHYARD_FEATURES_PRIMES_ISOLATION=actor \
      SWITCHYARD_DURABILITY_MODE=$mode SWITCHYARD_STATE_DIRECTORY="$dir/state-$mode"
  done
  for mode in memory off batched strict; do wait_for "$dir/$mode.sock"; done
  # Unpinned figures on this VM swing by 2× between runs of one binary: three rounds, the modes
  # interleaved, and the round with each mode's median rate.
  local -A dpp dpl dcpu
  local round rounds=${DURABILITY_ROUNDS:-3} before
  for round in $(seq 1 "$rounds"); do
    for mode in memory off batched strict; do
      # The daemon's CPU (every thread: the loop, the journal's writer) per ping-pong Send.
      before=$(cpu_ticks "${daemon_pid[$mode]}")
      dpp[$mode,$round]=$($prefix "$out/loadgen" pingpong switchyard "$dir/$mode.sock" "$N")
      dcpu[$mode,$round]=$(awk -v t="$(($(cpu_ticks "${daemon_pid[$mode]}") - before))" -v hz="$hz" -v n="$N" \
        'BEGIN { printf "cpu_us=%.1f", t * 1e6 / hz / n }')
      dpl[$mode,$round]=$($prefix "$out/loadgen" pipeline switchyard "$dir/$mode.sock" "$((N * 5))" 16)
    done
  done
  median_of() { # ARRAY MODE [FIELD]: the run with the median FIELD (rate)
    local -n runs=$1
    local r
    for r in $(seq 1 "$rounds"); do echo "$(field "${3:-rate}" "${runs[$2,$r]}") $r"; done | sort -n | awk -v m=$(((rounds + 1) / 2)) 'NR == m { print $2 }'
  }
  for mode in memory off batched strict; do
    dpp[$mode]=${dpp[$mode,$(median_of dpp "$mode")]}
    dpl[$mode]=${dpl[$mode,$(median_of dpl "$mode")]}
    dcpu[$mode]=${dcpu[$mode,$(median_of dcpu "$mode" cpu_us)]}
  done
  echo "## Durability (actor-hosted counter, $title, median of $rounds interleaved rounds)"
  echo
  echo "| measurement | no state directory | off | batched | strict | batched / off | strict / off | goal |"
  echo "|---|---:|---:|---:|---:|---:|---:|---|"
  drow() { # LABEL FIELD ARRAY GOAL
    local -n v=$3
    local o b st
    o=$(field "$2" "${v[off]}"); b=$(field "$2" "${v[batched]}"); st=$(field "$2" "${v[strict]}")
    echo "| $1 | $(field "$2" "${v[memory]}") | $o | $b | $st | $(ratio "$b" "$o")× | $(ratio "$st" "$o")× | $4 |"
  }
  drow "Send ping-pong, round trips/s" rate dpp "batched ≥ 0.8×, strict ≥ 0.3×"
  drow "Send ping-pong p50, µs" p50_us dpp ""
  drow "Send ping-pong p99, µs" p99_us dpp ""
  drow "Send ping-pong, daemon CPU per Send, µs (median round)" cpu_us dcpu ""
  drow "Send pipelined (16 in flight), msgs/s" rate dpl "batched ≥ 0.8×, strict ≥ 0.3×"
  local seq bytes
  seq=$(python3 scripts/varlink-call.py "$dir/strict.sock" io.switchyard.Store.Get '{"path": "/primes/count"}' | python3 -c 'import json,sys; print(json.load(sys.stdin)["parameters"]["seq"])')
  stop_servers
  bytes=$(cat "$dir/state-strict"/journal.sqlite* | wc -c)
  echo "| journal bytes per change (strict, $seq changes, snapshots included) | | | | $((bytes / seq)) | | | |"
  echo
}

measure_recovery() {
  local r
  r=$(python3 Benchmarks/EndToEnd/recovery.py "$daemon" "$dir" "${RECOVERY_CHANGES:-1000000}")
  echo "Start to serving (exec until the socket accepts; median of 5; killed after each start):"
  echo
  echo "| journal | ms | goal |"
  echo "|---|---:|---|"
  echo "| empty (a new state directory) | $(field empty_ms "$r") | < 100 |"
  echo "| $(field changes "$r") changes, a snapshot every 10,000 ($(field full_journal_bytes "$r") bytes) | $(field full_ms "$r") | < 2000 |"
  echo "| $(field changes "$r") changes, no snapshot after the first: every change replayed | $(field replay_ms "$r") | |"
  echo
}

# This build against BASELINE, pinned to one CPU, in ROUNDS interleaved rounds (the order of the
# two builds alternating from one round to the next, so that a drift of the machine falls on both):
# the counter in a worker and in an actor, and in an actor journaling in the strict and batched
# modes. Each row gives the median of the rounds for each build, the difference, and in how many
# rounds this build was ahead or behind by more than 5 %.
run_ab() {
  [ -n "${BASELINE:-}" ] || { echo "ab: set BASELINE to the old switchyardd" >&2; exit 2; }
  local prefix="taskset -c 0" rounds=${ROUNDS:-8} build binary kind round name
  local -A binaries=([this]="$daemon" [base]="$BASELINE")
  rm -rf "$dir"/state-*
  for build in this base; do
    binary=${binaries[$build]}
    start_daemon "$build-worker" "$prefix" "$binary"
    start_daemon "$build-actor" "$prefix" "$binary" SWITCHYARD_FEATURES_PRIMES_ISOLATION=actor
    for mode in strict batched; do
      start_daemon "$build-$mode" "$prefix" "$binary" SWITCHYARD_FEATURES_PRIMES_ISOLATION=actor \
        SWITCHYARD_DURABILITY_MODE=$mode SWITCHYARD_STATE_DIRECTORY="$dir/state-$build-$mode"
    done
  done
  for build in this base; do
    for kind in worker actor strict batched; do wait_for "$dir/$build-$kind.sock"; done
  done
  sleep 1
  local results="$dir/ab-results"
  : >"$results"
  local order before
  for round in $(seq 1 "$rounds"); do
    order="this base"
    [ $((round % 2)) = 0 ] && order="base this"
    for build in $order; do
      for kind in worker actor strict batched; do
        name=$build-$kind
        before=$(cpu_ticks "${daemon_pid[$name]}")
        local p q l f=""
        p=$($prefix "$out/loadgen" pingpong switchyard "$dir/$name.sock" "$N")
        local c
        c=$(awk -v t="$(($(cpu_ticks "${daemon_pid[$name]}") - before))" -v hz="$hz" -v n="$N" 'BEGIN { printf "%.2f", t * 1e6 / hz / n }')
        l=$($prefix "$out/loadgen" pipeline switchyard "$dir/$name.sock" "$((N * 5))" 16)
        echo "$kind|Send ping-pong, round trips/s|up|$build|$round|$(field rate "$p")" >>"$results"
        echo "$kind|Send ping-pong p50, µs|down|$build|$round|$(field p50_us "$p")" >>"$results"
        echo "$kind|Send ping-pong p99, µs|down|$build|$round|$(field p99_us "$p")" >>"$results"
        echo "$kind|daemon CPU per ping-pong Send, µs|down|$build|$round|$c" >>"$results"
        echo "$kind|Send pipelined (16 in flight), msgs/s|up|$build|$round|$(field rate "$l")" >>"$results"
        if [ "$kind" = worker ] || [ "$kind" = actor ]; then
          q=$($prefix "$out/loadgen" pingpong-poll switchyard "$dir/$name.sock" "$N")
          f=$($prefix "$out/loadgen" fanout switchyard "$dir/$name.sock" 100 "$FANOUT_N")
          echo "$kind|… client in poll: p50, µs|down|$build|$round|$(field p50_us "$q")" >>"$results"
          echo "$kind|one change to 100 subscribers, deliveries/s|up|$build|$round|$(field rate "$f")" >>"$results"
          echo "$kind|… delivery p99, µs|down|$build|$round|$(field p99_us "$f")" >>"$results"
        fi
      done
    done
  done
  stop_servers
  echo "## This build against the baseline, pinned to one CPU, $rounds interleaved rounds"
  echo
  echo "Baseline: \`$BASELINE\`. Medians of the rounds; the last column counts the rounds in which"
  echo "this build was ahead / behind the baseline by more than 5 % (\"ahead\" means better: a higher"
  echo "rate, a lower latency or CPU)."
  echo
  python3 Benchmarks/EndToEnd/ab_table.py "$results"
  echo
}

# Remote clients: the actor-hosted counter over TCP with mutual TLS on loopback against the same
# daemon's Unix socket, and Redis 7 doing PING over its --tls-port against its Unix socket, in
# the same run; then what a new client waits for: connect, handshake, one Send and its reply.
run_tls() {
  local tls="$dir/tls" port redis_port
  mkdir -p "$tls"
  make_certificates "$tls"
  read -r port redis_port < <(python3 -c 'import socket
ports = []
for _ in range(2):
    s = socket.socket(); s.bind(("127.0.0.1", 0)); ports.append(s); 
print(*[s.getsockname()[1] for s in ports])')
  cat >"$tls/switchyard.json" <<JSON
{"switchyard": {
  "tls": {"listen": ["tcp:127.0.0.1:$port"], "certificate": "$tls/server.crt", "key": "$tls/server.key", "ca": "$tls/ca.crt"},
  "access": {"rules": {"bench": {"commonName": "bench", "allow": ["read", "write"]}}}
}}
JSON
  env SWITCHYARD_SUBSCRIPTIONS_QUEUE_LIMIT=100000 SWITCHYARD_LOG_LEVEL=warning SWITCHYARD_FEATURES_PRIMES_ISOLATION=actor \
    "$daemon" --socket "$dir/tls-actor.sock" --config "$tls/switchyard.json" & pids+=($!)
  redis-server --port 0 --unixsocket "$dir/redis.sock" --tls-port "$redis_port" --tls-cert-file "$tls/server.crt" \
    --tls-key-file "$tls/server.key" --tls-ca-cert-file "$tls/ca.crt" --tls-auth-clients yes \
    --save '' --appendonly no --loglevel warning >/dev/null & pids+=($!)
  wait_for "$dir/tls-actor.sock"
  wait_for "$dir/redis.sock"
  wait_for_port "$port"
  wait_for_port "$redis_port"
  local -A tpp tpl ths
  local name address proto
  for name in switchyard-unix switchyard-tls redis-unix redis-tls; do
    case $name in
      switchyard-unix) proto=switchyard address="$dir/tls-actor.sock" ;;
      switchyard-tls) proto=switchyard address="tls:127.0.0.1:$port" ;;
      redis-unix) proto=redis address="$dir/redis.sock" ;;
      redis-tls) proto=redis address="tls:127.0.0.1:$redis_port" ;;
    esac
    export LOADGEN_CA="$tls/ca.crt" LOADGEN_CERT="$tls/bench.crt" LOADGEN_KEY="$tls/bench.key"
    tpp[$name]=$("$out/loadgen" pingpong "$proto" "$address" "$N")
    tpl[$name]=$("$out/loadgen" pipeline "$proto" "$address" "$((N * 5))" 16)
    ths[$name]=$("$out/loadgen" handshake "$proto" "$address" "${HANDSHAKES:-1000}")
  done
  stop_servers
  echo "## Remote clients: TCP with mutual TLS 1.3 on loopback against the Unix socket (unpinned)"
  echo
  echo "The actor-hosted counter's \`Send\`; Redis 7 doing PING over \`--tls-port\` (client certificates"
  echo "required, as ours) and over its Unix socket, in the same run. A fresh connection each time for"
  echo "the handshake rows (no session resumed)."
  echo
  echo "| measurement | Switchyard Unix | Switchyard TLS | TLS / Unix | Redis Unix | Redis TLS | TLS / Unix | goal |"
  echo "|---|---:|---:|---:|---:|---:|---:|---|"
  trow() { # LABEL FIELD ARRAY GOAL
    local -n v=$3
    local su st ru rt
    su=$(field "$2" "${v[switchyard-unix]}"); st=$(field "$2" "${v[switchyard-tls]}")
    ru=$(field "$2" "${v[redis-unix]}"); rt=$(field "$2" "${v[redis-tls]}")
    echo "| $1 | $su | $st | $(ratio "$st" "$su")× | $ru | $rt | $(ratio "$rt" "$ru")× | $4 |"
  }
  trow "ping-pong, round trips/s" rate tpp ""
  trow "ping-pong p50, µs" p50_us tpp ""
  trow "pipelined (16 in flight), msgs/s" rate tpl "TLS ≥ 0.6× Unix, and ≥ Redis's TLS / Unix"
  trow "connect + handshake + first reply p50, µs" p50_us ths ""
  trow "connect + handshake + first reply p99, µs" p99_us ths "TLS ≤ 5000"
  local ours theirs
  ours=$(ratio "$(field rate "${tpl[switchyard-tls]}")" "$(field rate "${tpl[switchyard-unix]}")")
  theirs=$(ratio "$(field rate "${tpl[redis-tls]}")" "$(field rate "${tpl[redis-unix]}")")
  echo
  echo "Goals: pipelined TLS / Unix $ours× (≥ 0.6×: $(awk -v r="$ours" 'BEGIN { print (r >= 0.6 ? "met" : "missed") }'));" \
    "against Redis's $theirs× ($(awk -v a="$ours" -v b="$theirs" 'BEGIN { print (a >= b ? "met" : "missed") }'));" \
    "handshake + first reply p99 $(field p99_us "${ths[switchyard-tls]}") µs" \
    "(≤ 5000: $(awk -v p="$(field p99_us "${ths[switchyard-tls]}")" 'BEGIN { print (p <= 5000 ? "met" : "missed") }'))."
  echo
}

# A CA, the server's certificate (localhost, 127.0.0.1) and the load tool's (CN=bench) in $1.
make_certificates() {
  local folder=$1 name
  quiet() { openssl "$@" >/dev/null 2>&1 || { echo "openssl $1 failed" >&2; exit 1; }; }
  quiet req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$folder/ca.key" -out "$folder/ca.crt" \
    -subj /CN=bench-ca -days 2
  echo "subjectAltName=DNS:localhost,IP:127.0.0.1" >"$folder/server.ext"
  echo "extendedKeyUsage=clientAuth" >"$folder/bench.ext"
  for name in server bench; do
    quiet req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$folder/$name.key" -out "$folder/$name.csr" -subj "/CN=$name"
    quiet x509 -req -in "$folder/$name.csr" -CA "$folder/ca.crt" -CAkey "$folder/ca.key" -CAcreateserial \
      -out "$folder/$name.crt" -days 2 -extfile "$folder/$name.ext"
  done
}

wait_for_port() { for _ in $(seq 1 200); do (: <"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0; sleep 0.05; done; echo "nothing listens on $1" >&2; exit 1; }

case "${1:-all}" in
  ab) run_ab ;;
  tls) run_tls ;;
  durability) run_durability ;;
  workers) run_workers ;;
  memory) run_memory ;;
  pinned) run_phase "Pinned to one CPU (taskset -c 0)" "taskset -c 0" ;;
  unpinned) run_phase "Unpinned (2 vCPUs)" "" ;;
  *)
    run_phase "Unpinned (2 vCPUs)" ""
    run_phase "Pinned to one CPU (taskset -c 0)" "taskset -c 0"
    run_workers
    run_memory
    run_durability
    run_tls
    ;;
esac
