#!/usr/bin/env bash
# The end-to-end checks, run INSIDE the systemd-nspawn container started by nspawn-e2e.sh, as the
# oneshot unit switchyard-e2e.service under systemd 252 as PID 1. Never run it on a host: it
# enables, starts and stops switchyard.socket/.service and rewrites /etc/switchyard.
#
# The container looks like a machine after `make install`: the units and the sysusers.d file in
# /usr/local/lib, the configuration in /etc/switchyard, ExecStart pointing at a copy of the debug
# build in /switchyard-e2e-bin.
# A drop-in shortens WatchdogSec to 2 s. Every check runs even after a failure, so one run shows
# everything that is wrong; the verdict goes to $RESULTS/result (PASS, or FAIL and the list).
set -euo pipefail

RESULTS="${RESULTS:-/results}"
BIN="${SWITCHYARD_BIN_DIR:?SWITCHYARD_BIN_DIR is not set}"
SOCKET=/run/switchyard/switchyard.sock
SERVICE=switchyard.service
CONFIG=/etc/switchyard/switchyard.json
WATCHDOG_SEC=2
# The CLI reads the socket from the environment wherever its options go.
export SWITCHYARD_SOCKET="$SOCKET"

if [[ "$(systemd-detect-virt --container 2>/dev/null)" != systemd-nspawn || "$(cat /proc/1/comm)" != systemd ]]; then
  echo "checks.sh: refusing to run outside the systemd-nspawn container of nspawn-e2e.sh" >&2
  exit 2
fi

exec >>"$RESULTS/checks.log" 2>&1

failures=()
pass() { echo "PASS  $*"; }
fail() {
  echo "FAIL  $*"
  failures+=("$1")
}
step() { echo; echo "== $* ($(date +%T.%N | cut -c1-12))"; }

# expect DESCRIPTION COMMAND...: passes when the command exits 0.
expect() {
  local what="$1" out
  shift
  if out="$("$@" 2>&1)"; then pass "$what"; else fail "$what" "(exit $?) $out"; fi
}
# equal DESCRIPTION EXPECTED ACTUAL
equal() {
  if [[ "$3" == "$2" ]]; then pass "$1 = $2"; else fail "$1" "expected '$2', got '$3'"; fi
}
prop() { systemctl show -P "$2" "$1"; }
main_pid() { prop "$SERVICE" MainPID; }
# Waits up to $1 seconds for a command to succeed.
eventually() {
  local deadline=$((SECONDS + $1))
  shift
  until "$@" >/dev/null 2>&1; do
    ((SECONDS < deadline)) || return 1
    sleep 0.2
  done
}
# A point in time (µs since the epoch, the journal's __REALTIME_TIMESTAMP), to look only at what a
# step logged.
mark_time() { date +%s%6N; }
# The daemon's own entries (not systemd's about the unit), as JSON lines.
daemon_journal() { journalctl -q -u "$SERVICE" -o json SYSLOG_IDENTIFIER=switchyardd; }
# journal_has SINCE PYTHON-EXPRESSION: some entry `e` (a dict) logged since SINCE satisfies it.
journal_has() {
  daemon_journal | python3 -c '
import json, sys
since, pred = int(sys.argv[1] or 0), eval("lambda e: " + sys.argv[2])
entries = (json.loads(line) for line in sys.stdin if line.strip())
match = next((e for e in entries if int(e["__REALTIME_TIMESTAMP"]) >= since and pred(e)), None)
if match:
    fields = " ".join(f"{k}={v}" for k, v in sorted(match.items()) if k.startswith("SWITCHYARD_"))
    print("      journal: PRIORITY=%s %s %s" % (match.get("PRIORITY"), match.get("MESSAGE"), fields))
sys.exit(0 if match else 1)
' "$1" "$2"
}
# expect_journal SINCE PYTHON-EXPRESSION PASS-TEXT FAIL-TEXT: waits up to 5 s for such an entry,
# and shows it when it comes.
expect_journal() {
  if eventually 5 journal_has "$1" "$2"; then
    pass "$3"
    journal_has "$1" "$2" || true
  else
    fail "$4"
  fi
}
# As an unprivileged user (nobody), with or without the socket's group.
as_nobody() { setpriv --reuid=nobody --regid=nogroup --clear-groups -- "$@"; }
as_member() { setpriv --reuid=nobody --regid=nogroup --groups="$(getent group switchyard | cut -d: -f3)" -- "$@"; }

