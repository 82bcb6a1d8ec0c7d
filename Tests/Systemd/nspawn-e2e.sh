#!/usr/bin/env bash
# End-to-end test of switchyard.socket and switchyard.service under a real systemd 252 as PID 1,
# booted with systemd-nspawn from the host's own tree (the recipe of
# /work/shared/notes/systemd-and-varlink.md). PID 1 of the machine is not systemd, and systemd must
# never be started as PID 1 of a plain unshare namespace over the host root (its boot-time
# cleanup empties the host's /tmp); nspawn gives it a volatile root of its own.
#
# The container sees the host's /usr (read-only, --volatile=yes) and /opt (the Swift runtime the
# debug build links), a copy of the debug build's binaries (read-only), and what
# `make install-units` put into a temporary DESTDIR: /usr/local (the units and sysusers.d file,
# read-only) and /etc (an overlay: the host's /etc below, the install's /etc/switchyard on top;
# writes such as the switchyard group land in the temporary folder, never in the host's /etc).
# Tests/Systemd/checks.sh runs inside as a oneshot unit and writes its log and verdict to a
# writable bind; this script prints them and exits non-zero on failure.
#
# Afterwards everything it created is removed: the temporary folder, the cgroups nspawn made
# (kept under one cgroup of the test's own), /run/systemd/nspawn*; mounts and cgroups are
# compared with their state before the run.
#
# Environment: SWITCHYARD_BIN_DIR (default: swift build --show-bin-path), SWITCHYARD_E2E_TIMEOUT
# (seconds for the whole container run, default 300), SWITCHYARD_E2E_KEEP=1 keeps the temporary
# folder for inspection; SWITCHYARD_E2E_DROPIN adds lines to the test's drop-in for
# switchyard.service (for experiments: SWITCHYARD_E2E_DROPIN='Environment=SWIFT_BACKTRACE=').
# SWITCHYARD_E2E_HANDOVER_LOAD="RESTARTS SENDERS SUBSCRIBERS CRASHES" (default "3 5 10 3") is the
# connection handover's load; SWITCHYARD_E2E_HANDOVER=no installs the units without it.
# SWITCHYARD_E2E_UPGRADE_BIN: another build of switchyardd the restarts alternate with (an upgrade,
# then a downgrade); without it, a copy of the debug build at another path stands in.
# SWITCHYARD_E2E_SCRIPT (a path in the repository, seen read-only at /switchyard-repo) runs
# instead of the checks, with SWITCHYARD_E2E_ENVIRONMENT (Environment= assignments) in its unit:
# how make bench-restart-systemd runs its benchmark under this systemd.
set -euo pipefail
# Run from `make test`'s parallel stages, the makes below would inherit its jobserver and warn.
unset MAKEFLAGS MFLAGS MAKELEVEL

here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
timeout_sec="${SWITCHYARD_E2E_TIMEOUT:-300}"
# The container boots with the unified cgroup hierarchy, as Debian 12's systemd does on a host.
# nspawn otherwise mirrors this machine's hybrid layout, whose ten v1 hierarchies are mounts in
# every unit's view: systemd rereads the mount table for each sandbox option, and a unit's start
# (and the container's boot) pays for each line. SYSTEMD_NSPAWN_UNIFIED_HIERARCHY=0 keeps the
# host's layout.
export SYSTEMD_NSPAWN_UNIFIED_HIERARCHY="${SYSTEMD_NSPAWN_UNIFIED_HIERARCHY:-1}"

say() { echo "nspawn-e2e: $*"; }
die() { echo "nspawn-e2e: FAIL: $*" >&2; exit 1; }

((EUID == 0)) || die "needs root (systemd-nspawn)"
command -v systemd-nspawn >/dev/null || die "systemd-nspawn is missing: make deps installs systemd-container"
bin_dir="${SWITCHYARD_BIN_DIR:-$(cd "$repo" && swift build --show-bin-path)}"
bin_dir="$(realpath "$bin_dir")"
for exe in switchyardd switchyard; do
  [[ -x "$bin_dir/$exe" ]] || die "no $exe in $bin_dir; build it first (swift build --product $exe)"
done

# The container gets a copy of the binaries, at /switchyard-e2e-bin: a build running meanwhile
# (SwiftPM relinks in place) must not change them under the test, and the service could not see
# them under /tmp anyway (PrivateTmp=yes gives it a /tmp of its own).
container_bin=/switchyard-e2e-bin

# --- state before, to prove the cleanup -----------------------------------------------------
mounts_before="$(findmnt -rn -o TARGET,SOURCE,FSTYPE | sort)"
cgroups_before="$(find /sys/fs/cgroup -type d 2>/dev/null | sort)"
nspawn_dirs_before="$(ls -d /run/systemd/nspawn* 2>/dev/null || true)"

tmp="$(mktemp -d /tmp/switchyard-nspawn.XXXXXX)"
own_cgroups=()

