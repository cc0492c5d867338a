#!/usr/bin/env bash
# The CUDA checks that need a GPU, prepared here and run on a machine with
# one (which may have no Rust toolchain and no network), in three steps:
#
#   scripts/gpu_check.sh prepare      # here: builds everything into .gpu/
#   scripts/gpu_check.sh run [DIR]    # on the GPU machine, from the repository
#                                     # root with .gpu/ beside it: results into
#                                     # DIR (default $OUT, else .gpu/results)
#   scripts/gpu_check.sh check DIR    # here: checks those results
#
# What runs on the GPU:
# - every pipeline of the repository under its default GPU schedule, and the
#   hand-written `for cuda` blocks of pipeline-core/tests/cuda, at 1x1, 7x5,
#   37x11 and 67x45, with copies and on device memory: the programs and
#   requests of pipeline-core/tests/cuda_programs.rs (PIPELINE_CUDA_KIT),
#   compiled here by nvcc; `check` compares their outputs with the
#   interpreter's in that same test (PIPELINE_CUDA_RESULTS);
# - the crate of pipeline-build/tests/cuda_build.rs, built with its two-line
#   build.rs: NAME::cuda and a chain of NAME::cuda_device on DeviceBuffers
#   against the CPU entry (every line must say "ran: same");
# - examples/cuda_blur: the blur with its tile staged in shared memory, and
#   its kernels alone on device buffers, with the bandwidth they reach;
# - the comparison with Halide 21's CUDA target: benches/cuda (ours, on
#   device buffers) and benches/cuda/halide_aot.py (Halide's same algorithms
#   and schedules, compiled ahead of time here), alternating in 3 rounds,
#   outputs compared bit for bit there; `check` prints the table.
#
# nvcc comes from CUDA_HOME, else from NVIDIA's PyPI wheels in
# target/cuda-venv (as .ci/run installs them). The GPU code is built for
# sm_80 and sm_90 (A100, H100, H200), with PTX for later GPUs.
set -euo pipefail
cd "$(dirname "$0")/.."
KIT=.gpu
ARCHS=80,90

nvcc_home() {
    if [ -n "${CUDA_HOME:-}" ] && [ -x "$CUDA_HOME/bin/nvcc" ]; then
        return
    fi
    local venv=target/cuda-venv
    if ! ls "$venv"/lib/python3*/site-packages/nvidia/cu13/bin/nvcc >/dev/null 2>&1; then
        python3 -m venv "$venv"
        "$venv/bin/pip" install -q nvidia-cuda-nvcc nvidia-cuda-runtime nvidia-cuda-crt
    fi
    CUDA_HOME=$(echo "$PWD/$venv"/lib/python3*/site-packages/nvidia/cu13)
    export CUDA_HOME
}

