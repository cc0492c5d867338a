//! Our side of the comparison with Halide (`benches/halide/compare.py`): eight
//! pipelines, each with the same algorithm and the same hand-written schedule as
//! the Halide version in that script, timed on the same deterministic inputs.
//!
//! `python3 benches/halide/compare.py` runs this bench and Halide and prints the
//! side-by-side table; to run this half alone:
//! `cargo bench --bench halide_compare [-- NAME...]` (NAME: `blur3x3_u16`,
//! `gauss5x5_u8`, `down2_u16`, `grey_rgb_u8`, `harris_f32`, `unsharp_f32`,
//! `bilateral_f32`, `pyramid_f32`, `copy_bandwidth`; default all).
//!
//! Each pipeline is run twice to warm up (the first call starts the thread pool),
//! then `HALIDE_COMPARE_RUNS` times (default 10); it prints one line
//! `RESULT <name> <width>x<height> <median_ms> <min_ms>`. A parallel copy of a
//! buffer of the blur's size measures the memory bandwidth:
//! `BANDWIDTH <GB/s> <bytes moved per copy> <fastest_ms>` (bytes read plus
//! written, over the fastest of at least 10 copies). The blur is also timed on
//! the first 256 rows of its input (6400x256: 6.6 MB read and written, which
//! the caches hold), 10 times as many runs, and so is grey (3840x256):
//! `CACHED blur3x3_u16 6400x256 <median_ms> <min_ms>`, the time of its
//! arithmetic with little waiting for memory. `HALIDE_COMPARE_LOWERED=1` also
//! prints each pipeline's lowered loop nest.
//! With `HALIDE_COMPARE_DUMP=DIR` every output is also written to `DIR/<name>.bin`
//! (raw little-endian elements, x fastest) so that the script can compare it with
//! Halide's element by element. The script builds the same inputs from the same
//! integer hash (`hash` and `ramp_and_noise` below), so no input needs to be written.

// Each example includes `examples/support`; included together, once each.
#![allow(clippy::duplicate_mod)]

use pipeline::{pipeline, Buffer, View};
use rayon::prelude::*;
use std::hint::black_box;

// The 3x3 box blur of the README and benches/blur_strategies.rs, u16 with u32
// intermediates and truncating divisions, scheduled as sliding windows in strips.
pipeline! {
    pub fn blur3x3(input: Image<u16, 2>) -> Image<u16, 2> {
        let clamped = input.clamp_edge();
        blur_x(x, y) = (clamped(x - 1, y) as u32 + clamped(x, y) as u32 + clamped(x + 1, y) as u32) / 3;
        out(x, y) = ((blur_x(x, y - 1) + blur_x(x, y) + blur_x(x, y + 1)) / 3) as u16;
        out
    }

    schedule blur3x3 {
        out.split(y, yo, yi, 32).parallel(yo).vectorize(x, 16);
        blur_x.store_at(out, yo).compute_at(out, yi).vectorize(x, 16);
    }
}

// A 5x5 binomial Gaussian of u8 with u16 intermediates (also timed beside
// libblur's, in benches/libblur).
#[path = "support/gauss5x5.rs"]
mod gauss5x5_pipeline;
use gauss5x5_pipeline::gauss5x5;

// The Harris response and the unsharp mask are the examples' own pipelines,
// algorithm and schedule.
// A 2x2 box downsample of a u16 image with rounding: loads of stride 2.
pipeline! {
    pub fn down2(input: Image<u16, 2>) -> Image<u16, 2> {
        out(x, y) = ((input(2 * x, 2 * y) as u32 + input(2 * x + 1, 2 * y) as u32
            + input(2 * x, 2 * y + 1) as u32 + input(2 * x + 1, 2 * y + 1) as u32 + 2) >> 2) as u16;
        out
    }

    schedule down2 {
        out.split(y, yo, yi, 16).parallel(yo).vectorize(x, 16);
    }
}

// Grey from interleaved RGB (the layout of an `image::RgbImage`), which the
// schedule declares, so that the input is read where it lies: Halide's
// `input.dim(0).set_stride(3)` on the other side.
pipeline! {
    pub fn grey_rgb(rgb: Image<u8, 3>) -> Image<u8, 2> {
        out(x, y) = ((rgb(x, y, 0) as u16 * 77 + rgb(x, y, 1) as u16 * 150
            + rgb(x, y, 2) as u16 * 29) >> 8) as u8;
        out
    }
    schedule grey_rgb {
        rgb.dim(0).set_stride(3).dim(2).set_stride(1);
        out.split(y, yo, yi, 16).parallel(yo).vectorize(x, 32);
    }
}

