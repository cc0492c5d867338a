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
# A step that fails is reported (FAILED) and the run goes on to the next.
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
#   outputs compared there (bit for bit, but for Halide's FMA in the
#   float pipelines); `check` prints the table;
# - the same pipelines, each alone, under Nsight Compute (ncu): the time and
#   DRAM traffic of every kernel, ours and Halide's, for the kernel-only
#   comparison and the bandwidth the kernels reach; then, for the kernels
#   that trail Halide's, the counters that say why (instructions executed,
#   registers, occupancy, shared-memory bank conflicts, global loads).
#
# nvcc comes from CUDA_HOME, else from NVIDIA's PyPI wheels in
# target/cuda-venv (as .ci/run installs them). The GPU code is built for
# sm_80 and sm_90 (A100, H100, H200), with PTX for later GPUs.
set -euo pipefail
cd "$(dirname "$0")/.."
KIT=.gpu
ARCHS=80,90
# The comparison's pipelines of floats: Halide's CUDA backend contracts
# multiply-adds into FMA even under strict_float (its PTX has fma.rn), ours
# never does, so theirs may differ from ours in the last bits.
FLOATS="harris bilateral_grid"
# Calls a profiled pipeline makes: 3 warm-ups, then the timed ones.
PROFILED_RUNS=5

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
        timeout 300 "$KIT/kit/$what" "$KIT/kit/$what.bin" > "$out/$what.txt" || echo "FAILED: $what programs"
        echo "$(grep -c '^rc 0$' "$out/$what.txt") launches returned 0, $(grep -c '^rc ' "$out/$what.txt") in all"
    done
    echo "== cuda_build"
    timeout 120 "$KIT/cuda_build" 2>&1 | tee "$out/cuda_build.txt" || echo "FAILED: cuda_build"
    echo "== cuda_blur"
    local here=$PWD
    (cd "$(mktemp -d)" && timeout 120 "$here/$KIT/cuda_blur") 2>&1 | tee "$out/cuda_blur.txt" || echo "FAILED: cuda_blur"
    echo "== ours and Halide's, 3 rounds"
    local dumps
    dumps=$(mktemp -d)
    mkdir -p "$dumps/ours" "$dumps/halide"
    : > "$out/bench.txt"
    for round in 1 2 3; do
        local ours=() halide=()
        [ "$round" = 1 ] && ours=("$dumps/ours") && halide=("$dumps/halide")
        timeout 120 "$KIT/cuda_compare" "${ours[@]}" 2>&1 | sed "s/^RESULT/ours $round/" | tee -a "$out/bench.txt" \
            || echo "FAILED: cuda_compare" | tee -a "$out/bench.txt"
        timeout 120 "$KIT/halide_cuda" "${halide[@]}" 2>&1 | sed "s/^RESULT/halide $round/" | tee -a "$out/bench.txt" \
            || echo "FAILED: halide_cuda" | tee -a "$out/bench.txt"
    done
    for f in "$dumps"/ours/*.bin; do
        local name
        name=$(basename "$f" .bin)
        if cmp -s "$f" "$dumps/halide/$name.bin"; then
            echo "outputs $name equal" | tee -a "$out/bench.txt"
        elif [[ " $FLOATS " == *" $name "* ]] && near "$f" "$dumps/halide/$name.bin" > "$dumps/near"; then
            echo "outputs $name close, $(cat "$dumps/near") (Halide's PTX contracts into FMA)" | tee -a "$out/bench.txt"
        else
            echo "outputs $name DIFFERENT $(cat "$dumps/near" 2>/dev/null)" | tee -a "$out/bench.txt"
        fi
    done
    profile "$out"
    diagnose "$out"
}

# Whether two dumps of floats agree but for rounding: the largest
# difference within 1e-5 of the largest magnitude (said on stdout).
near() {
    python3 - "$1" "$2" <<'PY'
import sys
import numpy as np
a, b = (np.fromfile(p, np.float32).astype(np.float64) for p in sys.argv[1:3])
if a.shape != b.shape:
    print("of different sizes")
    sys.exit(1)
d = np.max(np.abs(a - b)) / max(np.max(np.abs(a)), 1e-30)
print(f"largest difference {d:.1e} of the largest value")
sys.exit(0 if d <= 1e-5 else 1)
PY
}

# Nsight Compute, where this machine has it.
ncu_path() {
    command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1 || true
}

# Each pipeline of NAMES alone under Nsight Compute (NCU, with the
# arguments after NAMES), ours and Halide's, each making RUNS timed calls:
# appended to FILE under a `== side name` line.
ncu_each() {
    local ncu=$1 file=$2 runs=$3 names=$4 name side prog
    shift 4
    : > "$file"
    for name in $names; do
        for side in ours halide; do
            prog=$KIT/cuda_compare
            [ "$side" = halide ] && prog=$KIT/halide_cuda
            echo "== $side $name" >> "$file"
            CUDA_COMPARE_ONLY=$name CUDA_COMPARE_RUNS=$runs timeout 60 "$ncu" --csv --print-units base "$@" \
                "$prog" >> "$file" 2>&1 || echo "ncu failed: $side $name" | tee -a "$file"
        done
    done
}

# Each pipeline of the comparison alone, ours and Halide's: every kernel's
# time and DRAM traffic at the GPU's own clocks, caches left as the
# previous kernel left them (as in a real run).
profile() {
    local out=$1 ncu
    ncu=$(ncu_path)
    if [ -z "$ncu" ]; then
        echo "no ncu here: kernel times not measured" | tee "$out/ncu.txt"
        return
    fi
    echo "== kernels alone ($ncu)"
    ncu_each "$ncu" "$out/ncu.txt" "$PROFILED_RUNS" \
        "blur_root blur_shared blur_wide blur_vec blur_slide copy copy_vec down2 gauss5x5 harris grey bilateral_grid" \
        --clock-control none --cache-control none \
        --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum
    echo "$(grep -c gpu__time_duration "$out/ncu.txt") kernel launches profiled"
}

# Why the kernels that trail Halide's do: for each, ours and Halide's, the
# instructions its warps execute, registers, achieved occupancy, shared
# memory bank conflicts and global load requests and sectors (one call).
DIAGNOSED="blur_wide blur_vec blur_slide copy_vec harris"
DIAGNOSTICS=smsp__inst_executed.sum,launch__registers_per_thread,sm__warps_active.avg.pct_of_peak_sustained_active,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,gpu__time_duration.sum
diagnose() {
    local out=$1 ncu
    ncu=$(ncu_path)
    [ -z "$ncu" ] && return
    echo "== kernels' counters"
    ncu_each "$ncu" "$out/counters.txt" 1 "$DIAGNOSED" --metrics "$DIAGNOSTICS"
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
    [ -f "$dir/ncu.txt" ] && python3 - "$dir/ncu.txt" "$((PROFILED_RUNS + 3))" <<'PY'
import csv, sys
calls = int(sys.argv[2])
blocks, key = {}, None
for line in open(sys.argv[1]):
    if line.startswith("== "):
        key = tuple(line.split()[1:3])
        blocks[key] = {}
    elif line.startswith('"ID"'):
        header = next(csv.reader([line]))
        at = {c: header.index(c) for c in ("ID", "Metric Name", "Metric Value")}
    elif line.startswith('"') and key:
        row = next(csv.reader([line]))
        value = row[at["Metric Value"]].replace(",", "")
        blocks[key].setdefault(row[at["ID"]], {})[row[at["Metric Name"]]] = float(value)
names = sorted({k[1] for k in blocks}, key=[k[1] for k in blocks].index)
print("kernels alone (Nsight Compute; per call: all its kernels, summed)")
print(f"{'pipeline':<15} {'kernels':>7} {'ours us':>9} {'Halide us':>10} {'ours/Halide':>12} {'ours GB/s':>10} {'Halide GB/s':>12}")
for name in names:
    per = {}
    for side in ("ours", "halide"):
        launches = blocks.get((side, name), {}).values()
        if not launches:
            continue
        ns = sum(l.get("gpu__time_duration.sum", 0) for l in launches) / calls
        by = sum(l.get("dram__bytes_read.sum", 0) + l.get("dram__bytes_write.sum", 0) for l in launches) / calls
        per[side] = (ns, by, len(launches) / calls)
    if "ours" in per and "halide" in per:
        (o, ob, ok), (h, hb, hk) = per["ours"], per["halide"]
        print(f"{name:<15} {ok:>3.0f}/{hk:<3.0f} {o/1e3:>9.1f} {h/1e3:>10.1f} {o/h:>12.2f} {ob/o:>10.0f} {hb/h:>12.0f}")
    else:
        print(f"{name:<15} missing: {sorted(per)}")
PY
    [ -f "$dir/counters.txt" ] && python3 - "$dir/counters.txt" <<'PY'
import csv, sys
# Per side, pipeline and kernel: each counter averaged over its launches.
rows, key = {}, None
for line in open(sys.argv[1]):
    if line.startswith("== "):
        key = tuple(line.split()[1:3])
    elif line.startswith('"ID"'):
        header = next(csv.reader([line]))
    elif line.startswith('"') and key:
        r = dict(zip(header, next(csv.reader([line]))))
        k = (key[1], key[0], r["Kernel Name"].split("(")[0][:28])
        v = rows.setdefault(k, {}).setdefault(r["Metric Name"], [])
        v.append(float(r["Metric Value"].replace(",", "")))
short = {"smsp__inst_executed.sum": "warp insts", "launch__registers_per_thread": "regs",
         "sm__warps_active.avg.pct_of_peak_sustained_active": "occupancy %",
         "l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum": "bank confl",
         "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum": "ld requests",
         "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum": "ld sectors",
         "gpu__time_duration.sum": "ns"}
print("kernels' counters (Nsight Compute, means over launches)")
print(f"{'pipeline':<12} {'side':<6} {'kernel':<28}" + "".join(f"{n:>13}" for n in short.values()))
for (name, side, kernel), m in rows.items():
    cells = "".join(f"{sum(m[c]) / len(m[c]):>13.0f}" if c in m else f"{'-':>13}" for c in short)
    print(f"{name:<12} {side:<6} {kernel:<28}{cells}")
PY
    ! grep -q "DIFFERENT\|FAILED" "$dir/bench.txt" && [ "$same" = 3 ]
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
