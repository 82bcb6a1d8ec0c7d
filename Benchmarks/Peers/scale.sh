#!/usr/bin/env bash
# How the cost grows, not just one point: the curves of the peers benchmark, each a data file
# and an SVG plot (gnuplot, installed when missing) under .build-bench/scale/.
#
#   fan-out   one change to 10, 100, 1,000 and 10,000 subscribers: deliveries/s and delivery
#             p99, Switchyard (the counter in an actor, no state directory) against Redis 7
#             PUBLISH/SUBSCRIBE, in the same run
#   journal   a journal of 10 to 10,000,000 changes: start to serving, and `Get` at the middle
#             (the journals written straight into SQLite, in the daemon's schema)
#   state     a feature's state of 10 to 1,000,000 elements: a change to one element beside
#             them, 16 in flight and one at a time
#   features  an application of 1, 10 and 100 features (Benchmarks/Features, generated): the
#             same `Send` to the feature declared last, 16 in flight and one at a time, in
#             interleaved rounds; the goal is a cost per `Send` at 100 within 1.2× of 1
#
#   Benchmarks/Peers/scale.sh [fanout|journal|state|features]   all of them by default
#   SUBSCRIBERS="10 100" LENGTHS="10 1000" SIZES="10 1000" DAEMON=.build/debug/switchyardd …   a quick check
set -euo pipefail
cd "$(dirname "$0")/../.."
SUBSCRIBERS=${SUBSCRIBERS:-10 100 1000 10000}
LENGTHS=${LENGTHS:-10 1000 100000 1000000 10000000}
SIZES=${SIZES:-10 1000 100000 1000000}
# Sends a state-size round makes, 16 in flight (and a tenth of it one at a time).
STATE_N=${STATE_N:-20000}
# The features curve: its counts, rounds, and Sends a round (16 in flight; a tenth one at a time).
FEATURES=${FEATURES:-1 10 100}
FEATURES_ROUNDS=${FEATURES_ROUNDS:-5}
FEATURES_N=${FEATURES_N:-100000}
# Each fan-out run makes this many deliveries, whatever its number of subscribers.
DELIVERIES=${DELIVERIES:-2000000}
NEEDED="redis-server:redis-server gnuplot:gnuplot-nox"
source Benchmarks/Peers/common.sh
data=$out/scale
mkdir -p "$data"
# 10,000 subscribers are 10,000 descriptors in each process: as many as the hard limit allows.
ulimit -n "$(ulimit -Hn)"

fanout() {
  env SWITCHYARD_FEATURES_PRIMES_ISOLATION=actor SWITCHYARD_LOG_LEVEL=warning \
    SWITCHYARD_LIMITS_MAX_CONNECTIONS=20000 SWITCHYARD_SUBSCRIPTIONS_QUEUE_LIMIT=100000 \
    "$daemon" --socket "$dir/switchyard.sock" >/dev/null 2>&1 & pids+=($!)
  redis-server --port 0 --unixsocket "$dir/redis.sock" --save '' --appendonly no --maxclients 20000 \
    --loglevel warning >/dev/null & pids+=($!)
  wait_for_socket "$dir/switchyard.sock"
  wait_for_socket "$dir/redis.sock"
  sleep 1
  local subscribers changes s r
  echo "# subscribers switchyard_rate switchyard_p99_us redis_rate redis_p99_us" >"$data/fanout.dat"
  for subscribers in $SUBSCRIBERS; do
    changes=$((DELIVERIES / subscribers))
    [ "$changes" -lt 20 ] && changes=20
    s=$("$out/loadgen" fanout switchyard "$dir/switchyard.sock" "$subscribers" "$changes")
    r=$("$out/loadgen" fanout redis "$dir/redis.sock" "$subscribers" "$changes")
    echo "$subscribers $(field rate "$s") $(field p99_us "$s") $(field rate "$r") $(field p99_us "$r")" >>"$data/fanout.dat"
  done
  stop_all
  echo "## Fan-out: one change to N subscribers"
  echo
  echo "| subscribers | Switchyard deliveries/s | Redis deliveries/s | ratio | Switchyard p99, µs | Redis p99, µs |"
  echo "|---:|---:|---:|---:|---:|---:|"
  awk '!/^#/ { printf "| %d | %.0f | %.0f | %.2f× | %.0f | %.0f |\n", $1, $2, $4, $2 / $4, $3, $5 }' "$data/fanout.dat"
  echo
  gnuplot <<PLOT
set terminal svg size 720,420 font "sans,12"
set output "$data/fanout.svg"
set title "One change to N subscribers (deliveries/s)"
set logscale x
set xlabel "subscribers"
set ylabel "deliveries/s"
set key bottom right
plot "$data/fanout.dat" using 1:2 with linespoints title "Switchyard", "" using 1:4 with linespoints title "Redis PUBLISH"
PLOT
}

journal() {
  local lengths=($LENGTHS)
  python3 Benchmarks/Peers/journal_scale.py "$daemon" "$dir" "${lengths[@]}" | tee "$dir/journal.out" >&2
  echo "# changes start_ms get_at_middle_ms journal_bytes" >"$data/journal.dat"
  sed 's/[a-z_]*=//g' "$dir/journal.out" >>"$data/journal.dat"
  echo "## Journal length: start to serving, and Get at the middle"
  echo
  echo "| changes | start to serving, ms | Get at the middle, ms | journal, MB |"
  echo "|---:|---:|---:|---:|"
  awk '!/^#/ { printf "| %d | %.0f | %.1f | %.1f |\n", $1, $2, $3, $4 / 1e6 }' "$data/journal.dat"
  echo
  gnuplot <<PLOT
set terminal svg size 720,420 font "sans,12"
set output "$data/journal.svg"
set title "A journal of N changes"
set logscale x
set xlabel "changes journaled"
set ylabel "milliseconds"
set key top left
plot "$data/journal.dat" using 1:2 with linespoints title "start to serving", "" using 1:3 with linespoints title "Get at the middle"
PLOT
}

