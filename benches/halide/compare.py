#!/usr/bin/env python3
"""Side-by-side timing of our generated code and Halide 21 on the same machine.

Run from anywhere in the repository:

    python3 benches/halide/compare.py [--runs N] [--rounds R] [--only NAME ...] [--no-libblur] [--no-auto] [--no-tuned]

NAME is one of blur3x3_u16, gauss5x5_u8, down2_u16, grey_rgb_u8, harris_f32, unsharp_f32,
bilateral_f32, pyramid_f32 (default: all).

What it does, in one run:

1. Creates a virtual environment under target/halide-venv (reused when present)
   with `halide` 21 and `numpy` from PyPI, and re-runs itself inside it.
2. Runs `cargo bench --bench halide_compare` (benches/halide_compare.rs, release)
   for our times and a parallel-copy measurement of the memory bandwidth (the
   faster of memcpy and a copy with streaming stores, which on some machines
   is much faster because it does not read the destination first); the
   bench also writes its outputs to target/halide-compare/.
3. Defines the same eight algorithms with the same schedules in Halide's Python
   API, JIT-compiles each once and times `realize` into preallocated buffers
   (warm-up runs for 0.2 s, then the median of N), on inputs built from the same
   integer hash as the bench's.
4. Compares the outputs element by element: integer pipelines must agree bit for
   bit; float pipelines are compared with a Halide build that has `strict_float`
   (no FMA contraction, no float rewrites), which must agree exactly too, and
   with the timed (default) build, whose differences are reported. Halide's
   `exp` is its own polynomial, not the C library's `expf` that Rust's `f32::exp`
   calls, and differs from it in the last bit for one of the unsharp mask's taps
   (exp(-1/4.5)); so the unsharp mask is also checked against a strict_float
   build whose seven Gaussian taps come from libm's expf.
   The script exits with status 2 when a check finds a difference.
5. Times both sides in R rounds (default 5), alternating: in each round our
   bench runs every pipeline (median of N runs each), then Halide runs each
   (median of N). A shared machine's speed drifts over seconds, so each
   round's ratio compares runs a few seconds apart (the float pipelines'
   strict_float Halide builds are timed too, right after the default ones,
   for a second table: the same arithmetic on both sides); the table reports the
   median over rounds of each side's time and of the per-round ratio, with the
   range of the per-round ratios to show the noise, and each side's fastest run
   over all rounds (noise only ever slows a run down, so on a busy machine the
   ratio of the fastest runs is the steadier figure). For the blur and the
   downsample it also gives the bound that the measured memory bandwidth sets
   for the bytes they must read and write. Our blur is also timed on the
   first 256 rows of its input (6.6 MB, which the caches hold), with 10 times
   as many runs: scaled to the full image, that is the time of its arithmetic
   with little waiting for memory, to set against the bound. (Halide's is not:
   on 32 rows its JIT-compiled blur takes 0.6-0.8 ms per call, ours about 0.1,
   so a fixed cost that is not arithmetic would swamp the figure.)
6. Runs our bench at each instruction-set level the processor has
   (PIPELINE_ISA=scalar, sse4.1, avx2, avx512, avx512vbmi; our builds set
   PIPELINE_KERNELS so that every level has a kernel of its own), the levels in turn in each of
   R rounds, and prints the median time per level and the median per-round
   speed-up over scalar.
7. Without schedules (skip with --no-auto): builds our bench again with
   PIPELINE_SCHEDULE=auto, which replaces every schedule block by the
   auto-scheduler's choice, and schedules the same Halide algorithms with
   Halide's Mullapudi2016, Adams2019 and Li2018 auto-schedulers (the real
   sizes as estimates, parallelism = threads); our output must equal our
   hand-scheduled one bit for bit, Halide's are compared with it; all are
   timed in the same rounds, and a second table gives ours auto against our
   hand schedule and against the best of Halide's three.
7b. Tuned (skip with --no-tuned): builds our bench again with
   PIPELINE_SCHEDULE=tuned and PIPELINE_SCHEDULE_CACHE=benches/halide/tuned-schedules.toml
   (what `cargo pipeline tune` found for these pipelines; blocks read as
   facts), checks its outputs against the hand-scheduled ones, times it in
   the same rounds (right before or after ours auto, the order alternating)
   and prints it against ours auto and Halide's hand schedules.
8. Runs benches/libblur (skip with --no-libblur), and again with ours
   built with PIPELINE_SCHEDULE=auto unless --no-auto: our blurs beside libblur's,
   the crate a Rust user would pick instead, on a 3840x2160 image, alternating
   in rounds inside that bench, with outputs compared where both compute the
   same arithmetic; prints its table.

For the pipelines that only stream (blur, Gaussian, downsample, grey), the
table also gives the bound that the measured copy bandwidth sets for the bytes
they must read and write, and the share of that bandwidth ours moves.

Both sides use the same number of threads: every core this process may run on
(RAYON_NUM_THREADS and HL_NUM_THREADS are set to it).
"""

import argparse
import os
import re
import subprocess
import sys
import time
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
VENV = ROOT / "target" / "halide-venv"
DUMP = ROOT / "target" / "halide-compare"
DUMP_AUTO = ROOT / "target" / "halide-compare-auto"
DUMP_TUNED = ROOT / "target" / "halide-compare-tuned"
TUNED_CACHE = ROOT / "benches" / "halide" / "tuned-schedules.toml"
# Halide 21's auto-schedulers (plugins shipped in the wheel), by the name
# AutoschedulerParams takes and the library that holds each.
AUTOSCHEDULERS = {
    "Mullapudi2016": "libautoschedule_mullapudi2016.so",
    "Adams2019": "libautoschedule_adams2019.so",
    "Li2018": "libautoschedule_li2018.so",
}
REQUIREMENTS = ["halide>=21,<22", "numpy"]
# PIPELINE_KERNELS for our builds: a kernel at every instruction-set level.
ALL_KERNELS = "sse4.1,avx2,avx512,avx512vbmi"
# Suffix of the bench's results for the blur with its data in cache.
CACHED = " in cache"
# Written into the venv once the requirements installed, so later runs skip pip.
STAMP = VENV / "halide-compare-requirements.txt"

# The bytes a pipeline must read and write per output element, for the bound
# that memory bandwidth sets: each input read once, the output written once.
BYTES_PER_OUTPUT = {
    "blur3x3_u16": 2 + 2,
    "gauss5x5_u8": 1 + 1,
    "down2_u16": 4 * 2 + 2,  # four u16 inputs per u16 output
    "grey_rgb_u8": 3 + 1,  # interleaved RGB in, grey out
}

NAMES = [
    "blur3x3_u16",
    "gauss5x5_u8",
    "down2_u16",
    "grey_rgb_u8",
    "harris_f32",
    "unsharp_f32",
    "bilateral_f32",
    "pyramid_f32",
]
# The unsharp mask's parameters (also in benches/halide_compare.rs).
SIGMA = 1.5
AMOUNT = 1.5


def fail(message):
    print(f"compare.py: error: {message}", file=sys.stderr)
    sys.exit(1)


# ---------------------------------------------------------------------------
# The virtual environment


def venv_python():
    return VENV / "bin" / "python"


def in_venv():
    return Path(sys.prefix).resolve() == VENV.resolve()


def ensure_venv_and_reexec():
    """Creates the venv if needed, installs the requirements, and replaces this
    process with the same script run by the venv's Python."""
    wanted = "\n".join(REQUIREMENTS) + "\n"
    if not venv_python().exists():
        print(f"creating a virtual environment in {VENV}", file=sys.stderr)
        try:
            venv.EnvBuilder(with_pip=True, clear=True).create(VENV)
        except Exception as e:  # ensurepip missing (Debian's python3-venv), disk full...
            fail(
                f"could not create the virtual environment {VENV}: {e}\n"
                "  (on Debian/Ubuntu: apt-get install python3-venv)"
            )
    if not STAMP.exists() or STAMP.read_text() != wanted:
        print(f"installing {' '.join(REQUIREMENTS)} into {VENV}", file=sys.stderr)
        cmd = [str(venv_python()), "-m", "pip", "install", "--disable-pip-version-check", *REQUIREMENTS]
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if proc.returncode != 0:
            fail(
                f"pip could not install {' '.join(REQUIREMENTS)} (exit {proc.returncode}).\n"
                f"  command: {' '.join(cmd)}\n"
                "  Halide publishes wheels for CPython 3.9+ on x86_64/aarch64 Linux, macOS and\n"
                "  Windows; check the network, the Python version, or delete the venv and retry.\n"
                "---- pip output (last 40 lines) ----\n"
                + "\n".join(proc.stdout.splitlines()[-40:])
            )
        STAMP.write_text(wanted)
    # The total time reported at the end counts from here, the venv's set-up included.
    os.environ["HALIDE_COMPARE_STARTED"] = str(time.time())
    os.execv(str(venv_python()), [str(venv_python()), str(Path(__file__).resolve()), *sys.argv[1:]])


