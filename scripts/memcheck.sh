#!/usr/bin/env bash
# Runs generated code under valgrind's memcheck: zero errors expected.
#
#   scripts/memcheck.sh            # the examples, and the quick tests
#   scripts/memcheck.sh --all      # also the differential tests (hours)
#
# 1. The test binaries that run generated code (debug builds, opt-level 0):
#    every read or write outside an allocation is an error. Debug builds fill
#    intermediate buffers with 0xA5 before use (rt::alloc), so reads of
#    intermediates nobody wrote do not show here; that is what part 2 is for.
# 2. The examples in release builds, where intermediate buffers are left
#    uninitialized: a read of a point that loop synthesis failed to compute
#    first is a use of uninitialized memory.
#
# Valgrind does not emulate AVX-512, so the kernels detect at most AVX2 under
# it: the tests run their scalar, SSE4.1 and AVX2 levels (every level the
# emulated processor has), and the examples run their AVX2 kernel, then
# their scalar one (PIPELINE_ISA=scalar).
set -euo pipefail
cd "$(dirname "$0")/.."
command -v valgrind >/dev/null || { echo "valgrind is not installed (apt-get install valgrind)"; exit 2; }

VG=(valgrind --error-exitcode=99 --leak-check=no --show-leak-kinds=none -q)
export RAYON_NUM_THREADS=2
failed=()

run() {
    local what=$1; shift
    echo "== $what" >&2
    if ! "$@"; then
        failed+=("$what")
    fi
}

cargo build --release --examples
for ex in examples/*.rs; do
    name=$(basename "$ex" .rs)
    for isa in avx2 scalar; do
        run "example $name ($isa)" env PIPELINE_ISA=$isa "${VG[@]}" "target/release/examples/$name" >/dev/null
    done
done

# Under valgrind the differential tests take about 50 times as long as
# without (the pipelines test alone well over an hour on 2 cores).
tests=(input_layout runtime_errors)
if [ "${1:-}" = "--all" ]; then
    tests+=(pipelines schedules vector_ops examples)
fi
for t in "${tests[@]}"; do
    bin=$(cargo test --test "$t" --no-run 2>&1 | sed -n 's/.*Executable .* (\(.*\))$/\1/p' | tail -1)
    [ -n "$bin" ] || { echo "no test binary for $t"; exit 2; }
    run "test $t" "${VG[@]}" "$bin" --test-threads=1 -q
done

if [ ${#failed[@]} -ne 0 ]; then
    echo "memcheck found errors in: ${failed[*]}"
    exit 1
fi
echo "memcheck: no errors"
