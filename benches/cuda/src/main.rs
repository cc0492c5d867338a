//! Our CUDA pipelines beside Halide's (`halide_aot.py` builds Halide's side,
//! `halide_driver.cpp` times it the same way): each times `NAME::cuda_device`
//! on images already in device memory (warm-up calls, then the median and
//! the fastest of `CUDA_COMPARE_RUNS` calls, 50 by default, each returning
//! once its kernels have finished), checks the output against the CPU
//! entry's, and prints `RESULT name WxH median_ms min_ms`; with a directory
//! argument it writes each output's bytes there as `name.bin`, for the
//! comparison with Halide's (`scripts/gpu_check.sh run`). With
//! `CUDA_COMPARE_ONLY=name` it times that pipeline alone (for a profiler
//! that reports each kernel's time, as `scripts/gpu_check.sh` runs it).
//!
//! The algorithms are the CPU comparison's (benches/halide_compare.rs), grey
//! from planar RGB (a device buffer is dense); the GPU schedules are 32 x 8
//! threads a block, with the stencils' first stage staged per block in
//! shared memory, the blur also with its first stage at root and with its
//! first stage inlined and four points a thread (`blur_wide`) or eight
//! (`blur_vec`, 16-byte accesses; `copy_vec` beside it), and Harris
//! with gray and the gradients at root, the rest inlined, as Halide's same
//! schedules. The integer outputs must equal Halide's bit for bit. Ours
//! are IEEE floats without contraction into FMA (nvcc -fmad=false), as the
//! CPU's; Halide's CUDA backend contracts multiply-adds even under
//! `strict_float`, so Harris's and the bilateral grid's outputs differ from
//! ours in the last bits, and Halide's kernels do fewer operations there.
//! The bilateral grid is the
//! example's (examples/bilateral_grid.rs, with its `for cuda` block): a
//! gather into the grid, every stage at root in tiles of 32 x 8 threads.

use pipeline::cuda::DeviceBuffer;
use pipeline::{pipeline, Buffer, Element, Error};
use std::time::Instant;