state() {
  local sizes=($SIZES)
  python3 Benchmarks/Peers/state_scale.py "$daemon" "$out/loadgen" "$dir" "$STATE_N" "${sizes[@]}" | tee "$dir/state.out" >&2
  echo "# elements rate pingpong_p50_us pingpong_p99_us" >"$data/state.dat"
  sed 's/[a-z_0-9]*=//g' "$dir/state.out" >>"$data/state.dat"
  echo "## State size: a change to one element beside N others"
  echo
  echo "| elements | 16 in flight, /s | / at 10 | ping-pong p50, µs | ping-pong p99, µs |"
  echo "|---:|---:|---:|---:|---:|"
  awk '!/^#/ { if (!first) first = $2; printf "| %d | %.0f | %.2f× | %.1f | %.1f |\n", $1, $2, $2 / first, $3, $4 }' "$data/state.dat"
  echo
  gnuplot <<PLOT
set terminal svg size 720,420 font "sans,12"
set output "$data/state.svg"
set title "A change to one element of a state of N (Send counter.incrTapped)"
set logscale x
set xlabel "elements in the feature's state"
set ylabel "Sends/s, 16 in flight"
set y2label "ping-pong p50, µs"
set y2tics
set ytics nomirror
set key bottom left
plot "$data/state.dat" using 1:2 with linespoints title "16 in flight", "" using 1:3 axes x1y2 with linespoints title "ping-pong p50"
PLOT
}

features() {
  local features_daemon n round line
  python3 Benchmarks/Features/generate.py $FEATURES
  # In the release daemon's folder, with its flags: Switchyard's modules are up to date there. The
  # manifest touched, so that SwiftPM plans this package's build again rather than reuse the plan
  # of the last package built in the folder, which has no `featuresd` ("No target named …").
  touch Benchmarks/Features/Package.swift
  local build=(--package-path Benchmarks/Features -c release $(grep -v '^#' scripts/release-swift-flags) --scratch-path "$out")
  SWIFT_DETERMINISTIC_HASHING=1 swift build "${build[@]}" --product featuresd >/dev/null
  features_daemon="$(SWIFT_DETERMINISTIC_HASHING=1 swift build "${build[@]}" --show-bin-path)/featuresd"
  # Every count's daemon at once, each loaded in turn within a round: a slower spell of the
  # machine falls on all of them alike.
  for n in $FEATURES; do
    SWITCHYARD_BENCH_FEATURES=$n SWITCHYARD_LOG_LEVEL=warning "$features_daemon" --socket "$dir/features-$n.sock" \
      >/dev/null 2>&1 & pids+=($!)
  done
  for n in $FEATURES; do wait_for_socket "$dir/features-$n.sock"; done
  sleep 1
  : >"$dir/features.out"
  for round in $(seq 1 "$FEATURES_ROUNDS"); do
    for n in $FEATURES; do
      line="features=$n $("$out/loadgen" pipeline switchyard "$dir/features-$n.sock" "$FEATURES_N" 16)"
      line="$line pp_$("$out/loadgen" pingpong switchyard "$dir/features-$n.sock" $((FEATURES_N / 10)) | sed 's/ / pp_/g')"
      echo "$line" >>"$dir/features.out"
    done
  done
  stop_all
  python3 - "$dir/features.out" "$data/features.dat" <<'PY'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    f = dict(w.split("=") for w in line.split() if "=" in w)
    rows.setdefault(int(f["features"]), []).append(f)
with open(sys.argv[2], "w") as out:
    out.write("# features rate rate_min rate_max pingpong_p50_us pingpong_p99_us\n")
    for n, fs in sorted(rows.items()):
        rates = [float(f["rate"]) for f in fs]
        out.write(f"{n} {statistics.median(rates):.0f} {min(rates):.0f} {max(rates):.0f} "
                  f"{statistics.median(float(f['pp_p50_us']) for f in fs):.1f} "
                  f"{statistics.median(float(f['pp_p99_us']) for f in fs):.1f}\n")
PY
  echo "## Features in one application: a Send to the feature declared last"
  echo
  echo "| features | 16 in flight, /s (range) | cost per Send / at 1 | ping-pong p50, µs | / at 1 | ping-pong p99, µs |"
  echo "|---:|---:|---:|---:|---:|---:|"
  awk '!/^#/ { if (!rate1) { rate1 = $2; p1 = $5 }
    printf "| %d | %.0f (%.0f–%.0f) | %.2f× | %.1f | %.2f× | %.1f |\n", $1, $2, $3, $4, rate1 / $2, $5, $5 / p1, $6 }' "$data/features.dat"
  echo
  gnuplot <<PLOT
set terminal svg size 720,420 font "sans,12"
set output "$data/features.svg"
set title "A Send to one of N features (Send counter.incrTapped, no state directory)"
set logscale x
set xlabel "features in the application"
set ylabel "Sends/s, 16 in flight"
set y2label "ping-pong p50, µs"
set y2tics
set ytics nomirror
set yrange [0:*]
set y2range [0:*]
set key bottom left
plot "$data/features.dat" using 1:2 with linespoints title "16 in flight", "" using 1:5 axes x1y2 with linespoints title "ping-pong p50"
PLOT
}

echo "# Benchmarks/Peers/scale.sh, $(date -u +%Y-%m-%d), $(nproc) CPUs; plots in $data"
case ${1:-all} in
  fanout) fanout ;;
  journal) journal ;;
  state) state ;;
  features) features ;;
  *) fanout; journal; state; features ;;
esac
