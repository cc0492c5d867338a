//! Unsharp mask of a floating-point RGB image.
//!
//! Each channel is blurred with a separable 7-tap Gaussian; the detail the blur removes
//! (`input - blurred`) is scaled by `amount` and added back, and the result is clamped to
//! [0, 1]. `cargo run --release --example unsharp` sharpens a procedural 1024x768 image
//! and writes `out/unsharp_input.png` and `out/unsharp_output.png`.
#![allow(dead_code)]

#[path = "support/mod.rs"]
mod support;
use pipeline::{pipeline, Buffer};
use support::{noise, save_rgb};

/// Half the kernel width of the reference: the blur has `2 * RADIUS + 1 = 7` taps. The
/// pipeline writes the same bounds as literals (`-3..=3`).
pub const RADIUS: i32 = 3;

pipeline! {
    /// Unsharp mask of an RGB image with values in [0, 1], shape `[w, h, 3]`.
    ///
    /// Every channel is blurred with a separable 7-tap Gaussian of standard deviation
    /// `sigma` (edges repeat the border pixel); the output is
    /// `clamp(input + amount * (input - blurred), 0, 1)`.
    pub fn unsharp(input: Image<f32, 3>, sigma: f32, amount: f32) -> Image<f32, 3> {
        let clamped = input.clamp_edge();
        // The Gaussian at the 7 taps, then normalized so that the taps sum to one.
        gauss(i) = exp(-((i * i) as f32) / (2.0 * sigma * sigma));
        weight(i) = gauss(i) / sum(-3..=3, |j| gauss(j));
        blur_x(x, y, c) = sum(-3..=3, |i| weight(i) * clamped(x + i, y, c));
        blur_y(x, y, c) = sum(-3..=3, |i| weight(i) * blur_x(x, y + i, c));
        out(x, y, c) = clamp(
            input(x, y, c) + amount * (input(x, y, c) - blur_y(x, y, c)),
            0.0,
            1.0
        );
        out
    }

    // The horizontal pass slides down each strip of rows, folded to 8 rows.
    schedule unsharp {
        out.split(y, yo, yi, 32).parallel(yo).vectorize(x, 8);
        blur_y.compute_at(out, yi).vectorize(x, 8);
        blur_x.store_at(out, yo).compute_at(out, yi).vectorize(x, 8);
        weight.compute_root();
    }
}

/// The same unsharp mask as plain loops over slices, written without the DSL.
///
/// The weights, the horizontal pass, the vertical pass and the final mix use the same f32
/// operations in the same order as the pipeline (each sum starts at zero and adds the taps
/// from `-RADIUS` to `RADIUS`). Rows and columns are clamped to the image as
/// `clamp_edge()` does; the horizontal pass clamps its row too, so the vertical pass may
/// clamp the row of `blur_x` it reads in the same way.
pub fn reference(input: &Buffer<f32, 3>, sigma: f32, amount: f32) -> Buffer<f32, 3> {
    let [w, h, channels] = input.shape();
    let src = input.as_slice();
    let index = |x: usize, y: usize, c: usize| x + w * (y + h * c);
    let clamp_x = |x: i64| x.clamp(0, w as i64 - 1) as usize;
    let clamp_y = |y: i64| y.clamp(0, h as i64 - 1) as usize;

    let gauss: Vec<f32> = (-RADIUS..=RADIUS)
        .map(|i| (-((i * i) as f32) / (2.0 * sigma * sigma)).exp())
        .collect();
    let mut norm = 0.0f32;
    for g in &gauss {
        norm += g;
    }
    let weight: Vec<f32> = gauss.iter().map(|g| g / norm).collect();

    let mut blur_x = vec![0.0f32; w * h * channels];
    for c in 0..channels {
        for y in 0..h {
            for x in 0..w {
                let mut acc = 0.0f32;
                for i in -RADIUS..=RADIUS {
                    let sample = src[index(clamp_x(x as i64 + i as i64), y, c)];
                    acc += weight[(i + RADIUS) as usize] * sample;
                }
                blur_x[index(x, y, c)] = acc;
            }
        }
    }

    let mut out = vec![0.0f32; w * h * channels];
    for c in 0..channels {
        for y in 0..h {
            for x in 0..w {
                let mut blurred = 0.0f32;
                for i in -RADIUS..=RADIUS {
                    let sample = blur_x[index(x, clamp_y(y as i64 + i as i64), c)];
                    blurred += weight[(i + RADIUS) as usize] * sample;
                }
                let value = src[index(x, y, c)];
                out[index(x, y, c)] = (value + amount * (value - blurred)).clamp(0.0, 1.0);
            }
        }
    }
    Buffer::from_vec(out, [w, h, channels])
        .expect("the output vector has w * h * channels elements")
}

