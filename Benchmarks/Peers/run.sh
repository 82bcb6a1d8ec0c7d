#!/usr/bin/env bash
# The same work on Switchyard and on the tools a user would pick for it, in one run: change some
# state, acknowledge it, publish the change, with the durability each promises set side by side.
#
#   Switchyard  Send counter.incrTapped (the counter in an actor of the daemon), with no state
#               directory, and with the journal `off`, `batched` and `strict`
#   Redis 7     FCALL of a function doing HINCRBY + PUBLISH, with no persistence,
#               `appendfsync everysec` and `appendfsync always`; and PING, the floor
#   etcd 3.4    a put through its JSON gateway, one node (it fsyncs every commit)
#
# Ping-pong (p50, p99) and 16 in flight (one connection pipelining 16; etcd's gateway answers a
# connection's requests one after another, so for it 16 connections with one each), unpinned
# (what a user sees) and pinned to one CPU (software against software), in interleaved rounds;
# medians and ranges, and the ratios the peers issue asks for.
#
#   Benchmarks/Peers/run.sh            ROUNDS=5 by default; N=20000 round trips a measurement
#   PHASES=unpinned Benchmarks/Peers/run.sh
#   DAEMON=.build/debug/switchyardd N=500 ROUNDS=1 Benchmarks/Peers/run.sh   a quick check of the harness
set -euo pipefail
cd "$(dirname "$0")/../.."
N=${N:-20000}
ETCD_N=${ETCD_N:-2000}
ROUNDS=${ROUNDS:-5}
PHASES=${PHASES:-unpinned pinned}
NEEDED="redis-server:redis-server etcd:etcd-server"
source Benchmarks/Peers/common.sh

wait_for_etcd() {
  for _ in $(seq 1 200); do "$out/loadgen" pingpong etcd "$1" 1 >/dev/null 2>&1 && return 0; sleep 0.1; done
  echo "etcd did not answer at $1" >&2
  exit 1
}

# The Redis function that does what a Send does: change the state, publish the change.
bump='#!lua name=switchyard_peer
redis.register_function("bump", function(keys, args)
  local count = redis.call("HINCRBY", keys[1], "count", 1)
  redis.call("PUBLISH", "changes", count)
  return count
end)'

declare -A address
start_all() { # $1: the command prefix (empty, or taskset)
  local prefix=$1 mode
  rm -rf "$dir"/state-* "$dir"/redis-* "$dir"/etcd
  $prefix env SWITCHYARD_FEATURES_PRIMES_ISOLATION=actor SWITCHYARD_LOG_LEVEL=warning \
    "$daemon" --socket "$dir/switchyard-none.sock" >/dev/null 2>&1 & pids+=($!)
  address[switchyard-none]=$dir/switchyard-none.sock
  for mode in off batched strict; do
    $prefix env SWITCHYARD_FEATURES_PRIMES_ISOLATION=actor SWITCHYARD_LOG_LEVEL=warning \
      SWITCHYARD_DURABILITY_MODE=$mode SWITCHYARD_STATE_DIRECTORY="$dir/state-$mode" \
      "$daemon" --socket "$dir/switchyard-$mode.sock" >/dev/null 2>&1 & pids+=($!)
    address[switchyard-$mode]=$dir/switchyard-$mode.sock
  done
  local persistence
  for persistence in none everysec always; do
    mkdir -p "$dir/redis-$persistence"
    local aof=(--appendonly no)
    [ "$persistence" != none ] && aof=(--appendonly yes --appendfsync "$persistence")
    $prefix redis-server --port 0 --unixsocket "$dir/redis-$persistence.sock" --dir "$dir/redis-$persistence" \
      --save '' "${aof[@]}" --loglevel warning >/dev/null & pids+=($!)
    address[redis-$persistence]=$dir/redis-$persistence.sock
  done
  $prefix etcd --data-dir "$dir/etcd" --listen-client-urls http://127.0.0.1:23790 \
    --advertise-client-urls http://127.0.0.1:23790 --listen-peer-urls http://127.0.0.1:23800 \
    --log-level error >"$dir/etcd.log" 2>&1 & pids+=($!)
  address[etcd]=tcp:127.0.0.1:23790
  local name
  for name in switchyard-none switchyard-off switchyard-batched switchyard-strict redis-none redis-everysec redis-always; do
    wait_for_socket "${address[$name]}"
  done
  for persistence in none everysec always; do
    redis-cli -s "$dir/redis-$persistence.sock" FUNCTION LOAD REPLACE "$bump" >/dev/null
  done
  wait_for_etcd "${address[etcd]}"
  sleep 1
}

systems=(switchyard-none switchyard-off switchyard-batched switchyard-strict redis-none redis-everysec redis-always redis-ping etcd)
measure() { # PHASE PREFIX ROUND SYSTEM: one line per figure into the results
  local phase=$1 prefix=$2 round=$3 system=$4 proto=switchyard target n=$N line
  local load="$prefix $out/loadgen"
  case $system in
    redis-ping) proto=redis; target=${address[redis-none]} ;;
    redis-*) proto=redis-work; target=${address[$system]} ;;
    etcd) proto=etcd; target=${address[etcd]}; n=$ETCD_N ;;
    *) target=${address[$system]} ;;
  esac
  line=$($load pingpong "$proto" "$target" "$n")
  echo "$phase $round $system pingpong $line"
  if [ "$system" = etcd ]; then
    line=$($load concurrent etcd "$target" "$((n * 4))" 16)
  else
    line=$($load pipeline "$proto" "$target" "$((n * 5))" 16)
  fi
  echo "$phase $round $system inflight $line"
}

results=$dir/results
for phase in $PHASES; do
  prefix=
  [ "$phase" = pinned ] && prefix="taskset -c 0"
  start_all "$prefix"
  for round in $(seq 1 "$ROUNDS"); do
    for system in "${systems[@]}"; do measure "$phase" "$prefix" "$round" "$system" >>"$results"; done
  done
  stop_all
done
echo "# Benchmarks/Peers/run.sh, $(date -u +%Y-%m-%d), $(nproc) CPUs, ROUNDS=$ROUNDS N=$N ETCD_N=$ETCD_N"
python3 Benchmarks/Peers/table.py "$results"