# ---------------------------------------------------------------------------
# Inputs: the bench's hash, in numpy's wrapping u32 arithmetic


def hash_u32(np, shape):
    """hash(x, y, c) of benches/halide_compare.rs for every coordinate of a
    numpy array of shape (h, w) or (c, h, w) (row-major, x fastest)."""
    if len(shape) == 2:
        shape = (1,) + tuple(shape)
    c_n, h_n, w_n = shape
    u32 = np.uint32
    x = np.arange(w_n, dtype=u32)[None, None, :]
    y = np.arange(h_n, dtype=u32)[None, :, None]
    c = np.arange(c_n, dtype=u32)[:, None, None]
    h = (x * u32(0x9E3779B1)) ^ (y * u32(0x85EBCA77)) ^ (c * u32(0xC2B2AE3D))
    h ^= h >> u32(15)
    h *= u32(0x2C1B3C6D)
    h ^= h >> u32(12)
    return h


def make_input(np, name, shape):
    h = hash_u32(np, shape)
    if name in ("blur3x3_u16", "down2_u16"):
        return (h[0] >> np.uint32(16)).astype(np.uint16)
    if name == "gauss5x5_u8":
        return (h[0] >> np.uint32(24)).astype(np.uint8)
    if name == "grey_rgb_u8":
        # Interleaved RGB, (h, w, 3) in memory, seen as (c, h, w): hl.Buffer
        # keeps numpy's strides, so Halide gets x of stride 3, c of stride 1.
        planar = (h >> np.uint32(24)).astype(np.uint8)
        return np.ascontiguousarray(planar.transpose(1, 2, 0)).transpose(2, 0, 1)
    # ramp_and_noise of the bench: an integer below 2^24 over 2^24, exact in f32.
    if len(shape) == 2:
        return make_input(np, name, (1,) + tuple(shape))[0]
    c_n, h_n, w_n = shape
    x = np.arange(w_n, dtype=np.uint32)[None, None, :]
    y = np.arange(h_n, dtype=np.uint32)[None, :, None]
    c = np.arange(c_n, dtype=np.uint32)[:, None, None]
    ramp = ((x + 2 * y + 97 * c) % np.uint32(4096)) * np.uint32(3072)
    noise = (h >> np.uint32(22)) * np.uint32(1024)
    return ((ramp + noise).astype(np.float32) / np.float32(16777216.0)).astype(np.float32)


# ---------------------------------------------------------------------------
# The Halide pipelines: the algorithms and schedules of benches/halide_compare.rs.
# Float sums are written as left folds starting at the first term, as the DSL's
# `sum` is; float constants go through hl.f32 (the DSL, too, rounds the decimal
# literal to f64 and then to f32).


def halide_blur3x3(hl, libm_exp=False, manual=True):
    x, y, yo, yi = hl.Var("x"), hl.Var("y"), hl.Var("yo"), hl.Var("yi")
    inp = hl.ImageParam(hl.UInt(16), 2, "input")
    clamped = hl.BoundaryConditions.repeat_edge(inp)
    u32 = lambda e: hl.cast(hl.UInt(32), e)
    blur_x, out = hl.Func("blur_x"), hl.Func("out")
    blur_x[x, y] = (u32(clamped[x - 1, y]) + u32(clamped[x, y]) + u32(clamped[x + 1, y])) / 3
    out[x, y] = hl.cast(hl.UInt(16), (blur_x[x, y - 1] + blur_x[x, y] + blur_x[x, y + 1]) / 3)

    if manual:
        out.split(y, yo, yi, 32).parallel(yo).vectorize(x, 16)
        blur_x.store_at(out, yo).compute_at(out, yi).vectorize(x, 16)
    return out, [inp], []


def halide_down2(hl, libm_exp=False, manual=True):
    x, y, yo, yi = hl.Var("x"), hl.Var("y"), hl.Var("yo"), hl.Var("yi")
    inp = hl.ImageParam(hl.UInt(16), 2, "input")
    u32 = lambda e: hl.cast(hl.UInt(32), e)
    out = hl.Func("out")
    total = u32(inp[2 * x, 2 * y]) + u32(inp[2 * x + 1, 2 * y]) + u32(inp[2 * x, 2 * y + 1])
    out[x, y] = hl.cast(hl.UInt(16), (total + u32(inp[2 * x + 1, 2 * y + 1]) + 2) >> 2)

    if manual:
        out.split(y, yo, yi, 16).parallel(yo).vectorize(x, 16)
    return out, [inp], []


def halide_grey_rgb(hl, libm_exp=False, manual=True):
    x, y, yo, yi = hl.Var("x"), hl.Var("y"), hl.Var("yo"), hl.Var("yi")
    inp = hl.ImageParam(hl.UInt(8), 3, "input")
    inp.dim(0).set_stride(3)
    inp.dim(2).set_stride(1)
    u16 = lambda e: hl.cast(hl.UInt(16), e)
    out = hl.Func("out")
    weighted = u16(inp[x, y, 0]) * 77 + u16(inp[x, y, 1]) * 150 + u16(inp[x, y, 2]) * 29
    out[x, y] = hl.cast(hl.UInt(8), weighted >> 8)

    if manual:
        out.split(y, yo, yi, 16).parallel(yo).vectorize(x, 32)
    return out, [inp], []


def halide_gauss5x5(hl, libm_exp=False, manual=True):
    x, y, yo, yi = hl.Var("x"), hl.Var("y"), hl.Var("yo"), hl.Var("yi")
    inp = hl.ImageParam(hl.UInt(8), 2, "input")
    clamped = hl.BoundaryConditions.repeat_edge(inp)
    u16 = lambda e: hl.cast(hl.UInt(16), e)
    gauss_x, out = hl.Func("gauss_x"), hl.Func("out")
    gauss_x[x, y] = (
        u16(clamped[x - 2, y])
        + 4 * u16(clamped[x - 1, y])
        + 6 * u16(clamped[x, y])
        + 4 * u16(clamped[x + 1, y])
        + u16(clamped[x + 2, y])
    )
    out[x, y] = hl.cast(
        hl.UInt(8),
        (
            gauss_x[x, y - 2]
            + 4 * gauss_x[x, y - 1]
            + 6 * gauss_x[x, y]
            + 4 * gauss_x[x, y + 1]
            + gauss_x[x, y + 2]
            + 128
        )
        >> 8,
    )

    if manual:
        out.split(y, yo, yi, 32).parallel(yo).vectorize(x, 32)
        gauss_x.store_at(out, yo).compute_at(out, yi).vectorize(x, 32)
    return out, [inp], []


