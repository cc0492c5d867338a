//! Our blurs beside libblur's (0.24), the crate a Rust user would pick for a
//! fast blur, on the same 3840x2160 image in the same run.
//!
//! `cargo bench --manifest-path benches/libblur/Cargo.toml [-- NAME...]`, or
//! through `python3 benches/halide/compare.py`, which runs it last. NAME is one
//! of the comparisons below (default all). `LIBBLUR_RUNS` (default 10) timed
//! runs per side and round, `LIBBLUR_ROUNDS` (default 5) rounds; both sides use
//! every thread rayon has (`RAYON_NUM_THREADS`), libblur through
//! `ThreadingPolicy::Fixed`.
//!
//! A shared machine's speed drifts over seconds, so the two sides alternate:
//! in each round, ours runs `LIBBLUR_RUNS` times and then libblur's does, and
//! the table gives the median over rounds of each side's median, the median
//! and range of the per-round ratios, and each side's fastest run.
//!
//! Where both sides compute the same arithmetic, the outputs must agree bit for
//! bit (the bench panics otherwise):
//! - libblur's fixed-point separable filters round each pass to the element
//!   type. With the binomial kernel [1 4 6 4 1]/16 a pass of u8 is
//!   `(sum + 8) >> 4` (weights in Q7, round half up) and one of u16 is
//!   `(sum + 7) >> 4` (weights in Q15, plus 2^14 - 1: round half down); our
//!   `*_q` pipelines write that out;
//! - its box blur multiplies each pass's sum of 3 by 1/3 in f32 and rounds to
//!   nearest, which for integer sums is `(sum + 1) / 3`.
//!
//! libblur's `gaussian_blur` takes a true Gaussian of 5 taps (sigma from the
//! kernel size), not the binomial one, so it is timed beside our exact
//! binomial Gaussian (one rounding at the end, u16 or u32 intermediates, the
//! pipeline of the Halide comparison) without an output check.

use libblur::{
    BlurImage, BlurImageMut, BoxBlurParameters, ConvolutionMode, EdgeMode, FastBlurChannels,
    GaussianBlurParams, Scalar, ThreadingPolicy,
};
use pipeline::{pipeline, Buffer};
use std::hint::black_box;
use std::num::NonZeroUsize;

// The exact 5x5 binomial Gaussian of u8 with u16 intermediates, one rounding
// at the end: the pipeline and schedule of the Halide comparison.
#[path = "../support/gauss5x5.rs"]
mod gauss5x5_pipeline;
use gauss5x5_pipeline::gauss5x5;

// The binomial Gaussian with libblur's fixed-point arithmetic: each pass
// rounds to u8.
pipeline! {
    pub fn gauss5x5_q(input: Image<u8, 2>) -> Image<u8, 2> {
        let clamped = input.clamp_edge();
        gauss_x(x, y) = (((clamped(x - 2, y) as u16)
            + 4 * (clamped(x - 1, y) as u16)
            + 6 * (clamped(x, y) as u16)
            + 4 * (clamped(x + 1, y) as u16)
            + (clamped(x + 2, y) as u16)
            + 8) >> 4) as u8;
        out(x, y) = (((gauss_x(x, y - 2) as u16)
            + 4 * (gauss_x(x, y - 1) as u16)
            + 6 * (gauss_x(x, y) as u16)
            + 4 * (gauss_x(x, y + 1) as u16)
            + (gauss_x(x, y + 2) as u16)
            + 8) >> 4) as u8;
        out
    }

    schedule gauss5x5_q {
        out.split(y, yo, yi, 32).parallel(yo).vectorize(x, 32);
        gauss_x.store_at(out, yo).compute_at(out, yi).vectorize(x, 32);
    }
}

// The exact binomial Gaussian of u16, u32 intermediates.
pipeline! {
    pub fn gauss5x5_u16(input: Image<u16, 2>) -> Image<u16, 2> {
        let clamped = input.clamp_edge();
        gauss_x(x, y) = (clamped(x - 2, y) as u32)
            + 4 * (clamped(x - 1, y) as u32)
            + 6 * (clamped(x, y) as u32)
            + 4 * (clamped(x + 1, y) as u32)
            + (clamped(x + 2, y) as u32);
        out(x, y) = ((gauss_x(x, y - 2)
            + 4 * gauss_x(x, y - 1)
            + 6 * gauss_x(x, y)
            + 4 * gauss_x(x, y + 1)
            + gauss_x(x, y + 2)
            + 128) >> 8) as u16;
        out
    }

    schedule gauss5x5_u16 {
        out.split(y, yo, yi, 32).parallel(yo).vectorize(x, 16);
        gauss_x.store_at(out, yo).compute_at(out, yi).vectorize(x, 16);
    }
}

