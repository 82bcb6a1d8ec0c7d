# What the peers benchmarks share: sourced by run.sh and scale.sh from the repository's root.
# Installs the tools named in NEEDED (command:package) when missing, builds the load tool and the
# release daemon (or takes DAEMON=path), and gives a temporary folder whose processes go with it.
# The benchmarks' build folder is a release build's: the tests and what only they use are left
# out (Package.swift, at its end).
export SWITCHYARD_RELEASE_BUILD=1
out=.build-bench
mkdir -p "$out"
for tool in $NEEDED; do
  command -v "${tool%%:*}" >/dev/null && continue
  echo "installing ${tool#*:}"
  apt-get update -qq && apt-get install -y -qq "${tool#*:}" >/dev/null
done
cc -O2 -o "$out/loadgen" Benchmarks/EndToEnd/loadgen.c -lpthread -lssl -lcrypto
# DAEMON=path/to/switchyardd measures that binary instead of building the release one.
daemon=${DAEMON:-}
if [ -z "$daemon" ]; then
  release=(-c release $(grep -v '^#' scripts/release-swift-flags) --scratch-path "$out")
  # Fixed hashing, as the Makefile builds: otherwise a plan of its own compiles everything again.
  SWIFT_DETERMINISTIC_HASHING=1 swift build "${release[@]}" --product switchyardd >/dev/null
  daemon="$(SWIFT_DETERMINISTIC_HASHING=1 swift build "${release[@]}" --show-bin-path)/switchyardd"
fi

dir=$(mktemp -d)
pids=()
stop_all() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  pids=()
}
trap 'stop_all; rm -rf "$dir"' EXIT

wait_for_socket() { for _ in $(seq 1 200); do [ -S "$1" ] && return 0; sleep 0.05; done; echo "no socket $1" >&2; exit 1; }
field() { sed -n "s/.*$1=\([0-9.]*\).*/\1/p" <<<"$2"; }