def halide_harris(hl, libm_exp=False, manual=True):
    x, y, yo, yi = hl.Var("x"), hl.Var("y"), hl.Var("yo"), hl.Var("yi")
    f = hl.f32
    inp = hl.ImageParam(hl.Float(32), 3, "input")
    clamped = hl.BoundaryConditions.repeat_edge(inp)
    gray, ix, iy = hl.Func("gray"), hl.Func("ix"), hl.Func("iy")
    ixx, iyy, ixy = hl.Func("ixx"), hl.Func("iyy"), hl.Func("ixy")
    sxx, syy, sxy = hl.Func("sxx"), hl.Func("syy"), hl.Func("sxy")
    out = hl.Func("out")
    gray[x, y] = f(0.299) * clamped[x, y, 0] + f(0.587) * clamped[x, y, 1] + f(0.114) * clamped[x, y, 2]
    ix[x, y] = (
        (gray[x + 1, y - 1] - gray[x - 1, y - 1])
        + f(2.0) * (gray[x + 1, y] - gray[x - 1, y])
        + (gray[x + 1, y + 1] - gray[x - 1, y + 1])
    ) * f(0.125)
    iy[x, y] = (
        (gray[x - 1, y + 1] - gray[x - 1, y - 1])
        + f(2.0) * (gray[x, y + 1] - gray[x, y - 1])
        + (gray[x + 1, y + 1] - gray[x + 1, y - 1])
    ) * f(0.125)
    ixx[x, y] = ix[x, y] * ix[x, y]
    iyy[x, y] = iy[x, y] * iy[x, y]
    ixy[x, y] = ix[x, y] * iy[x, y]

    def box3x3(g):
        # sum((-1..=1, -1..=1), |(i, j)| g(x + i, y + j)): i innermost, a left fold.
        terms = [g[x + i, y + j] for j in (-1, 0, 1) for i in (-1, 0, 1)]
        acc = terms[0]
        for t in terms[1:]:
            acc = acc + t
        return acc

    sxx[x, y] = box3x3(ixx)
    syy[x, y] = box3x3(iyy)
    sxy[x, y] = box3x3(ixy)
    det = sxx[x, y] * syy[x, y] - sxy[x, y] * sxy[x, y]
    trace = sxx[x, y] + syy[x, y]
    out[x, y] = det - f(0.04) * trace * trace

    if manual:
        out.split(y, yo, yi, 32).parallel(yo).vectorize(x, 8)
        gray.store_at(out, yo).compute_at(out, yi).vectorize(x, 8)
        ix.store_at(out, yo).compute_at(out, yi).vectorize(x, 8)
        iy.store_at(out, yo).compute_at(out, yi).vectorize(x, 8)
        # ixx, iyy, ixy, sxx, syy and sxy are inlined (Halide's default).
    return out, [inp], []


def libm_exp_taps(np):
    """gauss(i) for i in -3..=3 as our code computes it: the same f32 argument,
    then the C library's expf (what Rust's f32::exp calls). Halide's exp is its
    own polynomial, which may differ from it in the last bit."""
    import ctypes
    import ctypes.util

    lib = ctypes.util.find_library("m")
    if lib is None:
        return None
    expf = ctypes.CDLL(lib).expf
    expf.restype, expf.argtypes = ctypes.c_float, [ctypes.c_float]
    f32 = np.float32
    denominator = f32(2.0) * f32(SIGMA) * f32(SIGMA)
    return np.array([expf(float(-f32(i * i) / denominator)) for i in range(-3, 4)], dtype=f32)


def halide_unsharp(hl, libm_exp=False, manual=True):
    """With `libm_exp` (a numpy array from libm_exp_taps), gauss reads those seven
    values instead of calling Halide's exp: used only to check the outputs."""
    x, y, c, i = hl.Var("x"), hl.Var("y"), hl.Var("c"), hl.Var("i")
    yo, yi = hl.Var("yo"), hl.Var("yi")
    f = hl.f32
    inp = hl.ImageParam(hl.Float(32), 3, "input")
    sigma = hl.Param(hl.Float(32), "sigma", SIGMA)
    amount = hl.Param(hl.Float(32), "amount", AMOUNT)
    clamped = hl.BoundaryConditions.repeat_edge(inp)

    def fold(terms):
        acc = terms[0]
        for t in terms[1:]:
            acc = acc + t
        return acc

    gauss, weight = hl.Func("gauss"), hl.Func("weight")
    blur_x, blur_y, out = hl.Func("blur_x"), hl.Func("blur_y"), hl.Func("out")
    if libm_exp is False:
        gauss[i] = hl.exp(-hl.cast(hl.Float(32), i * i) / (f(2.0) * sigma * sigma))
    else:
        taps = hl.Buffer(libm_exp)  # shares libm_exp's memory: the caller keeps it alive
        taps.set_min([-3])
        gauss[i] = taps[hl.clamp(i, -3, 3)]
    weight[i] = gauss[i] / fold([gauss[j] for j in range(-3, 4)])
    blur_x[x, y, c] = fold([weight[k] * clamped[x + k, y, c] for k in range(-3, 4)])
    blur_y[x, y, c] = fold([weight[k] * blur_x[x, y + k, c] for k in range(-3, 4)])
    out[x, y, c] = hl.clamp(inp[x, y, c] + amount * (inp[x, y, c] - blur_y[x, y, c]), f(0.0), f(1.0))

    if manual:
        out.split(y, yo, yi, 32).parallel(yo).vectorize(x, 8)
        blur_y.compute_at(out, yi).vectorize(x, 8)
        blur_x.store_at(out, yo).compute_at(out, yi).vectorize(x, 8)
        weight.compute_root()
    return out, [inp], [sigma, amount]


def bilateral_funcs(hl):
    """examples/bilateral_grid.rs, unscheduled: gather into a grid of
    8x8-pixel cells and 11 intensity levels (each node column adds the pixels
    of the image nearest to it, as Halide's own bilateral_grid app builds its
    histogram), blur it [1 4 6 4 1] in z, x and y, slice it back by trilinear
    interpolation. The DSL's `lerp(a, b, t)` is `a + (b - a) * t`. Returns
    the output, the input and the funcs a schedule names (also
    benches/cuda/halide_aot.py's, for its GPU schedule)."""
    x, y, z = hl.Var("x"), hl.Var("y"), hl.Var("z")
    f = hl.f32
    inp = hl.ImageParam(hl.Float(32), 2, "input")
    clamped = hl.BoundaryConditions.repeat_edge(inp)
    intensity, level = hl.Func("intensity"), hl.Func("level")
    intensity[x, y] = hl.clamp(clamped[x, y], f(0.0), f(1.0))
    level[x, y] = hl.cast(hl.Int(32), intensity[x, y] * f(10.0) + f(0.5))
    r = hl.RDom([(0, 8), (0, 8)])
    px, py = 8 * x + r.x - 4, 8 * y + r.y - 4
    inside = (px >= 0) & (px < inp.width()) & (py >= 0) & (py < inp.height())
    node = (x, y, hl.clamp(level[px, py], 0, 10))
    grid_value, grid_weight = hl.Func("grid_value"), hl.Func("grid_weight")
    grid_value[x, y, z] = f(0.0)
    grid_value[node] += hl.select(inside, intensity[px, py], f(0.0))
    grid_weight[x, y, z] = f(0.0)
    grid_weight[node] += hl.select(inside, f(1.0), f(0.0))

    stages = []  # every func of the two grid blurs

    def blur_grid(grid, name):
        blur_z, blur_zx, blur_zxy = hl.Func(name + "_z"), hl.Func(name + "_zx"), hl.Func(name)
        blur_z[x, y, z] = (
            grid[x, y, z - 2] + f(4.0) * grid[x, y, z - 1] + f(6.0) * grid[x, y, z]
            + f(4.0) * grid[x, y, z + 1] + grid[x, y, z + 2]
        )
        blur_zx[x, y, z] = (
            blur_z[x - 2, y, z] + f(4.0) * blur_z[x - 1, y, z] + f(6.0) * blur_z[x, y, z]
            + f(4.0) * blur_z[x + 1, y, z] + blur_z[x + 2, y, z]
        )
        blur_zxy[x, y, z] = (
            blur_zx[x, y - 2, z] + f(4.0) * blur_zx[x, y - 1, z] + f(6.0) * blur_zx[x, y, z]
            + f(4.0) * blur_zx[x, y + 1, z] + blur_zx[x, y + 2, z]
        )
        stages.extend([blur_z, blur_zx, blur_zxy])
        return blur_zxy

    def lerp(a, b, t):
        return a + (b - a) * t

    def trilinear(grid, name):
        sliced = hl.Func(name)
        zv = intensity[x, y] * f(10.0)
        zi = hl.clamp(hl.cast(hl.Int(32), zv), 0, 9)
        zf = zv - hl.cast(hl.Float(32), zi)
        xi, yi_ = x / 8, y / 8
        xf = hl.cast(hl.Float(32), x % 8) / f(8.0)
        yf = hl.cast(hl.Float(32), y % 8) / f(8.0)
        g = lambda dx, dy, dz: grid[xi + dx, yi_ + dy, zi + dz]
        sliced[x, y] = lerp(
            lerp(lerp(g(0, 0, 0), g(1, 0, 0), xf), lerp(g(0, 1, 0), g(1, 1, 0), xf), yf),
            lerp(lerp(g(0, 0, 1), g(1, 0, 1), xf), lerp(g(0, 1, 1), g(1, 1, 1), xf), yf),
            zf,
        )
        return sliced

    blurred_value = blur_grid(grid_value, "blurred_value")
    blurred_weight = blur_grid(grid_weight, "blurred_weight")
    value, weight = trilinear(blurred_value, "value"), trilinear(blurred_weight, "weight")
    out = hl.Func("out")
    out[x, y] = value[x, y] / weight[x, y]
    funcs = {"intensity": intensity, "level": level, "grids": [grid_value, grid_weight]}
    return out, inp, {**funcs, "blurs": stages}


