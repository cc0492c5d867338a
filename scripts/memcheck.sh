#!/usr/bin/env bash
# Runs generated code under valgrind's memcheck: zero errors expected.
#
#   scripts/memcheck.sh          # the examples, and the quick tests (2 min)
#   scripts/memcheck.sh --all    # also the differential tests (18 min)
#
# Exit status: 0, no errors; 1, memcheck reported errors; 3, none, but a
# test failed (a failed test stops there: the rest of it did not run).
#
# 1. Every example in a release build, at its AVX2 kernel, then at its
#    scalar one (PIPELINE_ISA=scalar).
# 2. The test binaries that run generated code: input_layout and
#    runtime_errors, and with --all the differential tests (pipelines,
#    schedules, vector_ops, examples: every pipeline and schedule they
#    compile, at their degenerate, odd and cropped sizes). They run each
#    compiled pipeline at every level of the processor, which under valgrind
#    (no AVX-512) is scalar, SSE4.1 and AVX2. First in release builds, where
#    intermediate buffers are left uninitialized: a read of a point that
#    loop synthesis failed to compute first is a use of uninitialized
#    memory. Then, with --all, at opt-level 0 as `cargo test` builds them
#    (intermediates filled with 0xA5: only reads outside an allocation
#    show), where every test runs to its end.
#
# The scratch allocator tells memcheck of the blocks it keeps for reuse
# (src/rt/memcheck.rs): a reused block is undefined again, a kept block and
# the slack of a reused one not addressable.
#
# Last run of --all: 2026-11-26, AMD EPYC Zen 4 (2 cores, shared), valgrind
# 3.19 emulating AVX2 at most, at dab1faf (a clean worktree): no memcheck
# errors, exit 0, every test passed, 19 min 57 s with builds beside it. The
# run before, at a6aba55: the same. About 26 min with a CI run beside it on the other core
# (examples 1 min; release tests 4 min 30 s; opt-level 0 tests 14 min,
# tests/schedules.rs 5 min 47 s of them; the rest building). The run
# before, at 40258df, alone: 17 min 41 s, no memcheck errors. Without
# --all, at 2a60329: no errors, 1 min 37 s.
#
set -euo pipefail
cd "$(dirname "$0")/.."
command -v valgrind >/dev/null || { echo "valgrind is not installed (apt-get install valgrind)"; exit 2; }

all=false
case "${1:-}" in
    --all) all=true ;;
    "") ;;
    *) echo "usage: $0 [--all]"; exit 2 ;;
esac

VG=(valgrind --error-exitcode=99 --leak-check=no --show-leak-kinds=none -q)
export RAYON_NUM_THREADS=2
# The tests' interpreter parses each pipeline with pipeline_core, which wants
# 64 MiB of stack and maps a 1 GiB segment (stacker) on a thread with less;
# memcheck marks such a segment a byte at a time, about 2 s for each call (a
# test of tests/pipelines.rs took 96 s instead of 6). On 128 MiB test
# threads it runs in place.
export RUST_MIN_STACK=$((128 << 20))
errors=() failed=()

# Runs a command under valgrind; exit status 99 is valgrind's: memcheck
# reported errors (whatever the test's own result), any other a failure of
# the program itself (a test that failed: it stops there, and memcheck does
# not see the rest of that test).
run() {
    local what=$1 rc=0 start=$SECONDS; shift
    echo "== $what" >&2
    "$@" || rc=$?
    echo "   $((SECONDS - start)) s, exit $rc" >&2
    case $rc in
        0) ;;
        99) errors+=("$what") ;;
        *) failed+=("$what") ;;
    esac
}

cargo build --release --examples
for ex in examples/*.rs; do
    name=$(basename "$ex" .rs)
    for isa in avx2 scalar; do
        run "example $name ($isa)" env PIPELINE_ISA=$isa "${VG[@]}" "target/release/examples/$name" >/dev/null
    done
done

# The test binaries: release (uninitialized intermediates), then with --all
# debug too (opt-level 0, as `cargo test` builds them: every test runs to
# its end, see the header).
tests=(input_layout runtime_errors)
profiles=(release)
if $all; then
    tests+=(pipelines schedules vector_ops examples)
    profiles+=(debug)
fi
for profile in "${profiles[@]}"; do
    flags=()
    [ "$profile" = release ] && flags=(--release)
    for t in "${tests[@]}"; do
        # A build that fails says why (under `set -e` a failed command
        # substitution would end the script without a word).
        built=$(cargo test "${flags[@]}" --test "$t" --no-run 2>&1) || {
            echo "$built"; echo "the test $t ($profile) does not build"; exit 2; }
        bin=$(echo "$built" | sed -n 's/.*Executable .* (\(.*\))$/\1/p' | tail -1)
        [ -n "$bin" ] || { echo "no test binary for $t"; exit 2; }
        run "test $t ($profile)" "${VG[@]}" "$bin" --test-threads=1 -q
    done
done

[ ${#failed[@]} -eq 0 ] || echo "failed (not memcheck errors): ${failed[*]}"
if [ ${#errors[@]} -ne 0 ]; then
    echo "memcheck found errors in: ${errors[*]}"
    exit 1
fi
[ ${#failed[@]} -eq 0 ] || exit 3
echo "memcheck: no errors"