cleanup() {
  local status=$? cg leftover=0
  # Processes still in the test's cgroups can only be the container's: end them.
  for cg in "${own_cgroups[@]}"; do
    [[ -d "$cg" ]] || continue
    local pids
    pids="$(find "$cg" -name cgroup.procs -exec cat {} + 2>/dev/null | sort -u)"
    if [[ -n "$pids" ]]; then
      say "ending leftover container processes: $(tr '\n' ' ' <<<"$pids")"
      # shellcheck disable=SC2086
      kill -KILL $pids 2>/dev/null || true
      sleep 0.5
    fi
    find "$cg" -depth -type d -exec rmdir {} + 2>/dev/null || true
    [[ -d "$cg" ]] && { say "WARNING: cgroup $cg could not be removed"; leftover=1; }
  done
  # nspawn leaves /run/systemd/nspawn/propagate/ and /run/systemd/nspawn-root behind (empty).
  if [[ -z "$nspawn_dirs_before" ]]; then
    for d in /run/systemd/nspawn /run/systemd/nspawn-root; do
      [[ -e "$d" ]] || continue
      find "$d" -depth -type d -empty -delete 2>/dev/null || true
      [[ -e "$d" ]] && { say "WARNING: $d is not empty; left in place"; leftover=1; }
    done
  fi
  # Nothing may stay mounted under the temporary folder before it is removed.
  if findmnt -rn -o TARGET | grep -q "^$tmp"; then
    say "WARNING: mounts left under $tmp:"; findmnt -rn -o TARGET | grep "^$tmp" || true
    leftover=1
  elif [[ "${SWITCHYARD_E2E_KEEP:-0}" == 1 ]]; then
    say "kept $tmp"
  else
    rm -rf --one-file-system "$tmp"
  fi
  local mounts_after cgroups_after
  mounts_after="$(findmnt -rn -o TARGET,SOURCE,FSTYPE | sort)"
  if [[ "$mounts_after" != "$mounts_before" ]]; then
    say "WARNING: mounts differ from before the run:"; diff <(echo "$mounts_before") <(echo "$mounts_after") || true
    leftover=1
  fi
  # Other cgroups may come and go with the machine's own work; only the hierarchies nspawn
  # used count.
  cgroups_after="$(find /sys/fs/cgroup -type d 2>/dev/null | sort)"
  local new
  new="$(comm -13 <(echo "$cgroups_before") <(echo "$cgroups_after") | grep -E 'switchyard-e2e|/payload|/supervisor|machine' || true)"
  if [[ -n "$new" ]]; then
    say "WARNING: cgroups left behind:"; echo "$new"; leftover=1
  fi
  if ((leftover)); then
    say "FAIL: the run left state behind (see above)"
    ((status != 0)) || status=1
  else
    say "cleanup: no mounts, cgroups, /run/systemd/nspawn* or temporary files left"
  fi
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# --- what the container sees ----------------------------------------------------------------
mkdir -p "$tmp/root" "$tmp/units/switchyard.service.d" "$tmp/units/fixture.service.d" "$tmp/results" "$tmp/bin" "$tmp/upgrade"
cp "$bin_dir/switchyardd" "$bin_dir/switchyard" "$tmp/bin/"
# The build a restart upgrades to, at a path of its own (/switchyard-e2e-upgrade).
upgrade_bin="${SWITCHYARD_E2E_UPGRADE_BIN:-}"
if [[ -n "$upgrade_bin" ]]; then
  [[ -x "$upgrade_bin" ]] || die "SWITCHYARD_E2E_UPGRADE_BIN=$upgrade_bin is not an executable"
  cp "$upgrade_bin" "$tmp/upgrade/switchyardd"
  upgrade_kind="$(realpath "$upgrade_bin")"
else
  cp "$bin_dir/switchyardd" "$tmp/upgrade/switchyardd"
  upgrade_kind="the same debug build (no SWITCHYARD_E2E_UPGRADE_BIN): only the unit's binary changes"
fi
handover="${SWITCHYARD_E2E_HANDOVER:-yes}"
make -s --no-print-directory -C "$repo" install-units DESTDIR="$tmp/root" BINDIR="$container_bin" HANDOVER=$handover >/dev/null
[[ -f "$tmp/root/usr/local/lib/systemd/system/switchyard.service" ]] || die "make install-units put no units in $tmp/root/usr/local/lib/systemd/system"
# The fixture daemon (Tests/Fixture), installed as another application from the same templates,
# for the checks of a crashing worker and a wedged feature under units of its own.
if [[ -x "$bin_dir/switchyard-fixture" ]]; then
  cp "$bin_dir/switchyard-fixture" "$tmp/bin/"
  make -s --no-print-directory -C "$repo" install-units APP=switchyard-fixture NAME=fixture DESTDIR="$tmp/root" \
    BINDIR="$container_bin" >/dev/null
fi

# A short watchdog, so that several intervals pass within seconds.
for unit in switchyard fixture; do
  cat >"$tmp/units/$unit.service.d/10-e2e.conf" <<EOF
[Service]
WatchdogSec=2s
${SWITCHYARD_E2E_DROPIN:-}
EOF
done
cat >"$tmp/units/switchyard-e2e.target" <<'EOF'
[Unit]
Description=Switchyard end-to-end test
Requires=switchyard-e2e.service
After=switchyard-e2e.service
EOF
# The checks record their verdict in /results and always exit 0; FailureAction= powers off too
# (a crash or a timeout of the script), so no outcome leaves the container running. The extra
# Environment= line is written only when there is something in it: an empty one would reset
# the two before it.
cat >"$tmp/units/switchyard-e2e.service" <<EOF
[Unit]
Description=Switchyard end-to-end checks
SuccessAction=poweroff-force
FailureAction=poweroff-force

[Service]
Type=oneshot
Environment=SWITCHYARD_BIN_DIR=$container_bin RESULTS=/results "HANDOVER_LOAD=${SWITCHYARD_E2E_HANDOVER_LOAD:-3 5 10 3}"
Environment=UPGRADE_BIN=/switchyard-e2e-upgrade/switchyardd "UPGRADE_KIND=$upgrade_kind"
${SWITCHYARD_E2E_ENVIRONMENT:+Environment=$SWITCHYARD_E2E_ENVIRONMENT}
ExecStart=/bin/bash /switchyard-repo/${SWITCHYARD_E2E_SCRIPT:-Tests/Systemd/checks.sh}
TimeoutStartSec=$((timeout_sec - 30))
StandardOutput=journal+console
StandardError=journal+console
EOF

nspawn=(
  systemd-nspawn
  --directory=/ --volatile=yes --register=no --keep-unit --private-network --console=pipe
  --bind-ro=/opt
  --overlay="/etc:$tmp/root/etc:/etc"
  --bind-ro="$tmp/root/usr/local:/usr/local"
  --bind-ro="$tmp/bin:$container_bin"
  --bind-ro="$tmp/upgrade:/switchyard-e2e-upgrade"
  --bind-ro="$here:/switchyard-tests"
  --bind-ro="$repo:/switchyard-repo"
  --bind-ro="$tmp/units"
  --bind="$tmp/results:/results"
  --setenv=SYSTEMD_UNIT_PATH="$tmp/units:"
  --boot systemd.unit=switchyard-e2e.target
)

# nspawn with --keep-unit makes its payload/ and supervisor/ cgroups under the cgroup it runs in.
# Without systemd on the host that would be the root of the hierarchy: run it in a cgroup of its
# own instead, in each hierarchy it uses, so that the cleanup knows exactly what to remove.
run_in_own_cgroup() {
  local rel base
  while IFS=: read -r _ controllers rel; do
    case "$controllers" in
      name=systemd) base=/sys/fs/cgroup/systemd ;;
      "") if [[ -d /sys/fs/cgroup/unified ]]; then base=/sys/fs/cgroup/unified; else base=/sys/fs/cgroup; fi ;;
      *) continue ;;
    esac
    [[ -d "$base" ]] || continue
    local cg="$base${rel%/}/switchyard-e2e.$$"
    mkdir "$cg"
    own_cgroups+=("$cg")
  done </proc/self/cgroup
}