def halide_bilateral(hl, libm_exp=False, manual=True):
    """examples/bilateral_grid.rs (`bilateral_funcs`) under its schedule."""
    x, y, z = hl.Var("x"), hl.Var("y"), hl.Var("z")
    yo, yi = hl.Var("yo"), hl.Var("yi")
    out, inp, funcs = bilateral_funcs(hl)
    if manual:
        # The example's schedule as bilateral_grid::SCHEDULE spells it out
        # (the funcs its block does not name are at root, in parallel rows).
        intensity, level, stages = funcs["intensity"], funcs["level"], funcs["blurs"]
        grid_value, grid_weight = funcs["grids"]
        intensity.compute_root().parallel(y)
        level.compute_root().parallel(y)
        grid_value.compute_root().update(0).parallel(y)
        grid_weight.compute_root().update(0).parallel(y)
        for stage in stages:
            stage.compute_root().parallel(z)
        out.split(y, yo, yi, 32).parallel(yo).vectorize(x, 8)
    return out, [inp], []


def halide_pyramid(hl, libm_exp=False, manual=True):
    """examples/pyramid.rs: four Gaussian levels (REDUCE), three Laplacian
    levels (a level minus EXPAND of the next); outputs lap0, lap1, lap2,
    gauss3. The DSL's `mirror()` is Halide's mirror_image."""
    x, y, yo, yi = hl.Var("x"), hl.Var("y"), hl.Var("yo"), hl.Var("yi")
    f = hl.f32
    inp = hl.ImageParam(hl.Float(32), 2, "input")
    mirrored = hl.BoundaryConditions.mirror_image(inp)

    def down2(g, l):
        reduce_x, reduce = hl.Func(f"reduce_x_{l}"), hl.Func(f"gauss_{l}")
        reduce_x[x, y] = (
            g[2 * x - 2, y] + f(4.0) * g[2 * x - 1, y] + f(6.0) * g[2 * x, y]
            + f(4.0) * g[2 * x + 1, y] + g[2 * x + 2, y]
        ) * f(0.0625)
        reduce[x, y] = (
            reduce_x[x, 2 * y - 2] + f(4.0) * reduce_x[x, 2 * y - 1] + f(6.0) * reduce_x[x, 2 * y]
            + f(4.0) * reduce_x[x, 2 * y + 1] + reduce_x[x, 2 * y + 2]
        ) * f(0.0625)
        inner.append(reduce_x)
        return reduce

    def up2(g, l):
        expand_x, expand = hl.Func(f"expand_x_{l}"), hl.Func(f"expanded_{l}")
        expand_x[x, y] = hl.select(
            x % 2 == 0,
            (g[x / 2 - 1, y] + f(6.0) * g[x / 2, y] + g[x / 2 + 1, y]) * f(0.125),
            (g[x / 2, y] + g[x / 2 + 1, y]) * f(0.5),
        )
        expand[x, y] = hl.select(
            y % 2 == 0,
            (expand_x[x, y / 2 - 1] + f(6.0) * expand_x[x, y / 2] + expand_x[x, y / 2 + 1]) * f(0.125),
            (expand_x[x, y / 2] + expand_x[x, y / 2 + 1]) * f(0.5),
        )
        inner.append(expand_x)
        return expand

    inner = []  # reduce_x and expand_x of every level
    gauss = [hl.Func("gauss_0")]
    gauss[0][x, y] = mirrored[x, y]
    for l in range(1, 4):
        gauss.append(down2(gauss[l - 1], l))
    lap = []
    for l in range(3):
        expanded = up2(gauss[l + 1], l)
        lap.append(hl.Func(f"lap_{l}"))
        lap[l][x, y] = gauss[l][x, y] - expanded[x, y]

    # Halide realizes an output func only over its output buffer, and lap[2]
    # reads gauss[3] beyond it: the fourth output is a copy of gauss[3].
    coarsest = hl.Func("coarsest")
    coarsest[x, y] = gauss[3][x, y]

    if manual:
        # The example's schedule as pyramid::SCHEDULE spells it out (the
        # funcs its block does not name are at root, in parallel rows, but
        # the expansions, inlined).
        gauss[0].compute_root().parallel(y)
        for stage in inner:
            stage.compute_root().parallel(y)
        gauss[1].compute_root().split(y, yo, yi, 16).parallel(yo)
        gauss[2].compute_root().split(y, yo, yi, 16).parallel(yo)
        lap[0].split(y, yo, yi, 32).parallel(yo).vectorize(x, 8)
        lap[1].split(y, yo, yi, 32).parallel(yo).vectorize(x, 8)
        lap[2].parallel(y)
        gauss[3].compute_root().parallel(y)
    return [lap[0], lap[1], lap[2], coarsest], [inp], []


# name -> (Halide builder, numpy input shape, numpy output shape (a list of
# them for several outputs, which our bench dumps one after the other),
# output dtype name)
CASES = {
    "blur3x3_u16": (halide_blur3x3, (4800, 6400), (4800, 6400), "uint16"),
    "gauss5x5_u8": (halide_gauss5x5, (4096, 4096), (4096, 4096), "uint8"),
    "down2_u16": (halide_down2, (4800, 6400), (2400, 3200), "uint16"),
    "grey_rgb_u8": (halide_grey_rgb, (3, 2160, 3840), (2160, 3840), "uint8"),
    "harris_f32": (halide_harris, (3, 1024, 1920), (1024, 1920), "float32"),
    "unsharp_f32": (halide_unsharp, (3, 1536, 2560), (3, 1536, 2560), "float32"),
    "bilateral_f32": (halide_bilateral, (1536, 2560), (1536, 2560), "float32"),
    "pyramid_f32": (halide_pyramid, (1536, 2560), [(1536, 2560), (768, 1280), (384, 640), (192, 320)], "float32"),
}


# ---------------------------------------------------------------------------
# Timing and comparison


def median(values):
    s = sorted(values)
    n = len(s)
    return s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2


# How long each side warms up before it is timed (at least two calls), as
# benches/support/timing.rs warms ours up (see there why).
WARM_UP_S = 0.2


def time_ms(fn, runs):
    """Warm-up runs for WARM_UP_S (at least two), then `runs` timed ones:
    (median, min) in milliseconds."""
    start, calls = time.perf_counter(), 0
    while calls < 2 or time.perf_counter() - start < WARM_UP_S:
        fn()
        calls += 1
    ms = []
    for _ in range(max(runs, 1)):
        start = time.perf_counter()
        fn()
        ms.append((time.perf_counter() - start) * 1e3)
    return median(ms), min(ms)


