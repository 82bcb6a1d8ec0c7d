#!/usr/bin/env bash
# Builds the libFuzzer targets and runs each for SECONDS: Fuzz/run.sh SECONDS [TARGET…]
# (`Fuzz/run.sh build` builds them and runs nothing).
#
#   FUZZ_BUILD_DIR  the scratch path (default: .build-fuzz at the repository's root)
#   FUZZ_CONFIGURATION  release (default) or debug
#   FUZZ_JOBS       targets run at once (default 1; at most the number of cores, or the
#                   executions per second measure the crowding)
#   FUZZ_FRESH=1    start from the committed seeds only, forgetting what earlier runs found
#
# Each target works on its own corpus in the build folder, seeded from Fuzz/Corpus/<target> and
# kept between runs, so that long runs build on each other and a brief run replays what they
# found; the committed corpus is only read. Crashes, logs and the summary go to
# <build folder>/results/<target>/, emptied at each run. Prints one line per target and exits
# non-zero if any target failed, with the failing input's path, its first bytes and the stack.
set -euo pipefail

seconds="${1:?usage: Fuzz/run.sh SECONDS [TARGET…]}"
shift
fuzz_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$fuzz_dir")"
build="${FUZZ_BUILD_DIR:-$root/.build-fuzz}"
jobs="${FUZZ_JOBS:-1}"
configuration="${FUZZ_CONFIGURATION:-release}"
swift="${SWIFT:-swift}"

if [ "$#" -gt 0 ]; then
  targets=("$@")
else
  targets=()
  for dir in "$fuzz_dir"/Corpus/*/; do targets+=("$(basename "$dir")"); done
fi

# The build's log is shown only when it fails or warns: a brief run should print its table.
mkdir -p "$build"
: >"$build/build.log"
# One product at a time: building every target would also compile the macro's support library
# and swift-syntax for the target, beside the copies the macro plugin is built from.
# SwiftPM plans the build again in an environment it has not seen (make's variables differ between
# `make test`'s build of the fuzzers and their run), and lists swift-dependencies' traits in the
# order of a Set: without make's variables and with fixed hashing, the second plan compiles nothing.
for target in "${targets[@]}"; do
  if ! env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u MAKEOVERRIDES SWIFT_DETERMINISTIC_HASHING=1 "$swift" build -c "$configuration" \
    --package-path "$fuzz_dir" --scratch-path "$build" --product "$target" >>"$build/build.log" 2>&1; then
    cat "$build/build.log" >&2
    echo "error: the fuzz build of $target failed" >&2
    exit 1
  fi
done
grep -E 'warning:' "$build/build.log" || true
[ "$seconds" = build ] && exit 0
# SwiftPM's link to <triple>/<configuration>: asking `swift build --show-bin-path` costs a second.
bin="$build/$configuration"

# Swift's backtracer would hold a crashing process for up to 30 s; ASan symbolizes instead.
export SWIFT_BACKTRACE=enable=no
symbolizer="$(dirname "$(command -v "$swift")")/llvm-symbolizer"
[ -x "$symbolizer" ] && export ASAN_SYMBOLIZER_PATH="$symbolizer"

run_one() {
  local target="$1" corpus="$build/corpus/$1" results="$build/results/$1"
  rm -rf "$results"
  mkdir -p "$results"
  [ "${FUZZ_FRESH:-0}" = 1 ] && rm -rf "$corpus"
  mkdir -p "$corpus"
  cp -n "$fuzz_dir/Corpus/$target"/* "$corpus"/ 2>/dev/null || true
  # -timeout: an input that takes 10 s is a hang, reported like a crash. The working directory
  # is the results folder, where libFuzzer writes anything -artifact_prefix does not cover.
  local status=0 options=()
  # The framing's limit in the harness is 64 bytes; longer inputs only cost time (every input
  # goes through a fresh EmbeddedChannel, up to one write per byte).
  [ "$target" = FuzzFrameDecoder ] && options+=(-max_len=512)
  (cd "$results" && "$bin/$target" "$corpus" -max_total_time="$seconds" -timeout=10 \
    -print_final_stats=1 -artifact_prefix="$results/" "${options[@]}" >"$results/log" 2>&1) || status=$?
  echo "$status" >"$results/status"
}

running=0
for target in "${targets[@]}"; do
  [ -x "$bin/$target" ] || { echo "error: no fuzz target $target in $bin" >&2; exit 2; }
  if [ "$running" -ge "$jobs" ]; then
    wait -n || true
    running=$((running - 1))
  fi
  run_one "$target" &
  running=$((running + 1))
done
wait

failed=0
for target in "${targets[@]}"; do
  results="$build/results/$target"
  log="$results/log"
  status="$(cat "$results/status")"
  # The last status line ("#123 … cov: 456 ft: 789 corp: 12/3kb …") and the final stats.
  # A failing run prints its stats twice (at the failure and at exit): the first are the run's.
  executions="$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | sed -n 1p)"
  [ -n "$executions" ] || executions="$(grep -oE '^#[0-9]+' "$log" | tail -1 | tr -d '#')"
  per_second="$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | sed -n 1p)"
  new_units="$(sed -n 's/^stat::new_units_added: *//p' "$log" | sed -n 1p)"
  cov_start="$(grep -m1 -oE 'INITED cov: [0-9]+' "$log" | grep -oE '[0-9]+$' || true)"
  cov_end="$(grep -oE ' cov: [0-9]+' "$log" | tail -1 | grep -oE '[0-9]+$' || true)"
  corpus_size="$(find "$build/corpus/$target" -type f | wc -l)"
  artifacts=("$results"/crash-* "$results"/leak-* "$results"/timeout-* "$results"/oom-* "$results"/slow-unit-*)
  found=0
  for artifact in "${artifacts[@]}"; do [ -e "$artifact" ] && found=$((found + 1)); done
  printf '%-18s %10s execs %8s execs/s  cov %s→%s  new inputs %s (corpus %s)  crashes %s\n' \
    "$target" "${executions:-?}" "${per_second:-?}" "${cov_start:-?}" "${cov_end:-?}" "${new_units:-?}" \
    "$corpus_size" "$found"
  if [ "$status" -ne 0 ] || [ "$found" -gt 0 ]; then
    failed=1
    echo "  FAILED (exit status $status); log: $log"
    for artifact in "${artifacts[@]}"; do
      [ -e "$artifact" ] || continue
      echo "  input: $artifact ($(wc -c <"$artifact") bytes), first bytes:"
      head -c 96 "$artifact" | od -An -c -w32 | sed 's/^/   /'
      echo "  reproduce: SWIFT_BACKTRACE=enable=no $bin/$target $artifact"
    done
    # What failed and where: the sanitizer's or Swift's message, then the first frames.
    # (grep -m, not head: under pipefail a grep cut short by head would end the script.)
    grep -m 5 -E 'Fatal error|ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)|SUMMARY' "$log" | sed 's/^/  /' || true
    grep -m 15 -E '^ +#[0-9]+ 0x' "$log" | sed 's/^/  /' || true
  fi
done
exit "$failed"
