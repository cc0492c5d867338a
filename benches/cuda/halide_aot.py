#!/usr/bin/env python3
"""Halide 21's CUDA versions of the GPU comparison's pipelines, compiled ahead
of time here (no GPU needed) into one program, `halide_cuda`, that a machine
with a GPU runs without Python or Halide: it times each pipeline on buffers
already on the device and writes its outputs for the comparison with ours.

    python3 benches/cuda/halide_aot.py OUT_DIR

The algorithms and GPU schedules are those of benches/cuda/src/main.rs, in
Halide's Python API: the same arithmetic (the integer outputs must be equal
bit for bit; the floats are built with `strict_float`, yet Halide's CUDA
backend still contracts multiply-adds into FMA, where ours never does, so
Harris's and the bilateral grid's outputs differ in the last bits and are
compared within a tolerance), the same tiles (32 x 8 threads),
and a func staged per block in shared memory where ours is. Runs itself in the virtual
environment of benches/halide/compare.py (target/halide-venv), creating it
if needed. The kernels are PTX for compute capability 8.0, which the driver
compiles for the GPU at hand; the runtime loads libcuda at run time.
"""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
VENV = ROOT / "target" / "halide-venv"
TARGET = "x86-64-linux-cuda-cuda_capability_80"


def reexec_in_venv():
    if Path(sys.prefix).resolve() == VENV.resolve():
        return
    python = VENV / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "-q", "halide>=21,<22", "numpy"], check=True)
    os.execv(str(python), [str(python), *sys.argv])


