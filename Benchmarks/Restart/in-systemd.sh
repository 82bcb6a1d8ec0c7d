#!/usr/bin/env bash
# make bench-restart-systemd's payload: runs as the container's oneshot unit (Tests/Systemd/nspawn-e2e.sh
# with SWITCHYARD_E2E_SCRIPT), where systemd 252 is PID 1 and switchyard.socket/.service are
# installed as `make install` writes them. The benchmark restarts the service with `systemctl
# restart`, so the fd store, the next process's start and READY=1 are systemd's own. Its output
# and figures go to /results; the verdict too, as the checks' does.
set -u
cd /results
restarts="${RESTARTS:-20}" connections="${CONNECTIONS:-1000}" subscribers="${SUBSCRIBERS:-1000}"
if SYSTEMD_UNIT=switchyard.service SOCKET=/run/switchyard/switchyard.sock OUT=/results \
  python3 /switchyard-repo/Benchmarks/Restart/restart_bench.py "$restarts" "$connections" "$subscribers" >checks.log 2>&1; then
  echo PASS >result
else
  printf 'FAIL\nthe clients saw errors, ended connections or a broken subscription (above)\n' >result
fi
journalctl -u switchyard.socket -u switchyard.service --no-pager -o short-monotonic >journal.txt 2>&1
exit 0
