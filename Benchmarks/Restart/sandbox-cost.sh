#!/usr/bin/env bash
# make bench-sandbox's payload: what building the service unit's sandbox costs systemd at each
# start, option by option. Runs as the container's oneshot unit (Tests/Systemd/nspawn-e2e.sh with
# SWITCHYARD_E2E_SCRIPT), where systemd 252 is PID 1 and switchyard.service is installed as `make
# install` writes it. Each variant is a oneshot unit running /bin/true with the service's
# hardening lines, less the ones named; `systemctl start` returns once it has run, so its time is
# systemd forking, building the namespace and executing, with no daemon in it. Prints the median
# of ROUNDS starts per variant and what leaving the options out takes off the whole sandbox's.
set -u
cd /results
exec >checks.log 2>&1
rounds="${ROUNDS:-15}"

# The hardening section of the installed unit: from DynamicUser= to the end of [Service],
# with the state directory the sandbox makes writable.
hardening="$(systemctl cat switchyard.service |
  sed -n '/^DynamicUser=/,/^\[Install\]/p' | grep -E '^[A-Za-z]+=' | grep -v '^\[')"
hardening+=$'\nStateDirectory=switchyard-sandbox-cost'
echo "mounts in the container: $(wc -l </proc/self/mountinfo)"
echo "the unit's hardening: $(grep -c . <<<"$hardening") lines"

variant() { # name, the options to leave out (an extended regex of names)
  local name="$1" drop="$2"
  {
    printf '[Service]\nType=oneshot\nExecStart=/bin/true\n'
    grep -Ev "^($drop)=" <<<"$hardening"
    # Without a dynamic user, the unit's User= names nobody that exists.
    if grep -qE "^($drop)=" <<<"DynamicUser=yes"; then echo "User=nobody"; fi
  } >"/run/systemd/system/sandbox-$name.service"
}
names=(whole none mount-namespace kernel-tunables kernel-modules-logs control-groups system-home devices
  tmp proc network ipc dynamic-user system-calls)
variant whole 'NoSuchOption'
variant none '[A-Za-z]+'
variant mount-namespace 'ProtectSystem|ProtectHome|PrivateTmp|PrivateDevices|PrivateMounts|ProtectKernelTunables|ProtectKernelModules|ProtectKernelLogs|ProtectControlGroups|ProtectProc|ProcSubset|DynamicUser|User|StateDirectory'
variant kernel-tunables 'ProtectKernelTunables'
variant kernel-modules-logs 'ProtectKernelModules|ProtectKernelLogs'
variant control-groups 'ProtectControlGroups'
variant system-home 'ProtectSystem|ProtectHome'
variant devices 'PrivateDevices'
variant tmp 'PrivateTmp'
variant proc 'ProtectProc|ProcSubset'
variant network 'PrivateNetwork'
variant ipc 'PrivateIPC'
variant dynamic-user 'DynamicUser|User'
variant system-calls 'SystemCallFilter|SystemCallErrorNumber|SystemCallArchitectures|MemoryDenyWriteExecute|LockPersonality|RestrictRealtime|RestrictSUIDSGID|RestrictNamespaces|RestrictAddressFamilies'
systemctl daemon-reload

median_ms() { # the median of ROUNDS starts of the variant, in tenths of a millisecond
  local times=() start
  for _ in $(seq "$rounds"); do
    start=$(date +%s%N)
    systemctl start "sandbox-$1.service" || return 1
    times+=($((($(date +%s%N) - start) / 100000)))
  done
  printf '%s\n' "${times[@]}" | sort -n | sed -n "$(((rounds + 1) / 2))p"
}
declare -A result
for name in "${names[@]}"; do result[$name]=$(median_ms "$name") || { echo "FAIL: sandbox-$name.service did not start"; exit 0; }; done
whole=${result[whole]}
printf '%-30s %8s %12s\n' "left out" "start, ms" "vs whole, ms"
for name in "${names[@]}"; do
  value=${result[$name]}
  case "$name" in whole) label="(nothing: the unit's sandbox)" ;; none) label="(everything)" ;; *) label="$name" ;; esac
  awk -v label="$label" -v value="$value" -v whole="$whole" \
    'BEGIN { printf "%-30s %8.1f %+12.1f\n", label, value / 10, (value - whole) / 10 }'
done
echo PASS >result