def load_compare():
    """benches/halide/compare.py as a module: the algorithms it shares."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("compare", ROOT / "benches" / "halide" / "compare.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def pipelines(hl):
    """name -> (output func, input param), scheduled for the GPU."""
    x, y = hl.Var("x"), hl.Var("y")
    xo, yo, xi, yi = hl.Var("xo"), hl.Var("yo"), hl.Var("xi"), hl.Var("yi")
    u16, u32 = hl.UInt(16), hl.UInt(32)
    out = {}
    compare = load_compare()

    def blur(name, how):
        inp = hl.ImageParam(u16, 2, "input")
        c = hl.BoundaryConditions.repeat_edge(inp)
        blur_x, o = hl.Func("blur_x"), hl.Func(name)
        blur_x[x, y] = (hl.cast(u32, c[x - 1, y]) + hl.cast(u32, c[x, y]) + hl.cast(u32, c[x + 1, y])) / 3
        o[x, y] = hl.cast(u16, (blur_x[x, y - 1] + blur_x[x, y] + blur_x[x, y + 1]) / 3)
        if how == "slide":
            # Each thread a column of 8 points, blur_x sliding down it.
            yt, yii = hl.Var("yt"), hl.Var("yii")
            o.split(x, xo, xi, 32).split(y, yo, yt, 64).split(yt, yi, yii, 8)
            o.reorder(yii, xi, yi, xo, yo).gpu_blocks(xo, yo).gpu_threads(xi, yi)
            blur_x.store_at(o, xi).compute_at(o, yii)
            out[name] = (o, inp)
            return
        if how in ("wide", "vec"):
            # Inlined, four (or eight) neighbouring points a thread (32 x 8
            # threads).
            xv, n = hl.Var("xv"), 4 if how == "wide" else 8
            o.split(x, xo, xi, 32 * n).split(y, yo, yi, 8).split(xi, xi, xv, n)
            o.reorder(xv, xi, yi, xo, yo).vectorize(xv).gpu_blocks(xo, yo).gpu_threads(xi, yi)
            out[name] = (o, inp)
            return
        o.gpu_tile(x, y, xo, yo, xi, yi, 32, 8)
        if how == "shared":
            blur_x.compute_at(o, xo).gpu_threads(x, y)
        else:
            blur_x.compute_root().gpu_tile(x, y, xo, yo, xi, yi, 32, 8)
        out[name] = (o, inp)

    blur("blur_root", "root")
    blur("blur_shared", "shared")
    blur("blur_wide", "wide")
    blur("blur_vec", "vec")
    blur("blur_slide", "slide")

    # The bandwidth a kernel can reach: each point read and written once.
    inp = hl.ImageParam(u16, 2, "input")
    cp = hl.Func("copy")
    cp[x, y] = inp[x, y]
    cp.gpu_tile(x, y, xo, yo, xi, yi, 32, 8)
    out["copy"] = (cp, inp)
    inp = hl.ImageParam(u16, 2, "input")
    cp, xv = hl.Func("copy_vec"), hl.Var("xv")
    cp[x, y] = inp[x, y]
    cp.split(x, xo, xi, 256).split(y, yo, yi, 8).split(xi, xi, xv, 8)
    cp.reorder(xv, xi, yi, xo, yo).vectorize(xv).gpu_blocks(xo, yo).gpu_threads(xi, yi)
    out["copy_vec"] = (cp, inp)

    inp = hl.ImageParam(hl.UInt(8), 2, "input")
    c = hl.BoundaryConditions.repeat_edge(inp)
    gx, g = hl.Func("gauss_x"), hl.Func("gauss5x5")
    w = lambda k: hl.cast(u16, c[x + k, y])
    gx[x, y] = w(-2) + 4 * w(-1) + 6 * w(0) + 4 * w(1) + w(2)
    g[x, y] = hl.cast(
        hl.UInt(8),
        (gx[x, y - 2] + 4 * gx[x, y - 1] + 6 * gx[x, y] + 4 * gx[x, y + 1] + gx[x, y + 2] + 128) >> 8,
    )
    g.gpu_tile(x, y, xo, yo, xi, yi, 32, 8)
    gx.compute_at(g, xo).gpu_threads(x, y)
    out["gauss5x5"] = (g, inp)

    inp = hl.ImageParam(u16, 2, "input")
    d = hl.Func("down2")
    p = lambda dx, dy: hl.cast(u32, inp[2 * x + dx, 2 * y + dy])
    d[x, y] = hl.cast(u16, (p(0, 0) + p(1, 0) + p(0, 1) + p(1, 1) + 2) >> 2)
    d.gpu_tile(x, y, xo, yo, xi, yi, 32, 8)
    out["down2"] = (d, inp)

    # Harris: gray and the gradients at root, the rest inlined.
    f = hl.f32
    inp = hl.ImageParam(hl.Float(32), 3, "input")
    c = hl.BoundaryConditions.repeat_edge(inp)
    gray, ix, iy, h = hl.Func("gray"), hl.Func("ix"), hl.Func("iy"), hl.Func("harris")
    gray[x, y] = f(0.299) * c[x, y, 0] + f(0.587) * c[x, y, 1] + f(0.114) * c[x, y, 2]
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

    def box3x3(g):
        # The DSL's sum over (i, j), i innermost: a left fold.
        terms = [g(x + i, y + j) for j in (-1, 0, 1) for i in (-1, 0, 1)]
        acc = terms[0]
        for t in terms[1:]:
            acc = acc + t
        return acc

    sxx = box3x3(lambda a, b: ix[a, b] * ix[a, b])
    syy = box3x3(lambda a, b: iy[a, b] * iy[a, b])
    sxy = box3x3(lambda a, b: ix[a, b] * iy[a, b])
    det = sxx * syy - sxy * sxy
    trace = sxx + syy
    h[x, y] = det - f(0.04) * trace * trace
    h.gpu_tile(x, y, xo, yo, xi, yi, 32, 8)
    for stage in (gray, ix, iy):
        stage.compute_root().gpu_tile(x, y, xo, yo, xi, yi, 32, 8)
    out["harris"] = (h, inp)

    # The bilateral grid of examples/bilateral_grid.rs (compare.py's
    # algorithm): every stage at root in tiles of 32 x 8 threads, the levels
    # z serial around them, the grids' updates one thread per node column.
    bg, inp, funcs = compare.bilateral_funcs(hl)
    bg.gpu_tile(x, y, xo, yo, xi, yi, 32, 8)
    for stage in [funcs["intensity"], *funcs["grids"], *funcs["blurs"]]:
        stage.compute_root().gpu_tile(x, y, xo, yo, xi, yi, 32, 8)
    for grid in funcs["grids"]:
        grid.update(0).gpu_tile(x, y, xo, yo, xi, yi, 32, 8)
    out["bilateral_grid"] = (bg, inp)

    inp = hl.ImageParam(hl.UInt(8), 3, "rgb")
    gr = hl.Func("grey")
    ch = lambda k: hl.cast(u16, inp[x, y, k])
    gr[x, y] = hl.cast(hl.UInt(8), (ch(0) * 77 + ch(1) * 150 + ch(2) * 29) >> 8)
    gr.gpu_tile(x, y, xo, yo, xi, yi, 32, 8)
    out["grey"] = (gr, inp)
    return out


def main():
    reexec_in_venv()
    import halide as hl

    dest = Path(sys.argv[1] if len(sys.argv) > 1 else ROOT / "target" / "cuda-compare").resolve()
    dest.mkdir(parents=True, exist_ok=True)
    # No float rewrites (yet Halide's CUDA backend still contracts into FMA).
    target = hl.Target(TARGET + "-no_runtime-strict_float")
    libs = []
    for name, (func, inp) in pipelines(hl).items():
        prefix = str(dest / f"halide_{name}")
        func.compile_to_static_library(prefix, [inp], f"halide_{name}", target)
        libs.append(prefix + ".a")
    runtime = str(dest / "halide_runtime.o")
    hl.compile_standalone_runtime(runtime, hl.Target(TARGET))
    include = Path(hl.__file__).parent / "include"
    driver = Path(__file__).parent / "halide_driver.cpp"
    exe = dest / "halide_cuda"
    cmd = ["c++", "-O2", "-std=c++17", f"-I{include}", f"-I{dest}", str(driver), *libs, runtime,
           "-ldl", "-lpthread", "-o", str(exe)]
    subprocess.run(cmd, check=True)
    print(f"built {exe}")


if __name__ == "__main__":
    main()
