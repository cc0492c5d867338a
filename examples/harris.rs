//! Harris corner detector on a floating-point RGB image.
//!
//! Gray from RGB, Sobel gradients, the structure tensor (`Ixx`, `Iyy`, `Ixy`) summed over
//! a 3x3 window, and the Harris response `det - 0.04 * trace^2`, which is large and
//! positive at corners, negative along edges and near zero in flat regions.
//! `cargo run --release --example harris` writes `out/harris_input.png`,
//! `out/harris_response.png` (the response, zero at mid-gray) and
//! `out/harris_corners.png` (the input with its corners marked by red squares).
#![allow(dead_code)]

#[path = "support/mod.rs"]
mod support;
use pipeline::{pipeline, Buffer};
use support::{noise, save_rgb, to_u8};

pipeline! {
    /// Harris corner response of an RGB image with values in [0, 1], shape `[w, h, 3]`.
    ///
    /// Edges repeat the border pixel of the input. Gradients are Sobel filters scaled by
    /// 1/8, so a ramp rising by `s` per pixel has a gradient of `s`.
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

    // Gray and the gradients slide down each strip of 32 rows (each keeps 4
    // rows); the structure tensor is inlined into the response. (The
    // auto-scheduler chooses the same.)
    schedule harris {
        out.split(y, yo, yi, 32).parallel(yo).vectorize(x, 8);
        gray.store_at(out, yo).compute_at(out, yi).vectorize(x, 8);
        ix.store_at(out, yo).compute_at(out, yi).vectorize(x, 8);
        iy.store_at(out, yo).compute_at(out, yi).vectorize(x, 8);
        ixx.compute_inline();
        iyy.compute_inline();
        ixy.compute_inline();
        sxx.compute_inline();
        syy.compute_inline();
        sxy.compute_inline();
    }
}

/// A plane of f32 values over the rectangle `[x0, x0 + w) x [y0, y0 + h)` of the infinite
/// integer grid; reading outside it is a bug in the reference and panics.
struct Plane {
    x0: i64,
    y0: i64,
    w: usize,
    h: usize,
    data: Vec<f32>,
}

impl Plane {
    /// Evaluates `f` at every point of the rectangle, row by row.
    fn from_fn(x0: i64, y0: i64, w: usize, h: usize, f: impl Fn(i64, i64) -> f32) -> Plane {
        let mut data = Vec::with_capacity(w * h);
        for y in y0..y0 + h as i64 {
            for x in x0..x0 + w as i64 {
                data.push(f(x, y));
            }
        }
        Plane { x0, y0, w, h, data }
    }

    fn get(&self, x: i64, y: i64) -> f32 {
        let (dx, dy) = (x - self.x0, y - self.y0);
        assert!(
            dx >= 0 && dy >= 0 && (dx as usize) < self.w && (dy as usize) < self.h,
            "({x}, {y}) lies outside the plane"
        );
        self.data[dx as usize + self.w * dy as usize]
    }
}