pipeline! {
    /// The 3x3 blur every `blur_*` pipeline computes, each under its own
    /// GPU schedule (its funcs: `out` and `out.blur_x`).
    fn blur3(c: Func) -> Func {
        blur_x(x, y) = (c(x - 1, y) as u32 + c(x, y) as u32 + c(x + 1, y) as u32) / 3;
        out(x, y) = ((blur_x(x, y - 1) + blur_x(x, y) + blur_x(x, y + 1)) / 3) as u16;
        out
    }

    pub fn blur_root(input: Image<u16, 2>) -> Image<u16, 2> {
        let out = blur3(input.clamp_edge());
        out
    }
    schedule blur_root for cuda {
        out.blur_x.compute_root().gpu_tile(x, y, xo, yo, xi, yi, 32, 8);
        out.gpu_tile(x, y, xo, yo, xi, yi, 32, 8);
    }

    pub fn blur_shared(input: Image<u16, 2>) -> Image<u16, 2> {
        let out = blur3(input.clamp_edge());
        out
    }
    schedule blur_shared for cuda {
        out.blur_x.compute_at(out, xo);
        out.gpu_tile(x, y, xo, yo, xi, yi, 32, 8);
    }

    pub fn blur_wide(input: Image<u16, 2>) -> Image<u16, 2> {
        let out = blur3(input.clamp_edge());
        out
    }
    schedule blur_wide for cuda {
        // One kernel, four neighbouring points a thread: more loads in
        // flight for the memory to serve.
        out.blur_x.compute_inline();
        out.gpu_tile(x, y, xo, yo, xi, yi, 128, 8).vectorize(xi, 4);
    }

    pub fn blur_vec(input: Image<u16, 2>) -> Image<u16, 2> {
        let out = blur3(input.clamp_edge());
        out
    }
    schedule blur_vec for cuda {
        // One kernel, eight neighbouring points a thread: each row's eight
        // read and the eight results written in one 16-byte access.
        out.blur_x.compute_inline();
        out.gpu_tile(x, y, xo, yo, xi, yi, 256, 8).vectorize(xi, 8);
    }

    pub fn blur_slide(input: Image<u16, 2>) -> Image<u16, 2> {
        let out = blur3(input.clamp_edge());
        out
    }
    schedule blur_slide for cuda {
        // Each thread a column of 8 points: `blur_x` slides down it, one
        // new row a point (10 rows for 8 points where blur_wide computes 24).
        out.blur_x.store_at(out, xi).compute_at(out, yii);
        out.split(x, xo, xi, 32).split(y, yo, yt, 64).split(yt, yi, yii, 8)
            .reorder(yii, xi, yi, xo, yo).gpu_blocks(xo, yo).gpu_threads(xi, yi);
    }

    /// The bandwidth a kernel can reach: each point read and written once.
    pub fn copy(input: Image<u16, 2>) -> Image<u16, 2> {
        out(x, y) = input(x, y);
        out
    }
    schedule copy for cuda {
        out.gpu_tile(x, y, xo, yo, xi, yi, 32, 8);
    }

    /// The same, eight points a thread: 16-byte loads and stores.
    pub fn copy_vec(input: Image<u16, 2>) -> Image<u16, 2> {
        out(x, y) = input(x, y);
        out
    }
    schedule copy_vec for cuda {
        out.gpu_tile(x, y, xo, yo, xi, yi, 256, 8).vectorize(xi, 8);
    }

    pub fn gauss5x5(input: Image<u8, 2>) -> Image<u8, 2> {
        let c = input.clamp_edge();
        gauss_x(x, y) = (c(x - 2, y) as u16) + 4 * (c(x - 1, y) as u16) + 6 * (c(x, y) as u16)
            + 4 * (c(x + 1, y) as u16) + (c(x + 2, y) as u16);
        out(x, y) = ((gauss_x(x, y - 2) + 4 * gauss_x(x, y - 1) + 6 * gauss_x(x, y)
            + 4 * gauss_x(x, y + 1) + gauss_x(x, y + 2) + 128) >> 8) as u8;
        out
    }
    schedule gauss5x5 for cuda {
        gauss_x.compute_at(out, xo);
        out.gpu_tile(x, y, xo, yo, xi, yi, 32, 8);
    }

    pub fn down2(input: Image<u16, 2>) -> Image<u16, 2> {
        out(x, y) = ((input(2 * x, 2 * y) as u32 + input(2 * x + 1, 2 * y) as u32
            + input(2 * x, 2 * y + 1) as u32 + input(2 * x + 1, 2 * y + 1) as u32 + 2) >> 2) as u16;
        out
    }
    schedule down2 for cuda {
        out.gpu_tile(x, y, xo, yo, xi, yi, 32, 8);
    }

    pub fn harris(input: Image<f32, 3>) -> Image<f32, 2> {
        let clamped = input.clamp_edge();
        gray(x, y) = 0.299 * clamped(x, y, 0) + 0.587 * clamped(x, y, 1) + 0.114 * clamped(x, y, 2);
        ix(x, y) = ((gray(x + 1, y - 1) - gray(x - 1, y - 1))
            + 2.0 * (gray(x + 1, y) - gray(x - 1, y))
            + (gray(x + 1, y + 1) - gray(x - 1, y + 1))) * 0.125;
        iy(x, y) = ((gray(x - 1, y + 1) - gray(x - 1, y - 1))
            + 2.0 * (gray(x, y + 1) - gray(x, y - 1))
            + (gray(x + 1, y + 1) - gray(x + 1, y - 1))) * 0.125;
        ixx(x, y) = ix(x, y) * ix(x, y);
        iyy(x, y) = iy(x, y) * iy(x, y);
        ixy(x, y) = ix(x, y) * iy(x, y);
        sxx(x, y) = sum((-1..=1, -1..=1), |(i, j)| ixx(x + i, y + j));
        syy(x, y) = sum((-1..=1, -1..=1), |(i, j)| iyy(x + i, y + j));
        sxy(x, y) = sum((-1..=1, -1..=1), |(i, j)| ixy(x + i, y + j));
        out(x, y) = {
            let det = sxx(x, y) * syy(x, y) - sxy(x, y) * sxy(x, y);
            let trace = sxx(x, y) + syy(x, y);
            det - 0.04 * trace * trace
        };
        out
    }
    schedule harris for cuda {
        gray.compute_root().gpu_tile(x, y, xo, yo, xi, yi, 32, 8);
        ix.compute_root().gpu_tile(x, y, xo, yo, xi, yi, 32, 8);
        iy.compute_root().gpu_tile(x, y, xo, yo, xi, yi, 32, 8);
        ixx.compute_inline();
        iyy.compute_inline();
        ixy.compute_inline();
        sxx.compute_inline();
        syy.compute_inline();
        sxy.compute_inline();
        out.gpu_tile(x, y, xo, yo, xi, yi, 32, 8);
    }

    pub fn grey(rgb: Image<u8, 3>) -> Image<u8, 2> {
        out(x, y) = ((rgb(x, y, 0) as u16 * 77 + rgb(x, y, 1) as u16 * 150
            + rgb(x, y, 2) as u16 * 29) >> 8) as u8;
        out
    }
    schedule grey for cuda {
        out.gpu_tile(x, y, xo, yo, xi, yi, 32, 8);
    }
}