#[path = "../examples/bilateral_grid.rs"]
mod bilateral_example;
#[path = "../examples/harris.rs"]
mod harris_example;
#[path = "../examples/pyramid.rs"]
mod pyramid_example;
#[path = "../examples/unsharp.rs"]
mod unsharp_example;
use bilateral_example::bilateral_grid;
use harris_example::harris;
use pyramid_example::pyramid;
use unsharp_example::unsharp;

/// The unsharp mask's parameters (also in compare.py).
const SIGMA: f32 = 1.5;
const AMOUNT: f32 = 1.5;

#[path = "support/inputs.rs"]
mod inputs;
use inputs::{hash, ramp_and_noise, Raw};

/// Writes `data` to `$HALIDE_COMPARE_DUMP/<name>.bin` when that variable is set.
fn dump<T: Raw>(name: &str, data: &[T]) {
    let Some(dir) = std::env::var_os("HALIDE_COMPARE_DUMP") else {
        return;
    };
    let dir = std::path::PathBuf::from(dir);
    std::fs::create_dir_all(&dir).expect("create the dump directory");
    let mut bytes = Vec::with_capacity(std::mem::size_of_val(data));
    for &v in data {
        v.extend_le(&mut bytes);
    }
    let path = dir.join(format!("{name}.bin"));
    std::fs::write(&path, bytes).unwrap_or_else(|e| panic!("write {}: {e}", path.display()));
}

#[path = "support/timing.rs"]
mod timing;
use timing::time;

fn report(name: &str, w: usize, h: usize, (median, min): (f64, f64)) {
    println!("RESULT {name} {w}x{h} {median:.3} {min:.3}");
}

/// The `CACHED` line of `name` at `w`x`h`: `f` timed ten times as often as
/// the full image, its data staying in the caches between runs.
fn report_cached(name: &str, w: usize, h: usize, runs: usize, f: impl FnMut()) {
    let (median, min) = time(runs * 10, f);
    println!("CACHED {name} {w}x{h} {median:.4} {min:.4}");
}

