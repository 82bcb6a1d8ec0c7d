#!/usr/bin/env bash
# Offline checks of the units `make install` writes from the templates in systemd/, for
# switchyardd and for another application (the fixture daemon, as APP=switchyard-fixture
# NAME=fixture):
#   - the files installed and their names, and no template placeholder left;
#   - the other application's units name its own executable, socket, group, user and
#     directories, and nothing of switchyardd's;
#   - `systemd-analyze verify` prints nothing at all (it exits non-zero only for a missing
#     executable; unknown keys and bad values are only warnings, so any output is a failure);
#   - `systemd-analyze security --offline=yes` scores each service at or under THRESHOLD;
#   - `make verify-units` (what the tutorial checks a staged install with) says nothing else.
# verify checks that ExecStart's binary exists, so BINDIR is the folder of the built daemons:
# $SWITCHYARD_BIN_DIR (make systemd-test passes the debug build's).
set -euo pipefail
# Run from `make test`'s parallel stages, the makes below would inherit its jobserver and warn.
unset MAKEFLAGS MFLAGS MAKELEVEL

repo="$(cd "$(dirname "$0")/../.." && pwd)"
bin_dir="${SWITCHYARD_BIN_DIR:-$(cd "$repo" && swift build --show-bin-path)}"
# Exposure threshold in tenths: systemd 252 takes an integer on a 0–100 scale for the 0.0–10.0
# it prints (`--threshold=1.0` is rejected as unparsable), so 10 means 1.0.
threshold="${SWITCHYARD_SECURITY_THRESHOLD:-10}"

fail() { echo "unit-checks: FAIL: $*" >&2; exit 1; }

for exe in switchyardd switchyard-fixture; do
  [[ -x "$bin_dir/$exe" ]] || fail "no $exe in $bin_dir; build it first (swift build --product $exe)"
done

tmp="$(mktemp -d /tmp/switchyard-unit-checks.XXXXXX)"
# systemd-analyze verify and security, run as root, leave an empty marker
# /run/systemd/systemd-units-load behind (their offline manager records when it loaded units);
# on a machine where systemd is not PID 1 nothing else would ever create it.
marker=/run/systemd/systemd-units-load
marker_existed=0
[[ -e "$marker" ]] && marker_existed=1
cleanup() {
  rm -rf "$tmp"
  ((marker_existed)) || rm -f "$marker"
}
trap cleanup EXIT

# install_units ROOT MAKE-ARGUMENTS...: make install-units into ROOT, units in ROOT/units.
install_units() {
  local root="$1"
  shift
  make -s --no-print-directory -C "$repo" install-units DESTDIR="$root" BINDIR="$bin_dir" UNITDIR=/units \
    SYSUSERSDIR=/sysusers.d SYSCONFDIR=/etc "$@" >/dev/null
}

# expect_files ROOT FILE...: exactly these files were installed.
expect_files() {
  local root="$1" actual expected
  shift
  actual="$(cd "$root" && find . -type f | sed 's|^\./||' | sort)"
  expected="$(printf '%s\n' "$@" | sort)"
  [[ "$actual" == "$expected" ]] || fail "installed files in $root:"$'\n'"$actual"$'\n'"expected:"$'\n'"$expected"
  if grep -n '@[A-Z]*@' "$root"/units/* "$root"/sysusers.d/*; then fail "a template placeholder was left"; fi
  echo "unit-checks: installed $*"
}

# expect_line FILE LINE: FILE has LINE, whole.
expect_line() {
  grep -qxF -- "$2" "$1" || fail "$(basename "$1") has no line '$2'"
}

# check_service UNITS NAME: verify prints nothing; security within the threshold.
check_service() {
  local units="$1" name="$2" out report status score
  out="$(cd "$units" && systemd-analyze verify "./$name.socket" "./$name.service" 2>&1)" \
    || fail "systemd-analyze verify exited non-zero:"$'\n'"$out"
  [[ -z "$out" ]] || fail "systemd-analyze verify printed:"$'\n'"$out"
  echo "unit-checks: systemd-analyze verify $name.socket $name.service: no output"
  # security: print what still counts against the unit, and the score.
  set +e
  report="$(cd "$units" && systemd-analyze security --offline=yes --threshold="$threshold" "./$name.service" 2>&1)"
  status=$?
  set -e
  score="$(sed -n "s/.*Overall exposure level for $name.service: \([0-9.]*\).*/\1/p" <<<"$report")"
  [[ -n "$score" ]] || fail "no exposure score in systemd-analyze security's output:"$'\n'"$report"
  grep '^✗' <<<"$report" | sed 's/^/unit-checks:   /' || true
  if ((status != 0)); then
    fail "$name.service: exposure $score is over the threshold $((threshold / 10)).$((threshold % 10))"
  fi
  echo "unit-checks: systemd-analyze security $name.service: exposure $score (threshold $((threshold / 10)).$((threshold % 10)))"
}