/// The same Harris response as plain loops, written without the DSL.
///
/// Each stage is computed over the output rectangle grown by what the later stages read:
/// gray over 2 extra pixels on each side (1 for Sobel, 1 for the 3x3 sums), gradients and
/// their products over 1. Gray reads the input with clamped coordinates, as `clamp_edge()`
/// does, so gradients next to the border see the repeated border pixel exactly as in the
/// pipeline. The f32 operations are those of the pipeline in the same order; the 3x3 sums
/// add the window row by row, `i` (x) innermost.
pub fn reference(input: &Buffer<f32, 3>) -> Buffer<f32, 2> {
    let [w, h, channels] = input.shape();
    let src = input.as_slice();
    let clamped = |x: i64, y: i64, c: i64| {
        let x = x.clamp(0, w as i64 - 1) as usize;
        let y = y.clamp(0, h as i64 - 1) as usize;
        let c = c.clamp(0, channels as i64 - 1) as usize;
        src[x + w * (y + h * c)]
    };

    let gray = Plane::from_fn(-2, -2, w + 4, h + 4, |x, y| {
        0.299 * clamped(x, y, 0) + 0.587 * clamped(x, y, 1) + 0.114 * clamped(x, y, 2)
    });
    let g = |x, y| gray.get(x, y);
    let ix = Plane::from_fn(-1, -1, w + 2, h + 2, |x, y| {
        ((g(x + 1, y - 1) - g(x - 1, y - 1))
            + 2.0 * (g(x + 1, y) - g(x - 1, y))
            + (g(x + 1, y + 1) - g(x - 1, y + 1)))
            * 0.125
    });
    let iy = Plane::from_fn(-1, -1, w + 2, h + 2, |x, y| {
        ((g(x - 1, y + 1) - g(x - 1, y - 1))
            + 2.0 * (g(x, y + 1) - g(x, y - 1))
            + (g(x + 1, y + 1) - g(x + 1, y - 1)))
            * 0.125
    });
    let ixx = Plane::from_fn(-1, -1, w + 2, h + 2, |x, y| ix.get(x, y) * ix.get(x, y));
    let iyy = Plane::from_fn(-1, -1, w + 2, h + 2, |x, y| iy.get(x, y) * iy.get(x, y));
    let ixy = Plane::from_fn(-1, -1, w + 2, h + 2, |x, y| ix.get(x, y) * iy.get(x, y));
    let box3x3 = |plane: &Plane, x: i64, y: i64| {
        let mut acc = 0.0f32;
        for j in -1..=1 {
            for i in -1..=1 {
                acc += plane.get(x + i, y + j);
            }
        }
        acc
    };

    let mut out = Vec::with_capacity(w * h);
    for y in 0..h as i64 {
        for x in 0..w as i64 {
            let (sxx, syy, sxy) = (box3x3(&ixx, x, y), box3x3(&iyy, x, y), box3x3(&ixy, x, y));
            let det = sxx * syy - sxy * sxy;
            let trace = sxx + syy;
            out.push(det - 0.04 * trace * trace);
        }
    }
    Buffer::from_vec(out, [w, h]).expect("the output vector has w * h elements")
}

/// An RGB test image full of corners: a rotated checkerboard on the left, coloured
/// rectangles and a triangle on the right, a dark smooth background and a little noise.
pub fn make_input(w: usize, h: usize) -> Buffer<f32, 3> {
    let (sin, cos) = 0.35f32.sin_cos();
    let rectangles: [(f32, f32, f32, f32, [f32; 3]); 3] = [
        (0.55, 0.1, 0.75, 0.35, [0.9, 0.3, 0.2]),
        (0.65, 0.45, 0.95, 0.6, [0.3, 0.5, 0.95]),
        (0.8, 0.2, 0.95, 0.4, [0.95, 0.9, 0.3]),
    ];
    Buffer::from_fn([w, h, 3], |[x, y, c]| {
        let (fx, fy) = (x as f32, y as f32);
        let (u, v) = (fx / w.max(1) as f32, fy / h.max(1) as f32);
        let mut value = [0.25 + 0.15 * u, 0.25, 0.3 - 0.1 * v][c];
        if u < 0.45 && v > 0.1 && v < 0.9 {
            // A checkerboard of 40-pixel squares rotated by 0.35 radians, its edges
            // smoothed over a pixel or two so that they do not break into stair steps
            // (each step would be a corner).
            let (rx, ry) = (fx * cos - fy * sin, fx * sin + fy * cos);
            let pi = std::f32::consts::PI;
            let wave = (pi * rx / 40.0).sin() * (pi * ry / 40.0).sin();
            value = 0.5 + 0.4 * (20.0 * wave).clamp(-1.0, 1.0);
        }
        for &(x0, y0, x1, y1, colour) in &rectangles {
            if u >= x0 && u < x1 && v >= y0 && v < y1 {
                value = colour[c];
            }
        }
        // A triangle with corners (0.55, 0.95), (0.75, 0.95) and (0.65, 0.7).
        if v < 0.95 && v > 0.7 && (u - 0.65).abs() < 0.1 * (v - 0.7) / 0.25 {
            value = [0.3, 0.8, 0.4][c];
        }
        (value + 0.02 * (noise(x, y, c as u32) - 0.5)).clamp(0.0, 1.0)
    })
}

