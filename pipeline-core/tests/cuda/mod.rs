//! What the CUDA tests share: compiling emitted CUDA as host C++ (the
//! emulation) and, where nvcc is found, for the GPU; and a blur with
//! hand-written GPU schedules.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

/// A scratch directory of the test process.
pub fn scratch(what: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("pipeline-cuda-{what}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Compiles `source` as host C++ in `dir` with `CXX` (else `c++`) and the
/// flags of the emulation (no contraction into FMA, no fast math): the
/// executable.
pub fn cxx_compile(source: &str, dir: &Path) -> PathBuf {
    let src = dir.join("host.cpp");
    let bin = dir.join("host");
    std::fs::write(&src, source).unwrap();
    let cxx = std::env::var("CXX").unwrap_or_else(|_| "c++".into());
    let out = Command::new(&cxx)
        .args([
            "-std=c++17",
            "-O1",
            "-ffp-contract=off",
            "-fno-fast-math",
            "-w",
            "-o",
        ])
        .arg(&bin)
        .arg(&src)
        .arg("-lm")
        .output()
        .unwrap_or_else(|e| panic!("the C++ compiler `{cxx}` does not run ({e}); set CXX"));
    assert!(
        out.status.success(),
        "{cxx} rejects the emitted CUDA as host C++ ({}):\n{}",
        src.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    bin
}

/// Compiles `source` with nvcc for sm_80, as the kernels will be (no
/// contraction into FMA, IEEE division and square root); only compiles:
/// nothing here can run it. Without nvcc it says so and returns.
pub fn nvcc_compile(source: &str, dir: &Path, what: &str) {
    let Some(nvcc) = pipeline_core::codegen::cuda::nvcc() else {
        eprintln!("nvcc not found (NVCC, CUDA_HOME, CUDA_PATH, PATH): the device compile of the {what} is skipped");
        return;
    };
    let src = dir.join("device.cu");
    std::fs::write(&src, source).unwrap();
    let out = Command::new(&nvcc)
        .args([
            "-c",
            "-std=c++17",
            "-gencode",
            "arch=compute_80,code=sm_80",
            "-fmad=false",
            "-prec-div=true",
            "-prec-sqrt=true",
            "-o",
        ])
        .arg(dir.join("device.o"))
        .arg(&src)
        .output()
        .unwrap_or_else(|e| panic!("{} does not run: {e}", nvcc.display()));
    assert!(
        out.status.success(),
        "nvcc rejects the emitted CUDA ({}):\n{}",
        src.display(),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A 3x3 blur, for hand-written GPU schedules.
pub const BLUR: &str = "fn blur(input: Image<u16, 2>) -> Image<u16, 2> {
    let c = input.clamp_edge();
    blur_x(x, y) = (c(x - 1, y) as u32 + c(x, y) as u32 + c(x + 1, y) as u32) / 3;
    out(x, y) = ((blur_x(x, y - 1) + blur_x(x, y) + blur_x(x, y + 1)) / 3) as u16;
    out
}";

/// `for cuda` blocks of [`BLUR`]: tiles, blocks and threads named one by
/// one around a serial loop, loops inside a thread, a func per thread, and
/// funcs per block (in shared memory): shared out among the block's
/// threads, on threads of their own, and per iteration of a serial loop
/// inside the blocks; vector lanes of a thread whose loads are all
/// clamped (their values computed before the guarded stores), eight a
/// thread (16 bytes), reading a tile in shared memory, and three a thread
/// (accesses of two); and a
/// column of points a thread with `blur_x` sliding down it, in a folded
/// buffer of the thread's own (4 points, and 8: a loop fully unrolled).
pub const BLUR_SCHEDULES: [&str; 13] = [
    "blur_x.compute_root().gpu_tile(x, y, xo, yo, xi, yi, 16, 16);
     out.gpu_tile(x, y, xo, yo, xi, yi, 32, 4);",
    "blur_x.compute_inline();
     out.split(x, xo, xi, 64).split(y, yo, yi, 4).reorder(xi, yi, xo, yo).gpu_blocks(xo, yo).gpu_threads(xi);",
    "blur_x.compute_root().gpu_tile(x, y, xo, yo, xi, yi, 8, 8).unroll(xi, 2);
     out.gpu_tile(x, y, xo, yo, xi, yi, 16, 8).vectorize(xi, 4);",
    "blur_x.compute_at(out, xi);
     out.gpu_tile(x, y, xo, yo, xi, yi, 16, 8);",
    "blur_x.compute_at(out, xo);
     out.gpu_tile(x, y, xo, yo, xi, yi, 32, 8);",
    "blur_x.compute_at(out, xo).gpu_threads(x, y);
     out.gpu_tile(x, y, xo, yo, xi, yi, 16, 16);",
    "blur_x.compute_at(out, yi);
     out.split(x, xo, xi, 32).split(y, yo, yi, 8).reorder(xi, yi, xo, yo).gpu_blocks(xo, yo).gpu_threads(xi);",
    "blur_x.compute_inline();
     out.gpu_tile(x, y, xo, yo, xi, yi, 16, 8).vectorize(xi, 4);",
    "blur_x.compute_inline();
     out.gpu_tile(x, y, xo, yo, xi, yi, 64, 4).vectorize(xi, 8);",
    "blur_x.compute_at(out, xo);
     out.gpu_tile(x, y, xo, yo, xi, yi, 64, 4).vectorize(xi, 4);",
    "blur_x.compute_inline();
     out.gpu_tile(x, y, xo, yo, xi, yi, 12, 4).vectorize(xi, 3);",
    "blur_x.store_at(out, xi).compute_at(out, yii);
     out.split(x, xo, xi, 16).split(y, yo, yt, 16).split(yt, yi, yii, 4)
        .reorder(yii, xi, yi, xo, yo).gpu_blocks(xo, yo).gpu_threads(xi, yi);",
    "blur_x.store_at(out, xi).compute_at(out, yii);
     out.split(x, xo, xi, 32).split(y, yo, yt, 64).split(yt, yi, yii, 8)
        .reorder(yii, xi, yi, xo, yo).gpu_blocks(xo, yo).gpu_threads(xi, yi);",
];

/// A func with an update computed per block: the pure definition shared
/// out among the block's threads, the update after a barrier.
pub const UPDATED: &str = "fn updated(input: Image<u16, 2>) -> Image<u32, 2> {
    let c = input.clamp_edge();
    s(x, y) = 0u32;
    for r in rdom(-1..2) {
        s(x, y) += c(x + r, y) as u32 * (r + 2) as u32;
    }
    out(x, y) = s(x, y - 1) + s(x, y) * 2 + s(x, y + 1);
    out
}";

/// A func read across a whole row by an update: computed per thread, its
/// buffer has no constant bound and comes from the device heap, while the
/// update's own one-element buffer is a local array.
pub const ROWS: &str = "fn rows(input: Image<u16, 2>) -> Image<u32, 2> {
    let c = input.clamp_edge();
    bx(x, y) = c(x - 1, y) as u32 + c(x + 1, y) as u32;
    acc(x, y) = 0u32;
    for r in rdom(0..input.width()) {
        acc(x, y) += bx(r, y) ^ (x as u32);
    }
    out(x, y) = acc(x, y) * 3;
    out
}";

/// Loads without a boundary condition, one under a selection, read by
/// vector lanes of f32 (the lanes at once where all pass the guard).
pub const TAPS: &str = "fn taps(input: Image<f32, 2>) -> Image<f32, 2> {
    out(x, y) = input(x - 2, y) * 0.25 + input(x + 1, y) * 0.5 + input(x, y - 1) * 0.25
        + select(x > 3, input(x - 1, y + 1), 0.0);
    out
}";

/// Loads at a stride of 2 through a clamp, read by 16 lanes of bytes, one
/// at a coordinate a `let` binds.
pub const PAIRS: &str = "fn pairs(input: Image<u8, 2>) -> Image<u8, 2> {
    let c = input.clamp_edge();
    out(x, y) = {
        let odd = 2 * x + 1;
        ((c(2 * x, y) as u16 + c(2 * x + 1, y) as u16 + c(odd, y + 1) as u16 + 1) / 3) as u8
    };
    out
}";

