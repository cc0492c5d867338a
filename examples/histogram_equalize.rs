//! Histogram equalization of an 8-bit gray image.
//!
//! A histogram of the 256 levels (a scattering reduction over every pixel), its running
//! sum (a scan: each entry reads the previous one) and a remap of every pixel through the
//! normalized running sum, which spreads the levels the image uses over the full range.
//! `cargo run --release --example histogram_equalize` equalizes a procedural low-contrast
//! 1024x768 image and writes `out/histogram_equalize_input.png` and
//! `out/histogram_equalize_output.png`.
#![allow(dead_code)]

#[path = "support/mod.rs"]
mod support;
use pipeline::{pipeline, Buffer};
use support::{noise, save_gray8};

pipeline! {
    /// Histogram equalization of an 8-bit gray image.
    ///
    /// Level `v` maps to `round(255 * cdf(v) / pixels)`, where `cdf(v)` counts the pixels
    /// whose level is at most `v`. The result depends on the whole input, whatever region
    /// of the output is asked for.
    pub fn histogram_equalize(input: Image<u8, 2>) -> Image<u8, 2> {
        hist(i) = 0u32;
        for (rx, ry) in rdom(0..input.width(), 0..input.height()) {
            hist(clamp(input(rx, ry) as i32, 0, 255)) += 1;
        }
        cdf(i) = 0u32;
        for r in rdom(0..256) {
            cdf(r) = cdf(r - 1) + hist(r);
        }
        out(x, y) = {
            let total = cdf(255) as u64;
            let level = clamp(input(x, y) as i32, 0, 255);
            ((cdf(level) as u64 * 255 + total / 2) / total) as u8
        };
        out
    }


    // The histogram and its scan are tiny and serial; the remap runs in strips.
    schedule histogram_equalize {
        hist.compute_root();
        cdf.compute_root();
        out.split(y, yo, yi, 64).parallel(yo).vectorize(x, 16);
    }
}

/// The same equalization as plain loops, written without the DSL: count the levels, take
/// the running sum, remap. The integer types and operations are those of the pipeline, so
/// the result matches it bit for bit.
pub fn reference(input: &Buffer<u8, 2>) -> Buffer<u8, 2> {
    let [w, h] = input.shape();
    let mut hist = [0u32; 256];
    for &level in input.as_slice() {
        hist[level as usize] += 1;
    }
    let mut cdf = [0u32; 256];
    let mut running = 0u32;
    for level in 0..256 {
        running += hist[level];
        cdf[level] = running;
    }
    let total = cdf[255] as u64;
    let out = input
        .as_slice()
        .iter()
        .map(|&level| ((cdf[level as usize] as u64 * 255 + total / 2) / total) as u8)
        .collect();
    Buffer::from_vec(out, [w, h]).expect("the output vector has w * h elements")
}

/// A low-contrast 8-bit test image: levels stay between about 70 and 150. A gentle
/// gradient, overlapping discs of slightly different brightness, a faint stripe pattern
/// and noise, all squeezed into a narrow range that equalization spreads out.
pub fn make_input(w: usize, h: usize) -> Buffer<u8, 2> {
    let size = w.min(h).max(1) as f32;
    let discs: [(f32, f32, f32, f32); 3] = [
        (0.3, 0.5, 0.25, 0.3),
        (0.6, 0.4, 0.2, -0.25),
        (0.75, 0.7, 0.15, 0.5),
    ];
    Buffer::from_fn([w, h], |[x, y]| {
        let (fx, fy) = (x as f32, y as f32);
        let mut value = 0.3 * fx / w as f32 + 0.2 * fy / h as f32;
        for &(cx, cy, r, brightness) in &discs {
            let (dx, dy) = (fx - cx * w as f32, fy - cy * h as f32);
            if dx * dx + dy * dy < (r * size) * (r * size) {
                value += brightness;
            }
        }
        value += 0.05 * (fx * 0.2).sin() * (fy * 0.15).cos() + 0.1 * noise(x, y, 0);
        (70.0 + 80.0 * value.clamp(0.0, 1.0)) as u8
    })
}

/// The lowest and highest level that occur in a buffer.
fn level_range(buffer: &Buffer<u8, 2>) -> (u8, u8) {
    let slice = buffer.as_slice();
    (
        slice.iter().copied().min().unwrap_or(0),
        slice.iter().copied().max().unwrap_or(0),
    )
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let (w, h) = (1024, 768);
    let input = make_input(w, h);
    let mut output = Buffer::<u8, 2>::new(histogram_equalize::output_shape(input.shape()));

    // The first call also starts the thread pool and picks the SIMD kernels: time the
    // second one.
    histogram_equalize(&input, &mut output)?;
    let start = std::time::Instant::now();
    histogram_equalize(&input, &mut output)?;
    let pipeline_time = start.elapsed();
    let start = std::time::Instant::now();
    let expected = reference(&input);
    let reference_time = start.elapsed();
    println!(
        "histogram_equalize {w}x{h}: pipeline {pipeline_time:?}, \
         plain Rust reference {reference_time:?}"
    );
    if output.as_slice() != expected.as_slice() {
        return Err("the pipeline output differs from the reference".into());
    }
    println!("the pipeline output equals the reference bit for bit");
    println!(
        "levels used: input {:?}, output {:?}",
        level_range(&input),
        level_range(&output)
    );

    std::fs::create_dir_all("out")?;
    save_gray8(&input, "out/histogram_equalize_input.png")?;
    save_gray8(&output, "out/histogram_equalize_output.png")?;
    Ok(())
}