#[path = "../../../examples/bilateral_grid.rs"]
mod bilateral_example;
#[path = "../../support/inputs.rs"]
mod inputs;
use inputs::{hash, ramp_and_noise, Raw};

/// Times `call` on the device, checks `out` against `expected`, reports and
/// dumps it.
fn timed<T: Element + Raw>(
    name: &str,
    out: &mut DeviceBuffer<T, 2>,
    expected: &Buffer<T, 2>,
    input_bytes: usize,
    mut call: impl FnMut(&mut DeviceBuffer<T, 2>) -> Result<(), Error>,
) -> Result<(), Error> {
    if std::env::var("CUDA_COMPARE_ONLY").is_ok_and(|only| only != name) {
        return Ok(());
    }
    let runs: usize = std::env::var("CUDA_COMPARE_RUNS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(50);
    for _ in 0..3 {
        call(out)?;
    }
    let mut ms = Vec::new();
    for _ in 0..runs {
        let start = Instant::now();
        call(out)?;
        ms.push(start.elapsed().as_secs_f64() * 1e3);
    }
    ms.sort_by(f64::total_cmp);
    let [w, h] = out.shape();
    let got = out.download()?;
    let same = got == *expected;
    let bytes = (input_bytes + got.len() * std::mem::size_of::<T>()) as f64;
    println!(
        "RESULT {name} {w}x{h} {:.4} {:.4} ({:.0} GB/s of the least traffic; {})",
        ms[ms.len() / 2],
        ms[0],
        bytes / (ms[ms.len() / 2] * 1e-3) / 1e9,
        if same {
            "equal to the CPU's"
        } else {
            "DIFFERENT from the CPU's"
        }
    );
    if let Some(dir) = std::env::args().nth(1) {
        let mut raw = Vec::new();
        for &v in got.as_slice() {
            v.extend_le(&mut raw);
        }
        std::fs::write(format!("{dir}/{name}.bin"), raw).expect("write the dump");
    }
    if !same {
        std::process::exit(2);
    }
    Ok(())
}

fn main() -> Result<(), Error> {
    {
        let (w, h) = (6400, 4800);
        let host = Buffer::<u16, 2>::from_fn([w, h], |[x, y]| (hash(x, y, 0) >> 16) as u16);
        let input = DeviceBuffer::upload(&host)?;
        let mut expected = Buffer::<u16, 2>::new([w, h]);
        blur_root(&host, &mut expected)?;
        let mut out = DeviceBuffer::<u16, 2>::new([w, h])?;
        timed("blur_root", &mut out, &expected, host.len() * 2, |o| {
            blur_root::cuda_device(&input, o)
        })?;
        timed("blur_shared", &mut out, &expected, host.len() * 2, |o| {
            blur_shared::cuda_device(&input, o)
        })?;
        timed("blur_wide", &mut out, &expected, host.len() * 2, |o| {
            blur_wide::cuda_device(&input, o)
        })?;
        timed("blur_vec", &mut out, &expected, host.len() * 2, |o| {
            blur_vec::cuda_device(&input, o)
        })?;
        timed("blur_slide", &mut out, &expected, host.len() * 2, |o| {
            blur_slide::cuda_device(&input, o)
        })?;
        timed("copy", &mut out, &host, host.len() * 2, |o| {
            copy::cuda_device(&input, o)
        })?;
        timed("copy_vec", &mut out, &host, host.len() * 2, |o| {
            copy_vec::cuda_device(&input, o)
        })?;
        let mut half = Buffer::<u16, 2>::new([w / 2, h / 2]);
        down2(&host, &mut half)?;
        let mut out = DeviceBuffer::<u16, 2>::new([w / 2, h / 2])?;
        timed("down2", &mut out, &half, host.len() * 2, |o| {
            down2::cuda_device(&input, o)
        })?;
    }
    {
        let (w, h) = (4096, 4096);
        let host = Buffer::<u8, 2>::from_fn([w, h], |[x, y]| (hash(x, y, 0) >> 24) as u8);
        let input = DeviceBuffer::upload(&host)?;
        let mut expected = Buffer::<u8, 2>::new([w, h]);
        gauss5x5(&host, &mut expected)?;
        let mut out = DeviceBuffer::<u8, 2>::new([w, h])?;
        timed("gauss5x5", &mut out, &expected, host.len(), |o| {
            gauss5x5::cuda_device(&input, o)
        })?;
    }
    {
        let (w, h) = (1920, 1024);
        let host = Buffer::<f32, 3>::from_fn([w, h, 3], |[x, y, c]| ramp_and_noise(x, y, c));
        let input = DeviceBuffer::upload(&host)?;
        let mut expected = Buffer::<f32, 2>::new([w, h]);
        harris(&host, &mut expected)?;
        let mut out = DeviceBuffer::<f32, 2>::new([w, h])?;
        timed("harris", &mut out, &expected, host.len() * 4, |o| {
            harris::cuda_device(&input, o)
        })?;
    }
    {
        let (w, h) = (3840, 2160);
        let host = Buffer::<u8, 3>::from_fn([w, h, 3], |[x, y, c]| (hash(x, y, c) >> 24) as u8);
        let input = DeviceBuffer::upload(&host)?;
        let mut expected = Buffer::<u8, 2>::new([w, h]);
        grey(&host, &mut expected)?;
        let mut out = DeviceBuffer::<u8, 2>::new([w, h])?;
        timed("grey", &mut out, &expected, host.len(), |o| {
            grey::cuda_device(&input, o)
        })?;
    }
    {
        // The example's bilateral grid (its `for cuda` schedule), on the
        // CPU comparison's size and input.
        use bilateral_example::bilateral_grid;
        let (w, h) = (2560, 1536);
        let host = Buffer::<f32, 2>::from_fn([w, h], |[x, y]| ramp_and_noise(x, y, 0));
        let input = DeviceBuffer::upload(&host)?;
        let mut expected = Buffer::<f32, 2>::new([w, h]);
        bilateral_grid(&host, &mut expected)?;
        let mut out = DeviceBuffer::<f32, 2>::new([w, h])?;
        timed("bilateral_grid", &mut out, &expected, host.len() * 4, |o| {
            bilateral_grid::cuda_device(&input, o)
        })?;
    }
    Ok(())
}