say "booting systemd in systemd-nspawn (timeout ${timeout_sec}s); binaries from $bin_dir"
start_ns="$(date +%s%N)"
set +e
if [[ -d /run/systemd/system ]]; then
  # The host runs systemd: let it make the scope (untested here, where PID 1 is not systemd).
  timeout -k 10 "$timeout_sec" systemd-run --scope --quiet --collect -- "${nspawn[@]}" >"$tmp/console.log" 2>&1
  nspawn_status=$?
else
  run_in_own_cgroup
  (
    for cg in "${own_cgroups[@]}"; do echo "$BASHPID" >"$cg/cgroup.procs"; done
    exec timeout -k 10 "$timeout_sec" "${nspawn[@]}"
  ) >"$tmp/console.log" 2>&1
  nspawn_status=$?
fi
set -e
elapsed_ms=$((($(date +%s%N) - start_ns) / 1000000))

echo
echo "----- checks (in the container) -----"
if [[ -s "$tmp/results/checks.log" ]]; then cat "$tmp/results/checks.log"; else echo "(no log)"; fi
echo "-------------------------------------"
verdict="$(head -n 1 "$tmp/results/result" 2>/dev/null || echo "none")"
if [[ "$verdict" != PASS ]]; then
  if [[ -s "$tmp/results/journal.txt" ]]; then
    echo "----- journal of switchyard.socket and switchyard.service -----"
    cat "$tmp/results/journal.txt"
  fi
  echo "----- container console (last 80 lines) -----"
  tail -n 80 "$tmp/console.log"
  echo "---------------------------------------------"
fi
say "systemd-nspawn exited with $nspawn_status after $((elapsed_ms / 1000)).$(printf '%03d' $((elapsed_ms % 1000))) s (boot, checks, power-off)"
case "$verdict" in
  PASS) say "PASS" ;;
  FAIL) die "$(($(wc -l <"$tmp/results/result") - 1)) check(s) failed: $(tail -n +2 "$tmp/results/result" | paste -sd ';' | sed 's/;/; /g')" ;;
  *)
    ((nspawn_status == 124)) && die "timed out after ${timeout_sec}s with no verdict"
    die "no verdict from the container (systemd-nspawn exit $nspawn_status); see the console above"
    ;;
esac