// The binomial Gaussian of u16 with libblur's arithmetic: each pass rounds to
// u16, half down (its u16 kernels add 2^14 - 1 before shifting by 15).
pipeline! {
    pub fn gauss5x5_u16_q(input: Image<u16, 2>) -> Image<u16, 2> {
        let clamped = input.clamp_edge();
        gauss_x(x, y) = (((clamped(x - 2, y) as u32)
            + 4 * (clamped(x - 1, y) as u32)
            + 6 * (clamped(x, y) as u32)
            + 4 * (clamped(x + 1, y) as u32)
            + (clamped(x + 2, y) as u32)
            + 7) >> 4) as u16;
        out(x, y) = (((gauss_x(x, y - 2) as u32)
            + 4 * (gauss_x(x, y - 1) as u32)
            + 6 * (gauss_x(x, y) as u32)
            + 4 * (gauss_x(x, y + 1) as u32)
            + (gauss_x(x, y + 2) as u32)
            + 7) >> 4) as u16;
        out
    }

    schedule gauss5x5_u16_q {
        out.split(y, yo, yi, 32).parallel(yo).vectorize(x, 16);
        gauss_x.store_at(out, yo).compute_at(out, yi).vectorize(x, 16);
    }
}

// A 3x3 box blur of u8 rounded to nearest in each pass, as libblur's.
pipeline! {
    pub fn box3x3(input: Image<u8, 2>) -> Image<u8, 2> {
        let clamped = input.clamp_edge();
        box_x(x, y) = ((clamped(x - 1, y) as u16 + clamped(x, y) as u16
            + clamped(x + 1, y) as u16 + 1) / 3) as u8;
        out(x, y) = ((box_x(x, y - 1) as u16 + box_x(x, y) as u16
            + box_x(x, y + 1) as u16 + 1) / 3) as u8;
        out
    }

    schedule box3x3 {
        out.split(y, yo, yi, 32).parallel(yo).vectorize(x, 32);
        box_x.store_at(out, yo).compute_at(out, yi).vectorize(x, 32);
    }
}

const WIDTH: usize = 3840;
const HEIGHT: usize = 2160;

/// A deterministic 32-bit hash of a coordinate (the Halide comparison's).
fn hash(x: usize, y: usize) -> u32 {
    let mut h = (x as u32).wrapping_mul(0x9E37_79B1) ^ (y as u32).wrapping_mul(0x85EB_CA77);
    h ^= h >> 15;
    h = h.wrapping_mul(0x2C1B_3C6D);
    h ^= h >> 12;
    h
}

/// A smooth ramp plus noise: a blur of pure noise would be flat.
fn pixel_u8(x: usize, y: usize) -> u8 {
    (((x + 2 * y) % 192) as u32 + (hash(x, y) >> 26)) as u8
}

fn pixel_u16(x: usize, y: usize) -> u16 {
    (((x * 13 + y * 7) % 49152) as u32 + (hash(x, y) >> 18)) as u16
}

/// One side of a comparison: a name and a call that computes into its own
/// output.
struct Side<'a> {
    name: &'static str,
    run: Box<dyn FnMut() + 'a>,
}

/// One comparison: our pipeline beside libblur's function, on the same input.
struct Comparison<'a> {
    name: &'static str,
    ours: Side<'a>,
    theirs: Side<'a>,
    /// Whether both compute the same arithmetic, so that outputs must agree.
    same_arithmetic: bool,
}

#[path = "../support/timing.rs"]
mod timing;
use timing::time;