# switchyardd, by default.
install_units "$tmp/default"
expect_files "$tmp/default" units/switchyard.service units/switchyard.socket sysusers.d/switchyard.conf \
  etc/switchyard/switchyard.json
expect_line "$tmp/default/units/switchyard.service" "ExecStart=$bin_dir/switchyardd --config /etc/switchyard/switchyard.json"
check_service "$tmp/default/units" switchyard

# Another application: every name is its own.
install_units "$tmp/other" APP=switchyard-fixture NAME=fixture
expect_files "$tmp/other" units/fixture.service units/fixture.socket sysusers.d/fixture.conf etc/fixture/fixture.json
service="$tmp/other/units/fixture.service"
socket="$tmp/other/units/fixture.socket"
expect_line "$service" "ExecStart=$bin_dir/switchyard-fixture --config /etc/fixture/fixture.json"
expect_line "$service" "Requires=fixture.socket"
expect_line "$service" "User=switchyard-fixture"
expect_line "$service" "StateDirectory=fixture"
expect_line "$service" "Also=fixture.socket"
expect_line "$socket" "ListenStream=/run/fixture/fixture.sock"
expect_line "$socket" "SocketGroup=fixture"
expect_line "$tmp/other/sysusers.d/fixture.conf" "g fixture - -"
socket_path="$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["switchyard"]["socket"]["path"])' "$tmp/other/etc/fixture/fixture.json")"
[[ "$socket_path" == /run/fixture/fixture.sock ]] || fail "fixture.json names the socket $socket_path"
# Switchyard's default configuration names PrimeTime's features, which another application does
# not host: installed for one, it comes without them.
features="$(python3 -c 'import json,sys; print(sorted(json.load(open(sys.argv[1]))["switchyard"].get("features", {})))' "$tmp/other/etc/fixture/fixture.json")"
[[ "$features" == "[]" ]] || fail "fixture.json has settings for features $features"
features="$(python3 -c 'import json,sys; print(sorted(json.load(open(sys.argv[1]))["switchyard"].get("features", {})))' "$tmp/default/etc/switchyard/switchyard.json")"
[[ "$features" == "['primes']" ]] || fail "switchyard.json has settings for features $features, not PrimeTime's primes"
# Nothing of switchyardd's (ExecStart aside: the build folder's path is anyone's).
if grep -hv -e '^#' -e '^ExecStart=' "$service" "$socket" "$tmp/other/sysusers.d/fixture.conf" \
  | grep -E 'switchyardd|switchyard\.(socket|service|sock|json|conf)|/(run|etc|var/lib)/switchyard|=switchyard$'; then
  fail "the other application's units name switchyardd's"
fi
check_service "$tmp/other/units" fixture

# make verify-units, which the tutorial runs on a staged install: silent for sound units, and it
# finds the executable where install-bin put it (here BINDIR, the build folder).
out="$(make -s --no-print-directory -C "$repo" verify-units APP=switchyard-fixture NAME=fixture BINDIR="$bin_dir" 2>&1)" \
  || fail "make verify-units APP=switchyard-fixture failed:"$'\n'"$out"
[[ "$out" == "systemd-analyze verify fixture.socket fixture.service: no complaint" ]] || fail "make verify-units said: $out"
if out="$(make -s --no-print-directory -C "$repo" verify-units APP=switchyard-fixture NAME=fixture DESTDIR="$tmp/nothing" 2>&1)"; then
  fail "make verify-units without the executable passed: $out"
fi
echo "unit-checks: make verify-units: no complaint, and refused without the executable"

# A daemon's dynamic user may not be named like the socket's group.
if out="$(make -s --no-print-directory -C "$repo" install-units DESTDIR="$tmp/refused" APP=myapp 2>&1)"; then
  fail "make install-units APP=myapp (NAME=myapp) was not refused"
fi
grep -q 'NAME (the units and the socket' <<<"$out" || fail "no reason given for refusing APP=myapp: $out"
[[ ! -e "$tmp/refused" ]] || fail "the refused install wrote $(find "$tmp/refused" -type f)"
echo "unit-checks: APP=myapp without NAME= is refused (the group would take the daemon's name)"
