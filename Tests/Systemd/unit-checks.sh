#!/usr/bin/env bash
# Offline checks of the shipped units, as `make install` installs them:
#   - `systemd-analyze verify` prints nothing at all (it exits non-zero only for a missing
#     executable; unknown keys and bad values are only warnings, so any output is a failure);
#   - `systemd-analyze security --offline=yes` scores the service at or under THRESHOLD.
# verify checks that ExecStart's binary exists, so @BINDIR@ is replaced by the folder of a built
# switchyardd: $SWITCHYARD_BIN_DIR (make systemd-test passes the debug build's).
set -euo pipefail

repo="$(cd "$(dirname "$0")/../.." && pwd)"
bin_dir="${SWITCHYARD_BIN_DIR:-$(cd "$repo" && swift build --show-bin-path)}"
# Exposure threshold in tenths: systemd 252 takes an integer on a 0–100 scale for the 0.0–10.0
# it prints (`--threshold=1.0` is rejected as unparsable), so 10 means 1.0.
threshold="${SWITCHYARD_SECURITY_THRESHOLD:-10}"

fail() { echo "unit-checks: FAIL: $*" >&2; exit 1; }

[[ -x "$bin_dir/switchyardd" ]] || fail "no switchyardd in $bin_dir; build it first (swift build --product switchyardd)"

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

make -s --no-print-directory -C "$repo" install-units DESTDIR="$tmp/root" BINDIR="$bin_dir" UNITDIR=/units >/dev/null
units="$tmp/root/units"
grep -q '@BINDIR@' "$units"/* && fail "@BINDIR@ left in the installed units"

# verify: stdout and stderr together must be empty.
out="$(cd "$units" && systemd-analyze verify ./switchyard.socket ./switchyard.service 2>&1)" \
  || fail "systemd-analyze verify exited non-zero:"$'\n'"$out"
[[ -z "$out" ]] || fail "systemd-analyze verify printed:"$'\n'"$out"
echo "unit-checks: systemd-analyze verify switchyard.socket switchyard.service: no output"

# security: print what still counts against the unit, and the score.
set +e
report="$(cd "$units" && systemd-analyze security --offline=yes --threshold="$threshold" ./switchyard.service 2>&1)"
status=$?
set -e
score="$(sed -n 's/.*Overall exposure level for switchyard.service: \([0-9.]*\).*/\1/p' <<<"$report")"
[[ -n "$score" ]] || fail "no exposure score in systemd-analyze security's output:"$'\n'"$report"
grep '^✗' <<<"$report" | sed 's/^/unit-checks:   /' || true
if ((status != 0)); then
  fail "exposure $score is over the threshold $((threshold / 10)).$((threshold % 10))"
fi
echo "unit-checks: systemd-analyze security: exposure $score (threshold $((threshold / 10)).$((threshold % 10)))"
