#!/usr/bin/env bash
# `make run`: build switchyardd, say how to talk to it, and run it in the foreground.
set -euo pipefail
cd "$(dirname "$0")/.."
socket="${SOCKET:-$PWD/run/switchyard.sock}"
state="${STATE:-$PWD/run/state}"
swift build --product switchyardd
cat <<EOF

switchyardd serves PrimeTime on $socket — Ctrl-C stops it.
What it acknowledges is journaled in $state (durability: strict) and outlives it;
remove that folder to start afresh.
It speaks Varlink (NUL-ended JSON). From another terminal, with Python's varlink package
(pip install varlink):

  python3 -m varlink.cli call unix:$socket/io.switchyard.Store.Send '{"action": {"counter": {"incrTapped": {}}}}'
  python3 -m varlink.cli call unix:$socket/io.switchyard.Store.Get '{}'
  python3 -m varlink.cli call -m unix:$socket/io.switchyard.Store.Subscribe '{}'

or with nothing but python3:

  python3 scripts/varlink-call.py $socket io.switchyard.Store.Get '{}'

EOF
exec swift run --skip-build switchyardd --config config/switchyard.json --socket "$socket" --state-directory "$state"