/// Every hand-written GPU schedule of the tests: (pipeline, name, block).
pub fn hand_written() -> Vec<(String, &'static str, &'static str)> {
    let mut all: Vec<_> = BLUR_SCHEDULES
        .iter()
        .map(|block| {
            (
                format!("{BLUR}\nschedule blur for cuda {{ {block} }}"),
                "blur",
                *block,
            )
        })
        .collect();
    let block = "s.compute_at(out, xo); out.gpu_tile(x, y, xo, yo, xi, yi, 16, 8);";
    all.push((
        format!("{UPDATED}\nschedule updated for cuda {{ {block} }}"),
        "updated",
        block,
    ));
    for (source, name, block) in [
        (
            TAPS,
            "taps",
            "out.gpu_tile(x, y, xo, yo, xi, yi, 16, 4).vectorize(xi, 4);",
        ),
        (
            PAIRS,
            "pairs",
            "out.gpu_tile(x, y, xo, yo, xi, yi, 32, 4).vectorize(xi, 16);",
        ),
    ] {
        all.push((
            format!("{source}\nschedule {name} for cuda {{ {block} }}"),
            name,
            block,
        ));
    }
    let block = "bx.compute_at(out, xi); acc.compute_at(out, xi); out.gpu_tile(x, y, xo, yo, xi, yi, 8, 4);";
    all.push((
        format!("{ROWS}\nschedule rows for cuda {{ {block} }}"),
        "rows",
        block,
    ));
    all
}