/// Writes the response as gray: 0 at mid-gray, the square root of the response relative to
/// the strongest corner above it (white at that corner), edges below it.
fn save_response(response: &Buffer<f32, 2>, path: &str) -> Result<(), Box<dyn std::error::Error>> {
    let [w, h] = response.shape();
    let peak = response
        .as_slice()
        .iter()
        .fold(1e-12f32, |m, v| m.max(v.abs()));
    let image = image::GrayImage::from_fn(w as u32, h as u32, |x, y| {
        let r = response[[x as usize, y as usize]] / peak;
        // The square root keeps weak corners (and edges, below mid-gray) visible next to
        // the strongest ones.
        image::Luma([to_u8(0.5 + 0.5 * r.signum() * r.abs().sqrt())])
    });
    image.save(path)?;
    println!("wrote {path}");
    Ok(())
}

/// Writes the input with a red square around every corner: a pixel whose response exceeds
/// 0.1% of the strongest one (the response grows as the fourth power of the contrast) and
/// every other response within 3 pixels of it. Returns the
/// number of corners marked.
fn save_corners(
    input: &Buffer<f32, 3>,
    response: &Buffer<f32, 2>,
    path: &str,
) -> Result<usize, Box<dyn std::error::Error>> {
    const RADIUS: i64 = 3;
    let [w, h] = response.shape();
    let (wi, hi) = (w as i64, h as i64);
    let peak = response.as_slice().iter().fold(0.0f32, |m, &v| m.max(v));
    let inside = |x: i64, y: i64| x >= 0 && y >= 0 && x < wi && y < hi;
    let mut image = image::RgbImage::from_fn(w as u32, h as u32, |x, y| {
        let (x, y) = (x as usize, y as usize);
        image::Rgb([0, 1, 2].map(|c| to_u8(input[[x, y, c]])))
    });
    let mut corners = 0;
    for y in 0..hi {
        for x in 0..wi {
            let r = response[[x as usize, y as usize]];
            let is_maximum = (-RADIUS..=RADIUS).all(|dy| {
                (-RADIUS..=RADIUS).all(|dx| {
                    let (nx, ny) = (x + dx, y + dy);
                    (dx, dy) == (0, 0)
                        || !inside(nx, ny)
                        || response[[nx as usize, ny as usize]] < r
                })
            });
            if r <= 0.001 * peak || !is_maximum {
                continue;
            }
            corners += 1;
            // The outline of a 13x13 square, two pixels thick.
            for dy in -6i64..=6 {
                for dx in -6i64..=6 {
                    let on_outline = dx.abs().max(dy.abs()) >= 5;
                    if on_outline && inside(x + dx, y + dy) {
                        image.put_pixel((x + dx) as u32, (y + dy) as u32, image::Rgb([255, 0, 0]));
                    }
                }
            }
        }
    }
    image.save(path)?;
    println!("wrote {path}");
    Ok(corners)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let (w, h) = (1024, 768);
    let input = make_input(w, h);
    let mut response = Buffer::<f32, 2>::new(harris::output_shape(input.shape()));

    // The first call also starts the thread pool and picks the SIMD kernels: time the
    // second one.
    harris(&input, &mut response)?;
    let start = std::time::Instant::now();
    harris(&input, &mut response)?;
    let pipeline_time = start.elapsed();
    let start = std::time::Instant::now();
    let expected = reference(&input);
    let reference_time = start.elapsed();
    println!(
        "harris {w}x{h}x3: pipeline {pipeline_time:?}, plain Rust reference {reference_time:?}"
    );
    let max_difference = response
        .as_slice()
        .iter()
        .zip(expected.as_slice())
        .map(|(a, b)| (a - b).abs())
        .fold(0.0f32, f32::max);
    println!("largest difference from the reference: {max_difference:e}");

    std::fs::create_dir_all("out")?;
    save_rgb(&input, "out/harris_input.png")?;
    save_response(&response, "out/harris_response.png")?;
    let corners = save_corners(&input, &response, "out/harris_corners.png")?;
    println!("marked {corners} corners");
    Ok(())
}