fn main() {
    let runs: usize = match std::env::var("HALIDE_COMPARE_RUNS") {
        Ok(s) => s
            .parse()
            .unwrap_or_else(|_| panic!("HALIDE_COMPARE_RUNS={s} is not a count")),
        Err(_) => 10,
    };
    // `cargo bench` passes `--bench`; every other argument selects a pipeline.
    let names: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let selected = |name: &str| names.is_empty() || names.iter().any(|n| n == name);
    println!("THREADS {} RUNS {runs}", rayon::current_num_threads());
    // The instruction-set levels this processor has, lowest first (a
    // `PIPELINE_ISA` above the last runs the last).
    let levels: Vec<&str> = pipeline::rt::Isa::available()
        .iter()
        .map(|l| l.name())
        .collect();
    println!("LEVELS {}", levels.join(" "));
    // The processor, as a tuned entry for it alone names it.
    println!("PROCESSOR {}", pipeline::rt::processor());
    // HALIDE_COMPARE_LOWERED=1 prints each selected pipeline's loop nest first.
    if std::env::var_os("HALIDE_COMPARE_LOWERED").is_some() {
        let lowered = [
            ("blur3x3_u16", blur3x3::LOWERED),
            ("gauss5x5_u8", gauss5x5::LOWERED),
            ("down2_u16", down2::LOWERED),
            ("grey_rgb_u8", grey_rgb::LOWERED),
            ("harris_f32", harris::LOWERED),
            ("unsharp_f32", unsharp::LOWERED),
            ("bilateral_f32", bilateral_grid::LOWERED),
            ("pyramid_f32", pyramid::LOWERED),
        ];
        let schedules = [
            ("bilateral_f32", bilateral_grid::SCHEDULE),
            ("pyramid_f32", pyramid::SCHEDULE),
        ];
        for (name, text) in lowered.iter().filter(|(name, _)| selected(name)) {
            println!("LOWERED {name}\n{text}");
        }
        for (name, text) in schedules.iter().filter(|(name, _)| selected(name)) {
            println!("SCHEDULE {name}\n{text}");
        }
    }

    if selected("blur3x3_u16") {
        let (w, h) = (6400, 4800);
        let input = Buffer::<u16, 2>::from_fn([w, h], |[x, y]| (hash(x, y, 0) >> 16) as u16);
        let mut out = Buffer::<u16, 2>::new([w, h]);
        let t = time(runs, || blur3x3(black_box(&input), &mut out).unwrap());
        report("blur3x3_u16", w, h, t);
        dump("blur3x3_u16", out.as_slice());
        // The same rows with the data in cache: once warm, the input and output
        // stay in the caches between runs, so this times the arithmetic and
        // the loops, not the memory.
        let rows = 256;
        let small = Buffer::<u16, 2>::from_fn([w, rows], |[x, y]| (hash(x, y, 0) >> 16) as u16);
        let mut small_out = Buffer::<u16, 2>::new([w, rows]);
        report_cached("blur3x3_u16", w, rows, runs, || {
            blur3x3(black_box(&small), &mut small_out).unwrap()
        });
    }

    if selected("gauss5x5_u8") {
        let (w, h) = (4096, 4096);
        let input = Buffer::<u8, 2>::from_fn([w, h], |[x, y]| (hash(x, y, 0) >> 24) as u8);
        let mut out = Buffer::<u8, 2>::new([w, h]);
        let t = time(runs, || gauss5x5(black_box(&input), &mut out).unwrap());
        report("gauss5x5_u8", w, h, t);
        dump("gauss5x5_u8", out.as_slice());
    }

    if selected("down2_u16") {
        let (w, h) = (6400, 4800);
        let input = Buffer::<u16, 2>::from_fn([w, h], |[x, y]| (hash(x, y, 0) >> 16) as u16);
        let mut out = Buffer::<u16, 2>::new([w / 2, h / 2]);
        let t = time(runs, || down2(black_box(&input), &mut out).unwrap());
        report("down2_u16", w / 2, h / 2, t);
        dump("down2_u16", out.as_slice());
    }

    if selected("grey_rgb_u8") {
        let (w, h) = (3840, 2160);
        // A Buffer, as a caller would allocate it (NumPy's array on
        // Halide's side): both get transparent huge pages.
        let data = Buffer::<u8, 1>::from_fn([w * h * 3], |[i]| {
            (hash(i / 3 % w, i / 3 / w, i % 3) >> 24) as u8
        });
        let input = View::with_strides(data.as_slice(), [w, h, 3], [3, 3 * w, 1]).unwrap();
        let mut out = Buffer::<u8, 2>::new([w, h]);
        let t = time(runs, || grey_rgb(black_box(&input), &mut out).unwrap());
        report("grey_rgb_u8", w, h, t);
        dump("grey_rgb_u8", out.as_slice());
        // In cache, as the blur's: the arithmetic and the shuffles that
        // take the three channels apart, not the memory (256 rows: 16
        // strips, enough for the threads).
        let rows = 256;
        let small = View::with_strides(
            &data.as_slice()[..w * rows * 3],
            [w, rows, 3],
            [3, 3 * w, 1],
        )
        .unwrap();
        let mut small_out = Buffer::<u8, 2>::new([w, rows]);
        report_cached("grey_rgb_u8", w, rows, runs, || {
            grey_rgb(black_box(&small), &mut small_out).unwrap()
        });
    }

    if selected("harris_f32") {
        let (w, h) = (1920, 1024);
        let input = Buffer::<f32, 3>::from_fn([w, h, 3], |[x, y, c]| ramp_and_noise(x, y, c));
        let mut out = Buffer::<f32, 2>::new([w, h]);
        let t = time(runs, || harris(black_box(&input), &mut out).unwrap());
        report("harris_f32", w, h, t);
        dump("harris_f32", out.as_slice());
    }

    if selected("unsharp_f32") {
        let (w, h) = (2560, 1536);
        let input = Buffer::<f32, 3>::from_fn([w, h, 3], |[x, y, c]| ramp_and_noise(x, y, c));
        let mut out = Buffer::<f32, 3>::new([w, h, 3]);
        let t = time(runs, || {
            unsharp(black_box(&input), SIGMA, AMOUNT, &mut out).unwrap()
        });
        report("unsharp_f32", w, h, t);
        dump("unsharp_f32", out.as_slice());
    }

    if selected("bilateral_f32") {
        // The example's bilateral grid (8x8 cells, 10 levels) of a gray image.
        let (w, h) = (2560, 1536);
        let input = Buffer::<f32, 2>::from_fn([w, h], |[x, y]| ramp_and_noise(x, y, 0));
        let mut out = Buffer::<f32, 2>::new([w, h]);
        let t = time(runs, || {
            bilateral_grid(black_box(&input), &mut out).unwrap()
        });
        report("bilateral_f32", w, h, t);
        dump("bilateral_f32", out.as_slice());
    }

    if selected("pyramid_f32") {
        // The example's Gaussian and Laplacian pyramids: four outputs, dumped
        // one after the other (finest first).
        let (w, h) = (2560, 1536);
        let input = Buffer::<f32, 2>::from_fn([w, h], |[x, y]| ramp_and_noise(x, y, 0));
        let (s0, s1, s2, s3) = pyramid::output_shape(input.shape());
        let mut lap0 = Buffer::<f32, 2>::new(s0);
        let mut lap1 = Buffer::<f32, 2>::new(s1);
        let mut lap2 = Buffer::<f32, 2>::new(s2);
        let mut gauss3 = Buffer::<f32, 2>::new(s3);
        let t = time(runs, || {
            pyramid(
                black_box(&input),
                &mut lap0,
                &mut lap1,
                &mut lap2,
                &mut gauss3,
            )
            .unwrap()
        });
        report("pyramid_f32", w, h, t);
        let mut all = Vec::new();
        for level in [&lap0, &lap1, &lap2, &gauss3] {
            all.extend_from_slice(level.as_slice());
        }
        dump("pyramid_f32", &all);
    }

    if selected("copy_bandwidth") {
        // Copies of a buffer of the blur's size (6400x4800 u16), split into one
        // contiguous chunk per thread: the time the machine needs to read and write
        // as many bytes as the blur must, which bounds the blur from below. Two
        // ways: `copy_from_slice` (the C library's memcpy, whose plain stores
        // first read each destination line into the cache), and streaming stores
        // (`movntdq`, which write whole lines without reading them). The faster
        // is the bound; the fastest run of each (noise only ever slows a copy).
        let len = 6400 * 4800;
        let src: Vec<u16> = (0..len).map(|i| i as u16).collect();
        let mut dst = vec![0u16; len];
        let chunk = len.div_ceil(rayon::current_num_threads());
        let bytes = 2 * len * std::mem::size_of::<u16>();
        let gbs = |ms: f64| bytes as f64 / (ms * 1e-3) / 1e9;
        let (_, memcpy) = time(runs.max(10), || {
            dst.par_chunks_mut(chunk)
                .zip(black_box(&src).par_chunks(chunk))
                .for_each(|(d, s)| d.copy_from_slice(s));
        });
        assert_eq!(dst, src);
        println!("COPY memcpy {:.3} {memcpy:.3}", gbs(memcpy));
        #[cfg(not(target_arch = "x86_64"))]
        let fastest = memcpy;
        #[cfg(target_arch = "x86_64")]
        let fastest = {
            dst.fill(0);
            let (_, streaming) = time(runs.max(10), || {
                dst.par_chunks_mut(chunk)
                    .zip(black_box(&src).par_chunks(chunk))
                    .for_each(|(d, s)| copy_streaming(d, s));
            });
            assert_eq!(dst, src);
            println!("COPY streaming {:.3} {streaming:.3}", gbs(streaming));
            memcpy.min(streaming)
        };
        println!("BANDWIDTH {:.3} {bytes} {fastest:.3}", gbs(fastest));
    }
}

