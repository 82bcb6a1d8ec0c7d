#!/usr/bin/env bash
# Instructions the daemon's event loop runs per Send, counted by callgrind (repeatable on a
# shared machine, where wall time is not), for the commits named: each is built in release in a
# scratch copy with a callgrind-friendly main (main.swift.in), the counter is hosted as an actor
# (so that read, decode, route, reduce and reply all run on the loop), and N1 then N2 ping-pong
# Sends run against it; the loop thread's instructions between the two, per Send, are printed.
#
#   Benchmarks/Callgrind/instructions-per-send.sh main HEAD
#
# A release build of a fresh copy takes 10–20 minutes here; the copies are kept in
# /tmp/switchyard-callgrind-REV for the next run.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
N1=${N1:-1000}
N2=${N2:-5000}

binary_for() { # REV → path of its callgrind binary
  local rev=$1 dir
  dir=/tmp/switchyard-callgrind-$(git -C "$repo" rev-parse --short "$rev")
  mkdir -p "$dir"
  rm -rf "$dir/Sources" "$dir/Package.swift"
  git -C "$repo" archive "$rev" Sources Package.swift | tar -x -C "$dir"
  mkdir -p "$dir/Sources/switchyardd-sync"
  cp "$here/main.swift.in" "$dir/Sources/switchyardd-sync/main.swift"
  python3 - "$dir/Package.swift" <<'PY'
import sys
path = sys.argv[1]
text = open(path).read()
target = '''    .executableTarget(
      name: "switchyardd-sync",
      dependencies: ["SwitchyardCommands", "SwitchyardDaemon", "PrimeTime", "SwitchyardRuntime"],
      path: "Sources/switchyardd-sync"
    ),
'''
open(path, "w").write(text.replace("  targets: [\n", "  targets: [\n" + target, 1))
PY
  (cd "$dir" && swift build -c release --product switchyardd-sync >&2)
  # valgrind 3.19 cannot read the DWARF 5 the toolchain writes: the symbol table is enough.
  cp "$dir/.build/release/switchyardd-sync" "$dir/switchyardd-sync.stripped"
  strip --strip-debug "$dir/switchyardd-sync.stripped"
  echo "$dir/switchyardd-sync.stripped"
}

loop_instructions() { # BINARY N → the busiest thread's instructions (the event loop's)
  local binary=$1 count=$2 dir pid
  dir=$(mktemp -d)
  SWITCHYARD_FEATURES_PRIMES_ISOLATION=actor SWIFT_BACKTRACE=enable=no \
    valgrind --tool=callgrind --separate-threads=yes --callgrind-out-file="$dir/cg.out" \
    "$binary" "$dir/s.sock" >"$dir/log" 2>&1 &
  pid=$!
  python3 "$here/load.py" "$dir/s.sock" "$count"
  kill -TERM "$pid"
  wait "$pid" || true
  for file in "$dir"/cg.out-*; do grep '^totals:' "$file" | awk '{print $2}'; done | sort -n | tail -1
  rm -rf "$dir"
}

for rev in "$@"; do
  binary=$(binary_for "$rev")
  first=$(loop_instructions "$binary" "$N1")
  second=$(loop_instructions "$binary" "$N2")
  echo "$rev: $(( (second - first) / (N2 - N1) )) instructions per Send on the event loop ($N1 → $N2 Sends)"
done