# The journal and the verdict, whatever happened; an early exit (a bug in this script) is a failure.
finished=0
finish() {
  finished=1
  step "the units' journal"
  journalctl -q -u "$SERVICE" -u switchyard.socket -u fixture.service -u fixture.socket -o short-precise >"$RESULTS/journal.txt" || true
  tail -n 60 "$RESULTS/journal.txt" | sed 's/^/      /'
  echo
  if ((${#failures[@]} == 0)); then
    echo "ALL CHECKS PASSED"
    echo PASS >"$RESULTS/result"
  else
    echo "${#failures[@]} CHECK(S) FAILED:"
    printf '  - %s\n' "${failures[@]}"
    { echo FAIL; printf '%s\n' "${failures[@]}"; } >"$RESULTS/result"
  fi
  # The verdict is in the result file; exit 0 so SuccessAction= powers the container off at once.
  exit 0
}
trap 'status=$?; if ((!finished)); then fail "checks.sh stopped early (exit $status, line $LINENO)"; finish; fi' EXIT

echo "switchyard end-to-end checks: $(systemctl --version | head -1), PID 1 is $(cat /proc/1/comm)"
echo "binaries: $BIN"

step "install: the socket's group (as make install runs systemd-sysusers)"
expect "systemd-sysusers creates the group switchyard" systemd-sysusers /usr/local/lib/sysusers.d/switchyard.conf
expect "group switchyard exists" getent group switchyard

step "systemctl enable --now switchyard.socket"
expect "enable --now switchyard.socket" systemctl enable --now switchyard.socket
equal "switchyard.socket ActiveState" active "$(prop switchyard.socket ActiveState)"
equal "socket file owner, group and mode" "root:switchyard 660 socket" "$(stat -c '%U:%G %a %F' "$SOCKET" 2>&1)"
equal "/run/switchyard owner and mode" "root:root 755" "$(stat -c '%U:%G %a' /run/switchyard 2>&1)"
equal "switchyard.service before any connection" inactive "$(prop "$SERVICE" ActiveState)"

step "who may connect: SocketGroup=switchyard, SocketMode=0660"
set +e
out="$(as_nobody "$BIN/switchyard" status 2>&1)"
status=$?
set -e
equal "exit status of 'switchyard status' as nobody, not in the group (3: cannot connect)" 3 "$status"
echo "      ($out)"
equal "switchyard.service after the refused connection" inactive "$(prop "$SERVICE" ActiveState)"

step "socket activation: the first connection starts switchyardd"
started=$SECONDS
expect "switchyard status as nobody in group switchyard (activates the service)" as_member "$BIN/switchyard" status
echo "      activation and first reply took $((SECONDS - started)) s"
equal "switchyard.service ActiveState after the connection" active "$(prop "$SERVICE" ActiveState)"
equal "switchyard.service SubState" running "$(prop "$SERVICE" SubState)"
equal "switchyard.service Type" notify "$(prop "$SERVICE" Type)"
pid="$(main_pid)"
if [[ "$(prop "$SERVICE" SubState)" != running || "$pid" == 0 ]]; then
  # Nothing below can pass without a running daemon: say why, and stop.
  systemctl status --no-pager "$SERVICE" 2>&1 | sed 's/^/      /' || true
  finish
fi
echo "      MainPID $pid: $(tr '\0' ' ' <"/proc/$pid/cmdline")"

step "hardening in force on the running daemon"
if [[ "$pid" != 0 && -r "/proc/$pid/status" ]]; then
  uid="$(awk '/^Uid:/ {print $2}' "/proc/$pid/status")"
  if ((uid != 0)); then pass "runs as a dynamic user (uid $uid)"; else fail "runs as root"; fi
  equal "NoNewPrivs" 1 "$(awk '/^NoNewPrivs:/ {print $2}' "/proc/$pid/status")"
  equal "Seccomp (2: filter)" 2 "$(awk '/^Seccomp:/ {print $2}' "/proc/$pid/status")"
  equal "CapEff" 0000000000000000 "$(awk '/^CapEff:/ {print $2}' "/proc/$pid/status")"
  equal "CapBnd" 0000000000000000 "$(awk '/^CapBnd:/ {print $2}' "/proc/$pid/status")"
else
  fail "no running MainPID to inspect" "MainPID=$pid"
fi

step "worker processes run under the same hardening, in the service's cgroup"
# Features hosted in worker processes (the same executable, started by the daemon) inherit the
# sandbox: this is where a too-strict SystemCallFilter= or MemoryDenyWriteExecute= would show.
current_worker_pids() {
  as_member "$BIN/switchyard" status --json 2>/dev/null | python3 -c '
import json, sys
for w in json.load(sys.stdin).get("workers", []):
    for key in ("pid", "standbyPid"):
        if w.get(key):
            print(w[key])
' || true
}
worker_pids="$(current_worker_pids)"
if [[ -z "$worker_pids" ]]; then
  echo "      (the application hosts no feature in a worker process: nothing to check)"
fi
for wpid in $worker_pids; do
  if [[ ! -r "/proc/$wpid/status" ]]; then fail "worker $wpid is not running"; continue; fi
  equal "worker $wpid: uid (the daemon's)" "$uid" "$(awk '/^Uid:/ {print $2}' "/proc/$wpid/status")"
  equal "worker $wpid: NoNewPrivs, Seccomp, CapEff" "1 2 0000000000000000" \
    "$(awk '/^NoNewPrivs:/ {n=$2} /^Seccomp:/ {s=$2} /^CapEff:/ {c=$2} END {print n, s, c}' "/proc/$wpid/status")"
  if grep -q 'switchyard.service' "/proc/$wpid/cgroup"; then
    pass "worker $wpid is in switchyard.service's cgroup"
  else
    fail "worker $wpid is outside the service's cgroup" "$(cat "/proc/$wpid/cgroup")"
  fi
done

step "a client sends PrimeTime actions and a subscriber sees them"
watch_out=/tmp/watch.out
# exec: $! must be the watch itself, so that killing it closes its connection.
(exec setpriv --reuid=nobody --regid=nogroup --groups="$(getent group switchyard | cut -d: -f3)" -- \
  "$BIN/switchyard" watch --json /primes >"$watch_out" 2>/tmp/watch.err) &
watch_pid=$!
if eventually 10 test -s "$watch_out"; then pass "watch got its snapshot"; else fail "watch got no snapshot" "$(cat /tmp/watch.err)"; fi
for _ in 1 2 3; do
  expect "send counter.incrTapped" as_member "$BIN/switchyard" send counter.incrTapped
done
count="$(as_member "$BIN/switchyard" get /primes 2>&1 | python3 -c 'import json,sys; print(json.load(sys.stdin)["count"])' 2>&1 || true)"
equal "get /primes: count" 3 "$count"

step "the access policy: the socket's group (SocketGroup=switchyard) reads and writes public actions"
access="$(as_member "$BIN/switchyard" describe --json 2>&1 | python3 -c '
import json, sys
a = json.load(sys.stdin)["access"]
print(a["read"], a["write"], a["admin"])' 2>&1 || true)"
equal "Describe's access for a member of switchyard" "True True False" "$access"
set +e
out="$(as_member "$BIN/switchyard" send counter.restarted 2>&1)"
status=$?
set -e
if ((status != 0)) && grep -q 'InternalAction' <<<"$out"; then
  pass "an action only effects send is refused from a client (InternalAction)"
else
  fail "an internal action from a client was not refused" "exit $status: $out"
fi
watch_lines() { test "$(wc -l <"$watch_out")" -ge "$1"; }
if eventually 10 watch_lines 4; then
  pass "watch got the snapshot and 3 patches"
else
  fail "watch got $(wc -l <"$watch_out") lines, not 4" "$(cat "$watch_out" /tmp/watch.err)"
fi
sed 's/^/      watch: /' "$watch_out"
status_json="$(as_member "$BIN/switchyard" status --json 2>&1 || true)"
echo "$status_json" | sed 's/^/      status: /'
equal "Status: subscribers" 1 "$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["subscribers"])' "$status_json" 2>&1 || true)"
kill "$watch_pid" 2>/dev/null || true
wait "$watch_pid" 2>/dev/null || true
# The daemon notices a subscriber that went away (the only connection left is the asking one).
subscribers_gone() {
  as_member "$BIN/switchyard" status --json | python3 -c 'import json,sys; s=json.load(sys.stdin); sys.exit(0 if (s["subscribers"], s["connections"]) == (0, 1) else 1)'
}
if eventually 10 subscribers_gone; then
  pass "Status: 0 subscribers and 1 connection once watch has ended"
else
  fail "the daemon still counts the ended subscriber" "$(as_member "$BIN/switchyard" status --json 2>&1 | tr -d '\n ')"
fi

step "systemctl show"
systemctl show "$SERVICE" -p Type -p ActiveState -p SubState -p StatusText -p Result -p NRestarts -p WatchdogUSec -p MainPID | sed 's/^/      /'
equal "Type" notify "$(prop "$SERVICE" Type)"
equal "ActiveState" active "$(prop "$SERVICE" ActiveState)"
equal "SubState" running "$(prop "$SERVICE" SubState)"
equal "Result" success "$(prop "$SERVICE" Result)"
equal "NRestarts" 0 "$(prop "$SERVICE" NRestarts)"
equal "WatchdogUSec (the test's drop-in)" "${WATCHDOG_SEC}s" "$(prop "$SERVICE" WatchdogUSec)"
status_text="$(prop "$SERVICE" StatusText)"
if [[ "$status_text" == *features* ]]; then pass "StatusText mentions features: '$status_text'"; else fail "StatusText has no 'features'" "'$status_text'"; fi

step "watchdog: the daemon keeps pinging over 4 intervals"
pid="$(main_pid)"
sleep $((4 * WATCHDOG_SEC))
equal "MainPID after $((4 * WATCHDOG_SEC)) s" "$pid" "$(main_pid)"
equal "NRestarts" 0 "$(prop "$SERVICE" NRestarts)"
equal "SubState" running "$(prop "$SERVICE" SubState)"
# A live summary: by now the STATUS= line has caught up with the subscriber that left.
status_text="$(prop "$SERVICE" StatusText)"
if [[ "$status_text" == *"0 subscribers"* ]]; then
  pass "StatusText is current: '$status_text'"
else
  fail "StatusText still shows a subscriber that left" "'$status_text'"
fi

step "systemctl reload: a valid configuration (log level debug)"
cp "$CONFIG" /tmp/config.orig
python3 - "$CONFIG" <<'EOF'
import json, sys
with open(sys.argv[1]) as f:
    config = json.load(f)
config["switchyard"]["log"]["level"] = "debug"
with open(sys.argv[1], "w") as f:
    json.dump(config, f, indent=2)
EOF
mark="$(mark_time)"
expect "systemctl reload switchyard.service" timeout 30 systemctl reload "$SERVICE"
equal "MainPID after reload" "$pid" "$(main_pid)"
equal "SubState after reload" running "$(prop "$SERVICE" SubState)"
reloaded='"reload" in e.get("MESSAGE", "").lower()'
expect_journal "$mark" "$reloaded" "the daemon logged a reload line" \
  "no daemon journal line mentions 'reload' after systemctl reload"

step "systemctl reload: an invalid configuration is refused and the old one stays"
printf '{ "switchyard": { "log": { "level": "loud" } } }\n' >"$CONFIG"
mark="$(mark_time)"
expect "systemctl reload with an invalid configuration returns" timeout 30 systemctl reload "$SERVICE"
equal "MainPID after the refused reload" "$pid" "$(main_pid)"
equal "SubState after the refused reload" running "$(prop "$SERVICE" SubState)"
refused='int(e.get("PRIORITY", "7")) <= 4'
expect_journal "$mark" "$refused" "the refusal is logged at warning or worse" \
  "no warning/error from the daemon after reloading an invalid configuration"
expect "still serving after the refused reload" as_member "$BIN/switchyard" get /primes
cp /tmp/config.orig "$CONFIG"
expect "systemctl reload with the original configuration" timeout 30 systemctl reload "$SERVICE"

step "an error reply is logged with the method, the error and the peer's uid"
set +e
out="$(as_member "$BIN/switchyard" call io.switchyard.Store.NoSuchMethod '{}' 2>&1)"
status=$?
set -e
equal "exit status of an unknown method (1: error reply)" 1 "$status"
echo "      ($out)"

step "journal: native entries with code locations and SWITCHYARD_* fields"
# journald may take a moment to index the latest entries.
eventually 5 journal_has "" '"SWITCHYARD_METHOD" in e' || true
daemon_journal >"$RESULTS/journal.json" || true
echo "      $(wc -l <"$RESULTS/journal.json") entries from switchyardd"
python3 - "$RESULTS/journal.json" <<'EOF' || fail "journal fields (see above)"
import json, sys
entries = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
problems = []
def need(what, ok):
    print(("PASS  " if ok else "FAIL  ") + what)
    if not ok:
        problems.append(what)
code = [e for e in entries if all(k in e for k in ("CODE_FILE", "CODE_LINE", "CODE_FUNC", "PRIORITY", "MESSAGE"))]
need("entries with SYSLOG_IDENTIFIER=switchyardd, CODE_FILE, CODE_LINE, CODE_FUNC, PRIORITY, MESSAGE", bool(code))
need("they came as native journal entries (_TRANSPORT=journal)", any(e.get("_TRANSPORT") == "journal" for e in code))
if code:
    e = code[0]
    print("      e.g. " + " ".join(f"{k}={e[k]}" for k in ("PRIORITY", "CODE_FILE", "CODE_LINE", "CODE_FUNC", "MESSAGE")))
fields = sorted({k for e in entries for k in e if k.startswith("SWITCHYARD_")})
print("      SWITCHYARD_* fields seen: " + (" ".join(fields) or "none"))
sockets = sorted({e["SWITCHYARD_SOCKET"] for e in entries if "SWITCHYARD_SOCKET" in e})
need(f"entries with SWITCHYARD_SOCKET ({' '.join(sockets) or 'none'})", bool(sockets))
features = sorted({e["SWITCHYARD_FEATURE"] for e in entries if "SWITCHYARD_FEATURE" in e})
need(f"entries with SWITCHYARD_FEATURE ({' '.join(features) or 'none'})", bool(features))
errors = [e for e in entries if e.get("SWITCHYARD_METHOD") == "io.switchyard.Store.NoSuchMethod"]
need("the unknown method's error reply with SWITCHYARD_METHOD", bool(errors))
need("... and SWITCHYARD_ERROR", any("SWITCHYARD_ERROR" in e for e in errors))
# 65534: the client ran as nobody; the daemon sees real uids (no PrivateUsers=).
need("... and SWITCHYARD_PEER_UID=65534", any(e.get("SWITCHYARD_PEER_UID") == "65534" for e in errors))
sys.exit(1 if problems else 0)
EOF

primes_count() { as_member "$BIN/switchyard" get /primes 2>&1 | python3 -c 'import json,sys; print(json.load(sys.stdin)["count"])' 2>&1 || true; }

step "the state survives systemctl restart, in the StateDirectory= of a DynamicUser="
count_before="$(primes_count)"
expect "systemctl restart switchyard.service" timeout 60 systemctl restart "$SERVICE"
equal "get /primes: count after the restart" "$count_before" "$(primes_count)"
expect "the journal is in /var/lib/private/switchyard" test -f /var/lib/private/switchyard/journal.sqlite
owner="$(stat -c %U /var/lib/private/switchyard/journal.sqlite)"
if [[ "$owner" != root && -n "$owner" ]]; then pass "the journal belongs to the dynamic user ($owner)"; else fail "the journal belongs to '$owner'"; fi

step "systemctl restart hands every connection over: nothing dropped, subscriptions contiguous (issue 34)"
if [[ "$(prop "$SERVICE" FileDescriptorStoreMax)" == 0 ]]; then
  echo "      installed with HANDOVER=no (FileDescriptorStoreMax=0): a restart ends every connection; nothing to check"
else
  equal "FileDescriptorStoreMax (limits.maxConnections and the state)" 1025 "$(prop "$SERVICE" FileDescriptorStoreMax)"
  count_before="$(primes_count)"
  mark="$(mark_time)"
  # RESTARTS SENDERS SUBSCRIBERS CRASHES, from `make systemd-test` or `make systemd-soak`.
  read -r restarts senders subscribers crashes <<<"$HANDOVER_LOAD"
  echo "      every other restart runs $UPGRADE_BIN: $UPGRADE_KIND"
  if out="$(timeout 900 python3 /switchyard-tests/handover_clients.py "$SOCKET" restart "$restarts" "$senders" "$subscribers" \
    "$UPGRADE_BIN" "$CONFIG" 2>&1)"; then
    pass "$out"
  else
    fail "clients across systemctl restart" "$out"
  fi
  equal "get /primes: count after the restarts" $((count_before + restarts * senders * 10)) "$(primes_count)"
  expect_journal "$mark" 'e["MESSAGE"] == "handed the connections over"' \
    "the old process says it handed the connections over" "no 'handed the connections over' in the journal"
  took_over='e["MESSAGE"] == "took over the connections of the process before" and int(e.get("PRIORITY", 7)) == 6'
  expect_journal "$mark" "$took_over"' and e.get("SWITCHYARD_SUBSCRIPTIONS") == "'"$subscribers"'"' \
    "the new one says at info what it took over: $subscribers subscriptions" \
    "no 'took over the connections' at info with $subscribers subscriptions in the journal"

  step "switchyard status says what the last start took over"
  handover_json="$(as_member "$BIN/switchyard" status --json 2>&1 | python3 -c '
import json, sys
h = json.load(sys.stdin).get("handOver", {})
print(h.get("connections"), h.get("subscriptions"), h.get("ended"), "pause" in h)' 2>&1 || true)"
  equal "Status handOver: connections, subscriptions, ended, a pause" "$((senders + subscribers)) $subscribers 0 True" "$handover_json"
  status_text="$(as_member "$BIN/switchyard" status 2>&1 || true)"
  restart_line="$(grep 'Restart:' <<<"$status_text" || true)"
  if [[ "$restart_line" == *"took over $((senders + subscribers)) connections and $subscribers subscriptions"*"serving paused"* ]]; then
    pass "switchyard status:$restart_line"
  else
    fail "switchyard status has no Restart line with what was taken over" "$status_text"
  fi

  step "SIGUSR2 runs the daemon again in its process: nothing dropped, the same main PID, no restart counted"
  count_before="$(primes_count)"
  if out="$(timeout 600 python3 /switchyard-tests/handover_clients.py "$SOCKET" reexecute 3 "$senders" "$subscribers" 2>&1)"; then
    pass "$out"
  else
    fail "clients across SIGUSR2" "$out"
  fi
  equal "get /primes: count after SIGUSR2" $((count_before + 3 * senders * 10)) "$(primes_count)"

  step "kill -9 under load: every connection ended within 5 s, nothing acknowledged lost (README, after a crash)"
  if out="$(timeout 600 python3 /switchyard-tests/handover_clients.py "$SOCKET" crash "$crashes" "$senders" "$subscribers" 2>&1)"; then
    pass "$out"
  else
    fail "connections after kill -9" "$out"
  fi
  eventually 30 as_member "$BIN/switchyard" status >/dev/null || true
  ended="$(as_member "$BIN/switchyard" status --json 2>&1 | python3 -c 'import json,sys; print(json.load(sys.stdin).get("handOver", {}).get("ended", 0) > 0)' 2>&1 || true)"
  equal "Status after a crash: the start ended the connections it had no state for" True "$ended"
  # Back to the unit's own binary for the checks below; starts in a row would reach StartLimitBurst=.
  rm -f /run/systemd/system/switchyard.service.d/50-upgrade.conf
  systemctl daemon-reload
  systemctl reset-failed "$SERVICE"
fi

step "watchdog: a daemon that stops answering is killed and restarted"
count_before="$(primes_count)"
pid="$(main_pid)"
[[ "$pid" != 0 ]] || { fail "no MainPID to stop"; finish; }
mark="$(mark_time)"
started=$SECONDS
restarts_before="$(prop "$SERVICE" NRestarts)"
# SIGSTOP: no more pings. After WatchdogSec systemd sends SIGABRT (and SIGCONT); with Swift's
# backtracer off the daemon dies at once, where the backtracer would hold it until SIGKILL after
# TimeoutAbortSec=5s. Then Restart=on-failure (RestartSec=1s) starts a new daemon.
kill -STOP "$pid"
restarted() { [[ "$(prop "$SERVICE" NRestarts)" == $((restarts_before + 1)) && "$(prop "$SERVICE" SubState)" == running ]]; }
if eventually 30 restarted; then
  elapsed=$((SECONDS - started))
  pass "restarted after the watchdog timeout (after $elapsed s)"
  if ((elapsed < WATCHDOG_SEC + 5)); then
    pass "SIGABRT ended the daemon at once (SWIFT_BACKTRACE=enable=no), not TimeoutAbortSec's SIGKILL"
  else
    fail "the restart took $elapsed s: did the backtracer hold the aborted daemon until TimeoutAbortSec?"
  fi
else
  fail "no restart after the watchdog timeout" "NRestarts=$(prop "$SERVICE" NRestarts) SubState=$(prop "$SERVICE" SubState)"
  kill -CONT "$pid" 2>/dev/null || true
fi
if journalctl -q -u "$SERVICE" --since "@$((mark / 1000000))" -o cat | grep -qi 'watchdog timeout'; then
  pass "systemd logged the watchdog timeout"
else
  fail "no 'watchdog timeout' in the unit's journal"
fi
new_pid="$(main_pid)"
if [[ "$new_pid" != "$pid" && "$new_pid" != 0 ]]; then pass "a new MainPID ($new_pid)"; else fail "MainPID did not change" "$new_pid"; fi
expect "the new daemon serves" as_member "$BIN/switchyard" status
equal "get /primes: count after the watchdog kill (SIGABRT)" "$count_before" "$(primes_count)"

step "systemctl stop: a clean exit, and the socket stays for the next client"
worker_pids="$(current_worker_pids)"
started=$SECONDS
expect "systemctl stop switchyard.service" timeout 60 systemctl stop "$SERVICE"
echo "      stop took $((SECONDS - started)) s"
equal "ActiveState after stop" inactive "$(prop "$SERVICE" ActiveState)"
equal "Result after stop" success "$(prop "$SERVICE" Result)"
for wpid in $worker_pids; do
  if kill -0 "$wpid" 2>/dev/null; then fail "worker $wpid outlived the service"; else pass "worker $wpid ended with the service"; fi
done
equal "switchyard.socket still listening" active "$(prop switchyard.socket ActiveState)"
expect "the socket file survives the service's stop" test -S "$SOCKET"
expect "the next connection starts the daemon again" as_member "$BIN/switchyard" status
equal "ActiveState after re-activation" active "$(prop "$SERVICE" ActiveState)"
expect "systemctl stop switchyard.service (again)" timeout 60 systemctl stop "$SERVICE"
equal "Result after the second stop" success "$(prop "$SERVICE" Result)"

step "another application under its own units: the fixture daemon (fixture.socket, fixture.service)"
# switchyard-fixture (Tests/Fixture) is an application of its own, installed like switchyardd by
# `make install-units APP=switchyard-fixture NAME=fixture` from the same templates: its socket,
# group, dynamic user, state directory and configuration are its own, and it runs beside
# switchyardd. It hosts features that misbehave on purpose, which shows what only a real systemd
# can: a worker that crashes is restarted by the daemon's supervisor while the service stays up,
# and a feature whose actor is stuck stops the watchdog pings, so systemd replaces the daemon.
FIXTURE=fixture.service
FIXTURE_SOCKET=/run/fixture/fixture.sock
if [[ -x "$BIN/switchyard-fixture" && -f /usr/local/lib/systemd/system/$FIXTURE ]]; then
  # As nobody in group fixture, talking to the fixture's socket.
  as_fixture_member() {
    setpriv --reuid=nobody --regid=nogroup --groups="$(getent group fixture | cut -d: -f3)" -- \
      env SWITCHYARD_SOCKET="$FIXTURE_SOCKET" "$@"
  }
  fixture_pid() { prop "$FIXTURE" MainPID; }
  expect "systemd-sysusers creates the group fixture" systemd-sysusers /usr/local/lib/sysusers.d/fixture.conf
  expect "enable --now fixture.socket" systemctl enable --now fixture.socket
  equal "fixture socket file owner, group and mode" "root:fixture 660 socket" "$(stat -c '%U:%G %a %F' "$FIXTURE_SOCKET" 2>&1)"
  set +e
  out="$(as_member env SWITCHYARD_SOCKET="$FIXTURE_SOCKET" "$BIN/switchyard" status 2>&1)"
  status=$?
  set -e
  equal "exit status of 'switchyard status' on the fixture's socket as a member of switchyard only (3)" 3 "$status"
  expect "the fixture starts on the first connection" as_fixture_member "$BIN/switchyard" status
  equal "$FIXTURE SubState" running "$(prop "$FIXTURE" SubState)"
  equal "switchyard.service is not involved" inactive "$(prop "$SERVICE" ActiveState)"
  info="$(as_fixture_member "$BIN/switchyard" call org.varlink.service.GetInfo 2>&1 || true)"
  equal "GetInfo's product" switchyard-fixture "$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["product"])' "$info" 2>&1 || true)"
  expect "its journal is in its own state directory, /var/lib/private/fixture" eventually 5 test -f /var/lib/private/fixture/journal.sqlite
  pid="$(fixture_pid)"
  uid="$(awk '/^Uid:/ {print $2}' "/proc/$pid/status" 2>/dev/null || echo 0)"
  equal "it runs as its own dynamic user" switchyard-fixture "$(getent passwd "$uid" | cut -d: -f1)"
  fixture_journal_entries() { journalctl -q -u "$FIXTURE" -o cat SYSLOG_IDENTIFIER=switchyard-fixture | wc -l; }
  if eventually 5 test "$(fixture_journal_entries)" -gt 0; then
    pass "its journal entries carry SYSLOG_IDENTIFIER=switchyard-fixture"
  else
    fail "no journal entry with SYSLOG_IDENTIFIER=switchyard-fixture"
  fi

  restarts_before="$(prop "$FIXTURE" NRestarts)"
  alpha_restarts() {
    as_fixture_member "$BIN/switchyard" status --json | python3 -c '
import json, sys
w = {w["feature"]: w for w in json.load(sys.stdin)["workers"]}["alpha"]
sys.exit(0 if (w["restarts"], w["state"]) == (int(sys.argv[1]), "running") else 1)' "$1"
  }
  set +e
  out="$(as_fixture_member "$BIN/switchyard" send '{"alpha": {"trap": {}}}' 2>&1)"
  status=$?
  set -e
  equal "exit status of an action that crashes worker alpha (1: error reply)" 1 "$status"
  echo "      ($out)"
  if eventually 10 alpha_restarts 1; then pass "the supervisor restarted worker alpha"; else fail "worker alpha was not restarted"; fi
  equal "MainPID after the worker crash" "$pid" "$(fixture_pid)"
  equal "NRestarts after the worker crash" "$restarts_before" "$(prop "$FIXTURE" NRestarts)"

  mark="$(mark_time)"
  started=$SECONDS
  # Blocks the wedge feature's actor thread for 15 s: its health probe goes unanswered.
  (exec timeout 20 setpriv --reuid=nobody --regid=nogroup --groups="$(getent group fixture | cut -d: -f3)" -- \
    env SWITCHYARD_SOCKET="$FIXTURE_SOCKET" "$BIN/switchyard" send '{"wedge": {"block": 15}}' >/dev/null 2>&1) &
  wedge_pid=$!
  fixture_restarted() { [[ "$(prop "$FIXTURE" NRestarts)" == $((restarts_before + 1)) && "$(prop "$FIXTURE" SubState)" == running ]]; }
  if eventually 20 fixture_restarted; then
    pass "a wedged feature: watchdog timeout and a new daemon after $((SECONDS - started)) s"
  else
    fail "no restart while a feature was wedged" "NRestarts=$(prop "$FIXTURE" NRestarts) SubState=$(prop "$FIXTURE" SubState)"
  fi
  if journalctl -q -u "$FIXTURE" --since "@$((mark / 1000000))" -o cat | grep -qi 'watchdog timeout'; then
    pass "systemd logged the watchdog timeout"
  else
    fail "no 'watchdog timeout' in the unit's journal after the wedge"
  fi
  kill "$wedge_pid" 2>/dev/null || true
  wait "$wedge_pid" 2>/dev/null || true
  expect "systemctl stop $FIXTURE" timeout 60 systemctl stop "$FIXTURE"
  equal "Result after stopping the fixture" success "$(prop "$FIXTURE" Result)"
  expect "systemctl stop fixture.socket" systemctl stop fixture.socket
else
  echo "      (no switchyard-fixture or no fixture units: skipped)"
fi

step "systemctl stop switchyard.socket removes the socket (RemoveOnStop=yes)"
expect "systemctl stop switchyard.socket" systemctl stop switchyard.socket
if [[ -e "$SOCKET" ]]; then fail "$SOCKET still exists"; else pass "$SOCKET is gone"; fi

finish