def run_ours(names, runs, threads, dump=True, isa=None, auto=False, tuned=False, lowered=False):
    """Runs the Rust bench; returns ({name: (size, median, min)}, machine), where
    machine holds the bandwidth in GB/s of the faster parallel copy
    ("bandwidth") and of each way of copying ("copy memcpy", "copy
    streaming"), and the instruction-set levels the processor has ("levels").

    With `dump`, the bench writes its outputs to DUMP (DUMP_AUTO with
    `auto`). With `isa`, the kernels run at that instruction-set level
    (PIPELINE_ISA), else at the best. With `auto`, the bench is built with
    PIPELINE_SCHEDULE=auto (in a target directory of its own, so that the two
    builds do not replace each other): every pipeline under the
    auto-scheduler's choice instead of its schedule block. With `tuned`,
    under PIPELINE_SCHEDULE=tuned and TUNED_CACHE: the tuner's entries. With
    `lowered`, machine["lowered"] holds each pipeline's LOWERED text."""
    env = dict(os.environ)
    env.update(HALIDE_COMPARE_RUNS=str(runs), RAYON_NUM_THREADS=str(threads))
    env.pop("HALIDE_COMPARE_DUMP", None)
    env.pop("PIPELINE_ISA", None)
    env.pop("PIPELINE_SCHEDULE", None)
    # Every level gets a kernel, so that the per-level table times each
    # (the best level runs the same kernel as in a default build).
    env["PIPELINE_KERNELS"] = ALL_KERNELS
    env.pop("PIPELINE_SCHEDULE_CACHE", None)
    if auto:
        env["PIPELINE_SCHEDULE"] = "auto"
        env["CARGO_TARGET_DIR"] = str(ROOT / "target" / "auto-schedule")
    if tuned:
        env["PIPELINE_SCHEDULE"] = "tuned"
        env["PIPELINE_SCHEDULE_CACHE"] = str(TUNED_CACHE)
        env["CARGO_TARGET_DIR"] = str(ROOT / "target" / "tuned-schedule")
    if dump:
        env["HALIDE_COMPARE_DUMP"] = str(DUMP_AUTO if auto else DUMP_TUNED if tuned else DUMP)
    if isa is not None:
        env["PIPELINE_ISA"] = isa
    if lowered:
        env["HALIDE_COMPARE_LOWERED"] = "1"
    else:
        env.pop("HALIDE_COMPARE_LOWERED", None)
    cmd = ["cargo", "bench", "--bench", "halide_compare", "--", *names, "copy_bandwidth"]
    print(f"$ {' '.join(cmd)}", file=sys.stderr, flush=True)
    try:
        # Cargo's progress goes to stderr (shown as it happens); results to stdout.
        proc = subprocess.run(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, text=True)
    except FileNotFoundError:
        fail("cargo is not on PATH")
    if proc.returncode != 0:
        fail(f"`{' '.join(cmd)}` failed (exit {proc.returncode}); its output:\n{proc.stdout}")
    results, machine = {}, {"lowered": {}}
    text_of = None  # the LOWERED text being read
    for line in proc.stdout.splitlines():
        parts = line.split()
        marker = re.match(r"(LOWERED|SCHEDULE|RESULT|CACHED|BANDWIDTH|COPY|THREADS|LEVELS|PROCESSOR)( |$)", line)
        if text_of is not None and not marker:
            machine["lowered"][text_of].append(line)
            continue
        text_of = None
        if parts[:1] == ["LOWERED"]:
            text_of = parts[1]
            machine["lowered"][text_of] = []
        if parts[:1] == ["RESULT"]:
            results[parts[1]] = (parts[2], float(parts[3]), float(parts[4]))
        elif parts[:1] == ["CACHED"]:
            results[parts[1] + CACHED] = (parts[2], float(parts[3]), float(parts[4]))
        elif parts[:1] == ["BANDWIDTH"]:
            machine["bandwidth"] = float(parts[1])
        elif parts[:1] == ["COPY"]:
            machine["copy " + parts[1]] = float(parts[2])
        elif parts[:1] == ["LEVELS"]:
            machine["levels"] = parts[1:]
        elif parts[:1] == ["PROCESSOR"]:
            machine["processor"] = " ".join(parts[1:])
    machine["lowered"] = {n: "\n".join(lines).strip() for n, lines in machine["lowered"].items()}
    missing = [n for n in names if n not in results]
    if missing or "bandwidth" not in machine:
        fail(f"the bench printed no result for {missing or 'the bandwidth'}; its output:\n{proc.stdout}")
    return results, machine


def output_shapes(out_shape):
    """The numpy shape of each output of a CASES entry."""
    return out_shape if isinstance(out_shape, list) else [out_shape]


def new_outputs(np, hl, out_shape, dtype):
    """Zeroed numpy arrays for a pipeline's outputs, and the hl.Buffers that
    share their memory (the arrays must outlive the buffers)."""
    arrays = [np.zeros(s, dtype=dtype) for s in output_shapes(out_shape)]
    return arrays, [hl.Buffer(a) for a in arrays]


def realize(pipe, bufs, target):
    pipe.realize(bufs[0] if len(bufs) == 1 else bufs, target)


def as_dumped(np, arrays):
    """The outputs as our bench dumps them: one array, or several one after
    the other (flattened)."""
    return arrays[0] if len(arrays) == 1 else np.concatenate([a.ravel() for a in arrays])


def read_dump(np, path, out_shape, dtype):
    data = np.fromfile(path, dtype=dtype.newbyteorder("<"))
    return data if isinstance(out_shape, list) else data.reshape(out_shape)


def compare(np, ours, theirs, dtype):
    """(description, bit-identical?) of how our output differs from Halide's."""
    bits = np.dtype(f"u{dtype.itemsize}")
    differ = int(np.count_nonzero(ours.view(bits) != theirs.view(bits)))
    if differ == 0:
        return "identical", True
    if dtype.kind == "f":
        d = np.abs(ours.astype(np.float64) - theirs.astype(np.float64))
        d[np.isnan(d)] = np.inf
    else:
        d = np.abs(ours.astype(np.int64) - theirs.astype(np.int64))
    index = np.unravel_index(int(np.argmax(d)), d.shape)  # (c, y, x) or (y, x)
    worst = float(d[index])
    axes = {3: "x, y, c", 2: "x, y", 1: "element of the outputs one after the other"}[d.ndim]
    text = f"{differ} of {d.size} differ, max |diff| {worst:.3g} at ({axes}) = {tuple(int(v) for v in index[::-1])}"
    if dtype.kind == "f":
        scale = float(np.max(np.abs(theirs.astype(np.float64))))
        text += f" ({worst / scale:.2g} of max |value| {scale:.3g})"
    return text, False


def halide_autoscheduled(hl, build, in_shape, out_shape, scheduler, threads, target):
    """The algorithm without its schedule, scheduled by one of Halide's
    auto-schedulers given the real sizes as estimates and `threads` as the
    parallelism; returns the compiled pipeline and the compile time in s."""
    out_funcs, inputs, params = build(hl, False, manual=False)
    for inp in inputs:
        inp.set_estimates([(0, e) for e in reversed(in_shape)])
    if not isinstance(out_funcs, list):
        out_funcs = [out_funcs]
    for out_func, shape in zip(out_funcs, output_shapes(out_shape)):
        out_func.set_estimates([(0, e) for e in reversed(shape)])
    for param in params:
        param.set_estimate(SIGMA if param.name() == "sigma" else AMOUNT)
    pipe = hl.Pipeline(out_funcs)
    t0 = time.perf_counter()
    pipe.apply_autoscheduler(target, hl.AutoschedulerParams(scheduler, {"parallelism": str(threads)}))
    pipe.compile_jit(target)
    return pipe, inputs, time.perf_counter() - t0


