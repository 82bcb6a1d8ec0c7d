#!/usr/bin/env bash
# The connection handover's pause (issue 34): RESTARTS restarts through systemd's file descriptor
# store while CONNECTIONS clients call and SUBSCRIBERS follow a path, measured at the clients.
# systemd's part is played by the Python stand-in the handover's tests use
# (Tests/Python/fdstore.py), which starts the next daemon with what the last one stored, as
# `systemctl restart` does: nspawn's systemd would work too, but the clients' thousands of
# sockets and the measurement are simpler outside the container.
#
#   Benchmarks/Restart/run.sh                     20 restarts, 1,000 connections, 1,000 subscribers
#   RESTARTS=3 CONNECTIONS=20 SUBSCRIBERS=20 run.sh   a quick look
#   SWITCHYARDD=path/to/switchyardd run.sh        another build (default: `make install`'s, with
#                                                 the Swift runtime linked statically, installed
#                                                 into .build-bench/restart-systemd as make
#                                                 bench-restart-systemd measures it)
#   TIMELINE=1 run.sh                             also each pause's ends on the wall clock, to set
#                                                 beside `strace -tt` of the daemons
set -euo pipefail
cd "$(dirname "$0")/../.."
out=.build-bench
mkdir -p "$out"
if [[ -z "${SWITCHYARDD:-}" ]]; then
  make -s --no-print-directory install-bin DESTDIR="$PWD/$out/restart-systemd" >/dev/null
  SWITCHYARDD="$PWD/$out/restart-systemd/usr/local/bin/switchyardd"
fi
export SWITCHYARDD
exec python3 Benchmarks/Restart/restart_bench.py "${RESTARTS:-20}" "${CONNECTIONS:-1000}" "${SUBSCRIBERS:-1000}"