fn median(sorted: &[f64]) -> f64 {
    let n = sorted.len();
    if n % 2 == 1 {
        sorted[n / 2]
    } else {
        (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0
    }
}

fn sorted(mut v: Vec<f64>) -> Vec<f64> {
    v.sort_by(f64::total_cmp);
    v
}

fn env_count(name: &str, default: usize) -> usize {
    match std::env::var(name) {
        Ok(s) => s
            .parse()
            .unwrap_or_else(|_| panic!("{name}={s} is not a count")),
        Err(_) => default,
    }
}

/// Where the two outputs differ: "identical", or how many elements differ
/// and the first.
fn differences<T: PartialEq + std::fmt::Debug>(ours: &[T], theirs: &[T]) -> String {
    assert_eq!(ours.len(), theirs.len());
    match ours.iter().zip(theirs).position(|(a, b)| a != b) {
        None => "identical".to_string(),
        Some(i) => format!(
            "{} of {} differ, first at (x, y) = ({}, {}): ours {:?}, libblur {:?}",
            ours.iter().zip(theirs).filter(|(a, b)| a != b).count(),
            ours.len(),
            i % WIDTH,
            i / WIDTH,
            ours[i],
            theirs[i]
        ),
    }
}

/// The 3x3 box blur rounded per pass, in plain loops: the judge when ours
/// and libblur's disagree.
fn box3x3_reference(input: &[u8]) -> Vec<u8> {
    let at = |x: isize, y: isize| {
        let (x, y) = (
            x.clamp(0, WIDTH as isize - 1),
            y.clamp(0, HEIGHT as isize - 1),
        );
        input[y as usize * WIDTH + x as usize] as u16
    };
    let box_x = |x: isize, y: isize| (at(x - 1, y) + at(x, y) + at(x + 1, y) + 1) / 3;
    let mut out = vec![0; WIDTH * HEIGHT];
    for y in 0..HEIGHT as isize {
        for x in 0..WIDTH as isize {
            out[y as usize * WIDTH + x as usize] =
                ((box_x(x, y - 1) + box_x(x, y) + box_x(x, y + 1) + 1) / 3) as u8;
        }
    }
    out
}

fn main() {
    let runs = env_count("LIBBLUR_RUNS", 10);
    let rounds = env_count("LIBBLUR_ROUNDS", 5);
    let threads = rayon::current_num_threads();
    let policy = ThreadingPolicy::Fixed(NonZeroUsize::new(threads).expect("rayon has a thread"));
    let names: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let selected = |name: &str| names.is_empty() || names.iter().any(|n| n == name);
    let clamp = EdgeMode::Clamp.as_2d();
    let binomial = [
        1.0f32 / 16.0,
        4.0 / 16.0,
        6.0 / 16.0,
        4.0 / 16.0,
        1.0 / 16.0,
    ];
    let (w, h) = (WIDTH as u32, HEIGHT as u32);

    let in8 = Buffer::<u8, 2>::from_fn([WIDTH, HEIGHT], |[x, y]| pixel_u8(x, y));
    let in16 = Buffer::<u16, 2>::from_fn([WIDTH, HEIGHT], |[x, y]| pixel_u16(x, y));
    // One output per side and comparison, so that a check can read both after
    // the timing.
    let mut outs8: Vec<Vec<u8>> = vec![vec![0; WIDTH * HEIGHT]; 6];
    let mut outs16: Vec<Vec<u16>> = vec![vec![0; WIDTH * HEIGHT]; 4];
    let [o_gauss, o_gauss_lb, o_gauss_q, o_gauss_q_lb, o_box, o_box_lb] = &mut outs8[..] else {
        unreachable!()
    };
    let [o16_gauss, o16_gauss_lb, o16_gauss_q, o16_gauss_q_lb] = &mut outs16[..] else {
        unreachable!()
    };

    /// Our pipeline `f` from `input` into the slice `out`, viewed as an image.
    macro_rules! ours {
        ($f:ident, $input:expr, $out:expr) => {{
            let input = &$input;
            let out: &mut Vec<_> = $out;
            Box::new(move || {
                let mut view =
                    pipeline::ViewMut::from_slice(&mut out[..], [WIDTH, HEIGHT]).unwrap();
                $f(black_box(input), &mut view).unwrap()
            })
        }};
    }
    /// libblur's `call(src, dst)` from `input` into the slice `out`.
    macro_rules! theirs {
        ($input:expr, $out:expr, |$src:ident, $dst:ident| $call:expr) => {{
            let input = $input.as_slice();
            let out: &mut Vec<_> = $out;
            Box::new(move || {
                let $src = BlurImage::borrow(black_box(input), w, h, FastBlurChannels::Plane);
                let mut $dst = BlurImageMut::borrow(&mut out[..], w, h, FastBlurChannels::Plane);
                $call.unwrap()
            })
        }};
    }

    let comparisons = vec![
        Comparison {
            name: "gauss5x5_u8",
            ours: Side {
                name: "gauss5x5 (exact binomial, u16 intermediates)",
                run: ours!(gauss5x5, in8, o_gauss),
            },
            theirs: Side {
                name: "gaussian_blur (5 taps, fixed point)",
                run: theirs!(in8, o_gauss_lb, |src, dst| libblur::gaussian_blur(
                    &src,
                    &mut dst,
                    GaussianBlurParams::new_from_kernel(5.0),
                    clamp,
                    policy,
                    ConvolutionMode::FixedPoint
                )),
            },
            same_arithmetic: false,
        },
        Comparison {
            name: "gauss5x5_u8_q",
            ours: Side {
                name: "gauss5x5_q (rounds per pass)",
                run: ours!(gauss5x5_q, in8, o_gauss_q),
            },
            theirs: Side {
                name: "filter_1d_approx (binomial)",
                run: theirs!(in8, o_gauss_q_lb, |src, dst| libblur::filter_1d_approx::<
                    u8,
                    f32,
                    i32,
                    1,
                >(
                    &src,
                    &mut dst,
                    &binomial,
                    &binomial,
                    clamp,
                    Scalar::default(),
                    policy
                )),
            },
            same_arithmetic: true,
        },
        Comparison {
            name: "gauss5x5_u16",
            ours: Side {
                name: "gauss5x5_u16 (exact binomial, u32 intermediates)",
                run: ours!(gauss5x5_u16, in16, o16_gauss),
            },
            theirs: Side {
                name: "gaussian_blur_u16 (5 taps, fixed point)",
                run: theirs!(in16, o16_gauss_lb, |src, dst| libblur::gaussian_blur_u16(
                    &src,
                    &mut dst,
                    GaussianBlurParams::new_from_kernel(5.0),
                    clamp,
                    policy,
                    ConvolutionMode::FixedPoint
                )),
            },
            same_arithmetic: false,
        },
        Comparison {
            name: "gauss5x5_u16_q",
            ours: Side {
                name: "gauss5x5_u16_q (rounds per pass)",
                run: ours!(gauss5x5_u16_q, in16, o16_gauss_q),
            },
            theirs: Side {
                name: "filter_1d_approx (binomial)",
                run: theirs!(
                    in16,
                    o16_gauss_q_lb,
                    |src, dst| libblur::filter_1d_approx::<u16, f32, u32, 1>(
                        &src,
                        &mut dst,
                        &binomial,
                        &binomial,
                        clamp,
                        Scalar::default(),
                        policy
                    )
                ),
            },
            same_arithmetic: true,
        },
        Comparison {
            name: "box3x3_u8",
            ours: Side {
                name: "box3x3 (rounds per pass)",
                run: ours!(box3x3, in8, o_box),
            },
            theirs: Side {
                name: "box_blur (3x3)",
                run: theirs!(in8, o_box_lb, |src, dst| libblur::box_blur(
                    &src,
                    &mut dst,
                    BoxBlurParameters::new(3),
                    policy
                )),
            },
            same_arithmetic: true,
        },
    ];
    let mut comparisons: Vec<Comparison> = comparisons
        .into_iter()
        .filter(|c| selected(c.name))
        .collect();

    println!("THREADS {threads} RUNS {runs} ROUNDS {rounds} SIZE {WIDTH}x{HEIGHT}");
    // Per comparison and round: ours median, libblur's median, ours min, libblur's min.
    let mut results: Vec<Vec<[f64; 4]>> = vec![Vec::new(); comparisons.len()];
    for round in 0..rounds {
        for (c, result) in comparisons.iter_mut().zip(&mut results) {
            let (om, omin) = time(runs, &mut c.ours.run);
            let (tm, tmin) = time(runs, &mut c.theirs.run);
            println!(
                "ROUND {round} {} ours {om:.3} {omin:.3} libblur {tm:.3} {tmin:.3}",
                c.name
            );
            result.push([om, tm, omin, tmin]);
        }
    }
    // What the table needs, then the closures go and the outputs can be read.
    let rows: Vec<(&str, &str, &str, bool)> = comparisons
        .iter()
        .map(|c| (c.name, c.ours.name, c.theirs.name, c.same_arithmetic))
        .collect();
    drop(comparisons);
    // Where the arithmetic is the same, the outputs are compared; ours must
    // also agree with plain loops where libblur's is not the reference.
    let outputs: Vec<String> = rows
        .iter()
        .map(|&(name, _, _, same)| match (name, same) {
            (_, false) => "different kernels, not compared".to_string(),
            ("gauss5x5_u8_q", true) => differences(o_gauss_q, o_gauss_q_lb),
            ("gauss5x5_u16_q", true) => differences(o16_gauss_q, o16_gauss_q_lb),
            ("box3x3_u8", true) => {
                let reference = box3x3_reference(in8.as_slice());
                let ours = differences(o_box, &reference);
                assert_eq!(ours, "identical", "box3x3 against plain loops");
                format!(
                    "libblur's against ours (which matches plain loops): {}",
                    differences(o_box, o_box_lb)
                )
            }
            _ => unreachable!("{name} has no output check"),
        })
        .collect();

    println!();
    println!(
        "| comparison | ours | libblur | ours ms | libblur ms | ours/libblur (range) | fastest: ours, libblur ms (ratio) | outputs |"
    );
    println!("|---|---|---|---:|---:|---:|---|---|");
    for (((name, ours, theirs, _), r), outputs) in rows.into_iter().zip(&results).zip(outputs) {
        let column = |k: usize| sorted(r.iter().map(|v| v[k]).collect());
        let ratios = sorted(r.iter().map(|v| v[0] / v[1]).collect());
        let (omin, tmin) = (column(2)[0], column(3)[0]);
        println!(
            "| {name} | {ours} | {theirs} | {:.3} | {:.3} | {:.2} ({:.2}-{:.2}) | {omin:.3}, {tmin:.3} ({:.2}) | {outputs} |",
            median(&column(0)),
            median(&column(1)),
            median(&ratios),
            ratios[0],
            ratios[ratios.len() - 1],
            omin / tmin,
        );
    }
}