def run_libblur(runs, rounds, threads, auto=False):
    """Runs benches/libblur (our blurs beside libblur's, alternating in rounds
    inside that bench, outputs cross-checked there) and prints its table;
    with `auto`, ours are built with PIPELINE_SCHEDULE=auto."""
    env = dict(os.environ, LIBBLUR_RUNS=str(runs), LIBBLUR_ROUNDS=str(rounds), RAYON_NUM_THREADS=str(threads))
    env.pop("PIPELINE_SCHEDULE", None)
    env["PIPELINE_KERNELS"] = ALL_KERNELS
    # The same target directory as the main bench, so pipeline builds once.
    env["CARGO_TARGET_DIR"] = str(ROOT / "target")
    if auto:
        env["PIPELINE_SCHEDULE"] = "auto"
        env["CARGO_TARGET_DIR"] = str(ROOT / "target" / "auto-schedule")
    cmd = ["cargo", "bench", "--manifest-path", str(ROOT / "benches" / "libblur" / "Cargo.toml")]
    print("$ " + " ".join(cmd), file=sys.stderr, flush=True)
    done = subprocess.run(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, text=True)
    if done.returncode != 0:
        fail(f"the libblur bench failed (exit status {done.returncode}); its output:\n{done.stdout}")
    print()
    print(
        f"Against libblur 0.24 (benches/libblur), 3840x2160, {threads} threads on both sides; {rounds} rounds "
        f"alternating the two sides, each the median of {runs} runs; medians over rounds"
        + (", ours without schedules (PIPELINE_SCHEDULE=auto):" if auto else ":")
    )
    print()
    for line in done.stdout.splitlines():
        if line.startswith("|"):
            print(line)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=10, help="timed runs per pipeline, side and round (median taken; default 10)")
    parser.add_argument("--rounds", type=int, default=5, help="rounds that alternate our runs and Halide's (default 5)")
    parser.add_argument("--only", action="append", choices=NAMES, metavar="NAME", help=f"run only this pipeline (repeatable): {', '.join(NAMES)}")
    parser.add_argument("--no-libblur", action="store_true", help="skip the comparison with libblur (benches/libblur)")
    parser.add_argument("--no-tuned", action="store_true", help=f"skip ours under the tuner's schedules ({TUNED_CACHE.relative_to(ROOT)})")
    parser.add_argument("--no-auto", action="store_true", help="skip the comparison without schedules (ours under PIPELINE_SCHEDULE=auto, Halide's auto-schedulers)")
    args = parser.parse_args()
    names = args.only or NAMES

    if not in_venv():
        ensure_venv_and_reexec()  # does not return

    started = float(os.environ.get("HALIDE_COMPARE_STARTED", time.time()))
    threads = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    # Halide's runtime reads HL_NUM_THREADS when its thread pool starts.
    os.environ["HL_NUM_THREADS"] = str(threads)

    import numpy as np

    try:
        import halide as hl
    except ImportError as e:
        fail(f"halide does not import in {VENV}: {e} (delete the venv to reinstall)")
    from importlib.metadata import version

    # 1. Ours (builds the bench in release first; the build is not timed).
    if DUMP.exists():
        for old in DUMP.glob("*.bin"):
            old.unlink()
    ours, machine = run_ours(names, args.runs, threads)
    # The fastest copy of each kind over all rounds (noise only slows them).
    copies = {k: v for k, v in machine.items() if k.startswith("copy ")}

    # 2. Halide, one pipeline at a time.
    target = hl.get_jit_target_from_environment()
    strict = target.with_feature(hl.TargetFeature.StrictFloat)
    theirs, checks, compile_s, timed = {}, {}, {}, {}
    # Float pipelines: Halide's strict_float build timed too, the arithmetic
    # ours does (Halide's default build contracts multiplies and adds into
    # FMAs, which ours does only where a pipeline writes `fma`).
    strict_timed = {}
    for name in names:
        build, in_shape, out_shape, dtype = CASES[name]
        dtype = np.dtype(dtype)
        data = make_input(np, name, in_shape)
        # hl.Buffer reverses the axes of a numpy array: (c, h, w) becomes (x, y, c).
        in_buf = hl.Buffer(data)
        results, out_bufs = new_outputs(np, hl, out_shape, dtype)
        ours_out = read_dump(np, DUMP / f"{name}.bin", out_shape, dtype)

        def realize_once(label, target_, libm_exp=False):
            """Builds, compiles and runs one Halide variant; compares its output."""
            out_funcs, inputs, _params = build(hl, libm_exp)
            inputs[0].set(in_buf)
            pipe = hl.Pipeline(out_funcs)
            t0 = time.perf_counter()
            pipe.compile_jit(target_)
            seconds = time.perf_counter() - t0
            for result in results:
                result.fill(0)
            realize(pipe, out_bufs, target_)
            text, same = compare(np, ours_out, as_dumped(np, results), dtype)
            notes.append(f"{label}: {text}")
            return pipe, seconds, same

        notes = []
        if dtype.kind == "f":
            # Floats: a strict_float build (the same operations in the same order,
            # no FMA contraction, no float rewrites) must agree bit for bit; the
            # timed build's differences are reported for information.
            label = "strict_float Halide"
            strict_pipe, _, same = realize_once(label, strict)
            strict_timed[name] = lambda pipe=strict_pipe, out_bufs=out_bufs, keep=(data, in_buf, results): realize(
                pipe, out_bufs, strict
            )
            if name == "unsharp_f32":
                taps = libm_exp_taps(np)
                if taps is not None:
                    label = "strict_float Halide with libm's expf"
                    _, _, same = realize_once(label, strict, taps)
            checks[name] = (same, label)
            pipe, compile_s[name], _ = realize_once("timed Halide build", target)
        else:
            pipe, compile_s[name], same = realize_once("timed Halide build", target)
            checks[name] = (same, "Halide")
        # hl.Buffer borrows numpy's memory: the arrays must outlive the rounds.
        timed[name] = lambda pipe=pipe, out_bufs=out_bufs, keep=(data, in_buf, results): realize(pipe, out_bufs, target)
        theirs[name] = notes

    # 2b. Without schedules: ours under the auto-scheduler, Halide's three.
    auto_on = not args.no_auto
    ours_auto, auto_timed, auto_notes, auto_same = {}, {}, {name: [] for name in names}, {}
    if auto_on:
        if DUMP_AUTO.exists():
            for old in DUMP_AUTO.glob("*.bin"):
                old.unlink()
        ours_auto, auto_machine = run_ours(names, args.runs, threads, auto=True, lowered=True)
        lib = Path(hl.__file__).resolve().parent
        for so in AUTOSCHEDULERS.values():
            found = [d / so for d in (lib / "lib64", lib / "lib") if (d / so).exists()]
            if not found:
                fail(f"{so} is not in the halide wheel ({lib})")
            hl.load_plugin(str(found[0]))
        for name in names:
            build, in_shape, out_shape, dtype = CASES[name]
            dtype = np.dtype(dtype)
            data = make_input(np, name, in_shape)
            in_buf = hl.Buffer(data)
            hand = read_dump(np, DUMP / f"{name}.bin", out_shape, dtype)
            auto = read_dump(np, DUMP_AUTO / f"{name}.bin", out_shape, dtype)
            # A schedule never changes results: bit for bit, floats included.
            auto_same[name] = hand.tobytes() == auto.tobytes()
            auto_notes[name].append(
                "ours without a schedule: " + ("identical to ours with it" if auto_same[name] else "DIFFERS from ours with it")
            )
            for scheduler in AUTOSCHEDULERS:
                results, out_bufs = new_outputs(np, hl, out_shape, dtype)
                try:
                    pipe, inputs, seconds = halide_autoscheduled(hl, build, in_shape, out_shape, scheduler, threads, target)
                except Exception as e:  # an auto-scheduler that gives up on an algorithm
                    auto_notes[name].append(f"{scheduler}: failed ({str(e).strip().splitlines()[0]})")
                    continue
                inputs[0].set(in_buf)
                realize(pipe, out_bufs, target)
                text, _ = compare(np, hand, as_dumped(np, results), dtype)
                auto_notes[name].append(f"{scheduler}: JIT compile {seconds:.2f} s, {text}")
                auto_timed[(name, scheduler)] = (
                    lambda pipe=pipe, out_bufs=out_bufs, keep=(data, in_buf, results, inputs): realize(pipe, out_bufs, target)
                )

    # 2c. Tuned: ours under the tuner's entries.
    tuned_on = not args.no_tuned
    ours_tuned, tuned_same = {}, {}
    if tuned_on:
        if DUMP_TUNED.exists():
            for old in DUMP_TUNED.glob("*.bin"):
                old.unlink()
        ours_tuned, tuned_machine = run_ours(names, args.runs, threads, tuned=True, lowered=True)
        for name in names:
            _, _, out_shape, dtype = CASES[name]
            dtype = np.dtype(dtype)
            hand = read_dump(np, DUMP / f"{name}.bin", out_shape, dtype)
            tuned_out = read_dump(np, DUMP_TUNED / f"{name}.bin", out_shape, dtype)
            tuned_same[name] = hand.tobytes() == tuned_out.tobytes()

    # 3. Rounds: ours, then Halide, R times (the first round of ours ran above).
    rounds = max(args.rounds, 1)
    ours_auto_ms = {name: [ours_auto[name][1]] for name in names if name in ours_auto}
    ours_auto_best = {name: ours_auto[name][2] for name in names if name in ours_auto}
    ours_tuned_ms = {name: [ours_tuned[name][1]] for name in names if name in ours_tuned}
    ours_tuned_best = {name: ours_tuned[name][2] for name in names if name in ours_tuned}
    halide_auto_ms = {key: [] for key in auto_timed}
    halide_auto_best = {key: float("inf") for key in auto_timed}
    cached = [name + CACHED for name in names if name + CACHED in ours]
    our_ms = {name: [ours[name][1]] for name in names + cached}
    their_ms = {name: [] for name in names}
    strict_ms = {name: [] for name in strict_timed}
    # The fastest run of each side over all rounds: a noisy neighbour only
    # ever slows a run down, so these are the least disturbed.
    our_best = {name: ours[name][2] for name in names + cached}
    their_best = {name: float("inf") for name in names}
    for r in range(rounds):
        if r > 0:
            again, again_machine = run_ours(names, args.runs, threads, dump=False)
            for k, v in again_machine.items():
                if k.startswith("copy "):
                    copies[k] = max(copies.get(k, 0.0), v)
            for name in names + cached:
                our_ms[name].append(again[name][1])
                our_best[name] = min(our_best[name], again[name][2])
        for name in names:
            median_ms, min_ms = time_ms(timed[name], args.runs)
            their_ms[name].append(median_ms)
            their_best[name] = min(their_best[name], min_ms)
            print(f"halide {name} (round {r + 1}): median {median_ms:.3f} ms, min {min_ms:.3f} ms", file=sys.stderr, flush=True)
            if name in strict_timed:
                strict_ms[name].append(time_ms(strict_timed[name], args.runs)[0])
        # Ours auto and ours tuned back to back, their order alternating by
        # round, so that their ratio sees as nearly one state of this shared
        # machine as two processes can (with Halide's auto-schedulers between
        # them, identical code read 0.93-1.02 of itself; back to back, in the
        # one run so far, 0.93-0.96: no less noise shown yet).
        if r > 0:
            kinds = [kind for kind, on in (("auto", auto_on), ("tuned", tuned_on)) if on]
            if r % 2 == 0:
                kinds.reverse()
            for kind in kinds:
                again = run_ours(names, args.runs, threads, dump=False, auto=kind == "auto", tuned=kind == "tuned")[0]
                medians, fastest = (ours_auto_ms, ours_auto_best) if kind == "auto" else (ours_tuned_ms, ours_tuned_best)
                for name in names:
                    medians[name].append(again[name][1])
                    fastest[name] = min(fastest[name], again[name][2])
        if auto_on:
            for key, fn in auto_timed.items():
                median_ms, min_ms = time_ms(fn, args.runs)
                halide_auto_ms[key].append(median_ms)
                halide_auto_best[key] = min(halide_auto_best[key], min_ms)
                print(f"halide {key[0]} {key[1]} (round {r + 1}): median {median_ms:.3f} ms", file=sys.stderr, flush=True)

    # 4. The table.
    cpu = "unknown CPU"
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    print()
    print(
        f"Halide {version('halide')} (JIT target {target}), {cpu}, {threads} threads on both sides; "
        f"{rounds} rounds alternating the two sides, each the median of {args.runs} runs; medians over rounds."
    )
    bandwidth = max(copies.values())
    print(
        f"Memory bandwidth (fastest parallel copy of 6400x4800 u16, bytes read + written): {bandwidth:.2f} GB/s; "
        + ", ".join(f"{k[5:]} copy {v:.2f} GB/s" for k, v in sorted(copies.items()))
        + " (streaming stores write whole lines without first reading them)."
    )
    print()
    print(
        "| algorithm | size | ours ms | Halide ms | ours/Halide | range over rounds "
        "| fastest: ours, Halide ms (ratio) | bandwidth bound ms | ours/bound | Halide/bound | outputs |"
    )
    print("|---|---|---:|---:|---:|---|---|---:|---:|---:|---|")
    for name in names:
        size = ours[name][0]
        ratios = [o / t for o, t in zip(our_ms[name], their_ms[name])]
        ratio, spread = median(ratios), f"{min(ratios):.2f}-{max(ratios):.2f}"
        ours_med, theirs_med = median(our_ms[name]), median(their_ms[name])
        fastest = f"{our_best[name]:.2f}, {their_best[name]:.2f} ({our_best[name] / their_best[name]:.2f})"
        bound = ours_bound = halide_bound = ""
        if name in BYTES_PER_OUTPUT:
            w, h = (int(v) for v in size.split("x"))
            bound_ms = BYTES_PER_OUTPUT[name] * w * h / (bandwidth * 1e9) * 1e3
            bound = f"{bound_ms:.2f}"
            # Also as the share of the copy bandwidth that ours moves.
            ours_bound = (
                f"{ours_med / bound_ms:.2f} (fastest {our_best[name] / bound_ms:.2f}; "
                f"{100 * bound_ms / ours_med:.0f}% of the bandwidth)"
            )
            halide_bound = f"{theirs_med / bound_ms:.2f} (fastest {their_best[name] / bound_ms:.2f})"
        same, label = checks[name]
        status = f"identical to {label}" if same else f"DIFFER from {label} (see below)"
        print(
            f"| {name} | {size} | {ours_med:.2f} | {theirs_med:.2f} | {ratio:.2f} | {spread} | {fastest} "
            f"| {bound} | {ours_bound} | {halide_bound} | {status} |"
        )
    if strict_ms:
        print()
        print(
            "The float pipelines against Halide's strict_float build (no FMA contraction, no float rewrites: "
            "the arithmetic ours does; timed right after its default build in each round):"
        )
        print()
        print("| algorithm | ours ms | strict_float Halide ms | ours/strict | range over rounds | default build/strict |")
        print("|---|---:|---:|---:|---|---:|")
        for name in strict_ms:
            ratios = [o / t for o, t in zip(our_ms[name], strict_ms[name])]
            own = median([d / t for d, t in zip(their_ms[name], strict_ms[name])])
            print(
                f"| {name} | {median(our_ms[name]):.2f} | {median(strict_ms[name]):.2f} | {median(ratios):.2f} "
                f"| {min(ratios):.2f}-{max(ratios):.2f} | {own:.2f} |"
            )
    for name in cached:
        # Scaled to the full image: the time of the arithmetic alone.
        size = ours[name][0]
        w, h = (int(v) for v in size.split("x"))
        full_w, full_h = (int(v) for v in ours[name[: -len(CACHED)]][0].split("x"))
        scale = full_w * full_h / (w * h)
        bound_ms = 2 * full_w * full_h * 2 / (bandwidth * 1e9) * 1e3
        full, fastest = median(our_ms[name]) * scale, our_best[name] * scale
        print()
        print(
            f"Ours, {name} ({size}, the data in cache), scaled to the full image: "
            f"{median(our_ms[name]):.3f} ms x {scale:g} = {full:.2f} ms, {full / bound_ms:.2f} of the bandwidth bound "
            f"(fastest {fastest:.2f} ms, {fastest / bound_ms:.2f})."
        )
    if "blur3x3_u16" in names and "copy memcpy" in copies and copies["copy memcpy"] < bandwidth:
        # Earlier runs took memcpy's bandwidth as the bound; the same figure
        # for comparison with them.
        w, h = (int(v) for v in ours["blur3x3_u16"][0].split("x"))
        memcpy_bound = 2 * w * h * 2 / (copies["copy memcpy"] * 1e9) * 1e3
        print()
        print(
            f"Against memcpy's bandwidth ({copies['copy memcpy']:.2f} GB/s, bound {memcpy_bound:.2f} ms), our blur is at "
            f"{median(our_ms['blur3x3_u16']) / memcpy_bound:.2f} (fastest {our_best['blur3x3_u16'] / memcpy_bound:.2f})."
        )
    print()
    for name in names:
        print(f"- {name}: Halide JIT compile {compile_s[name]:.2f} s; " + "; ".join(theirs[name]))

    if auto_on:
        print()
        print(
            f"Without a schedule: ours built with PIPELINE_SCHEDULE=auto (every schedule block replaced by the auto-scheduler's "
            f"choice) beside ours with the hand schedule, and Halide 21's auto-schedulers given the real sizes as estimates and "
            f"parallelism {threads}; the same {rounds} rounds, medians over rounds, ms. Ratios are medians of per-round ratios; "
            f"'best Halide' is the fastest of the three in each round."
        )
        print()
        print("| algorithm | ours auto | ours hand | auto/hand | " + " | ".join(AUTOSCHEDULERS) + " | ours auto / best Halide | fastest: ours auto / best Halide | outputs |")
        print("|---|---:|---:|---:|" + "---:|" * len(AUTOSCHEDULERS) + "---:|---:|---|")
        ratios_all = []
        for name in names:
            auto_ms = ours_auto_ms[name]
            vs_hand = median([a / h for a, h in zip(auto_ms, our_ms[name])])
            cells = []
            for scheduler in AUTOSCHEDULERS:
                times = halide_auto_ms.get((name, scheduler))
                cells.append(f"{median(times):.2f}" if times else "failed")
            per_round_best = [
                min(halide_auto_ms[(name, sch)][r] for sch in AUTOSCHEDULERS if (name, sch) in halide_auto_ms)
                for r in range(rounds)
            ] if any((name, sch) in halide_auto_ms for sch in AUTOSCHEDULERS) else []
            if per_round_best:
                ratio = median([a / b for a, b in zip(auto_ms, per_round_best)])
                ratios_all.append(ratio)
                best_fastest = min(halide_auto_best[(name, sch)] for sch in AUTOSCHEDULERS if (name, sch) in halide_auto_best)
                vs_halide, fastest = f"{ratio:.2f}", f"{ours_auto_best[name] / best_fastest:.2f}"
            else:
                vs_halide = fastest = "-"
            status = "identical to ours hand-scheduled" if auto_same[name] else "DIFFER from ours hand-scheduled"
            print(
                f"| {name} | {median(auto_ms):.2f} | {median(our_ms[name]):.2f} | {vs_hand:.2f} | " + " | ".join(cells)
                + f" | {vs_halide} | {fastest} | {status} |"
            )
        if ratios_all:
            geomean = 1.0
            for r_ in ratios_all:
                geomean *= r_
            geomean **= 1.0 / len(ratios_all)
            print()
            print(f"Geometric mean of ours auto / best Halide auto-scheduler: {geomean:.2f} over {len(ratios_all)} pipelines.")
        print()
        for name in names:
            print(f"- {name}: " + "; ".join(auto_notes[name]))

    if tuned_on:
        print()
        print(
            f"Tuned: ours built with PIPELINE_SCHEDULE=tuned and {TUNED_CACHE.relative_to(ROOT)} (what cargo pipeline tune "
            f"found), beside ours auto and Halide's hand schedules; the same {rounds} rounds, medians over rounds, ms; "
            f"ratios are medians of per-round ratios."
        )
        # An entry serves processors at its level only (and, where it names
        # one, that processor only): say which entries this machine runs.
        entries = []
        for block in TUNED_CACHE.read_text().split("[[pipeline]]")[1:]:
            isa = re.search(r'^isa = "([^"]+)"', block, re.M)
            proc_ = re.search(r'^processor = "([^"]+)"', block, re.M)
            entries.append((isa.group(1) if isa else "?", proc_.group(1) if proc_ else ""))
        running = os.environ.get("PIPELINE_ISA") or machine.get("levels", ["?"])[-1]
        here = machine.get("processor", "")
        kinds = sorted(set(entries))
        shown = [f"{isa} on {p}" if p else isa for isa, p in kinds]
        serving = [(isa, p) for isa, p in kinds if isa == running and p in ("", here)]
        print(
            f"The entries are for {', '.join(shown) or 'nothing'}; the runs here are at {running} on {here or 'an unnamed processor'}"
            + (
                f": entries for {' and '.join(f'{i} on {p}' if p else i for i, p in serving)} serve it (a processor's own first)"
                if serving
                else ": no entry serves it, so tuned runs the auto-scheduler's schedules"
            )
            + "."
        )
        print()
        def runs_here(text):
            """The section of a LOWERED text this machine runs: its level and
            processor's, else its level's, else the other levels'."""
            sections, heading = {}, None
            for line in text.splitlines():
                m = re.match(r"// at (.+):$", line)
                if m:
                    heading = m.group(1)
                    sections[heading] = []
                elif heading is not None:
                    sections[heading].append(line)
            if not sections:
                return text.strip()
            for key in (f"{running} on {here}", running, "the other levels and processors", "the other levels"):
                if key in sections:
                    return "\n".join(sections[key]).strip()
            return None

        def code_cell(name):
            tuned_text = runs_here(tuned_machine["lowered"].get(name, ""))
            auto_text = auto_machine["lowered"].get(name) if auto_on else None
            if tuned_text is None or auto_text is None:
                return "?"
            return "same as auto" if tuned_text == auto_text else "its own"

        print("| algorithm | ours tuned | ours auto | ours hand | Halide hand | tuned/auto | tuned/Halide hand | fastest: tuned/Halide hand | tuned's loop nests | outputs |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|---|---|")
        vs_auto_all, vs_halide_all = [], []
        for name in names:
            t_ms = ours_tuned_ms[name]
            vs_halide = median([t / h for t, h in zip(t_ms, their_ms[name])])
            vs_halide_all.append(vs_halide)
            auto_cell = vs_auto = "-"
            if name in ours_auto_ms:
                vs_auto_r = median([t / a for t, a in zip(t_ms, ours_auto_ms[name])])
                vs_auto_all.append(vs_auto_r)
                auto_cell, vs_auto = f"{median(ours_auto_ms[name]):.2f}", f"{vs_auto_r:.2f}"
            status = "identical to ours hand-scheduled" if tuned_same[name] else "DIFFER from ours hand-scheduled"
            print(
                f"| {name} | {median(t_ms):.2f} | {auto_cell} | {median(our_ms[name]):.2f} | {median(their_ms[name]):.2f} "
                f"| {vs_auto} | {vs_halide:.2f} | {ours_tuned_best[name] / their_best[name]:.2f} | {code_cell(name)} | {status} |"
            )

        def geomean(xs):
            g = 1.0
            for x in xs:
                g *= x
            return g ** (1.0 / len(xs)) if xs else float("nan")

        print()
        print(
            f"Geometric means: tuned/auto {geomean(vs_auto_all):.2f}, tuned/Halide hand {geomean(vs_halide_all):.2f} "
            f"over {len(vs_halide_all)} pipelines."
        )

    # 5. Ours at each instruction-set level the processor has (a level above
    # its best would run its best again), against the scalar kernels, the
    # levels in turn per round.
    all_levels = ["scalar", "sse4.1", "avx2", "avx512", "avx512vbmi"]
    levels = [isa for isa in all_levels if isa in machine.get("levels", all_levels)]
    missing_levels = [isa for isa in all_levels if isa not in levels]
    per_level = {isa: {name: [] for name in names} for isa in levels}
    for _ in range(rounds):
        for isa in levels:
            results = run_ours(names, args.runs, threads, dump=False, isa=isa)[0]
            for name in names:
                per_level[isa][name].append(results[name][1])
    print()
    print(
        f"Ours per instruction-set level (PIPELINE_ISA), {threads} threads, {rounds} rounds of the {len(levels)} levels in turn, "
        f"each the median of {args.runs} runs; ms and speed-up over scalar, medians over rounds:"
    )
    print()
    if missing_levels:
        print(f"({cpu} lacks {', '.join(missing_levels)}: not timed.)")
        print()
    print("| algorithm | " + " | ".join(levels) + " |")
    print("|---|" + "---:|" * len(levels))
    for name in names:
        scalar = per_level["scalar"][name]
        cells = []
        for isa in levels:
            times = per_level[isa][name]
            speedup = median([s / t for s, t in zip(scalar, times)])
            cells.append(f"{median(times):.2f} ({speedup:.2f}x)")
        print(f"| {name} | " + " | ".join(cells) + " |")
    if not args.no_libblur:
        run_libblur(args.runs, rounds, threads)
        if auto_on:
            run_libblur(args.runs, rounds, threads, auto=True)
    print(f"\nTotal time of this script (the bench's build included): {time.time() - started:.1f} s")
    if not all(same for same, _ in checks.values()) or not all(auto_same.values()):
        sys.exit(2)


if __name__ == "__main__":
    main()