/// `d.copy_from_slice(s)` with streaming (non-temporal) stores of 16 bytes,
/// SSE2, which every x86-64 processor has; the elements before the first
/// 16-byte boundary of `d` and after the last are copied plainly.
#[cfg(target_arch = "x86_64")]
fn copy_streaming(d: &mut [u16], s: &[u16]) {
    use std::arch::x86_64::{__m128i, _mm_loadu_si128, _mm_sfence, _mm_stream_si128};
    assert_eq!(d.len(), s.len());
    let head = d.as_ptr().align_offset(16).min(d.len());
    let body = (d.len() - head) / 8 * 8;
    d[..head].copy_from_slice(&s[..head]);
    for i in (head..head + body).step_by(8) {
        // SAFETY: elements i..i + 8 are inside both slices (i + 8 <= head +
        // body <= len); d + i is 16-byte aligned (head is the offset of the
        // first boundary, and 8 u16 are 16 bytes); SSE2 is part of x86-64.
        unsafe {
            let v = _mm_loadu_si128(s.as_ptr().add(i).cast::<__m128i>());
            _mm_stream_si128(d.as_mut_ptr().add(i).cast::<__m128i>(), v);
        }
    }
    d[head + body..].copy_from_slice(&s[head + body..]);
    // SAFETY: SSE2. Orders the streaming stores before whatever follows
    // (here, rayon's signal that this chunk is done).
    unsafe { _mm_sfence() };
}
