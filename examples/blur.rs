//! Separable 3x3 box blur of a 16-bit gray image: the example of the README and of the guide's first page.
//!
//! `cargo run --release --example blur` blurs a procedural 1024x768 test image and
//! writes `out/blur_input.png` and `out/blur_output.png` (16-bit gray PNGs).
#![allow(dead_code)]

#[path = "support/mod.rs"]
mod support;
use pipeline::{pipeline, Buffer};
use support::{noise, save_gray16};

pipeline! {
    /// Separable 3x3 box blur of a 16-bit image; edges repeat the border pixel.
    pub fn blur3x3(input: Image<u16, 2>) -> Image<u16, 2> {
        let clamped = input.clamp_edge();
        blur_x(x, y) = (clamped(x - 1, y) as u32 + clamped(x, y) as u32 + clamped(x + 1, y) as u32) / 3;
        out(x, y) = ((blur_x(x, y - 1) + blur_x(x, y) + blur_x(x, y + 1)) / 3) as u16;
        out
    }

    // Optional. Without it, a tuned cache entry or the auto-scheduler decides.
    schedule blur3x3 {
        out.split(y, yo, yi, 32).parallel(yo).vectorize(x, 16);
        blur_x.store_at(out, yo).compute_at(out, yi).vectorize(x, 16);
    }
}

/// The same blur as plain loops over slices, written without the DSL.
///
/// A horizontal pass computes `blur_x` for every row, then a vertical pass averages three
/// rows of it. Coordinates are clamped to the image as `clamp_edge()` does; because the
/// horizontal pass clamps its row too, `blur_x` of a row outside the image equals `blur_x`
/// of the nearest row inside, so the vertical pass may clamp its row index the same way.
/// Arithmetic is u32 with the same truncating divisions as the pipeline, so the result
/// matches it bit for bit.
pub fn reference(input: &Buffer<u16, 2>) -> Buffer<u16, 2> {
    let [w, h] = input.shape();
    let src = input.as_slice();
    let clamp_x = |x: i64| x.clamp(0, w as i64 - 1) as usize;
    let clamp_y = |y: i64| y.clamp(0, h as i64 - 1) as usize;

    let mut blur_x = vec![0u32; w * h];
    for y in 0..h {
        for x in 0..w {
            let xi = x as i64;
            let left = src[clamp_x(xi - 1) + w * y] as u32;
            let centre = src[x + w * y] as u32;
            let right = src[clamp_x(xi + 1) + w * y] as u32;
            blur_x[x + w * y] = (left + centre + right) / 3;
        }
    }

    let mut out = vec![0u16; w * h];
    for y in 0..h {
        let yi = y as i64;
        for x in 0..w {
            let above = blur_x[x + w * clamp_y(yi - 1)];
            let centre = blur_x[x + w * y];
            let below = blur_x[x + w * clamp_y(yi + 1)];
            out[x + w * y] = ((above + centre + below) / 3) as u16;
        }
    }
    Buffer::from_vec(out, [w, h]).expect("the output vector has w * h elements")
}

/// A 16-bit test image: a diagonal gradient, a coarse checkerboard, two discs and noise,
/// so that both smooth regions and hard edges show what the blur does.
pub fn make_input(w: usize, h: usize) -> Buffer<u16, 2> {
    let size = w.min(h).max(1) as f32;
    Buffer::from_fn([w, h], |[x, y]| {
        let (fx, fy) = (x as f32, y as f32);
        let gradient = 0.45 * fx / w as f32 + 0.25 * fy / h as f32;
        let checker = if (x / 32 + y / 32) % 2 == 0 {
            0.15
        } else {
            0.0
        };
        let in_disc = |cx: f32, cy: f32, r: f32| {
            let (dx, dy) = (fx - cx * w as f32, fy - cy * h as f32);
            dx * dx + dy * dy < (r * size) * (r * size)
        };
        let bright_disc = if in_disc(0.3, 0.4, 0.2) { 0.2 } else { 0.0 };
        let dark_disc = if in_disc(0.7, 0.6, 0.15) { -0.15 } else { 0.0 };
        let value = 0.1 + gradient + checker + bright_disc + dark_disc + 0.08 * noise(x, y, 0);
        (value.clamp(0.0, 1.0) * 65535.0) as u16
    })
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let (w, h) = (1024, 768);
    let input = make_input(w, h);
    let mut output = Buffer::<u16, 2>::new(blur3x3::output_shape(input.shape()));

    // The first call also starts the thread pool and picks the SIMD kernels: time the
    // second one.
    blur3x3(&input, &mut output)?;
    let start = std::time::Instant::now();
    blur3x3(&input, &mut output)?;
    let pipeline_time = start.elapsed();
    let start = std::time::Instant::now();
    let expected = reference(&input);
    let reference_time = start.elapsed();
    println!(
        "blur3x3 {w}x{h}: pipeline {pipeline_time:?}, plain Rust reference {reference_time:?}"
    );
    if output.as_slice() != expected.as_slice() {
        return Err("the pipeline output differs from the reference".into());
    }
    println!("the pipeline output equals the reference bit for bit");

    std::fs::create_dir_all("out")?;
    save_gray16(&input, "out/blur_input.png")?;
    save_gray16(&output, "out/blur_output.png")?;
    Ok(())
}