/// An RGB test image with values in [0, 1]: a sky-like vertical gradient, soft-edged
/// coloured discs, a band of fine stripes and a little noise. The soft edges make the
/// sharpening easy to see.
pub fn make_input(w: usize, h: usize) -> Buffer<f32, 3> {
    let size = w.min(h).max(1) as f32;
    let discs: [(f32, f32, f32, [f32; 3]); 4] = [
        (0.25, 0.35, 0.18, [0.9, 0.2, 0.15]),
        (0.55, 0.55, 0.22, [0.2, 0.75, 0.3]),
        (0.8, 0.3, 0.12, [0.95, 0.85, 0.2]),
        (0.4, 0.8, 0.1, [0.3, 0.3, 0.9]),
    ];
    Buffer::from_fn([w, h, 3], |[x, y, c]| {
        let (fx, fy) = (x as f32, y as f32);
        let t = fy / h as f32;
        let sky = [0.35 + 0.5 * t, 0.5 + 0.2 * t, 0.9 - 0.5 * t];
        let mut value = sky[c];
        for &(cx, cy, r, colour) in &discs {
            let (dx, dy) = (fx - cx * w as f32, fy - cy * h as f32);
            let distance = (dx * dx + dy * dy).sqrt() - r * size;
            // Coverage falls from 1 to 0 over four pixels around the rim: a soft edge.
            let coverage = (0.5 - distance / 4.0).clamp(0.0, 1.0);
            value += coverage * (colour[c] - value);
        }
        if fy > 0.88 * h as f32 {
            let stripes = 0.5 + 0.5 * (fx * 0.6).sin();
            value = 0.7 * value + 0.3 * stripes;
        }
        (value + 0.03 * (noise(x, y, c as u32) - 0.5)).clamp(0.0, 1.0)
    })
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let (w, h) = (1024, 768);
    let (sigma, amount) = (1.5, 1.5);
    let input = make_input(w, h);
    let mut output = Buffer::<f32, 3>::new(unsharp::output_shape(input.shape()));

    // The first call also starts the thread pool and picks the SIMD kernels: time the
    // second one.
    unsharp(&input, sigma, amount, &mut output)?;
    let start = std::time::Instant::now();
    unsharp(&input, sigma, amount, &mut output)?;
    let pipeline_time = start.elapsed();
    let start = std::time::Instant::now();
    let expected = reference(&input, sigma, amount);
    let reference_time = start.elapsed();
    println!(
        "unsharp {w}x{h}x3: pipeline {pipeline_time:?}, plain Rust reference {reference_time:?}"
    );
    let max_difference = output
        .as_slice()
        .iter()
        .zip(expected.as_slice())
        .map(|(a, b)| (a - b).abs())
        .fold(0.0f32, f32::max);
    println!("largest difference from the reference: {max_difference:e}");

    std::fs::create_dir_all("out")?;
    save_rgb(&input, "out/unsharp_input.png")?;
    save_rgb(&output, "out/unsharp_output.png")?;
    Ok(())
}