prepare() {
    nvcc_home
    echo "nvcc: $CUDA_HOME/bin/nvcc"
    rm -rf "$KIT"
    mkdir -p "$KIT/kit"
    # The programs and their requests, as the emulation test runs them.
    PIPELINE_CUDA_KIT="$PWD/$KIT/kit" cargo test -q -p pipeline-core --test cuda_programs
    local gencode=()
    for a in ${ARCHS//,/ }; do
        gencode+=(-gencode "arch=compute_$a,code=sm_$a")
    done
    gencode+=(-gencode "arch=compute_${ARCHS##*,},code=compute_${ARCHS##*,}")
    for what in default hand; do
        echo "nvcc: $what.cu"
        "$CUDA_HOME/bin/nvcc" -std=c++17 -O2 -fmad=false -prec-div=true -prec-sqrt=true -w \
            "${gencode[@]}" -o "$KIT/kit/$what" "$KIT/kit/$what.cu"
        rm "$KIT/kit/$what.cu"
    done
    # The two-line build script's crate, and the example.
    PIPELINE_CUDA_ARCHS=$ARCHS cargo test -q -p pipeline-build --test cuda_build
    cp target/tmp/cuda-build-target/debug/gpu "$KIT/cuda_build"
    (cd examples/cuda_blur && PIPELINE_CUDA_ARCHS=$ARCHS cargo build -q --release)
    cp examples/cuda_blur/target/release/cuda_blur "$KIT/cuda_blur"
    # The comparison with Halide's CUDA target.
    (cd benches/cuda && PIPELINE_CUDA_ARCHS=$ARCHS cargo build -q --release)
    cp benches/cuda/target/release/cuda_compare "$KIT/cuda_compare"
    python3 benches/cuda/halide_aot.py "$PWD/target/cuda-compare"
    cp target/cuda-compare/halide_cuda "$KIT/halide_cuda"
    strip "$KIT/cuda_build" "$KIT/cuda_blur" "$KIT/cuda_compare" "$KIT/halide_cuda" \
        "$KIT/kit/default" "$KIT/kit/hand" 2>/dev/null || true
    du -sh "$KIT"
    echo "prepared: on the GPU machine, carry $KIT and run: scripts/gpu_check.sh run"
}

run() {
    local out=${1:-${OUT:-$KIT/results}}
    mkdir -p "$out"
    nvidia-smi -L > "$out/device.txt" 2>&1 || true
    for what in default hand; do
        echo "== $what programs"
        "$KIT/kit/$what" "$KIT/kit/$what.bin" > "$out/$what.txt"
        echo "$(grep -c '^rc 0$' "$out/$what.txt") launches returned 0, $(grep -c '^rc ' "$out/$what.txt") in all"
    done
    echo "== cuda_build"
    "$KIT/cuda_build" | tee "$out/cuda_build.txt"
    echo "== cuda_blur"
    local here=$PWD
    (cd "$(mktemp -d)" && "$here/$KIT/cuda_blur") | tee "$out/cuda_blur.txt"
    echo "== ours and Halide's, 3 rounds"
    local dumps
    dumps=$(mktemp -d)
    mkdir -p "$dumps/ours" "$dumps/halide"
    : > "$out/bench.txt"
    for round in 1 2 3; do
        local ours=() halide=()
        [ "$round" = 1 ] && ours=("$dumps/ours") && halide=("$dumps/halide")
        "$KIT/cuda_compare" "${ours[@]}" | sed "s/^RESULT/ours $round/" | tee -a "$out/bench.txt"
        "$KIT/halide_cuda" "${halide[@]}" | sed "s/^RESULT/halide $round/" | tee -a "$out/bench.txt"
    done
    for f in "$dumps"/ours/*.bin; do
        local name
        name=$(basename "$f" .bin)
        if cmp -s "$f" "$dumps/halide/$name.bin"; then
            echo "outputs $name equal" | tee -a "$out/bench.txt"
        else
            echo "outputs $name DIFFERENT" | tee -a "$out/bench.txt"
        fi
    done
}

check() {
    local dir=${1:?the folder of the results from the GPU machine}
    dir=$(cd "$dir" && pwd)
    cat "$dir/device.txt"
    PIPELINE_CUDA_RESULTS="$dir" cargo test -q -p pipeline-core --test cuda_programs -- --nocapture
    local same
    same=$(grep -c '^ran: same$' "$dir/cuda_build.txt" || true)
    echo "cuda_build: $same of 3 entries ran and gave the CPU's outputs"
    cat "$dir/cuda_blur.txt"
    python3 - "$dir/bench.txt" <<'PY'
import statistics, sys
times = {}
for line in open(sys.argv[1]):
    f = line.split()
    if f[0] in ("ours", "halide") and len(f) >= 6:
        times.setdefault(f[2], {}).setdefault(f[0], {})[f[1]] = float(f[4])
    elif f[0] == "outputs":
        print(line.strip())
print(f"{'pipeline':<12} {'ours ms':>9} {'Halide ms':>10} {'ours/Halide':>12}  (medians over rounds)")
for name, sides in times.items():
    o, h = sides.get("ours", {}), sides.get("halide", {})
    ratios = [o[r] / h[r] for r in o if r in h]
    if ratios:
        print(f"{name:<12} {statistics.median(o.values()):>9.3f} {statistics.median(h.values()):>10.3f} {statistics.median(ratios):>12.2f}")
PY
    ! grep -q DIFFERENT "$dir/bench.txt" && [ "$same" = 3 ]
}

case "${1:-}" in
prepare) prepare ;;
run) run "${2:-}" ;;
check) check "${2:-}" ;;
*)
    sed -n '2,9p' "$0"
    exit 2
    ;;
esac
